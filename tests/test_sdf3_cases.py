"""Cyclo-static graphs on which SDF3's ``sdf3analysis-csdf --algo throughput`` (commit
of github.com/rhishi/SDF3 that ``tests/oracle_sdf3/build.sh`` builds) and ``mapeval
analyse`` differ, found by a campaign on graphs of SDF3's own random generator
(``tests/oracle_sdf3/campaign.py``; docs/notes.md, "A random campaign against SDF3's
generator"), each with its value worked by hand.  SDF3 means the rule mapeval's
default follows (an actor's firings start in order and end in order) but its
state space does not keep it: mapeval is right on each.  The graphs go through the
command line as SDF3 XML, as a user's would."""
import json
from fractions import Fraction

from mapping.cli.main import main
from kiter_xml import kiter_xml


def _ring(times, back_tokens):
    """a (phases ``times``) reads one token of ba in its first phase and writes one
    on ab in its last; b (1) reads it and writes one back on ba: q = (n, 1)."""
    n = len(times)
    return ({"a": times, "b": [1]},
            [("ab", "a", "b", [0] * (n - 1) + [1], [1], 0),
             ("ba", "b", "a", [1], [1] + [0] * (n - 1), back_tokens)])


def _periods(tmp_path, capsys, actors, channels):
    """{order: the exact period}, the same with ``--no-simulate``; ``check`` must call
    the graph live."""
    path = tmp_path / "g.xml"
    path.write_text(kiter_xml(actors, channels))
    found = {}
    for order in ("ends", "starts"):
        periods = set()
        for extra in ([], ["--no-simulate"]):
            assert main(["analyse", str(path), "--json", "--csdf-order", order, *extra]) == 0
            periods.add(Fraction(json.loads(capsys.readouterr().out)["exact"]["period"]))
        (found[order],) = periods
    assert main(["check", str(path)]) == 0
    assert "no deadlock" in capsys.readouterr().out
    return found


def test_a_short_phase_behind_a_long_one(tmp_path, capsys):
    """a's phases take 3 and 1; its second phase reads nothing, so it starts at 0 with
    the first.  Ending in order, it ends with the first at 3, its token lets b run 3 -
    4, and b's token starts a's next cycle at 4: period 4 (one firing of b every 4).
    SDF3 prints throughput 0, a deadlock: its state space takes the clock step of 3
    off every running firing's remaining time, an unsigned number, so the second
    phase's 1 wraps around and it never ends.  Where the firings end at their own
    times (``--csdf-order starts``): the second phase ends at 1, b runs 1 - 2, and a
    new cycle starts every 2."""
    assert _periods(tmp_path, capsys, *_ring([3, 1], 1)) == {"ends": 4, "starts": 2}


def test_more_firings_at_once_than_phases(tmp_path, capsys):
    """a (three phases of time 0) reads 0, 1, 1 tokens of ba and writes 1, 2, 1 on
    ab; b (1) reads 4 and writes 2: q = (3, 1).  At 0, ba's 4 tokens start a's phases
    0, 1, 2, 0, 1, 2, 0 (its next, phase 1, finds none), which end at once writing 9;
    b fires twice (1 left), 0 - 1, and writes 4; at 1 they start a's phases 1, 2, 0,
    1, 2, 0, which write 8: ab holds 9 again, b fires twice every time unit, as it did
    at 0.  Throughput 2, period 1/2, in either order (the phases take no time).
    SDF3 gives 1/3 of its iteration (9, 3), one firing of b per time unit where it is
    two: it finds the phase of an ending firing as the phase of the next start less
    the firings running, taken modulo 3 in unsigned arithmetic, which is 1 off where
    more than 3 firings run (2^64 mod 3 = 1): at 1 its six ends write 7 tokens, not 8."""
    actors = {"a": [0, 0, 0], "b": [1]}
    channels = [("ab", "a", "b", [1, 2, 1], [4], 0), ("ba", "b", "a", [2], [0, 1, 1], 4)]
    assert _periods(tmp_path, capsys, actors, channels) == \
        {"ends": Fraction(1, 2), "starts": Fraction(1, 2)}


def _sdf_xml(times, channels):
    """The SDF3 ``sdf`` file of :func:`kiter_xml`'s graph whose actors have one phase each:
    ``times`` {actor: execution time}, ``channels`` [(name, src, dst, rate produced,
    rate consumed, initial tokens)]."""
    text = kiter_xml({a: [t] for a, t in times.items()},
                [(n, s, d, [p], [c], t) for n, s, d, p, c, t in channels])
    for csdf, sdf in (('type="csdf"', 'type="sdf"'), ("<csdf ", "<sdf "),
                      ("</csdf>", "</sdf>"), ("csdfProperties", "sdfProperties")):
        text = text.replace(csdf, sdf)
    return text


def test_the_front_goes_on_to_the_maximal_throughput(tmp_path, capsys):
    """A ring: a1 (4) writes 3 tokens on ch0 (1 initial) for a0 (1), which writes one
    on ch2 (2 initial) for a3 (1), which writes one on ch3 for a2 (3), which writes one
    on ch1, of which a1 reads 3: q = (3, 1, 3, 3), throughput 1/9 without bounds.
    SDF3's ``buffersize`` gives (9, 1/17), (10, 1/13) and (11, 1/11) with ch2 = 2, and
    stops below 1/9.  By hand, with ch0 = ch1 = ch3 = 3: where a1 ends (at 9 in the
    periodic phase), a0 fires 3 times, which need 3 spaces on ch2.  With ch2 = 2 the
    third waits for a3's firings to end (9 - 10, 10 - 11; a0 11 - 12, a3 12 - 13, a2 13
    - 16): a1 runs 16 - 20 where it ran 5 - 9, period 11.  With ch2 = 3 the three
    firings of a0, a3 and a2 run side by side (9 - 10, 10 - 11, 11 - 14), a1 14 - 18:
    period 9, the maximal throughput, at size 12 (SDF3's own ``throughput`` of that
    bounded graph gives 1/9 too).  SDF3 misses it: at (3, 3, 2, 3) a0 waits for a1's
    tokens and for ch2's space, and its depth-first search for cycles of waits drops
    a3's edges once the cycle a0 -> a1 -> a2 -> a3 -> a0 is found, so the cycle a0 ->
    a3 -> a0 through ch2's space, the storage dependency, is never seen."""
    path = tmp_path / "g.xml"
    path.write_text(_sdf_xml({"a0": 1, "a1": 4, "a2": 3, "a3": 1}, [
        ("ch0", "a1", "a0", 3, 1, 1), ("ch1", "a2", "a1", 1, 3, 0),
        ("ch2", "a0", "a3", 1, 1, 2), ("ch3", "a3", "a2", 1, 1, 0)]))
    assert main(["analyse", str(path), "--tradeoff", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(p["size"], Fraction(p["exact"]), p["distributions"]) for p in doc["points"]] == [
        (9, Fraction(1, 17), [{"ch0": 3, "ch1": 3, "ch2": 2, "ch3": 1}]),
        (10, Fraction(1, 13), [{"ch0": 3, "ch1": 3, "ch2": 2, "ch3": 2}]),
        (11, Fraction(1, 11), [{"ch0": 3, "ch1": 3, "ch2": 2, "ch3": 3}]),
        (12, Fraction(1, 9), [{"ch0": 3, "ch1": 3, "ch2": 3, "ch3": 3}])]
    assert doc["complete"] and doc["max_throughput"] == doc["points"][-1]["throughput"]


def test_every_distribution_of_a_point_is_listed(tmp_path, capsys):
    """A cyclo-static ring of SDF3's generator (seed 23's ``g0020``): a1 (3, 0) writes
    on ch0 (3 initial) in its first phase for a0 (2, 0), which reads it in its second
    and writes on ch2 (6 initial) in its first for a2 (0, 1), which writes on ch1 (2
    initial) for a1 the same way.  SDF3's ``buffersize`` (mended as in docs/notes.md)
    gives mapeval's points, sizes 12-26, but lists 18 distributions at size 17
    (throughput 1 per iteration) and 14 at 18 (7/6): its search of storage
    dependencies does not reach (4, 2, 11), (4, 6, 7), (4, 7, 6) nor (5, 7, 6).  Each
    distribution of those sizes from the lower bounds (3, 2, 6), timed by the
    event-by-event execution with capacities (``initialised_run``, no code shared
    with ``moc``), gives 21 and 15, those ``analyse --tradeoff`` lists."""
    from itertools import product
    from dsl import read_sdf3
    from initialised_run import run
    from moc.repetition import repetition_vector
    path = tmp_path / "g.xml"
    path.write_text(kiter_xml({"a0": [2, 0], "a1": [3, 0], "a2": [0, 1]}, [
        ("ch0", "a1", "a0", [1, 0], [0, 1], 3), ("ch1", "a2", "a1", [1, 0], [0, 1], 2),
        ("ch2", "a0", "a2", [1, 0], [0, 1], 6)]))
    assert main(["analyse", str(path), "--tradeoff", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    points = {p["size"]: p for p in doc["points"]}
    graph = read_sdf3(path).bind()
    q = repetition_vector(graph)
    for size, best in ((17, Fraction(1)), (18, Fraction(7, 6))):
        reaching = []
        for caps in product(range(3, 10), range(2, 9), range(6, 13)):
            if sum(caps) == size:
                found = run(graph, q, 10_000, capacities=dict(zip(("ch0", "ch1", "ch2"),
                                                                   caps)))
                assert found[0] == "period" and 1 / found[1] <= best
                if 1 / found[1] == best:
                    reaching.append(dict(zip(("ch0", "ch1", "ch2"), caps)))
        assert Fraction(points[size]["exact"]) == best
        assert sorted(map(sorted, (d.items() for d in points[size]["distributions"]))) \
            == sorted(map(sorted, (d.items() for d in reaching)))
        assert len(reaching) == {17: 21, 18: 15}[size]
