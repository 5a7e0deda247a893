"""Issue 43: the large-neighbourhood search of ``auto`` under ``max``
(:mod:`mapping.search.lns`) — never worse than its start, every mapping it returns
valued by the evaluator and allowed, the exhaustive optimum where its neighbourhood
holds every actor, and its mapping handed on to CP-SAT in ``both``."""
from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from mapping.search import cpsat, lns, search
from mapping.search.engine import prepare
from mapping.search.exact import mapping_value
from test_cpsat import needs_ortools, small


def steps(n):
    """A ``stop`` that lets ``n`` steps run."""
    calls = iter(range(n + 1))
    return lambda: next(calls, None) in (None, n)


@needs_ortools
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 7), P=st.integers(3, 5), seed=st.integers(0, 40),
       charged=st.booleans())
def test_every_actor_free_reaches_the_exhaustive_optimum(n, P, seed, charged):
    """With at least as many actors freed as there are, one step is CP-SAT on the
    whole instance: the optimum of exhaustive enumeration (within CP-SAT's tolerance),
    from a random start."""
    problem, best = small(n, P, seed, charged)
    setup = prepare(problem, "time", "max")
    start = setup.space.random(np.random.default_rng(seed), 1)[0]
    out = lns.improve(setup, start, time.time() + 60, stop=steps(1))
    assert out.steps == 1
    assert out.value == pytest.approx(best, rel=cpsat.TOLERANCE)
    assert out.value >= best * (1 - 1e-12)


@needs_ortools
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 8), P=st.integers(3, 5), seed=st.integers(0, 40),
       charged=st.booleans())
def test_small_neighbourhoods_never_return_a_worse_mapping(n, P, seed, charged):
    """Two actors freed beside the busiest element's, never more: each step's mapping
    is taken only when the evaluator values it lower, so the result is never worse
    than the start, its value is its row's, every actor stays on an allowed PE, and it
    is never below the exhaustive optimum."""
    problem, best = small(n, P, seed, charged)
    setup = prepare(problem, "time", "max")
    ev = setup.objectives.evaluators[0]
    start = setup.space.random(np.random.default_rng(seed), 1)[0]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lns, "FREED", 2)
        mp.setattr(lns, "FEWEST", 1)
        mp.setattr(lns, "GROW", 0)
        out = lns.improve(setup, start, time.time() + 60, stop=steps(6))
    assert out.steps == 6 and out.start == mapping_value(ev, start)
    assert out.value <= out.start
    assert out.value == mapping_value(ev, out.row)
    assert setup.space.allowed[np.arange(len(out.row)), out.row].all()
    assert out.value >= best * (1 - 1e-12)
    values = [v for _, v in out.trace]
    assert values == sorted(values, reverse=True) and len(set(values)) == out.improved


@needs_ortools
def test_both_in_order_hands_the_neighbourhoods_mapping_to_cpsat():
    """``both`` in order: the neighbourhoods run beside the bounds from the start, and
    CP-SAT's mapping (the one returned) is no worse than theirs, which is no worse than
    the start; the optimum with no time limit."""
    from mapping.search import both
    problem, best = small(7, 4, 3, False)
    setup = prepare(problem, "time", "max")
    start = setup.space.random(np.random.default_rng(3), 1)[0]
    setup.info["incumbent"] = start
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(both, "BESIDE_PAIRS", 0)
        res = both.solve_both(setup, time_limit=None)
    part = res.parts["lns"]
    assert part["value"] <= mapping_value(setup.objectives.evaluators[0], start)
    assert res.value <= part["value"] and part["bound"] is None
    assert res.optimal and res.value == pytest.approx(best, rel=cpsat.TOLERANCE)


@needs_ortools
def test_an_offered_mapping_is_taken_when_better_and_ignored_when_not():
    """A mapping handed to the search (``offered``) becomes its best when it is better
    (the exhaustive optimum here, not counted as the search's own improvement), and a
    worse one changes nothing."""
    problem, best = small(7, 4, 5, False)
    setup = prepare(problem, "time", "max")
    ev = setup.objectives.evaluators[0]
    optimum = ev.encode(search(problem, "time", "max", strategy="exhaustive").mapping)
    start = setup.space.random(np.random.default_rng(5), 1)[0]
    assert mapping_value(ev, start) > best
    seen = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lns, "FREED", 1)
        mp.setattr(lns, "FEWEST", 1)
        mp.setattr(lns, "GROW", 0)
        gifts = iter([optimum])
        out = lns.improve(setup, start, time.time() + 60, stop=steps(1),
                          offered=lambda: next(gifts, None),
                          seen=lambda row, value: seen.append(value))
        assert out.value == mapping_value(ev, optimum) == pytest.approx(best, rel=1e-12)
        assert out.improved == 0 and seen[0] == out.value
        worse = lns.improve(setup, optimum, time.time() + 60, stop=steps(1),
                            offered=lambda: start)
    assert worse.value == out.value and worse.improved == 0


@needs_ortools
def test_a_stalled_search_takes_its_escapes_mapping_where_better():
    """Neighbourhoods of one actor, which never leave a random start's basin here, and
    an escape after no time without a better mapping: the escape is handed the best
    mapping and a time within the deadline; its mapping (exhaustive's optimum) becomes
    the best, counted as the search's own improvement and in the trace; an escape that
    returns a worse mapping or nothing changes nothing."""
    problem, best = small(7, 4, 5, False)
    setup = prepare(problem, "time", "max")
    ev = setup.objectives.evaluators[0]
    optimum = ev.encode(search(problem, "time", "max", strategy="exhaustive").mapping)
    start = setup.space.random(np.random.default_rng(5), 1)[0]
    handed = []

    def escape(row, until):
        handed.append((np.array(row), until))
        return optimum

    deadline = time.time() + 60
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lns, "FREED", 1)
        mp.setattr(lns, "FEWEST", 1)
        mp.setattr(lns, "GROW", 0)
        mp.setattr(lns, "ESCAPE_AFTER", 0.0)
        out = lns.improve(setup, start, deadline, stop=steps(1), escape=escape)
        assert (handed[0][0] == start).all() and handed[0][1] <= deadline
        assert out.value == mapping_value(ev, out.row) == pytest.approx(best, rel=1e-12)
        assert out.improved >= 1 and out.trace[0][1] == mapping_value(ev, optimum)
        for offered in (start, None):
            same = lns.improve(setup, optimum, deadline, stop=steps(1),
                               escape=lambda row, until: offered)
            assert same.value == out.value and same.improved == 0


@needs_ortools
def test_a_paused_search_stops_its_escape():
    """The escape given by ``escape_by`` runs in the search's thread, and the ``stop``
    it is handed turns true once the search is paused (CP-SAT's workers need both
    cores), and again once it is finished."""
    problem, best = small(7, 4, 3, False)
    setup = prepare(problem, "time", "max")
    start = setup.space.random(np.random.default_rng(3), 1)[0]
    running, stopped = [], []

    def escape(row, until, stop):
        running.append(True)
        while not stop() and time.time() < until:
            time.sleep(0.01)
        stopped.append(stop())
        return None

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lns, "ESCAPE_AFTER", 0.0)
        beside = lns.Beside(setup, start, time.time() + 60)
        beside.escape_by(escape)
        for _ in range(600):
            if running:
                break
            time.sleep(0.05)
        beside.pause()
        for _ in range(600):
            if stopped:
                break
            time.sleep(0.05)
        beside.finish()
    assert running and stopped[0] is True


def _from_a_worse_start(seed):
    """A 7 x 4 instance whose search starts from a random mapping worse than the
    exhaustive optimum ``best``: the setup, its evaluator, ``best`` and the start."""
    problem, best = small(7, 4, seed, False)
    setup = prepare(problem, "time", "max")
    ev = setup.objectives.evaluators[0]
    start = setup.space.random(np.random.default_rng(seed), 1)[0]
    assert mapping_value(ev, start) > best * (1 + 1e-9)
    setup.info["incumbent"] = start
    return setup, ev, best, start


def _noting_values():
    """``lns.improve`` wrapped to append every value it finds to the returned list."""
    values, improve = [], lns.improve

    def watched(setup, row, deadline, stop=None, seed=0, started=None, offered=None,
                seen=None, hold=None, escape=None):
        def noted(row, value):
            values.append(value)
            if seen is not None:
                seen(row, value)
        return improve(setup, row, deadline, stop, seed, started, offered, noted, hold,
                       escape)
    return values, watched


@needs_ortools
def test_both_in_order_keeps_the_neighbourhoods_mapping_after_the_bounds(monkeypatch):
    """In order, the neighbourhoods go on while CP-SAT and the MILP run, and their
    mapping is the answer where it is the best: here the engines return the start
    (the MILP once the neighbourhoods have reached the exhaustive optimum, which they
    do, for every actor is freed at every step)."""
    from mapping.search import both, exact
    setup, ev, best, start = _from_a_worse_start(3)
    made = []

    class Watched(lns.Beside):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            made.append(self)

    def unchanged(setup, **kw):
        row = np.asarray(start, dtype=np.intp)
        value = mapping_value(ev, row)
        return exact.ExactResult(value, row, False, "limited", value, True, "", 0.0, 1.0)

    def milp(setup, **kw):
        for _ in range(600):            # until the neighbourhoods have the optimum
            now = made[0].best()
            if now is not None and now[1] <= best * (1 + cpsat.TOLERANCE):
                break
            time.sleep(0.1)
        return unchanged(setup)

    monkeypatch.setattr(both, "BESIDE_PAIRS", 0)
    monkeypatch.setattr(lns, "FREED", 7)
    monkeypatch.setattr(lns, "FEWEST", 7)
    monkeypatch.setattr(lns, "Beside", Watched)
    monkeypatch.setattr(cpsat, "solve", unchanged)
    monkeypatch.setattr(exact, "solve", milp)
    res = both.solve_both(setup, time_limit=None)
    assert res.parts["lns"]["value"] == res.value == mapping_value(ev, res.row)
    assert res.value == pytest.approx(best, rel=cpsat.TOLERANCE)
    assert res.value >= best * (1 - 1e-12)
    values = [s["value"] for s in res.trace]
    assert values == sorted(values, reverse=True)


@needs_ortools
def test_beside_the_bounds_the_neighbourhoods_take_their_core_once_they_end(monkeypatch):
    """On the small-instance schedule the neighbourhoods search from the start once the
    bounds have ended, until CP-SAT's search ends, and their mapping is the answer
    where it is better: here CP-SAT returns the start once they have reached the
    exhaustive optimum (every actor freed at every step)."""
    from mapping.search import both, exact
    setup, ev, best, start = _from_a_worse_start(9)
    values, watched = _noting_values()

    def unchanged(setup, **kw):
        for _ in range(600):            # until the neighbourhoods have the optimum
            if values and values[-1] <= best * (1 + cpsat.TOLERANCE):
                break
            time.sleep(0.1)
        row = np.asarray(start, dtype=np.intp)
        value = mapping_value(ev, row)
        return exact.ExactResult(value, row, False, "limited", value, True, "", 0.0, 1.0)

    monkeypatch.setattr(both, "BESIDE_PAIRS", 10_000)
    monkeypatch.setattr(lns, "FREED", 7)
    monkeypatch.setattr(lns, "FEWEST", 7)
    monkeypatch.setattr(lns, "improve", watched)
    monkeypatch.setattr(cpsat, "solve", unchanged)
    res = both.solve_both(setup, time_limit=None)
    assert res.schedule == both.BESIDE
    assert res.parts["lns"]["value"] == res.value == mapping_value(ev, res.row)
    assert res.value == pytest.approx(best, rel=cpsat.TOLERANCE)
    assert res.bound <= best * (1 + 1e-12)
    assert res.gap == pytest.approx((res.value - res.bound) / res.value)


@needs_ortools
def test_a_paused_search_takes_no_step_until_it_is_finished():
    """``pause`` holds the thread before its next step (the step under way, if any,
    is ended): paused at once and then finished, it has taken at most one step and
    its mapping is no worse than the start."""
    problem, best = small(7, 4, 3, False)
    setup = prepare(problem, "time", "max")
    ev = setup.objectives.evaluators[0]
    start = setup.space.random(np.random.default_rng(3), 1)[0]
    beside = lns.Beside(setup, start, time.time() + 60)
    beside.pause()
    out = beside.finish()
    assert out.steps <= 1 and best <= out.value <= mapping_value(ev, start)


@needs_ortools
def test_in_order_the_neighbourhoods_start_from_the_portfolios_first_mapping(monkeypatch):
    """Under a time limit, in order, the neighbourhoods start as soon as the starting
    portfolio's first run has a mapping (before its later runs, and before the start is
    handed to the engines), and that one search is the one ``both`` goes on with: its
    mapping, the exhaustive optimum of a 7 x 4 instance (every actor freed at every
    step), is the answer where the engines return the start; the trace falls in time
    order."""
    from mapping.search import both, engine, exact
    problem, best = small(7, 4, 3, False)
    runs, made = [], []
    run_tasks = engine.run_tasks

    def counted(*args, **kw):
        out = run_tasks(*args, **kw)
        runs.append(out)
        return out

    class Watched(lns.Beside):
        def __init__(self, setup, row, *args, **kw):
            made.append((len(runs), "incumbent" in setup.info,
                         mapping_value(setup.objectives.evaluators[0], row)))
            super().__init__(setup, row, *args, **kw)

    def unchanged(setup, **kw):
        for _ in range(600):            # until the neighbourhoods have the optimum
            if made and values and values[-1] <= best * (1 + cpsat.TOLERANCE):
                break
            time.sleep(0.1)
        row = np.asarray(setup.info["incumbent"], dtype=np.intp)
        ev = setup.objectives.evaluators[0]
        value = mapping_value(ev, row)
        return exact.ExactResult(value, row, False, "limited", value, True, "", 0.0, 1.0)

    values, watched = _noting_values()

    monkeypatch.setattr(both, "BESIDE_PAIRS", 0)
    monkeypatch.setattr(engine, "EXACT_START_BUDGET", 2)
    monkeypatch.setattr(engine, "run_tasks", counted)
    monkeypatch.setattr(lns, "FREED", 7)
    monkeypatch.setattr(lns, "FEWEST", 7)
    monkeypatch.setattr(lns, "Beside", Watched)
    monkeypatch.setattr(lns, "improve", watched)
    monkeypatch.setattr(cpsat, "solve", unchanged)
    monkeypatch.setattr(exact, "solve", unchanged)
    res = search(problem, "time", "max", strategy="exact", engine="both", time_limit=60)
    first = min(r.best_value for r in runs[0])
    assert made == [(1, False, first)] and first > best * (1 + 1e-9)
    assert res.value == pytest.approx(best, rel=cpsat.TOLERANCE)
    assert res.value >= best * (1 - 1e-12)
    assert res.extra["engines"]["lns"]["value"] == res.value
    assert res.extra["start"]["value"] >= res.value
    trace = res.extra["trace"]
    assert [s["seconds"] for s in trace] == sorted(s["seconds"] for s in trace)
    assert [s["value"] for s in trace] == sorted((s["value"] for s in trace), reverse=True)
    assert trace[-1]["value"] == res.value
