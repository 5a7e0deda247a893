"""The storage-throughput trade-off of cyclo-static graphs (issue 42, item 3; must-show
3): the front of ``moc.tradeoff`` (phases included) against an exhaustive search of
distributions, every capacity vector up to the front's largest size timed on its own:
with an actor's firings starting and ending in order by a step-by-step simulation
written here, with Kiter's rule (they start in order, each waits for the firings that
write the last token it reads) by the maximum cycle ratio of the firings of one
iteration of the bounded graph (``moc.csdf``, the expansion, not the K-periodic
engine the trade-off uses); and ``--csdf-order`` on the command line."""
from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import dsl
from dataflow_graphs import cyclo_static_ring
from stepped import end_firings, phase, phase_counts, start_firings
from mapping.cli.main import main
from moc import SDFGraph, repetition_vector, throughput
from moc.csdf import throughput as expanded_throughput
from moc.cycle_ratio import UnboundedCycleError
from moc.errors import DeadlockError
from moc.phases import Phases
from moc.timing import analyse, prepared
from moc.capacities import capacity_bounds
from moc.tradeoff import bounded_graph, tradeoff

ROOT = Path(__file__).resolve().parents[1]
ORDERS_DIFFER = ROOT / "examples" / "csdf" / "orders.sdf"


def stepped_throughput(graph, capacities, ends_in_order=True):
    """Iterations per time unit of the self-timed execution with a capacity per channel,
    by time steps of 1 (integer phase times of at least 1).  A firing takes the tokens of
    its phase from its inputs and the space for what it writes on its outputs as it
    starts, and at its end writes the tokens and frees the space it read.  At each step
    the firings that end do so; then each actor starts the firings its phase allows, one
    after another; a firing ends at its phase time after its start, and (with
    ``ends_in_order``) not before the actor's previous one.  Stops when the state (tokens, phases, remaining times)
    recurs: the firings of the first actor between the two visits over its repetitions,
    over the time between.  0 where nothing runs and nothing can start."""
    actors = list(graph.actors)
    chans = list(graph.channels.values())
    n = phase_counts(graph)
    q = repetition_vector(graph)
    tokens = {ch.name: ch.delay for ch in chans}
    space = {ch.name: capacities[ch.name] - ch.delay for ch in chans}
    started = dict.fromkeys(actors, 0)
    running = {a: [] for a in actors}            # (end, phase)
    seen = {}
    t = 0
    while True:
        end_firings(graph, t, tokens, running, space)
        start_firings(graph, n, t, tokens, started, running, space, ends_in_order)
        if not any(running.values()):
            return 0
        state = (tuple(tokens.values()), tuple(space.values()),
                 tuple(started[a] % n[a] for a in actors),
                 tuple(tuple(sorted((e - t, k) for e, k in running[a])) for a in actors))
        if state in seen:
            t0, fired = seen[state]
            first = actors[0]
            return Fraction(started[first] - fired, q[first]) / (t - t0)
        seen[state] = (t, started[actors[0]])
        t += 1


def kiter_throughput(graph, capacities):
    """Iterations per time unit under Kiter's rule with a capacity per channel: the
    inverse of the maximum cycle ratio of the firings of one iteration of the graph with
    a back-edge per channel (0 at a deadlock)."""
    bounded, durations, q, _ = prepared(bounded_graph(graph, capacities))
    try:
        period = expanded_throughput(bounded, durations, q, order="starts").period
    except (DeadlockError, UnboundedCycleError):
        return 0
    return 1 / Fraction(period)


def exhaustive_front(graph, largest, fixed=None, order="ends"):
    """The Pareto points ``(size, throughput)`` of positive throughput among every
    distribution of total size at most ``largest``: each channel from the least capacity
    with which each of its phases can fire at all (at least every rate of one phase and
    its initial tokens) up, every whole number, none skipped; ``fixed`` capacities
    (self-loops, as the trade-off keeps them) are not varied.  Each timed by
    :func:`stepped_throughput` (``order="ends"``) or :func:`kiter_throughput`
    (``"starts"``)."""
    timed = stepped_throughput if order == "ends" else kiter_throughput
    fixed = fixed or {}
    names = [n for n in graph.channels if n not in fixed]
    low = {n: max([graph.channels[n].delay] + [
        phase(v, k) for v in (graph.channels[n].prod, graph.channels[n].cons)
        for k in range(len(v) if isinstance(v, tuple) else 1)]) for n in names}
    return pareto_of_distributions(graph, largest, fixed, low, timed)


def pareto_of_distributions(graph, largest, fixed, low, timed):
    """The Pareto points ``(size, throughput)`` of positive throughput among every
    distribution of total size at most ``largest``: each channel of ``low`` from that
    capacity up, every whole number, ``fixed`` ones as given, each timed by
    ``timed(graph, capacities)``."""
    names = list(low)
    spare = largest - sum(low.values()) - sum(fixed.values())
    best = {}
    for extra in itertools.product(range(spare + 1), repeat=len(names)):
        if sum(extra) > spare:
            continue
        caps = {**fixed, **{n: low[n] + e for n, e in zip(names, extra)}}
        size = sum(caps.values())
        best[size] = max(best.get(size, 0), timed(graph, caps))
    points, top = [], 0
    for size in sorted(best):
        if best[size] > top:
            top = best[size]
            points.append((size, top))
    return points


def _positive(front):
    return [(p.size, p.throughput) for p in front.points if p.throughput > 0]


def _pair():
    """``a`` (phases of 1 and 3) writes 3 then 1 tokens to ``b`` (phases of 2), which
    reads 2 then 2 and writes one token per phase back to ``a``, read 1 then 1; four
    tokens start on the way back.  No self-loop: firings overlap."""
    g = SDFGraph("pair")
    g.add_actor("a", exec=Phases([1, 3]))
    g.add_actor("b", exec=Phases([2, 1]))
    g.add_channel("a", "b", "ab", prod=Phases([3, 1]), cons=Phases([2, 2]))
    g.add_channel("b", "a", "ba", prod=Phases([1, 1]), cons=Phases([1, 1]), delay=4)
    return g


@pytest.mark.parametrize("order", ["ends", "starts"])
def test_a_hand_made_pair_equals_the_exhaustive_search(order):
    g = _pair()
    front = tradeoff(g, order=order)
    assert front.complete and front.points[-1].throughput == front.max_throughput
    got = _positive(front)
    assert got == exhaustive_front(g.bind(), front.points[-1].size, order=order)
    # more than one point, and not all the trade-off's of one order
    assert len(got) >= 2


def test_sdf3_s_cyclo_static_example_equals_the_exhaustive_search():
    """SDF3's ``buffersizing/simple_example`` (three actors of two phases, each with a
    self-loop of one token, kept at capacity 2 as SDF3 and the trade-off keep them)."""
    (g,) = dsl.load_sdf(ROOT / "tests" / "data" / "csdf" / "simple_example.sdf")
    front = tradeoff(g)
    loops = {"d1": 2, "d2": 2, "d3": 2}
    assert all(dict(d).items() >= loops.items() for p in front.points[1:]
               for d in p.distributions)
    assert _positive(front) == exhaustive_front(g.bind(), front.points[-1].size, loops)


@st.composite
def small_csdf(draw):
    """A cyclo-static ring of 2-3 actors (1-3 phases, times 1-3, rates of one cycle up to
    2) and maybe one chord or self-loop, one iteration's tokens or more (up to two more)
    on each channel that goes back."""
    return cyclo_static_ring(draw, st, lambda i, j, wi, wj: wi * wj + draw(
        st.integers(0, 2)) if j <= i else 0, min_time=1, actors=3, max_time=3,
        max_weight=2, chords=1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_csdf(), st.sampled_from([("ends", "state-space"), ("ends", "kperiodic"),
                                      ("starts", "kperiodic")]))
def test_front_equals_the_exhaustive_search_on_random_graphs(graph, timing):
    order, method = timing
    graph = graph.bind()
    try:
        front = tradeoff(graph, order=order, method=method, max_explored=300)
    except DeadlockError:
        return
    assume(front.complete and front.points[-1].size <= 16)
    loops = {n: front.points[-1].distributions[0][n] for n, ch in graph.channels.items()
             if ch.src == ch.dst}
    assert _positive(front) == exhaustive_front(graph, front.points[-1].size, loops, order)


def _loop_of_uneven_phases():
    """One actor of two phases (times 1, 1) whose self-loop of one token is read and
    written by its first phase only."""
    g = SDFGraph("uneven")
    g.add_actor("a", exec=Phases([1, 1]))
    g.add_channel("a", "a", "aa", prod=Phases([1, 0]), cons=Phases([1, 0]), delay=1)
    return g


def test_a_cyclo_static_self_loop_keeps_room_for_what_its_phases_write():
    """The first phase holds the loop's token while it runs and claims room for the one
    it writes: at capacity 1 it never starts, at 2 the actor fires a cycle of phases
    each time unit.  SDF3's least of ``p + max(c, M0)`` over the phases is 1 (the second
    phase: 0 + max(0, 1)), which left the trade-off at the deadlock where ``analyse``
    gives 1; the loop is kept at 2, and the front's top is ``analyse``'s."""
    g = _loop_of_uneven_phases()
    bound = g.bind()
    assert stepped_throughput(bound, {"aa": 1}) == 0
    assert stepped_throughput(bound, {"aa": 2}) == 1
    assert capacity_bounds(bound)["aa"] == (2, 1)
    front = tradeoff(g)
    assert _positive(front) == [(2, 1)]
    assert front.max_throughput == analyse(g, simulate=False).throughput == 1


@st.composite
def one_at_a_time_with_a_phased_loop(draw):
    """:func:`small_csdf` with a loop of one token on every actor, so that its firings
    run one at a time, and on its first actor a second loop whose rates vary by phase
    (one cycle of phases writes and reads ``w`` tokens, 0-2 more tokens than the most a
    firing can find missing)."""
    graph = draw(small_csdf())
    for a in list(graph.actors):
        graph.add_channel(a, a, f"{a}_alone", delay=1)
    n = len(graph.actors["a0"].attrs["exec"]) if isinstance(
        graph.actors["a0"].attrs["exec"], Phases) else 1
    w = draw(st.integers(1, 3))

    def split():
        cuts = sorted(draw(st.lists(st.integers(0, w), min_size=n - 1, max_size=n - 1)))
        return [b - a for a, b in zip([0] + cuts, cuts + [w])]
    prod, cons = split(), split()
    low, tokens = 0, 0
    for p, c in zip(prod, cons):
        low, tokens = min(low, tokens - c), tokens + p - c
    graph.add_channel("a0", "a0", "a0_phased", prod=Phases(prod) if n > 1 else prod[0],
                      cons=Phases(cons) if n > 1 else cons[0],
                      delay=-low + draw(st.integers(0, 2)))
    return graph


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(one_at_a_time_with_a_phased_loop())
def test_self_loops_at_their_capacity_leave_actors_that_fire_one_at_a_time_alone(graph):
    """Where every actor fires one firing at a time, the self-loops' fixed capacities
    never hold a firing back: the trade-off's top (unbounded channels, loops at those
    capacities) is ``analyse``'s throughput."""
    try:
        expected = analyse(graph, simulate=False).throughput
    except DeadlockError:
        return
    assert tradeoff(graph, max_explored=1).max_throughput == expected


# ------------------------------------------------------------------ the order on the command line

def test_the_order_of_an_actor_s_firings_on_the_command_line(capsys):
    """``examples/csdf/orders.sdf``: ``a``'s first phase (5 time units) reads ``b``'s token, its
    second (1) writes one for ``b``.  Firings ending in order: the second ends with the
    first, at t + 5, ``b`` at t + 6 (period 6); starting in order only, as Kiter: the
    second ends at t + 1, ``b`` at t + 2, and the first phases overlap (period 2)."""
    periods = {}
    for order in ("ends", "starts"):
        assert main(["analyse", str(ORDERS_DIFFER), "--csdf-order", order, "--json"]) == 0
        document = json.loads(capsys.readouterr().out)
        assert document["csdf_order"] == order
        periods[order] = document["exact"]["period"]
    assert periods == {"ends": "6", "starts": "2"}
    assert main(["analyse", str(ORDERS_DIFFER), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["csdf_order"] == "ends"


def test_the_order_in_the_trade_off(capsys):
    fronts = {}
    for order in ("ends", "starts"):
        assert main(["analyse", str(ORDERS_DIFFER), "--tradeoff", "--csdf-order", order,
                     "--json"]) == 0
        document = json.loads(capsys.readouterr().out)
        assert document["csdf_order"] == order and document["complete"]
        fronts[order] = [(p["size"], p["exact"]) for p in document["points"]
                         if p["throughput"] > 0]
    g = dsl.load_sdf(ORDERS_DIFFER)[0].bind()
    for order, front in fronts.items():
        assert [(s, Fraction(v)) for s, v in front] == \
            exhaustive_front(g, front[-1][0], order=order)
    assert fronts["ends"][-1][1] == "1/6" and fronts["starts"][-1][1] == "1/2"


def test_a_point_written_back_under_kiter_s_rule(tmp_path, capsys):
    """Each point of the front under ``starts``, written back as channel bounds, has its
    throughput when analysed under the same rule."""
    out = tmp_path / "bounded.sdf"
    assert main(["analyse", str(ORDERS_DIFFER), "--tradeoff", "--csdf-order", "starts",
                 "--json"]) == 0
    points = json.loads(capsys.readouterr().out)["points"]
    for number, point in enumerate(points[1:], 2):
        assert main(["analyse", str(ORDERS_DIFFER), "--tradeoff", "--csdf-order", "starts",
                     "-o", str(out), "--point", str(number)]) == 0
        capsys.readouterr()
        assert main(["analyse", str(out), "--csdf-order", "starts", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["exact"]["throughput"] == point["exact"]


def test_sdf3_import_trade_off(tmp_path, capsys):
    """A cyclo-static graph in SDF3's format gives the front of its restatement."""
    (g,) = dsl.load_sdf(ROOT / "tests" / "data" / "csdf" / "simple_example.sdf")
    xml = tmp_path / "simple.xml"
    dsl.write_sdf3(g, xml)
    assert main(["analyse", str(xml), "--tradeoff", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [(p["size"], Fraction(p["exact"] or 0)) for p in document["points"]] == \
        [(p.size, p.throughput) for p in tradeoff(g).points]
    assert document["csdf_order"] == "ends"


def test_kiter_s_rule_can_be_faster_than_an_execution():
    """Under Kiter's rule a consumer's firing waits for the producer's firing that
    writes the last token it reads only.  Here ``a0``'s third phase writes the two
    tokens ``a1``'s second phase reads, and the space of ``c0`` comes back from ``a1``'s
    phases, which end out of order (times 2 and 1): the constraint graph's period is 1,
    where an execution whose firings end out of order, counting tokens, takes 3/2 per
    iteration (the firings ending in order: 3/2 by both)."""
    (g,) = dsl.parse_sdf("""sdf g {
        actor a0 [exec = [1, 1, 1]]
        actor a1 [exec = [2, 1]]
        channel c0 : a0 -> a1 [prod = [0, 0, 2], cons = [0, 2]]
        channel c1 : a1 -> a0 [prod = [1, 1], cons = [0, 0, 2], delay = 4]
        channel c2 : a0 -> a0 [prod = [0, 0, 2], cons = [0, 2, 0], delay = 4] }""")
    g = g.bind()
    caps = {"c0": 4, "c1": 4, "c2": 4}
    bounded = bounded_graph(g, caps)
    assert throughput(bounded, order="starts").period == 1
    assert throughput(bounded, order="ends").period == Fraction(3, 2)
    assert stepped_throughput(g, caps, ends_in_order=False) == Fraction(2, 3)
    assert stepped_throughput(g, caps) == Fraction(2, 3)


def test_the_option_names_the_orders_of_moc():
    from mapping.cli.commands.analyse import CSDF_ORDERS
    from moc.csdf_kperiodic import ORDERS
    assert CSDF_ORDERS == tuple(ORDERS)


@pytest.mark.parametrize("argv, message", [
    (["--tradeoff", "--timing", "state-space", "--csdf-order", "starts"],
     "the bounded state space ends an actor's firings in order"),
    (["--csdf-order", "sideways"], "invalid choice"),
])
def test_bad_orders_are_refused(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        raise SystemExit(main(["analyse", str(ORDERS_DIFFER), *argv]))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_the_order_is_for_the_application_alone(capsys):
    pair = ROOT / "examples" / "csdf"
    assert main(["analyse", str(pair / "pair.sdf"), str(pair / "duo.moa"),
                 str(pair / "mappings.map"), "--mapping", "split",
                 "--csdf-order", "starts"]) == 2
    assert "--csdf-order is for the application alone" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown order"):
        tradeoff(_pair(), order="sideways")
    with pytest.raises(ValueError, match="K-periodic"):
        tradeoff(_pair(), order="starts", method="state-space")


def test_kiter_s_rule_leaves_the_schedule_unordered_at_its_ends():
    """Under ``starts`` the first iteration's schedule follows the rule and the buffers
    are not explored; under ``ends`` they are, and ``a``'s second firing ends with its
    first."""
    g = dsl.load_sdf(ORDERS_DIFFER)[0]
    ends, starts = analyse(g), analyse(g, order="starts")
    assert [(f.start, f.end) for f in ends.schedule["a"]] == [(0, 5), (0, 5)]
    assert [(f.start, f.end) for f in starts.schedule["a"]] == [(0, 5), (0, 1)]
    assert dict(ends.buffers) == {"ab": 1, "ba": 1} and starts.buffers is None
    assert "not explored" in starts.method


def test_a_deadlock_grows_the_channels_of_one_cycle_of_waits():
    """Kiter's BlackScholes under its rule: the least capacities deadlock, and growing
    every channel whose space a stuck actor waits for explored thousands of deadlocked
    distributions (no point above 0 in 15 s); growing those on one cycle of waits
    reaches the period Kiter gives with unbounded buffers, 42053349
    (``tests/data/kiter_csdf.json``), in a few dozen distributions."""
    (graph,) = dsl.load_sdf(ROOT / "tests" / "data" / "csdf" / "BlackScholes.sdf")
    result = tradeoff(graph, order="starts", max_explored=60)
    assert result.complete and result.explored <= 40
    assert result.points[0].throughput == 0
    assert result.points[-1].throughput == result.max_throughput == Fraction(1, 42053349)
