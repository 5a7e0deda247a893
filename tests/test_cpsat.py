"""Issue 43: the CP-SAT engine of ``exact`` for ``max`` — the optimum of exhaustive
enumeration where that finishes, a bound that never exceeds it, the anytime report
(trace, bound source, both engines' gaps) and the engine's absence handled."""
from __future__ import annotations

import importlib.abc
import json
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from mapping.semantics.problem import bind_problem
from mapping.search import cpsat, highs, search
from mapping.search.common import SearchError
from mapping.search.engine import prepare
from search_instances import instance
from search_problems import random_app
from test_charge import charged_arch
from test_exact_max import DATA, OPTIMA, consistent, run_cli, stored

needs_ortools = pytest.mark.skipif(not cpsat.available(), reason="needs ortools")


@needs_ortools
@pytest.mark.parametrize("engine", ["cpsat", "both"])
def test_stored_optimum_by_cpsat(engine):
    entry = OPTIMA["a10_p4_s0"]            # proven by exact and by exhaustive
    res = search(stored("a10_p4_s0"), "time", "max", strategy="exact", engine=engine,
                 budget=500, time_limit=60)
    assert res.optimal and res.extra["engine"] == engine
    assert res.value == pytest.approx(entry["exhaustive"], rel=cpsat.TOLERANCE)
    bound, gap = consistent(res)
    assert bound <= entry["exhaustive"] * (1 + 1e-12) and gap <= cpsat.TOLERANCE
    assert res.value <= res.extra["start"]["value"]


def small(n, P, seed, charged):
    """A random instance small enough to enumerate, with communication charged to the
    cores or not, and its optimum by exhaustive enumeration."""
    if charged:                 # the 8-PE board: at most 8^5 mappings to enumerate
        problem = bind_problem(random_app(min(n, 5), min(n, 5) + 2, seed=seed),
                               charged_arch("ends", lambda_=2.0, aggregate="max"))
    else:
        problem = bind_problem(*instance(n, P, seed))
    return problem, search(problem, "time", "max", strategy="exhaustive").value


@needs_ortools
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 7), P=st.integers(3, 5), seed=st.integers(0, 40),
       charged=st.booleans())
def test_bound_never_exceeds_the_exhaustive_optimum(n, P, seed, charged):
    """On random instances (some with communication charged to the cores): CP-SAT's
    proven bound ≤ exhaustive's optimum ≤ its value, equal within the stated
    tolerance when it claims optimality; a 0.05 s limit keeps most runs unproven."""
    problem, best = small(n, P, seed, charged)
    setup = prepare(problem, "time", "max")
    start = setup.space.random(np.random.default_rng(seed), 1)[0]
    for limit in (0.05, 30.0):
        res = cpsat.solve(setup, time_limit=limit, incumbent=start)
        assert res.bound <= best * (1 + 1e-12) and res.value >= best * (1 - 1e-12)
        if res.optimal:
            assert res.value == pytest.approx(best, rel=cpsat.TOLERANCE)
        for step in res.trace:
            assert step["bound"] <= best * (1 + 1e-12) <= step["value"] * (1 + 2e-12)
    assert res.optimal


@needs_ortools
@pytest.mark.parametrize("beside", [0, 10**6])
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 7), P=st.integers(3, 5), seed=st.integers(0, 40))
def test_both_bound_and_its_floor_never_exceed_the_exhaustive_optimum(beside, n, P, seed):
    """``both`` in either order (the cluster relaxation's floor, CP-SAT with it, then
    the MILP; or CP-SAT beside the bounds): the floor, each engine's bound and the
    combined one ≤ exhaustive's optimum ≤ the value; a 0.05 s limit leaves most runs
    unproven, an unlimited one proves the optimum."""
    from mapping.search import both
    from mapping.search.exact import cluster_floor
    problem, best = small(n, P, seed, False)
    order = {0: "bounds, cpsat, milp", 10**6: "cpsat beside the bounds"}[beside]
    setup = prepare(problem, "time", "max")
    setup.info["incumbent"] = setup.space.random(np.random.default_rng(seed), 1)[0]
    floor = cluster_floor(setup)
    assert floor is None or floor <= best * (1 + 1e-12)
    for limit in (0.05, None):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(both, "BESIDE_PAIRS", beside)
            res = both.solve_both(setup, time_limit=limit)
        assert res.schedule == order
        assert res.bound <= best * (1 + 1e-12) and res.value >= best * (1 - 1e-12)
        for part in (res.parts or {}).values():
            assert part["bound"] is None or part["bound"] <= best * (1 + 1e-12)
    assert res.optimal and res.value == pytest.approx(best, rel=cpsat.TOLERANCE)


@needs_ortools
def test_beside_stops_the_bounds_once_cpsat_has_proven(monkeypatch):
    """CP-SAT beside the bounds, its proof while the partition bound runs (held at its
    first master program until then, as a bound slower than the proof is): the bound
    solves no program after the proof, says it was stopped, and the result is CP-SAT's
    proven optimum, exhaustive's."""
    import threading
    import time
    from mapping.search import both, partition_bound
    from mapping.search.partition_bound import master
    problem, best = small(7, 4, 3, False)
    setup = prepare(problem, "time", "max")
    setup.info["incumbent"] = setup.space.random(np.random.default_rng(3), 1)[0]
    running, seen, calls = threading.Event(), {}, []
    real_floor, real_master = partition_bound.floor, master.Master.solve

    def floor(*args, stop=None, **kwargs):
        seen["stop"] = stop
        running.set()
        seen["bound"] = out = real_floor(*args, stop=stop, **kwargs)
        return out

    def held(self):
        calls.append(seen["stop"]())
        until = time.monotonic() + 60
        while not seen["stop"]() and time.monotonic() < until:
            time.sleep(0.005)
        return real_master(self)

    monkeypatch.setattr(partition_bound, "floor", floor)
    monkeypatch.setattr(master.Master, "solve", held)
    _cpsat_beside_held_until(monkeypatch, running)      # CP-SAT once the bound runs
    res = both.solve_both(setup, time_limit=None)
    assert res.schedule == "cpsat beside the bounds"
    assert calls == [False] and seen["bound"].stopped and seen["bound"].value is None
    assert res.optimal and res.value == pytest.approx(best, rel=cpsat.TOLERANCE)
    assert res.bound <= best * (1 + 1e-12) and res.partition_bound is None
    assert res.trace[-2]["bound"] == pytest.approx(res.value, rel=cpsat.TOLERANCE)


def _start_above_the_packing(setup, best: float):
    """A random mapping of 7 x 4 seed 9 whose bottleneck is a PE, worse than the
    optimum ``best`` and than the least packing's mapping (3.08e-5: a CN above its
    PEs)."""
    from mapping.search import packing
    from mapping.search.exact import mapping_value
    ev = setup.objectives.evaluators[0]
    return next(r for r in setup.space.random(np.random.default_rng(9), 500)
                if best * 1.01 < mapping_value(ev, r) < 3e-5
                and packing.pe_bottleneck(ev, r, mapping_value(ev, r)))


def _cpsat_beside_held_until(monkeypatch, event) -> None:
    """``both`` runs CP-SAT beside the bounds (on any instance), and CP-SAT starts once
    ``event`` is set (at most 60 s)."""
    from mapping.search import both
    real_solve = cpsat.solve

    def solve(*args, **kwargs):
        event.wait(60)
        return real_solve(*args, **kwargs)

    monkeypatch.setattr(cpsat, "solve", solve)
    monkeypatch.setattr(both, "BESIDE_PAIRS", 10**6)


def _cpsat_held_until_the_packing_proof(monkeypatch) -> dict:
    """CP-SAT beside the bounds (on any instance) starts once ``packing.proof`` has
    ended; the proof's result lands in the dictionary returned, as ``"proof"``."""
    import threading
    from mapping.search import packing
    done, seen = threading.Event(), {}
    real_proof = packing.proof

    def proof(*args, **kwargs):
        try:
            seen["proof"] = out = real_proof(*args, **kwargs)
            return out
        finally:
            done.set()

    monkeypatch.setattr(packing, "proof", proof)
    _cpsat_beside_held_until(monkeypatch, done)
    return seen


@needs_ortools
def test_beside_proves_the_best_packing_before_cpsat(monkeypatch):
    """CP-SAT beside the bounds, held until the proof of the best packing
    (``packing.proof``, after the packing bound) has ended: on 7 x 4
    (seed 9) the packing's optimum is exhaustive's, so the proof's bound is the
    optimum less ``FIRST_TRIAL``, reported as the packing bound and in ``parts``, and
    CP-SAT's mapping is proven by it: exhaustive's optimum."""
    from mapping.search import both
    problem, best = small(7, 4, 9, False)
    setup = prepare(problem, "time", "max")
    setup.info["incumbent"] = _start_above_the_packing(setup, best)
    seen = _cpsat_held_until_the_packing_proof(monkeypatch)
    res = both.solve_both(setup, time_limit=None)
    assert seen["proof"].value == pytest.approx(best * (1 - cpsat.FIRST_TRIAL), rel=1e-9)
    assert res.packing_bound == seen["proof"].value <= best
    assert res.parts["packing"]["optimal"] and res.parts["packing"]["bound"] <= best
    assert res.optimal and res.value == pytest.approx(best, rel=cpsat.TOLERANCE)
    assert res.bound <= best * (1 + 1e-12)


@needs_ortools
def test_the_packing_part_reports_its_mapping_and_the_one_gap_rule(monkeypatch):
    """Without the packing bound's bisection the proof of the best packing starts from
    the start itself (a PE its bottleneck, above the optimum) and finds better
    packings: ``parts["packing"]`` gives the last one's value and the gap
    ``(value - bound)/value`` of :func:`~mapping.search.common.relative_gap`."""
    from mapping.search import both, packing
    problem, best = small(7, 4, 9, False)
    setup = prepare(problem, "time", "max")
    setup.info["incumbent"] = _start_above_the_packing(setup, best)
    monkeypatch.setattr(packing, "within_share",
                        lambda *a, **k: packing.PackingBound(None, None))
    _cpsat_held_until_the_packing_proof(monkeypatch)
    part = both.solve_both(setup, time_limit=None).parts["packing"]
    assert part["value"] is not None and part["bound"] is not None
    assert part["value"] >= best * (1 - 1e-12) >= part["bound"]
    assert part["gap"] == pytest.approx((part["value"] - part["bound"]) / part["value"])


def _bisection_after_an_unproven_proof(monkeypatch, start, bisected_bound):
    """``both`` beside with the proof of the best packing proving nothing (it finds
    ``start``), the packing bound's bisection giving ``bisected_bound``, and CP-SAT held
    until the bisection has ended; the event the bisection sets."""
    import threading
    from mapping.search import packing
    bisected = threading.Event()

    def bisection(*args, **kwargs):
        bisected.set()
        return bisected_bound

    monkeypatch.setattr(packing, "proof", lambda *a, **k: packing.PackingBound(
        None, None, ((1e-5, "unknown", 0.0),), start))
    monkeypatch.setattr(packing, "within_share", bisection)
    _cpsat_beside_held_until(monkeypatch, bisected)
    return bisected


@needs_ortools
def test_the_packing_part_is_the_proofs_mapping_when_the_bisection_follows(monkeypatch):
    """The proof of the best packing finds a mapping but proves nothing, so the packing
    bound's bisection runs after it and finds another: ``parts["packing"]`` reports
    the proof's mapping (the bisection's came later in the list of packings), both
    mappings count, and CP-SAT, held until the bisection has ended, still gives
    exhaustive's optimum."""
    from mapping.search import both, packing
    from mapping.search.exact import mapping_value
    problem, best = small(7, 4, 9, False)
    setup = prepare(problem, "time", "max")
    ev = setup.objectives.evaluators[0]
    start = _start_above_the_packing(setup, best)
    setup.info["incumbent"] = start
    other = next(r for r in setup.space.random(np.random.default_rng(3), 100)
                 if mapping_value(ev, r) != mapping_value(ev, start))
    bisected = _bisection_after_an_unproven_proof(
        monkeypatch, start, packing.PackingBound(None, None, ((1e-5, "feasible", 0.0),),
                                                 other))
    res = both.solve_both(setup, time_limit=None)
    assert bisected.is_set()
    part = res.parts["packing"]
    assert part["value"] == mapping_value(ev, start) and part["bound"] is None
    assert not part["optimal"] and part["decisions"] == 1
    assert res.value == pytest.approx(best, rel=cpsat.TOLERANCE)


def _in_order_without_bounds(monkeypatch, beside):
    """``both`` in order on any instance, with no bound (the relaxation, the packing
    and partition bounds give nothing), ``beside`` as the neighbourhoods, and CP-SAT
    and the MILP held to 10 ms."""
    from mapping.search import both, exact, lns, packing, partition_bound
    monkeypatch.setattr(both, "BESIDE_PAIRS", 0)
    monkeypatch.setattr(lns, "Beside", lambda *a, **k: beside)
    monkeypatch.setattr(exact, "cluster_floor", lambda *a, **k: None)
    monkeypatch.setattr(packing, "within_share", lambda *a, **k: packing.PackingBound(None, None))
    monkeypatch.setattr(partition_bound, "floor",
                        lambda *a, **k: partition_bound.PartitionBound(None))
    real_solve = cpsat.solve
    monkeypatch.setattr(cpsat, "solve", lambda setup, time_limit=None, **k: real_solve(
        setup, time_limit=0.01, **k))
    monkeypatch.setattr(exact, "solve", lambda setup, **k: real_solve(setup, time_limit=0.01))


@needs_ortools
def test_polished_lowers_a_pe_bottleneck_and_both_in_order_keeps_it(monkeypatch):
    """7 x 4 (seed 9) from a start whose bottleneck is a PE, above the optimum: the
    packing's local search returns a mapping below the start and at or above
    exhaustive's optimum (on allowed PEs); from a mapping whose bottleneck is a CN
    (the least packing's here) it returns nothing, nor where a CN carries nearly the
    bottleneck (``heavy``).  ``both`` in order, the bounds, CP-SAT and
    the MILP given nothing better (CP-SAT held to 10 ms, the bounds and the
    neighbourhoods off), answers that mapping, whose step opens the trace."""
    from mapping.search import both, packing, partition_bound
    from mapping.search.exact import mapping_value
    problem, best = small(7, 4, 9, False)
    setup = prepare(problem, "time", "max")
    ev = setup.objectives.evaluators[0]
    start = _start_above_the_packing(setup, best)
    got = both.polished(setup, start)
    assert got is not None and setup.space.allowed[np.arange(7), got].all()
    assert best * (1 - 1e-12) <= mapping_value(ev, got) < mapping_value(ev, start)
    at_cn = next(r for r in setup.space.random(np.random.default_rng(1), 500)
                 if not packing.pe_bottleneck(ev, r, mapping_value(ev, r)))
    assert both.polished(setup, at_cn) is None
    setup.info["incumbent"] = start
    with monkeypatch.context() as m:     # a CN near the bottleneck: the bounds' time
        m.setattr(partition_bound, "heavy", lambda setup: True)
        assert both.polished(setup, start) is None
    _in_order_without_bounds(monkeypatch, None)
    res = both.solve_both(setup, time_limit=30)
    assert res.schedule == "bounds, cpsat, milp"
    assert res.value <= mapping_value(ev, got) * (1 + 1e-12)
    assert res.trace[0]["value"] == pytest.approx(mapping_value(ev, got), rel=1e-12)


@needs_ortools
def test_both_in_order_polishes_the_neighbourhoods_mapping_within_the_deadline(monkeypatch):
    """The partition bound ends past the time limit (as on a loaded machine) and the
    neighbourhoods hold a mapping better than the incumbent (exhaustive's optimum):
    the packing's local search after the bounds is given the deadline, not its share
    past the bounds' end (a 120 s limit once ended at 133.5 s that way)."""
    import time
    from mapping.search import both, partition_bound
    from mapping.search.exact import mapping_value
    problem, best = small(7, 4, 9, False)
    setup = prepare(problem, "time", "max")
    ev = setup.objectives.evaluators[0]
    setup.info["incumbent"] = _start_above_the_packing(setup, best)
    optimum = ev.encode(search(problem, "time", "max", strategy="exhaustive").mapping)

    class Ahead:
        """The neighbourhoods, holding the optimum."""
        def best(self):
            return optimum, mapping_value(ev, optimum)

        def pause(self):
            pass

        resume = pause

        def offer(self, row):
            pass

        escape_by = offer

        def finish(self):
            return None

    limit = 2.0

    def late(*args, **kwargs):
        time.sleep(limit + 0.3)
        return partition_bound.PartitionBound(None)

    deadlines = []
    _in_order_without_bounds(monkeypatch, Ahead())
    monkeypatch.setattr(partition_bound, "heavy", lambda setup: False)
    monkeypatch.setattr(partition_bound, "floor", late)
    monkeypatch.setattr(both, "polished", lambda setup, row, deadline=None:
                        deadlines.append(deadline))
    began = time.time()
    res = both.solve_both(setup, time_limit=limit)
    assert len(deadlines) == 2                      # the start's, the neighbourhoods'
    assert all(d <= began + limit + 0.05 for d in deadlines)
    assert res.value <= mapping_value(ev, optimum) * (1 + 1e-12)


@needs_ortools
def test_both_in_order_polishes_the_best_mapping_with_the_neighbourhoods_running(
        monkeypatch):
    """Once the bounds have ended, the packing's local search runs again from the best
    mapping known: the neighbourhoods' (exhaustive's optimum) where they went further,
    else its first run's mapping (or the start); the neighbourhoods are paused only
    after it, for CP-SAT (before, they were paused first and their core stood idle)."""
    from mapping.search import both, partition_bound
    from mapping.search.exact import mapping_value
    problem, best = small(7, 4, 9, False)
    setup = prepare(problem, "time", "max")
    ev = setup.objectives.evaluators[0]
    start = _start_above_the_packing(setup, best)
    optimum = ev.encode(search(problem, "time", "max", strategy="exhaustive").mapping)
    events = []

    class Beside:
        """The neighbourhoods, holding ``held`` (None: nothing better than the start)."""
        held = None

        def best(self):
            return None if self.held is None else (self.held, mapping_value(ev, self.held))

        def pause(self):
            events.append("pause")

        def resume(self):
            events.append("resume")

        def escape_by(self, escape):
            pass

        def offer(self, row):
            pass

        def finish(self):
            return None

    _in_order_without_bounds(monkeypatch, Beside())
    monkeypatch.setattr(partition_bound, "heavy", lambda setup: False)
    halfway = next(r for r in setup.space.random(np.random.default_rng(2), 500)
                   if mapping_value(ev, optimum) < mapping_value(ev, r) < mapping_value(
                       ev, start))
    for held, first, second in ((optimum, None, optimum), (optimum, halfway, optimum),
                                (None, None, start), (None, halfway, halfway)):
        events.clear()
        Beside.held = held
        monkeypatch.setattr(both, "polished", lambda setup, row, deadline=None: (
            events.append(np.array(row)), first if len(events) == 1 else None)[1])
        setup.info["incumbent"] = start
        res = both.solve_both(setup, time_limit=5)
        rows = [e for e in events if not isinstance(e, str)]
        assert len(rows) == 2 and (rows[0] == start).all() and (rows[1] == second).all()
        kinds = [e if isinstance(e, str) else "polish" for e in events]
        assert kinds.index("pause") == 2                # after both runs
        assert res.value <= mapping_value(ev, second) * (1 + 1e-12)


class _Stalled:
    """Neighbourhoods that find nothing and keep each escape they are handed in
    ``escapes``."""

    def __init__(self, escapes: list):
        self.escapes = escapes

    def best(self):
        return None

    def pause(self):
        pass

    resume = pause

    def offer(self, row):
        pass

    def escape_by(self, escape):
        self.escapes.append(escape)

    def finish(self):
        return None


def _stalled_in_order(monkeypatch, seed: int, count: int):
    """``both`` in order without bounds (:func:`_in_order_without_bounds`) on 7 x 4
    (seed 9) with :class:`_Stalled` neighbourhoods: the setup, a start above the
    packing's optimum, ``count`` random mappings (drawn with ``seed``) and the list of
    escapes handed over."""
    problem, best = small(7, 4, 9, False)
    setup = prepare(problem, "time", "max")
    start = _start_above_the_packing(setup, best)
    rows = [r for r in setup.space.random(np.random.default_rng(seed), count)]
    escapes: list = []
    _in_order_without_bounds(monkeypatch, _Stalled(escapes))
    return setup, start, rows, escapes


@needs_ortools
def test_where_the_neighbourhoods_stall_the_packings_search_resumes_its_own_path(
        monkeypatch):
    """``both`` in order hands the neighbourhoods an escape that goes on with the
    packing's local search from where its first run was cut (the start where that run
    found nothing), then from the escape's own last mapping, never from the mapping
    the neighbourhoods hand it (their basin), and within the time and stop given."""
    from mapping.search import both, partition_bound
    setup, start, rows, escapes = _stalled_in_order(monkeypatch, 4, 3)
    monkeypatch.setattr(partition_bound, "heavy", lambda setup: False)
    stop = lambda: False                                        # noqa: E731
    for first in (rows[0], None):
        calls, escapes[:] = [], []
        answers = iter([first, None, rows[1], rows[2]])
        monkeypatch.setattr(both, "polished", lambda setup, row, deadline=None, halt=None,
                            rng=None: (calls.append((np.array(row), deadline, halt)),
                                       next(answers, None))[1])
        setup.info["incumbent"] = start
        both.solve_both(setup, time_limit=5)
        assert len(escapes) == 1 and len(calls) == 2    # the two polishes of the run
        path = start if first is None else first
        assert escapes[0](rows[2], 123.0, stop) is rows[1]
        assert escapes[0](rows[2], 124.0, stop) is rows[2]
        assert (calls[2][0] == path).all() and (calls[3][0] == rows[1]).all()
        assert [c[1:] for c in calls[2:]] == [(123.0, stop), (124.0, stop)]


@needs_ortools
def test_where_a_cn_carries_nearly_the_bottleneck_the_escape_restarts_from_the_relaxation(
        monkeypatch):
    """Where a CN carries nearly the bottleneck (``heavy``), the packing's search gives
    nothing, so ``both`` in order hands the neighbourhoods, once the cluster relaxation
    has ended, an escape that runs their own search again from the relaxation's
    mapping, then from the escape's own last mapping, each time with another seed,
    within the time and stop given; never from the mapping they hand it."""
    from mapping.search import both, exact, lns, packing, partition_bound
    setup, start, rows, escapes = _stalled_in_order(monkeypatch, 5, 4)
    monkeypatch.setattr(partition_bound, "heavy", lambda setup: True)
    monkeypatch.setattr(partition_bound, "communicating", lambda setup: False)
    monkeypatch.setattr(packing, "proof", lambda *a, **k: packing.PackingBound(None, None))
    monkeypatch.setattr(exact, "cluster_floor",
                        lambda *a, found=None, **k: (found.append(rows[0]), None)[1])
    calls = []
    answers = iter([rows[1], rows[2]])
    monkeypatch.setattr(lns, "improve", lambda setup, row, deadline, stop, seed: (
        calls.append((np.array(row), deadline, stop, seed)),
        lns.Outcome(next(answers), 0.0, 0.0))[1])
    setup.info["incumbent"] = start
    both.solve_both(setup, time_limit=5)
    assert len(escapes) == 2                # the packing's, then the relaxation's
    stop = lambda: False                                        # noqa: E731
    assert escapes[1](rows[3], 123.0, stop) is rows[1]
    assert escapes[1](rows[3], 124.0, stop) is rows[2]
    assert (calls[0][0] == rows[0]).all() and (calls[1][0] == rows[1]).all()
    assert [c[1:3] for c in calls] == [(123.0, stop), (124.0, stop)]
    assert calls[0][3] != calls[1][3]


@needs_ortools
def test_kicked_is_never_worse_than_the_local_search_and_ends_by_its_deadline():
    """The iterated local search of the packing (random kicks between runs of
    ``reoptimize``) on 12 actors x 6 PEs: its packing's own bottleneck is at most the
    local search's from the same mapping, on allowed PEs, and it returns within its
    deadline and one small solve's second."""
    import time
    from mapping.search import packing
    from mapping.search.bounds import element_tables
    setup = prepare(bind_problem(*instance(12, 6, 3)), "time", "max")
    own = element_tables(setup.objectives.evaluators[0])[0]
    usable = setup.space.allowed & np.isfinite(own)
    for seed in range(3):
        row = setup.space.random(np.random.default_rng(seed), 1)[0]
        local = packing.reoptimize(own, usable, row)
        began = time.time()
        got = packing.kicked(own, usable, row, began + 1.0, np.random.default_rng(seed))
        assert time.time() - began < 2.5
        assert usable[np.arange(12), got].all()
        assert packing.own_bottleneck(own, got) <= packing.own_bottleneck(own, local)


@needs_ortools
def test_each_packing_step_carries_only_the_bounds_ended_before_it(monkeypatch):
    """The proof of the best packing proves nothing but finds the start's packing, then
    the packing bound's bisection proves half the optimum and finds another mapping
    (no other bound: the split bound, the relaxation and the partition bound give
    nothing; CP-SAT held until the bisection has ended): the proof's step has no bound,
    the bisection's (exhaustive's optimum) carries its bound, half the optimum (before,
    every packing's step carried the final floor)."""
    from mapping.search import both, exact, packing, partition_bound
    from mapping.search.exact import mapping_value
    problem, best = small(7, 4, 9, False)
    setup = prepare(problem, "time", "max")
    ev = setup.objectives.evaluators[0]
    start = _start_above_the_packing(setup, best)
    setup.info["incumbent"] = start
    other = ev.encode(search(problem, "time", "max", strategy="exhaustive").mapping)
    _bisection_after_an_unproven_proof(monkeypatch, start, packing.PackingBound(
        0.5 * best, None, ((0.5 * best, "infeasible", 0.0),), other))
    monkeypatch.setattr(exact, "cluster_floor", lambda *a, **k: None)
    monkeypatch.setattr(partition_bound, "early", lambda *a, **k: None)
    monkeypatch.setattr(partition_bound, "floor",
                        lambda *a, **k: partition_bound.PartitionBound(None))
    res = both.solve_both(setup, time_limit=None)
    first = {}
    for s in res.trace:
        first.setdefault(s["value"], s["bound"])
    assert first[mapping_value(ev, start)] is None
    assert first[mapping_value(ev, other)] == 0.5 * best
    assert res.optimal and res.value == pytest.approx(best, rel=cpsat.TOLERANCE)


@needs_ortools
@pytest.mark.skipif(not highs.available(), reason="needs highspy")
def test_beside_interrupts_the_cluster_relaxation_once_cpsat_has_proven(monkeypatch):
    """CP-SAT beside the bounds, its proof while the cluster relaxation's HiGHS program
    runs (held at one of HiGHS's checks until then, as a relaxation slower than the
    proof is): HiGHS is interrupted at that check, the partition bound never starts,
    the call returns at once, and the result is CP-SAT's proven optimum, exhaustive's."""
    import threading
    import time
    from mapping.search import both, exact, partition_bound
    problem, best = small(8, 4, 2, False)
    setup = prepare(problem, "time", "max")
    setup.info["incumbent"] = setup.space.random(np.random.default_rng(2), 1)[0]
    running, seen = threading.Event(), {"asked": 0}
    real_floor, real_solve = exact.cluster_floor, cpsat.solve

    def floor(*args, stop=None, **kwargs):
        def held():                     # HiGHS waits here, inside its program
            seen["asked"] += 1
            running.set()
            until = time.monotonic() + 60
            while not stop() and time.monotonic() < until:
                time.sleep(0.005)
            return stop()
        seen["bound"] = out = real_floor(*args, stop=held, **kwargs)
        seen["returned"] = time.monotonic()
        return out

    def solve(*args, **kwargs):             # CP-SAT starts once HiGHS is running
        running.wait(60)
        try:
            return real_solve(*args, **kwargs)
        finally:
            seen["proven"] = time.monotonic()

    monkeypatch.setattr(exact, "cluster_floor", floor)
    monkeypatch.setattr(cpsat, "solve", solve)
    monkeypatch.setattr(partition_bound, "floor", lambda *a, **k: pytest.fail("ran"))
    monkeypatch.setattr(both, "BESIDE_PAIRS", 10**6)
    res = both.solve_both(setup, time_limit=None)
    assert seen["asked"] == 1 and seen["returned"] - seen["proven"] < 1.0
    assert seen["bound"] is None or seen["bound"] <= best * (1 + 1e-12)
    assert res.schedule == "cpsat beside the bounds" and res.partition_bound is None
    assert res.optimal and res.value == pytest.approx(best, rel=cpsat.TOLERANCE)
    assert res.bound <= best * (1 + 1e-12)


def test_canonical_row_keeps_the_value():
    setup = prepare(stored("a10_p4_s0"), "time", "max")
    ev = setup.objectives.evaluators[0]
    from mapping.search.exact import symmetry_classes
    classes = symmetry_classes(setup)
    assert classes == [[0, 1]]
    row = np.array([1, 0, 2, 3, 1, 0, 0, 2, 3, 1])
    canon = cpsat.canonical_row(row, classes)
    assert canon.tolist() == [0, 1, 2, 3, 0, 1, 1, 2, 3, 0]
    assert ev.evaluate(canon[None])[0] == ev.evaluate(row[None])[0]


@needs_ortools
def test_json_reports_the_trace_and_both_engines(capsys):
    stem = DATA / "a30_p8_s1"
    code, out, err = run_cli(capsys, "search", f"{stem}.sdf", f"{stem}.moa", "--aggregate",
                             "max", "--strategy", "exact", "--budget", "2000",
                             "--time-limit", "6", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["engine"] == "both" and doc["engine_chosen_by"] == "auto"
    # 30 actors x 8 PEs (240 pairs): CP-SAT proves these beside the bounds (and the
    # neighbourhoods search once the bounds have ended, if CP-SAT has not; the proof of
    # the best packing is reported where it decided something within the limit)
    assert doc["schedule"] == "cpsat beside the bounds"
    assert list(doc["engines"])[0] == "cpsat"
    assert set(doc["engines"]) - {"lns", "packing"} == {"cpsat"}
    assert doc["bound_source"] in ("cpsat", "milp", "cluster relaxation", "partition bound",
                                   "split bound", "packing bound")
    trace = doc["trace"]
    assert trace and all(set(s) == {"seconds", "value", "bound", "gap"} for s in trace)
    seconds = [s["seconds"] for s in trace]
    assert seconds == sorted(seconds) and seconds[-1] <= 6.0
    assert trace[-1]["value"] == doc["value"] and trace[-1]["bound"] == doc["bound"]
    for s in trace:
        if s["bound"] is not None:
            assert s["bound"] <= s["value"]
            assert s["gap"] == pytest.approx((s["value"] - s["bound"]) / s["value"])
    assert doc["bound"] <= OPTIMA["a30_p8_s1"]["value"]


class _Refuse(importlib.abc.MetaPathFinder):
    """Behave as if OR-Tools were not installed."""

    def find_spec(self, name, path=None, target=None):
        if name == "ortools" or name.startswith("ortools."):
            raise ImportError(f"No module named '{name}' (refused by the test)")
        return None


@pytest.fixture
def no_ortools(monkeypatch):
    for name in [m for m in sys.modules if m == "ortools" or m.startswith("ortools.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_Refuse()] + sys.meta_path)


def test_without_ortools_exact_is_the_milp(no_ortools, capsys):
    assert not cpsat.available()
    entry = OPTIMA["a10_p4_s0"]
    res = search(stored("a10_p4_s0"), "time", "max", strategy="exact", budget=500)
    assert res.extra["engine"] == "milp" and res.optimal
    assert res.value == pytest.approx(entry["value"], rel=1e-9)
    with pytest.raises(SearchError, match=r"pip install 'mapeval\[cpsat\]'"):
        search(stored("a10_p4_s0"), "time", "max", strategy="exact", engine="cpsat")
    stem = DATA / "a10_p4_s0"
    code, out, err = run_cli(capsys, "search", f"{stem}.sdf", f"{stem}.moa", "--aggregate",
                             "max", "--strategy", "exact", "--engine", "cpsat")
    assert code == 2 and "pip install 'mapeval[cpsat]'" in err


def test_unknown_engine_is_refused():
    with pytest.raises(SearchError, match="unknown engine 'gurobi'"):
        search(stored("a10_p4_s0"), "time", "max", strategy="exact", engine="gurobi")


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 7), P=st.integers(2, 5), seed=st.integers(0, 60),
       charged=st.booleans())
def test_pair_bound_never_exceeds_the_optimum(n, P, seed, charged):
    """The pair bound (each actor pair joined by channels, alone) ≤ the optimum that
    exhaustive enumeration finds, with and without charged communication."""
    from mapping.search.bounds import communication_bound
    problem, best = small(n, P, seed, charged)
    setup = prepare(problem, "time", "max")
    bound = communication_bound(setup.objectives.evaluators[0], setup.space.allowed)
    assert 0 < bound <= best * (1 + 1e-12)


def test_pair_bound_by_hand():
    """Two actors, two PEs, one channel: together on one PE they load it with both
    costs; apart the bus carries the channel.  The bound is the cheaper of the two."""
    from mapping.search.bounds import pair_bound
    own = np.array([[3.0, 3.0], [4.0, 4.0]])
    own_cn = np.zeros((2, 2, 1))
    W = np.zeros((2, 2, 3))
    W[0, 1, 2] = W[1, 0, 2] = 5.0             # apart: 5 on the bus
    assert pair_bound(own, own_cn, {(0, 1): W}, np.ones((2, 2), bool)) == 5.0   # max(3, 4, 5)
    W[0, 1, 2] = W[1, 0, 2] = 9.0
    assert pair_bound(own, own_cn, {(0, 1): W}, np.ones((2, 2), bool)) == 7.0   # 3 + 4
    assert pair_bound(own, own_cn, {}, np.ones((2, 2), bool)) == 4.0            # own only
