"""SDF3 graphs on which Kiter (``kiter -a KPeriodicThroughput``, commit 8f38726) and
``mapeval analyse`` differ, found by a random differential campaign (issue 42), each
with its value worked by hand: ``mapeval`` is right on every one (docs/notes.md, "CSDF:
SDF3 and Kiter").  The graphs are written here as SDF3 XML and go through the command
line, as a user's would."""
import json
from fractions import Fraction

import pytest

from mapping.cli.main import main

from kiter_xml import kiter_xml


def _periods(tmp_path, capsys, actors, channels):
    """The exact period under each order of an actor's firings, and with
    ``--no-simulate``; ``mapeval check`` must call the graph live."""
    path = tmp_path / "g.xml"
    path.write_text(kiter_xml(actors, channels))
    found = set()
    for extra in ([], ["--csdf-order", "starts"], ["--no-simulate"],
                  ["--no-simulate", "--csdf-order", "starts"]):
        assert main(["analyse", str(path), "--json", *extra]) == 0
        found.add(Fraction(json.loads(capsys.readouterr().out)["exact"]["period"]))
    assert main(["check", str(path)]) == 0
    assert "no deadlock" in capsys.readouterr().out
    return found


@pytest.mark.parametrize("times, rate, tokens, period", [
    ([3], 1, 1, 3),                       # Kiter: period 0 ("UNKNOWN HOWARD ERROR")
    ([5], 1, 2, Fraction(5, 2)),          # two firings at once: 0
    ([3], 1, 3, 1),                       # three at once: 0
    ([4], 2, 3, 4),                       # a firing takes 2 of the 3 tokens: 0
    ([4, 3, 4], 1, 1, 11),                # one phase after the other: 3.666667
])
def test_a_lone_actor_with_its_self_loop(tmp_path, capsys, times, rate, tokens, period):
    """One actor and its self-loop (``rate`` per phase, ``tokens`` initial tokens):
    ``tokens // rate`` firings run at once, so one iteration (a cycle of the phases)
    takes sum(times) / (tokens // rate) for one phase, the sum of the phases' times
    when one token lets one firing run at a time.  Kiter prints period 0 (an infinite
    throughput, after an error of its cycle-ratio solver) on the first four and the
    time of one phase on average (11/3) on the last: its iteration of a lone
    cyclo-static actor is one firing, which does not bring the actor back to its first
    phase."""
    n = len(times)
    found = _periods(tmp_path, capsys, {"a": times},
                     [("s", "a", "a", [rate] * n, [rate] * n, tokens)])
    assert found == {period}


def test_actors_of_time_zero_in_a_ring(tmp_path, capsys):
    """Kiter prints an infinite throughput (period 0, after an error of its cycle-ratio
    solver).  By hand: q = (2, 2, 3) (12 a = 12 b, 54 b = 36 c, 24 c = 36 a).  a (9,
    self-loop of 3 tokens) needs 36 of c2's 52 tokens, so one firing runs, 0 - 9; b and
    c take no time: at 9, b turns a's 12 tokens into 54, c fires once (18 left on c1)
    and c2 holds 16 + 24 = 40, so a fires 9 - 18 (4 left); at 18 b gives 54 more, c
    fires twice and c2 holds 4 + 48 = 52 again: one iteration (two firings of a) every
    18."""
    found = _periods(tmp_path, capsys, {"a": [9], "b": [0], "c": [0]}, [
        ("c0", "a", "b", [12], [12], 0), ("c1", "b", "c", [54], [36], 0),
        ("c2", "c", "a", [24], [36], 52), ("sa", "a", "a", [1], [1], 3),
        ("sc", "c", "c", [1], [1], 1)])
    assert found == {18}


def _threshold_ring(tokens):
    """a (phases 2, 0, 4) writes 0, 1, 1 tokens for b and reads 0, 4, 2; b (phases 0,
    3, one firing at a time) reads 1, 0 and writes 2, 1: q = (3, 4)."""
    return ({"a": [2, 0, 4], "b": [0, 3]},
            [("ab", "a", "b", [0, 1, 1], [1, 0], 0),
             ("ba", "b", "a", [2, 1], [0, 4, 2], tokens),
             ("sb", "b", "b", [1, 1], [1, 1], 1)])


def test_one_token_below_the_liveness_threshold(tmp_path, capsys):
    """With 3 tokens on ba, a's first phase runs, its second needs 4 and b's first
    needs a token from a: a deadlock, which ``analyse`` and ``check`` report by its
    actors and channels (exit status 2).  Kiter prints period 10."""
    path = tmp_path / "g.xml"
    path.write_text(kiter_xml(*_threshold_ring(3)))
    for argv in (["analyse", str(path), "--json", "--csdf-order", "starts"],
                 ["analyse", str(path)], ["check", str(path)]):
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and "Traceback" not in captured.err
        assert "error: deadlock: actors 'a', 'b'" in captured.err
        assert "ba" in captured.err


def test_at_the_liveness_threshold(tmp_path, capsys):
    """With 4 tokens (Kiter: period 7, the same).  Firings start in order: at 0 a#0
    (phase 0, 0 - 2), a#1 (reads the 4 tokens, takes 0, gives b one), b#0 (gives 2),
    b#1 (0 - 3, gives 1 at 3), a#2 (reads 2, 0 - 4) and a#3 (phase 0 again, 0 - 2)
    start; at 4 a#2's token lets b#2 (gives 2) and b#3 (4 - 7) run, and at 7 ba holds
    0 + 1 + 2 + 1 = 4 again: a#4 starts at 7 as a#1 did at 0, a#3 ending at 9 as a#0
    did at 2: period 7.  Ending a's firings in order only delays the first
    iteration."""
    assert _periods(tmp_path, capsys, *_threshold_ring(4)) == {7}


def test_a_repetition_vector_of_billions(tmp_path, capsys):
    """a (time 6) writes 3,000,000,001 tokens a firing, b (time 5) reads 3,000,000,003;
    each fires one at a time (a self-loop of one token) and nothing holds a back: q =
    (3,000,000,003, 3,000,000,001), a busy 6·q(a) = 18,000,000,018 an iteration, b
    5·q(b), less.  Kiter prints period 7769803758, below a's own work (found on graphs of
    its generator whose repetition vectors sum to 10^8-10^17, issue 42: there it gave
    5/6 of the period; with rates of 10^9 it is right).  The default ``analyse`` gives
    the period without the schedule of 6·10^9 firings."""
    p, c = 3_000_000_001, 3_000_000_003
    found = _periods(tmp_path, capsys, {"a": [6], "b": [5]}, [
        ("ab", "a", "b", [p], [c], 0), ("sa", "a", "a", [1], [1], 1),
        ("sb", "b", "b", [1], [1], 1)])
    assert found == {6 * c}


def test_a_fan_out_whose_repetitions_pass_ten_to_the_sixteen(tmp_path, capsys):
    """a (time 2) writes 209,281,551 tokens a firing to b (time 3), which reads
    77,065,968, and 554,010,464 to c (time 2), which reads 1,443,197,554; each fires
    one at a time and nothing holds a back, so the busiest actor sets the period.  The
    balance equations ``q_a·p = q_b·c`` give q = (18,536,902,752,373,712,
    50,339,103,750,087,709, 7,115,892,115,048,192) and b's 3·q_b the period.  Kiter
    prints 18,536,902,752,373,712 (a second campaign against Kiter, seed 31: its
    repetition vectors of such graphs break the balance equations)."""
    from math import gcd, lcm
    ab, ba, ac, ca = 209_281_551, 77_065_968, 554_010_464, 1_443_197_554
    q_a = lcm(ba // gcd(ab, ba), ca // gcd(ac, ca))
    q_b, q_c = q_a * ab // ba, q_a * ac // ca
    assert (q_a, q_b, q_c) == (18_536_902_752_373_712, 50_339_103_750_087_709,
                               7_115_892_115_048_192)
    found = _periods(tmp_path, capsys, {"a": [2], "b": [3], "c": [2]}, [
        ("ab", "a", "b", [ab], [ba], 0), ("ac", "a", "c", [ac], [ca], 0),
        ("sa", "a", "a", [1], [1], 1), ("sb", "b", "b", [1], [1], 1),
        ("sc", "c", "c", [1], [1], 1)])
    assert found == {max(2 * q_a, 3 * q_b, 2 * q_c)} == {151_017_311_250_263_127}


def test_a_cyclo_static_actor_without_self_loop_in_a_ring(tmp_path, capsys):
    """A graph of Kiter's generator with its self-loops taken out (issue 42): a (16)
    reads 2 of b's tokens and writes 2 for b's first phase and 2 for its second; b
    (14, 3, 2) reads 1 in its first phase, writing 1 back, and 1 in its second: q =
    (1, 2 cycles).  With one token on each side of the ring: b's first phase 0 - 14
    gives a its second token, a runs 14 - 30, and at 30 both of b's cycles start (their
    first phases 30 - 44, the others 30 - 33 and 30 - 32), giving a two tokens at 44:
    a starts every 30, period 30 under both orders.  Kiter prints period 0 ("UNKNOWN
    HOWARD ERROR"), its symbolic execution a throughput of 1/54."""
    found = _periods(tmp_path, capsys, {"a": [16], "b": [14, 3, 2]}, [
        ("ab", "a", "b", [2], [1, 0, 0], 1), ("ba", "b", "a", [1, 0, 0], [2], 1),
        ("ab2", "a", "b", [2], [0, 1, 0], 0)])
    assert found == {30}


def test_disconnected_components_count_each_one_s_smallest_iteration(tmp_path, capsys):
    """a, b (q 2, 1) and c, d (q 1, 1) share no channel.  One iteration fires each
    component's smallest repetition vector: c -> d -> c with one token takes 2 + 5 = 7
    (a, b: a's two firings of 1 at once on the two tokens, then b's 3: 4, less).  Kiter
    gives 14: its repetition vector scales the second component by q(a) = 2 (it prints
    c = d = 2), a vector that is not the smallest."""
    found = _periods(tmp_path, capsys, {"a": [1], "b": [3], "c": [2], "d": [5]}, [
        ("ab", "a", "b", [1], [2], 0), ("ba", "b", "a", [2], [1], 2),
        ("cd", "c", "d", [1], [1], 0), ("dc", "d", "c", [1], [1], 1)])
    assert found == {7}
    assert main(["check", str(tmp_path / "g.xml")]) == 0
    assert "repetitions: a=2, b=1, c=1, d=1" in capsys.readouterr().out


def _error(tmp_path, capsys, actors, channels, *options):
    """``analyse`` and ``check`` of a bad graph: exit 2, no output, the same message;
    returned with the line of the file it names."""
    path = tmp_path / "g.xml"
    path.write_text(kiter_xml(actors, channels))
    messages = set()
    for argv in (["analyse", str(path), *options], ["check", str(path)]):
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and "Traceback" not in captured.err
        messages.add(captured.err.splitlines()[0])
    assert len(messages) == 1
    message = messages.pop()
    line = int(message.split(":")[1])
    return message, path.read_text().splitlines()[line - 1]


def test_a_negative_execution_time_is_named_at_its_element(tmp_path, capsys):
    message, line = _error(tmp_path, capsys, {"a": [3, -4]},
                           [("s", "a", "a", [1, 1], [1, 1], 1)])
    assert "actor 'a', processor 'p': an execution time must be non-negative, got " \
        "'3,-4'" in message
    assert "<executionTime" in line


def test_an_inconsistent_ring_names_a_channel(tmp_path, capsys):
    """a writes 2 + 1 per cycle of its phases, b reads 2: q(b)/q(a) = 3/2 by ab, but ba
    (b writes 1, a reads 1 + 1) asks q(a)/q(b) = 1/2."""
    message, line = _error(tmp_path, capsys, {"a": [1, 1], "b": [1]}, [
        ("ab", "a", "b", [2, 1], [2], 0), ("ba", "b", "a", [1], [1, 1], 2)],
        "--csdf-order", "starts")
    assert "error: inconsistent graph: the balance equation of channel" in message
    assert "channel name=" in line


def test_an_actor_of_time_zero_in_a_multirate_ring(tmp_path, capsys):
    """Kiter prints period 0.4 (no solver error shown).  By hand: q = (1, 3).  a (2)
    reads 3 of ba's 4 tokens: one firing, 0 - 2, which writes 9; b (0, self-loop of 2
    tokens) fires three times at 2, writing 3: ba holds 4 again at 2, so a fires every
    2: period 2."""
    found = _periods(tmp_path, capsys, {"a": [2], "b": [0]}, [
        ("ab", "a", "b", [9], [3], 0), ("ba", "b", "a", [1], [3], 4),
        ("sb", "b", "b", [1], [1], 2)])
    assert found == {2}


def test_a_self_loop_with_rates_per_phase(tmp_path, capsys):
    """b's self-loop: its phases (6, 2) write 3, 1 and read 1, 3 of 2 initial tokens.
    Kiter prints period 3.5.  By hand (a: 1, one firing at a time, reads one of ba's
    2 tokens and writes 2 on ab; b's first phase reads those 2 and writes one on ba):
    a fires
    0 - 1 and 1 - 2; b's first phase 1 - 7 (self-loop 2 -> 1) returns 3, so its second
    phase (needs 3) and its next first phase start at 7 (4 -> 1 -> 0); the second
    ends at 9 (+1), the first at 13 (+3): the next second and first phases start at
    13, and so on: b's first phases start at 1, 7, 13, ..., period 6 (a's firings at
    7 and 13 on b's tokens fit in between)."""
    found = _periods(tmp_path, capsys, {"a": [1], "b": [6, 2]}, [
        ("ab", "a", "b", [2], [2, 0], 0), ("ba", "b", "a", [1, 0], [1], 2),
        ("sa", "a", "a", [1], [1], 1), ("sb", "b", "b", [3, 1], [1, 3], 2)])
    assert found == {6}


def test_coprime_rates_near_ten_thousand(monkeypatch):
    """a (3, one firing at a time) writes 7001 tokens per firing to b (2), which reads
    6997 and writes 6997 back; a reads 7001 of the 13,998 on the way back: q = (6997,
    7001), 13,998 firings.  Kiter's period is 34985 (5 per firing of a).  Howard's
    float iteration on the constraint graph converges at once: it used to switch one
    node per step on a gain of rounding (2.6e-9 on potentials of 11,661) until its
    bound of 1,180 steps (13 s)."""
    import moc.cycle_ratio as cr
    from moc import SDFGraph
    from moc.timing import throughput
    converged = []
    iterate = cr._policy_iteration

    def recorded(*args):
        policy, done = iterate(*args)
        converged.append(done)
        return policy, done
    monkeypatch.setattr(cr, "_policy_iteration", recorded)
    g = SDFGraph("coprime")
    g.add_actor("a", exec=3)
    g.add_actor("b", exec=2)
    g.add_channel("a", "b", "ab", prod=7001, cons=6997)
    g.add_channel("b", "a", "ba", prod=6997, cons=7001, delay=13998)
    g.add_channel("a", "a", "sa", delay=1)
    assert throughput(g).period == 34985
    assert converged and all(converged)
