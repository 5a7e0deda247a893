"""An SDF graph whose first iteration goes one firing at a time (a ring of one token):
the default ``analyse`` computes it by the occupancy program instead of block by block
(issue 42, a graph of Kiter's generator with 3.2 million such blocks took minutes), and
gives the same schedule, worked by hand."""
from moc import SDFGraph
from moc.self_timed import first_iteration
from moc.timing import analyse, prepared

N = 5000


def _ring():
    """``A`` (time 1) and ``B`` (time 2) in a ring of one token, and ``D`` (time 5)
    taking ``N`` of ``A``'s tokens at once: q = (N, N, 1)."""
    g = SDFGraph("narrow")
    g.add_actor("A", exec=1)
    g.add_actor("B", exec=2)
    g.add_actor("D", exec=5)
    g.add_channel("A", "B", "ab", prod=1, cons=1)
    g.add_channel("B", "A", "ba", prod=1, cons=1, delay=1)
    g.add_channel("A", "D", "ad", prod=1, cons=N)
    return g


def test_one_firing_a_block_goes_to_the_occupancy_program():
    graph, durations, q, _ = prepared(_ring())
    assert first_iteration(graph, durations, q, narrow=32) is None
    assert first_iteration(graph, durations, q) is not None


def test_its_schedule_by_hand():
    """A#k runs [3k, 3k+1], B#k [3k+1, 3k+3]; D waits for A#(N-1), ending at 3N-2, and
    ends 5 later; the period is the ring's 3 per token, N tokens an iteration."""
    result = analyse(_ring())
    assert result.period == 3 * N
    assert result.latency == 3 * N + 3
    a, b, d = (result.schedule[x] for x in "ABD")
    assert list(a.starts) == [3 * k for k in range(N)]
    assert list(a.ends) == [3 * k + 1 for k in range(N)]
    assert list(b.starts) == [3 * k + 1 for k in range(N)]
    assert list(b.ends) == [3 * k + 3 for k in range(N)]
    assert (list(d.starts), list(d.ends)) == ([3 * N - 2], [3 * N + 3])
