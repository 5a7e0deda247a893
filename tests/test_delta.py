"""Delta evaluation of local-search moves (issue 13): the loads after moving or swapping
actors, from the moved actors' rows and channels only, give the batch evaluator's values."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import dsl
from mapping.evaluation.batch import BatchEvaluator
from mapping.semantics.problem import bind_problem
from mapping.search import search
from mapping.search.common import Objectives, Scalarizer, Tracker, build_space
from mapping.search.delta import Delta, State
from mapping.search.neighbourhood import Neighbourhood
from moa import Architecture
from moc import SDFGraph

from search_problems import bench_arch, lsla, random_app, roofline_arch, small_arch, split_arch

RTOL = 1e-12


def random_arch(rng: np.random.Generator) -> Architecture:
    """2-5 PEs on 1-3 CNs, random links (some PE pairs may have no route), random
    ``charge`` per CN, a random local CN, random lambda."""
    a = Architecture("rand", lambda_=float(rng.uniform(0.1, 2.0)))
    C = int(rng.integers(1, 4))
    for k in range(C):
        attrs = {"charge": str(rng.choice(["self", "ends", "both"]))}
        a.add_cn(f"n{k}", costs={"time": lsla(float(rng.uniform(1e-10, 1e-8)),
                                              float(rng.uniform(0, 1e-6)))}, attrs=attrs)
    for k in range(1, C):
        if rng.random() < 0.7:                 # otherwise a CN of its own: unroutable pairs
            a.add_link(f"n{k}", f"n{int(rng.integers(0, k))}")
    for p in range(int(rng.integers(2, 6))):
        local = f"n{int(rng.integers(0, C))}" if rng.random() < 0.3 else None
        a.add_pe(f"p{p}", costs={"time": lsla(float(rng.uniform(1e-10, 1e-8)),
                                              float(rng.uniform(0, 1e-5)))}, local=local)
        a.add_link(f"p{p}", f"n{int(rng.integers(0, C))}")
    return a


def state_of(delta: Delta, X: np.ndarray) -> State:
    pe, cn, bad = delta.loads(X)
    return State(X.copy(), delta.values(pe, cn, bad), pe, cn, bad)


def moved(X, rows, a, p, b=None, pb=None):
    Y = X[rows].copy()
    n = np.arange(len(rows))
    Y[n, a] = p
    if b is not None:
        two = b >= 0
        Y[n[two], b[two]] = pb[two]
    return Y


def assert_same(got, want):
    assert np.array_equal(np.isinf(got), np.isinf(want))
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=RTOL, atol=0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), aggregate=st.sampled_from(["sum", "max"]),
       n_actors=st.integers(2, 9))
def test_delta_equals_batch_on_random_problems(seed, aggregate, n_actors):
    rng = np.random.default_rng(seed)
    arch = random_arch(rng)
    n_channels = min(int(rng.integers(n_actors - 1, 2 * n_actors)), n_actors * (n_actors - 1))
    problem = bind_problem(random_app(n_actors, n_channels, seed=seed % 1000), arch)
    ev = BatchEvaluator(problem, "time", aggregate)
    delta = Delta(ev)
    assert delta.supported
    P = ev.n_pes
    X = rng.integers(0, P, (4, n_actors))
    s = state_of(delta, X)
    assert_same(s.values, ev.evaluate(X))
    M = 64
    rows = rng.integers(0, 4, M)
    a, p = rng.integers(0, n_actors, M), rng.integers(0, P, M)
    assert_same(delta.values(*delta.moves(s, rows, a, p)), ev.evaluate(moved(X, rows, a, p)))
    # swaps, and pairs of moves, mixed with single moves (-1)
    b = rng.integers(0, n_actors, M)
    b = np.where((b == a) | (rng.random(M) < 0.3), -1, b)
    pb = np.where(rng.random(M) < 0.5, X[rows, a], rng.integers(0, P, M))
    assert_same(delta.values(*delta.moves(s, rows, a, p, b, pb)),
                ev.evaluate(moved(X, rows, a, p, b, pb)))


@pytest.mark.parametrize("aggregate", ["sum", "max"])
def test_delta_on_the_benchmark_board_with_self_loops(aggregate):
    """A self-loop channel (an actor's state) moves with its actor."""
    app = random_app(10, 14, seed=4)
    app.add_channel("a3", "a3", "state", prod=1, cons=1, delay=1, size=8.0)
    problem = bind_problem(app, bench_arch(lambda_=0.5))
    ev = BatchEvaluator(problem, "time", aggregate)
    delta = Delta(ev)
    rng = np.random.default_rng(0)
    X = rng.integers(0, 8, (3, 10))
    s = state_of(delta, X)
    rows = np.repeat(np.arange(3), 80)
    a, p = np.tile(np.repeat(np.arange(10), 8), 3), np.tile(np.arange(8), 30)
    assert_same(delta.values(*delta.moves(s, rows, a, p)), ev.evaluate(moved(X, rows, a, p)))


def test_delta_is_refused_where_tables_are_not_linear():
    problem = bind_problem(random_app(6, 8, seed=5), roofline_arch())
    assert not Delta(BatchEvaluator(problem, "time", "max")).supported
    problem = bind_problem(random_app(6, 8, seed=5), small_arch())
    assert not Delta(BatchEvaluator(problem, "time", "exclusive")).supported


def tracker_for(problem, metric="time", aggregate="max", budget=None):
    evs = [BatchEvaluator(problem, metric, aggregate)]
    return Tracker(Objectives(evs), Scalarizer(np.ones(1), np.ones(1)), budget)


class Task:
    def __init__(self, space):
        self.space, self.params = space, {}


@pytest.mark.parametrize("arch, aggregate", [(roofline_arch(), "max"), (small_arch(), "sum")])
def test_neighbourhood_falls_back_to_the_batch_evaluator(arch, aggregate):
    problem = bind_problem(random_app(6, 8, seed=5), arch)
    tracker = tracker_for(problem, aggregate=aggregate)
    space = build_space(problem)
    nb = Neighbourhood(Task(space), tracker)
    assert (nb.delta is None) == (aggregate == "max")
    rng = np.random.default_rng(1)
    s = nb.start(space.random(rng, 2))
    acts, pes = space.moves_of(s.X)
    rows = np.repeat(np.arange(2), len(acts))
    mv = nb.evaluate(s, rows, np.tile(acts, 2), pes.ravel())
    ev = tracker.objectives.evaluators[0]
    assert_same(mv.values, ev.evaluate(mv.mappings(s.X, np.arange(len(rows)))))
    assert tracker.evaluations == 2 + len(rows)


def test_neighbourhood_counts_moves_within_the_budget():
    problem = bind_problem(random_app(8, 12, seed=3), bench_arch())
    tracker = tracker_for(problem, budget=100)
    space = build_space(problem)
    nb = Neighbourhood(Task(space), tracker)
    s = nb.start(space.random(np.random.default_rng(0), 1))
    acts, pes = space.moves_of(s.X)
    assert len(acts) == 8 * 7
    mv = nb.evaluate(s, 0, acts, pes[0])
    assert len(mv.values) == 56 and tracker.evaluations == 57
    mv = nb.evaluate(s, 0, acts, pes[0])
    assert len(mv.values) == 43 and tracker.exhausted


def test_unmodelled_mappings_cost_inf_as_in_the_batch_evaluator():
    """A mapping whose every busy element has no model for the metric: the batch
    evaluator makes it inf (the reference raises), so does delta evaluation."""
    a = Architecture("half")
    a.add_cn("bus", costs={"energy": lsla(1e-9)})
    a.add_pe("p", costs={"energy": lsla(1e-9)})
    a.add_pe("q", costs={"time": lsla(1e-9)})       # no energy model
    a.add_link("p", "bus")
    a.add_link("q", "bus")
    problem = bind_problem(random_app(3, 2, seed=0), a)
    tracker = tracker_for(problem, "energy", "max")
    space = build_space(problem)
    nb = Neighbourhood(Task(space), tracker)
    assert nb.delta is not None
    s = nb.start(np.array([[1, 1, 0]]))
    mv = nb.evaluate(s, 0, np.array([2, 0]), np.array([1, 1]))
    want = tracker.objectives.evaluators[0].evaluate(mv.mappings(s.X, np.arange(2)))
    assert np.isinf(want[0]) and np.isfinite(want[1])
    assert_same(mv.values, want)


@pytest.mark.parametrize("strategy", ["greedy", "tabu", "anneal"])
@pytest.mark.parametrize("aggregate", ["sum", "max"])
def test_reported_value_is_the_evaluators(strategy, aggregate):
    """Delta values steer the search; the reported value is the batch evaluator's own,
    exactly, and every candidate move counts against the budget."""
    problem = bind_problem(random_app(12, 18, seed=2), bench_arch())
    res = search(problem, "time", aggregate, strategy=strategy, budget=30_000, seed=1)
    ev = BatchEvaluator(problem, "time", aggregate)
    assert res.value == ev.evaluate(ev.encode(res.mapping))[0]
    assert res.evaluations == 30_000


def test_ruin_draws_from_the_bottleneck_element():
    problem = bind_problem(random_app(10, 14, seed=1), bench_arch())
    tracker = tracker_for(problem)
    space = build_space(problem)
    nb = Neighbourhood(Task(space), tracker)
    rng = np.random.default_rng(3)
    X = space.random(rng, 20)
    hot = nb.loading(X)
    ev = tracker.objectives.evaluators[0]
    loads = ev.loads(X)                                       # elements in architecture order
    names, order = ev.elements, ev.pes + ev.cns
    for k in range(len(X)):
        top = order[int(np.argmax(np.concatenate([
            loads[k, [names.index(p) for p in ev.pes]],
            ev.lambda_ * loads[k, [names.index(c) for c in ev.cns]]])))]
        if top in ev.pes:
            assert set(np.flatnonzero(hot[k])) == set(np.flatnonzero(X[k] == ev.pes.index(top)))
        else:
            assert hot[k].any()
    Y = nb.ruin(X, rng, 4)
    changed = Y != X
    assert changed.any() and (changed.sum(axis=1) <= 4).all()
    src, dst = ev.tables.src, ev.tables.dst
    for k in np.flatnonzero(changed.any(axis=1)):
        moved = np.flatnonzero(changed[k])
        to = Y[k, moved[0]]
        assert (Y[k, moved] == to).all()             # the group lands on one PE
        # and is connected, through channels among the actors now there, to an actor
        # that loads the bottleneck element
        there = set(np.flatnonzero(Y[k] == to))
        reached = {a for a in there if hot[k, a]}
        assert reached
        grew = True
        while grew:
            grew = False
            for s, d in zip(src, dst):
                if s in there and d in there and (s in reached) != (d in reached):
                    reached |= {s, d}
                    grew = True
        assert set(moved) <= reached


def test_ruin_moves_a_connected_group_to_one_pe():
    """On a chain a0 - a1 - ... - a7, every kick moves consecutive actors together."""
    app = SDFGraph("chain")
    for i in range(8):
        app.add_actor(f"a{i}", quanta=100.0)
    for i in range(7):
        app.add_channel(f"a{i}", f"a{i + 1}", f"c{i}", prod=1, cons=1, size=1.0)
    problem = bind_problem(app, bench_arch())
    tracker = tracker_for(problem)
    space = build_space(problem)
    nb = Neighbourhood(Task(space), tracker)
    rng = np.random.default_rng(0)
    X = space.random(rng, 200)
    Y = nb.ruin(X, rng, 5)
    sizes = []
    for k in range(len(X)):
        to_pe = {int(Y[k, a]) for a in np.flatnonzero(Y[k] != X[k])}
        assert len(to_pe) <= 1
        if to_pe:
            on = Y[k] == to_pe.pop()
            moved = np.flatnonzero(Y[k] != X[k])
            # the moved actors lie inside one run of consecutive actors on that PE
            lo, hi = moved.min(), moved.max()
            assert on[lo:hi + 1].all()
            sizes.append(hi - lo + 1)
    assert max(sizes) >= 3


@pytest.mark.parametrize("strategy", ["greedy", "tabu", "anneal"])
def test_searches_leave_unroutable_mappings(strategy):
    """Two PEs on CNs without a link: only mappings on one PE have a route."""
    problem = bind_problem(random_app(8, 10, seed=0), split_arch(q_alpha=2e-9))
    res = search(problem, "time", "max", strategy=strategy, budget=3000, seed=0)
    assert np.isfinite(res.value) and set(res.mapping.values()) == {"p"}


def test_sampled_neighbourhoods(monkeypatch):
    """Neighbourhoods larger than the sample: random valid moves, valued and counted as
    the full ones; greedy and tabu stay reproducible and report exact values."""
    problem = bind_problem(random_app(12, 18, seed=2), bench_arch())
    space = build_space(problem, pins={"a0": "gpu"}, allowed={"a1": "A15"})
    nb = Neighbourhood(Task(space), tracker_for(problem))
    X = space.random(np.random.default_rng(0), 3)
    rows, actors, pes, per, full = nb.candidates(X, np.random.default_rng(1), 20)
    assert not full and per == 20 and len(rows) == 60
    assert (actors != 0).all() and space.allowed[actors, pes].all()
    assert (pes != X[rows, actors]).all()
    import mapping.search.greedy as greedy
    import mapping.search.tabu as tabu
    monkeypatch.setattr(greedy, "SAMPLE", 16)
    monkeypatch.setattr(tabu, "SAMPLE", 16)
    ev = BatchEvaluator(problem, "time", "max")
    for strategy in ("greedy", "tabu"):
        a = search(problem, "time", "max", strategy=strategy, budget=8000, seed=3)
        b = search(problem, "time", "max", strategy=strategy, budget=8000, seed=3)
        assert a.mapping == b.mapping and a.evaluations == 8000
        assert a.value == ev.evaluate(ev.encode(a.mapping))[0]


def test_impossible_pairs_go_to_the_batch_evaluator():
    """inf in ``proc`` (an actor that cannot run on a PE) is no load to subtract: delta
    evaluation declines it (inf - inf would be nan, and argmin picks nan first) and the
    heuristics still keep the actor off that PE."""
    app = dsl.parse_sdf("""sdf s {
        actor a [t_A = 1, t_B = 2]
        actor b [t_A = 3]
        a -> b [size = 2]
    }""")[0]
    arch = dsl.parse_moa("""moa m {
        type A [time = lookup(key = "t_A")]
        type B [time = lookup(key = "t_B", default = inf)]
        pe x : A
        pe y : B
        cn bus [time = lsla(alpha = 1)]
        x -- bus; y -- bus
    }""")[0]
    problem = bind_problem(app, arch)
    assert not Delta(BatchEvaluator(problem, "time", "sum")).supported
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for strategy in ("greedy", "tabu", "anneal"):
            res = search(problem, "time", "sum", strategy=strategy, budget=200, seed=1)
            # by hand: a, b on x: 1 + 3 = 4; a on y: 2 + 3 + bus 2 = 7; b on y: inf
            assert res.mapping["b"] == "x" and res.value == pytest.approx(4.0)


def test_fill_moves_a_connected_region_that_fits_onto_a_pe_with_room():
    problem = bind_problem(random_app(30, 45, seed=4), bench_arch(aggregate="max"))
    tracker = tracker_for(problem)
    space = build_space(problem)
    nb = Neighbourhood(Task(space), tracker)
    rng = np.random.default_rng(5)
    X = space.random(rng, 40)
    d = nb.delta
    pe, cn, _ = d.loads(X)
    top = np.concatenate([pe, d.lambda_ * cn]).max(axis=0)
    Y = nb.fill(X, rng)
    src, dst = d.src, d.dst
    filled = 0
    for k in range(len(X)):
        moved = np.flatnonzero(Y[k] != X[k])
        if not len(moved):
            continue
        filled += 1
        to = {int(p) for p in Y[k, moved]}
        assert len(to) == 1                              # one PE
        p = to.pop()
        room = top[k] - pe[:, k]
        assert room[p] >= 0.5 * room.max()               # one with room
        after = d.loads(Y[k][None])[0][p, 0]
        assert after <= top[k] * (1 + 1e-12)             # and the region fits it
        reached, grew = {int(moved[0])}, True            # connected through its channels
        while grew:
            grew = False
            for s, t in zip(src, dst):
                if s in moved and t in moved and (s in reached) != (t in reached):
                    reached |= {int(s), int(t)}
                    grew = True
        assert reached == set(moved.tolist())
    assert filled >= 30


def test_fill_takes_a_whole_cluster_not_its_neighbour():
    """Two cliques of four actors joined by one channel, all on a fast PE; a slow PE has
    room for four: greedy graph growing from any actor takes exactly its own clique (an
    actor of the other has more channels out than in)."""
    app = SDFGraph("rings")
    rings = ("a", "b")
    for r in rings:
        for i in range(4):
            app.add_actor(f"{r}{i}", quanta=100.0)
    n = 0
    for r in rings:
        for i, j in ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)):
            app.add_channel(f"{r}{i}", f"{r}{j}", f"c{n}", prod=1, cons=1, size=1.0)
            n += 1
    app.add_channel("a3", "b1", "bridge", prod=1, cons=1, size=1.0)
    arch = Architecture("two_speeds", aggregate="max")
    arch.add_cn("bus", costs={"time": lsla(1e-9, 0.0)})
    arch.add_pe("fast", costs={"time": lsla(1e-9, 0.0)})
    arch.add_pe("slow", costs={"time": lsla(1.99e-9, 0.0)})     # four fit, not five
    for p in ("fast", "slow"):
        arch.add_link(p, "bus")
    problem = bind_problem(app, arch)
    tracker = tracker_for(problem)
    space = build_space(problem)
    nb = Neighbourhood(Task(space), tracker)
    fast, slow = space.pes.index("fast"), space.pes.index("slow")
    X = np.full((100, 8), fast)
    Y = nb.fill(X, np.random.default_rng(0))
    regions = {tuple(sorted(space.actors[a] for a in np.flatnonzero(row == slow)))
               for row in Y}
    assert regions == {("a0", "a1", "a2", "a3"), ("b0", "b1", "b2", "b3")}
