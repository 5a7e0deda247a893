"""Issue 43: the set-partitioning bound (columns of actors that fit one PE, their cut
channels charged to the CNs) never exceeds the optimum, and counts what the cluster
relaxation cannot: the traffic between alike PEs that a capacity forces."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import dsl
from moa import Architecture, CostSpec
from mapping.semantics.problem import bind_problem
from mapping.search import exact, partition_bound, search
from mapping.search.partition_bound import charges as partition_charges
from mapping.search.partition_bound import master as partition_master
from mapping.search.partition_bound import pricing as partition_pricing
from mapping.search.engine import prepare
from search_problems import random_app
from test_cpsat import small

CYCLE = """sdf cycle4 {
    actor a [quanta = 1000]
    actor b [quanta = 1000]
    actor c [quanta = 1000]
    actor d [quanta = 1000]
    channel ab : a -> b [size = 10000]
    channel bc : b -> c [size = 10000]
    channel cd : c -> d [size = 10000]
    channel ad : a -> d [size = 10000]
}
"""
TWO_CORES = """moa two {
    aggregate = max
    type core [time = lsla(alpha = 1e-9, beta = 0)]
    cn bus [time = lsla(alpha = 1e-9, beta = 0)]
    pe core[0..1] : core
    core[*] -- bus
}
"""


def bridged(n_pes: int, seed: int) -> Architecture:
    """Cores of two kinds on two buses joined by a bridge (the shape of
    ``tests/perf/bench_exact_max.py``), small enough to enumerate."""
    rng = np.random.default_rng(seed)
    a = Architecture(f"bridged{n_pes}", aggregate="max")
    for name, alpha in (("little", 2e-9), ("big", 0.7e-9)):
        a.add_type(name, costs={"time": CostSpec("lsla", {
            "alpha": alpha * float(rng.uniform(0.8, 1.25)), "beta": 1e-6})})
    for cn, alpha in (("bus_a", 4e-10), ("bus_b", 4e-10), ("bridge", 8e-10)):
        a.add_cn(cn, costs={"time": CostSpec("lsla", {"alpha": alpha, "beta": 2e-6})})
    a.add_link("bus_a", "bridge")
    a.add_link("bridge", "bus_b")
    for i in range(n_pes):
        kind, bus = ("little", "bus_a") if i % 2 == 0 else ("big", "bus_b")
        a.add_pe(f"{kind}[{i}]", type_name=kind)
        a.add_link(f"{kind}[{i}]", bus)
    return a


RING = "sdf ring6 {\n" + "".join(
    f"    actor a{i} [quanta = 1000]\n" for i in range(6)) + "".join(
    f"    channel c{i} : a{i} -> a{(i + 1) % 6} [size = 10000{', delay = 1' * (i == 5)}]\n"
    for i in range(6)) + "}\n"


def two_sides(bus_alpha: float = 1e-10, bridge_alpha: float = 1e-9) -> Architecture:
    """Four alike cores, two on each of two buses joined by a bridge (no start-up
    costs, so every figure is a multiple of ``w`` = 1000 quanta and ``h`` = 10000
    bytes)."""
    a = Architecture("two_sides", aggregate="max")
    a.add_type("core", costs={"time": CostSpec("lsla", {"alpha": 1e-9, "beta": 0.0})})
    for cn, alpha in (("bus_a", bus_alpha), ("bus_b", bus_alpha), ("bridge", bridge_alpha)):
        a.add_cn(cn, costs={"time": CostSpec("lsla", {"alpha": alpha, "beta": 0.0})})
    a.add_link("bus_a", "bridge")
    a.add_link("bridge", "bus_b")
    for i in range(4):
        a.add_pe(f"core[{i}]", type_name="core")
        a.add_link(f"core[{i}]", "bus_a" if i < 2 else "bus_b")
    return a


def least_cn_load(ev, T):
    """By enumeration: the least busiest-CN value (after lambda) over the mappings
    whose PE loads are all at most ``T`` (inf where there is none)."""
    X = np.array(list(itertools.product(range(ev.n_pes), repeat=ev.n_actors)))
    loads = ev.loads(X)
    pe = np.array([e in ev.pes for e in ev.elements])
    fits = (loads[:, pe] <= T).all(axis=1)
    if not fits.any():
        return np.inf
    return float((ev.tables.lambda_ * loads[fits][:, ~pe]).max(axis=1).min())


def problem_of(kind, n, P, seed):
    if kind == "bridged":
        problem = bind_problem(random_app(n, n + 2, seed=seed), bridged(P, seed))
        return problem, search(problem, "time", "max", strategy="exhaustive").value
    return small(n, P, seed, kind == "charged")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 7), P=st.integers(3, 5), seed=st.integers(0, 60),
       kind=st.sampled_from(["bus", "charged", "bridged"]))
def test_bound_never_exceeds_the_exhaustive_optimum(n, P, seed, kind):
    """On random instances (a bus, communication charged to the cores, two buses and
    a bridge): ``L(T)`` is at most the least busiest CN over the mappings whose PE
    loads fit ``T`` (enumerated), and the bisected bound, from a random mapping's
    value down, at most exhaustive's optimum."""
    problem, best = problem_of(kind, n, P, seed)
    setup = prepare(problem, "time", "max")
    ev, allowed = setup.objectives.evaluators[0], setup.space.allowed
    for share in (0.5, 0.8, 1.0, 1.3):
        T = best * share
        got = partition_bound.trial(ev, allowed, T)
        assert got is not None
        assert got <= least_cn_load(ev, T) * (1 + 1e-9) + 1e-18
    start = setup.space.random(np.random.default_rng(seed), 1)[0]
    upper = exact.mapping_value(ev, start)
    res = partition_bound.bound(ev, allowed, upper)
    assert res.complete
    assert res.value is None or res.value <= best * (1 + 1e-12)


def test_four_actor_cycle_by_hand():
    """Four actors of work ``w`` = 1e-6 s in a cycle of channels costing ``h`` = 1e-5 s
    on the bus, two alike cores.  Split, any part cuts two channels (bus ≥ 2h), so
    the optimum is all four on one core: 4w.  The cluster relaxation merges the
    cores (load 4w / 2, inner channels free): 2w.  Under ``T`` < 4w a column holds
    at most three actors and cuts two channels, half of each charged to the bus by
    each end: the columns must count 4/3 to cover four actors, so the bus carries at
    least 4/3 · h > T, and the bound reaches 4w."""
    w, h = 1e-6, 1e-5
    problem = bind_problem(dsl.loads_sdf(CYCLE)[0], dsl.loads_moa(TWO_CORES)[0])
    setup = prepare(problem, "time", "max")
    ev, allowed = setup.objectives.evaluators[0], setup.space.allowed
    assert ev.tables.proc == pytest.approx(np.full((4, 2), w))
    assert search(problem, "time", "max", strategy="exhaustive").value == \
        pytest.approx(4 * w)
    assert exact.cluster_floor(setup) == pytest.approx(2 * w)
    assert partition_bound.trial(ev, allowed, 3.5 * w) == pytest.approx(4 / 3 * h, rel=1e-9)
    setup.info["incumbent"] = np.array([0, 1, 0, 1])           # every channel cut: 4h
    res = partition_bound.floor(setup)
    # the bisection stops within RESOLUTION of the starting value (4h) below 4w
    assert 4 * w - partition_bound.RESOLUTION * 4 * h <= res.value <= 4 * w
    assert res.value > 1.9 * exact.cluster_floor(setup)


def test_alike_cores_share_the_route_weights():
    """The weights of the route decomposition are averaged over alike PEs: each of two
    cores on one bus is charged half of a cut channel (an optimal vertex may charge
    one core all of it), and the bridge of two buses is one group's cut."""
    ev = prepare(bind_problem(dsl.loads_sdf(CYCLE)[0], dsl.loads_moa(TWO_CORES)[0]),
                 "time", "max").objectives.evaluators[0]
    groups, single, weight = partition_bound.route_cuts(ev.tables.route,
                                                        ev.tables.unroutable, 2)
    assert groups == [] and single.tolist() == [[0.5, 0.5]]
    problem = bind_problem(random_app(4, 5, seed=0), bridged(4, 0))
    ev = prepare(problem, "time", "max").objectives.evaluators[0]
    groups, single, weight = partition_bound.route_cuts(ev.tables.route,
                                                        ev.tables.unroutable, 4)
    cns = ev.cns
    # PEs 0, 2 on bus_a; 1, 3 on bus_b: the group is one side of the bridge
    assert [sorted(g) for g in groups] in ([[0, 2]], [[1, 3]])
    bridge, bus_a = cns.index("bridge"), cns.index("bus_a")
    assert weight[bridge].tolist() == [1.0] and single[bridge].tolist() == [0, 0, 0, 0]
    assert single[bus_a].tolist() == [0.5, 0, 0.5, 0] and weight[bus_a].tolist() == [0.5]


def test_sum_is_not_bounded():
    problem = bind_problem(dsl.loads_sdf(CYCLE)[0], dsl.loads_moa(TWO_CORES)[0])
    ev = prepare(problem, "time", "sum").objectives.evaluators[0]
    assert partition_bound.bound(ev, np.ones((4, 2), bool), 1.0).value is None


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_actors_barred_from_a_pe_type():
    """The SDF3 example's actors may run on some processor types only (an infinite
    load elsewhere): the bound stays below exhaustive's optimum (96, worked by hand in
    the example's README), and a column's load never multiplies that infinity by 0."""
    from pathlib import Path
    example = Path(__file__).resolve().parents[1] / "examples" / "sdf3_lookup"
    problem = bind_problem(dsl.read_sdf3(example / "audio.xml"),
                           dsl.load_moa(example / "board.moa")[0])
    setup = prepare(problem, "time", "max")
    ev, allowed = setup.objectives.evaluators[0], setup.space.allowed
    assert not allowed.all()
    res = partition_bound.bound(ev, allowed, 200.0)
    assert res.complete
    assert res.value is not None and res.value <= 96.0 * (1 + 1e-12)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 7), P=st.integers(4, 5), seed=st.integers(0, 200),
       share=st.sampled_from([0.4, 0.6, 0.8, 1.0, 1.2]))
def test_side_columns_never_exceed_enumeration_behind_a_bridge(n, P, seed, share):
    """Behind a bridge with two PEs or more on each side (so that the bridge is a
    group's cut and the side columns price it): ``L(T)`` stays at or below the least
    busiest CN over the mappings whose PE loads fit ``T`` (enumerated), ``T`` from
    well below the optimum's PE loads to above them."""
    problem = bind_problem(random_app(n, n + 2, seed=seed), bridged(P, seed))
    setup = prepare(problem, "time", "max")
    ev, allowed = setup.objectives.evaluators[0], setup.space.allowed
    X = np.array(list(itertools.product(range(ev.n_pes), repeat=ev.n_actors)))
    pe = np.array([e in ev.pes for e in ev.elements])
    T = share * float(ev.loads(X)[:, pe].max(axis=1).min()) * 2
    got = partition_bound.trial(ev, allowed, T)
    assert got is not None
    assert got <= least_cn_load(ev, T) * (1 + 1e-9) + 1e-18


def ring_on_two_sides():
    problem = bind_problem(dsl.loads_sdf(RING)[0], two_sides())
    setup = prepare(problem, "time", "max")
    return setup.objectives.evaluators[0], setup.space.allowed


def test_ring_across_a_bridge_by_hand():
    """Six actors of work ``w`` = 1e-6 s in a ring of channels costing ``h`` = 1e-5 s
    on the bridge and ``h/10`` on a bus; two alike cores on each side.  Under ``T`` =
    2.5·w a core holds two actors, a side (two cores) at most five by its total
    capacity 5·w: every side cuts the ring, so at least two channels cross the bridge,
    and two arcs of 3 and 3 actors (each split 2 + 1 on its side) give exactly 2h
    there, the buses 3h/10 at most.  The side columns reach it: ``L(2.5w) = 2h``.
    Without them (the bound before the side columns) it was 0.15h: the program split
    the actors between the sides in fractions, and the bridge term ``|y(a) − y(b)|``
    vanished."""
    w, h = 1e-6, 1e-5
    ev, allowed = ring_on_two_sides()
    assert ev.tables.proc == pytest.approx(np.full((6, 4), w))
    assert least_cn_load(ev, 2.5 * w) == pytest.approx(2 * h)
    assert partition_bound.trial(ev, allowed, 2.5 * w) == pytest.approx(2 * h, rel=1e-6)


def test_doubling_the_bridge_charge_breaks_the_bound(monkeypatch):
    """The check above can fail: with the charge of a channel cut between the sides
    doubled (an invalid relaxation) the ring's ``L(2.5w)`` is 4h, above the least
    busiest CN of every mapping that fits (2h)."""
    h = 1e-5
    tables = partition_charges.Tables.__init__

    def doubled(self, *args):
        tables(self, *args)
        self.gweight = 2 * self.gweight

    monkeypatch.setattr(partition_charges.Tables, "__init__", doubled)
    ev, allowed = ring_on_two_sides()
    got = partition_bound.trial(ev, allowed, 2.5e-6)
    assert got == pytest.approx(4 * h, rel=1e-6)
    assert got > least_cn_load(ev, 2.5e-6) * 1.5


def lagrangian_at(tb, T, d):
    """``L(T)`` at the multipliers ``d``, every pricing problem solved exactly."""
    probs = partition_master._problems(tb, T, d)
    mins = [-pr.exact(None)[1] for pr in probs]
    K = len(tb.pe)
    return partition_master._lagrangian(tb, d.pi, mins[:K], mins[K:])


def random_duals(tb, T, rng):
    """Multipliers anywhere: the cover's and the coupling's free, the CNs' ``ν ≥ 0``
    with ``Σν ≤ 1``."""
    A, C, K, G = tb.A, tb.C, len(tb.pe), len(tb.groups)
    member = partition_master.Master(tb, T).member
    sigma = rng.normal(0.0, T / A, (G, A))
    return partition_master.Duals(
        z=T, pi=rng.uniform(-0.5, 1.5, A) * T / A * C, mu=np.zeros(K),
        nu=rng.dirichlet(np.ones(C)) * rng.uniform(0.2, 1.0), kappa=np.zeros(G),
        sigma=sigma, rho=-member @ sigma, slack=0.0, y=np.zeros((G, A)))


def _bridged_enumerated(n, P, seed, share):
    """A random application on a bridged board, its ``max`` search setup, and ``T``:
    ``share`` times the least busiest PE over every mapping (enumerated)."""
    problem = bind_problem(random_app(n, n + 2, seed=seed), bridged(P, seed))
    setup = prepare(problem, "time", "max")
    ev = setup.objectives.evaluators[0]
    X = np.array(list(itertools.product(range(ev.n_pes), repeat=ev.n_actors)))
    pe = np.array([e in ev.pes for e in ev.elements])
    return problem, setup, share * float(ev.loads(X)[:, pe].max(axis=1).min())


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 7), P=st.integers(4, 5), seed=st.integers(0, 200),
       share=st.sampled_from([0.6, 1.0, 1.4]), alpha=st.sampled_from([0.0, 0.5, 0.9]))
def test_lagrangian_bound_holds_at_smoothed_multipliers(n, P, seed, share, alpha):
    """The stabilized exact pricing proves at ``α·center + (1 − α)·d``: ``L(T)`` there,
    for random ``center`` and ``d`` (and at the master's own multipliers mixed with a
    random center), stays at or below the least busiest CN over the mappings whose PE
    loads fit ``T`` (enumerated); and the column generation with heavy smoothing
    still bounds the optimum."""
    problem, setup, T = _bridged_enumerated(n, P, seed, share)
    ev, allowed = setup.objectives.evaluators[0], setup.space.allowed
    least = least_cn_load(ev, T)
    tb = partition_charges.Tables(ev, allowed)
    rng = np.random.default_rng(seed)
    center, d = random_duals(tb, T, rng), random_duals(tb, T, rng)
    assert lagrangian_at(tb, T, partition_master._mix(center, d, alpha)) <= \
        least * (1 + 1e-9) + 1e-18
    master = partition_master.Master(tb, T)
    for k, col in enumerate(tb.pe):
        for a in np.flatnonzero(np.isfinite(col.work) & (col.work <= T)):
            master.add(k, np.eye(tb.A, dtype=bool)[a], float(col.work[a]))
    own = master.solve()
    if own is not None:
        assert lagrangian_at(tb, T, partition_master._mix(center, own, alpha)) <= \
            least * (1 + 1e-9) + 1e-18
    got = partition_master.run_trial(tb, T, partition_master.Pool(), None, rng,
                                     prove=True, center=center)[1]
    assert got is not None and got <= least * (1 + 1e-9) + 1e-18


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 7), P=st.integers(3, 5), seed=st.integers(0, 60),
       kind=st.sampled_from(["bus", "bridged"]), checks=st.integers(0, 40))
def test_a_stop_ends_the_bound_before_its_next_program(n, P, seed, kind, checks):
    """``stop()`` true from its ``checks``-th call on (another thread's request): no
    master program starts after that, the bound says it was stopped, and what it
    proved before is still at most exhaustive's optimum."""
    problem, best = problem_of(kind, n, P, seed)
    setup = prepare(problem, "time", "max")
    ev, allowed = setup.objectives.evaluators[0], setup.space.allowed
    start = setup.space.random(np.random.default_rng(seed), 1)[0]
    asked, late = [], []
    real = partition_master.Master.solve

    def stop():
        asked.append(len(asked) >= checks)
        return asked[-1]

    def solve(self):
        late.append(bool(asked) and asked[-1])
        return real(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(partition_master.Master, "solve", solve)
        res = partition_bound.bound(ev, allowed, exact.mapping_value(ev, start), stop=stop)
    assert not any(late)
    assert res.stopped == any(asked)
    assert res.value is None or res.value <= best * (1 + 1e-12)


def least_cn_load_within(ev, tb, T, low, high):
    """:func:`least_cn_load` over the mappings whose side of the first group (the
    actors on its PEs) has a work (the side pricing's) within ``[low, high]``."""
    X = np.array(list(itertools.product(range(ev.n_pes), repeat=ev.n_actors)))
    loads = ev.loads(X)
    pe = np.array([e in ev.pes for e in ev.elements])
    probe = partition_pricing.SideProblem(tb, 0, T, np.zeros(tb.C), np.zeros(tb.A))
    on = np.isin(X, sorted(tb.groups[0]))
    work = (on * probe.win[None, :]).sum(axis=1)
    fits = (loads[:, pe] <= T).all(axis=1) & (work >= low) & (work <= high)
    if not fits.any():
        return np.inf
    return float((ev.tables.lambda_ * loads[fits][:, ~pe]).max(axis=1).min())


def test_ring_windows_by_hand():
    """The ring across the bridge at ``T`` = 2.5·w, its side's work split into windows
    ``[0, 1.5w]`` and ``[1.5w, ∞)``.  In the first a side holds one actor at most, so
    the other side's two cores, two actors each, cannot hold the other five: no
    mapping, and the window's bound is above ``T``.  In the second every side cuts
    the ring twice: 2h on the bridge, as without windows.  The least of the two, 2h,
    is what :func:`~mapping.search.partition_bound.windowed` proves."""
    w, h = 1e-6, 1e-5
    ev, allowed = ring_on_two_sides()
    tb = partition_charges.Tables(ev, allowed)
    T = 2.5 * w
    rng = np.random.default_rng(0)
    assert least_cn_load_within(ev, tb, T, 0.0, 1.5 * w) == np.inf
    assert least_cn_load_within(ev, tb, T, 1.5 * w, np.inf) == pytest.approx(2 * h)
    empty = partition_master.run_trial(tb, T, partition_master.Pool(), None, rng, True,
                                       window=(0, 0.0, 1.5 * w))[1]
    assert empty > T
    full = partition_master.run_trial(tb, T, partition_master.Pool(), None, rng, True,
                                      window=(0, 1.5 * w, np.inf))[1]
    assert full == pytest.approx(2 * h, rel=1e-6)
    windows = [(0.0, 1.5 * w), (1.5 * w, np.inf)]
    z, got = partition_bound.windowed(tb, T, partition_master.Pool(), None, rng, True,
                                      None, windows, {}, most=2)
    assert got == pytest.approx(2 * h, rel=1e-6) and len(windows) == 2


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 7), P=st.integers(4, 5), seed=st.integers(0, 200),
       share=st.sampled_from([0.6, 1.0, 1.4]), cut=st.floats(0.1, 0.9))
def test_windows_never_exceed_enumeration(n, P, seed, share, cut):
    """Behind a bridge: each window's ``L(T)`` stays at or below the least busiest CN
    over the mappings whose PE loads fit ``T`` and whose side's work lies within the
    window (enumerated), for a random split of the side's work; the windowed bound
    (windows refined as the search goes) stays at or below exhaustive's optimum."""
    problem, setup, T = _bridged_enumerated(n, P, seed, share)
    ev, allowed = setup.objectives.evaluators[0], setup.space.allowed
    tb = partition_charges.Tables(ev, allowed)
    assert tb.groups
    probe = partition_pricing.SideProblem(tb, 0, T, np.zeros(tb.C), np.zeros(tb.A))
    split = cut * float(probe.win.sum())
    rng = np.random.default_rng(seed)
    for low, high in ((0.0, split), (split, np.inf)):
        got = partition_master.run_trial(tb, T, partition_master.Pool(), None, rng, True,
                                         window=(0, low, high))[1]
        assert got is not None
        assert got <= least_cn_load_within(ev, tb, T, low, high) * (1 + 1e-9) + 1e-18
    best = search(problem, "time", "max", strategy="exhaustive").value
    start = setup.space.random(rng, 1)[0]
    res = partition_bound.bound(ev, allowed, exact.mapping_value(ev, start), windows=True)
    assert res.value is None or res.value <= best * (1 + 1e-12)
