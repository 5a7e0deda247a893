"""Issue 13: ``exact`` for ``max`` proves its optimum or reports how far from proven it
is (bound, gap, time limit), and ``auto`` chooses by problem.  The instances are stored
in ``tests/data/search_instances`` (``optima.json``: values and how they were found)."""
from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import dsl
from mapping.semantics.problem import bind_problem
from mapping.search import search
from mapping.search import exact
from mapping.search.engine import choose_strategy, prepare

from mapping.cli.main import main

DATA = Path(__file__).parent / "data" / "search_instances"
OPTIMA = json.loads((DATA / "optima.json").read_text())


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def stored(stem):
    return bind_problem(dsl.load_sdf(DATA / f"{stem}.sdf")[0],
                        dsl.load_moa(DATA / f"{stem}.moa")[0], {})


def consistent(res):
    """bound ≤ value and gap = (value − bound) / value, as the report promises."""
    bound, gap = res.extra["bound"], res.extra["gap"]
    assert bound is not None and bound <= res.value
    assert gap == pytest.approx((res.value - bound) / res.value, abs=1e-12)
    return bound, gap


def test_stored_instances_are_the_generators():
    from search_instances import instance
    for stem, entry in OPTIMA.items():
        app, arch = instance(entry["actors"], entry["pes"], entry["seed"])
        assert (DATA / f"{stem}.sdf").read_text() == dsl.format_sdf(app)
        assert (DATA / f"{stem}.moa").read_text() == dsl.format_moa(arch)
        # no run may beat a proven bound; the stored mapping has the stored value
        assert entry["bound"] <= entry["value"]
        problem = bind_problem(app, arch)
        from mapping.evaluation.batch import BatchEvaluator
        assert BatchEvaluator(problem, "time", "max").value(entry["mapping"]) == \
            pytest.approx(entry["value"], rel=1e-12)


def test_exact_proves_the_stored_optimum():
    entry = OPTIMA["a10_p4_s0"]
    res = search(stored("a10_p4_s0"), "time", "max", strategy="exact", budget=500,
                 time_limit=60)
    assert res.optimal and res.extra["time_limit_hit"] is False
    # the optimum was proven by exact and by exhaustive when stored
    assert entry["optimal"] and entry["exhaustive"] == pytest.approx(entry["value"], rel=1e-12)
    assert res.value == pytest.approx(entry["value"], rel=1e-9)
    bound, gap = consistent(res)
    assert gap <= 1e-6
    assert res.extra["start"]["strategy"] == "portfolio"
    assert res.extra["start"]["value"] >= res.value


def test_the_start_spends_its_share_of_the_time_limit(monkeypatch, stopped_early):
    """Under a time limit and no ``--budget`` the starting portfolio runs again with the
    budget its share of the time affords (here far more than its first run's); each
    improvement is in the trace, before the solver's.  With ``--budget`` it runs once."""
    from mapping.search import engine
    monkeypatch.setattr(engine, "EXACT_START_BUDGET", 2_000)
    res = search(stored("a30_p8_s1"), "time", "max", strategy="exact", time_limit=20,
                 engine="milp")
    start = res.extra["start"]
    assert start["evaluations"] > 4 * 2_000
    assert start["seconds"] <= 1.5 * engine.START_SHARE * 20 + 2.0
    first = [s for s in res.extra["trace"] if s["bound"] is None]
    assert first == res.extra["trace"][:len(first)]
    values = [s["value"] for s in first]
    assert values == sorted(values, reverse=True) and len(set(values)) == len(values)
    assert values[-1] == start["value"] >= res.value
    once = search(stored("a30_p8_s1"), "time", "max", strategy="exact", time_limit=20,
                  budget=2_000, engine="milp")
    assert once.extra["start"]["evaluations"] <= 2_000


@pytest.fixture
def stopped_early(monkeypatch):
    """``exact`` stopped after the root node: as at a time limit, but deterministic."""
    from mapping.search.strategies import STRATEGIES

    def root_only(setup, time_limit=None):
        return exact.solve(setup, time_limit=time_limit, node_limit=1)
    monkeypatch.setitem(STRATEGIES._entries, "exact", root_only)


def test_exact_stopped_early_reports_bound_and_gap(stopped_early):
    optimum = OPTIMA["a12_p4_s0"]
    assert optimum["optimal"] and optimum["exhaustive"] == pytest.approx(optimum["value"])
    # the MILP engine (CP-SAT, which auto runs first where installed, proves this one)
    res = search(stored("a12_p4_s0"), "time", "max", strategy="exact", budget=200,
                 time_limit=600, engine="milp")
    assert res.extra["time_limit_hit"] is True and not res.optimal
    bound, gap = consistent(res)
    assert 0 < gap < 1
    # never worse than the start; the proven optimum lies between bound and value
    assert res.value <= res.extra["start"]["value"]
    assert bound <= optimum["value"] * (1 + 1e-9) <= res.value * (1 + 2e-9)
    assert f"gap {gap:.2%}" in res.extra["stopped"] and "node limit" in res.extra["stopped"]
    doc = res.to_dict()
    assert doc["optimal"] is False and doc["time_limit_hit"] is True
    assert (doc["bound"], doc["gap"]) == (bound, gap)


def test_one_gap_rule_for_every_engine_and_the_trace():
    from mapping.search.common import relative_gap, trace_step
    assert relative_gap(4.0, 3.0) == 0.25                  # (4 - 3) / 4
    assert relative_gap(4.0, None) is None
    assert relative_gap(0.0, 0.0) == 0.0                   # a free mapping is optimal
    assert relative_gap(0.0, -1.0) == math.inf             # nothing relative to 0
    assert relative_gap(-2.0, -3.0) == 0.5                 # (-2 + 3) / |-2|
    assert trace_step(1.5, 0.0, -1.0)["gap"] == math.inf   # the trace says the same


def test_one_optimality_rule_for_every_engine():
    """A bound proves a value optimal where the reported gap is within the tolerance:
    relative to the value, not to the bound, and right for negative values too (the
    test ``value <= bound * (1 + tol)`` that the MILP and the packing used refused a
    bound equal to a negative value)."""
    from mapping.search.common import proves_optimal
    assert proves_optimal(4.0, 3.0, 0.25) and not proves_optimal(4.0, 3.0, 0.2)
    assert proves_optimal(1.0, 0.6, 0.5)                   # 1 > 0.6 * 1.5 all the same
    assert proves_optimal(1.0, 1.0 - 0.5e-6, 1e-6) and not proves_optimal(1.0, 0.999, 1e-6)
    assert proves_optimal(-2.0, -2.0, 1e-9) and proves_optimal(-2.0, -2.0 - 1e-12, 1e-9)
    assert not proves_optimal(-2.0, -3.0, 0.1)             # gap 0.5
    assert proves_optimal(0.0, 0.0, 0.0) and not proves_optimal(0.0, -1.0, 1e-6)
    assert proves_optimal(0.0, 0.5, 0.0) and proves_optimal(1.0, 1.5, 0.0)   # bound above
    assert not proves_optimal(4.0, None, 1.0) and not proves_optimal(math.inf, 1.0, 1e-6)


def test_exact_cli_reports_the_bound(capsys, stopped_early):
    files = [str(DATA / "a12_p4_s0.sdf"), str(DATA / "a12_p4_s0.moa")]
    code, out, err = run_cli(capsys, "search", *files, "--strategy", "exact",
                             "--engine", "milp", "--time-limit", "600", "--budget", "200")
    assert code == 0, err
    assert "proven lower bound" in out and "(time limit hit)" in out
    assert "started from portfolio" in out and "not proven optimal" in out


def test_cutoff_returns_the_start_when_nothing_beats_it():
    problem = stored("a10_p4_s0")
    setup = prepare(problem, "time", "max")
    ev = setup.objectives.evaluators[0]
    best = ev.encode(OPTIMA["a10_p4_s0"]["mapping"])
    res = exact.solve(setup, incumbent=best)
    assert res.optimal and res.value == pytest.approx(OPTIMA["a10_p4_s0"]["value"],
                                                      rel=1e-9)
    assert res.incumbent == pytest.approx(res.value, rel=1e-9)
    assert res.bound <= res.value


def test_bound_without_a_solution_comes_from_the_relaxation():
    # scipy returns no dual bound when HiGHS stops with no solution under the cutoff
    problem = stored("a10_p4_s0")
    ev = prepare(problem, "time", "max").objectives.evaluators[0]
    row = np.zeros(ev.n_actors, dtype=np.intp)
    value = float(ev.evaluate(row[None])[0])
    res = SimpleNamespace(status=1, x=None, fun=None, mip_dual_bound=None, message="limit")
    out = exact._result(ev, res, 2.0, row, value, 1.0, relaxed=value / 4)
    assert out.limited and not out.optimal and out.row.tolist() == row.tolist()
    assert out.bound == pytest.approx(value / 2) and out.gap == pytest.approx(0.5)
    assert "gap 50.00%" in out.message


@pytest.mark.parametrize("aggregate, budget, want", [
    ("sum", None, "exact"), ("max", None, "portfolio"), ("max", 10 ** 6, "exhaustive")])
def test_auto_chooses_by_problem(aggregate, budget, want):
    stem = "a30_p8_s1" if want != "exhaustive" else "a10_p4_s0"
    setup = prepare(stored(stem), "time", aggregate, budget=budget)
    assert choose_strategy(setup) == want


def test_portfolio_islands_afford_their_descents():
    from mapping.search.engine import plan
    from mapping.search.portfolio import ISLAND_DESCENTS as n, member
    setup = prepare(stored("a30_p8_s1"), "time", "max")
    descent = 30 * 30 * 7                   # actors × (actors × other PEs < SAMPLE) moves
    for budget, want in [(4 * n * descent, ["multilevel", "greedy", "tabu", "anneal"]),
                         (2 * n * descent, ["multilevel", "greedy"]),
                         (n * descent - 1, ["multilevel"]), (2 * descent - 1, ["genetic"])]:
        setup.budget = budget
        tasks = plan(setup, "portfolio")
        assert [member(t) for t in tasks] == want
        assert sum(t.budget for t in tasks) == budget


def test_auto_does_not_count_orbits_it_cannot_afford(monkeypatch):
    # 50 actors on 12 PEs: 12^50 mappings, at least 12^50 / (6! 3! 3!) canonical ones;
    # counting them exactly took minutes at 1,000 actors on 64 PEs
    from mapping.search.symmetry import Canonical

    def refuse(self, prefix_depth=None):
        raise AssertionError("counted the canonical mappings")
    setup = prepare(stored("a50_p12_s4"), "time", "max", budget=2_000_000)
    monkeypatch.setattr(Canonical, "count", refuse)
    assert choose_strategy(setup) == "portfolio"


def test_auto_solves_sum_exactly():
    res = search(stored("a30_p8_s1"), "time", "sum")
    assert res.strategy == "exact" and res.extra["chosen_by"] == "auto" and res.optimal
    consistent(res)


def test_portfolio_reports_its_members():
    from mapping.search.portfolio import ISLAND_DESCENTS
    budget = 4 * ISLAND_DESCENTS * 10 * 30  # four islands of ISLAND_DESCENTS descents
    res = search(stored("a10_p4_s0"), "time", "max", strategy="portfolio", budget=budget,
                 seed=1)
    members = [m["strategy"] for m in res.extra["portfolio"]]
    assert members == ["multilevel", "greedy", "tabu", "anneal"]
    assert res.value == min(m["value"] for m in res.extra["portfolio"])
    assert res.evaluations <= budget and res.seed == 1


def test_a_descent_on_a_large_problem_values_a_sample():
    """Beyond greedy.SAMPLE moves a step values a sample: 300 actors on 32 PEs afford
    a descent of 300 × 1,024 moves, so 2,000,000 evaluations pay for a tabu island (by the
    full neighbourhood, 300 × 300 × 31, not even one descent: genetic ran there)."""
    from mapping.search.greedy import SAMPLE
    from mapping.search.portfolio import descent
    from search_instances import instance
    app, arch = instance(300, 32, 1)
    setup = prepare(bind_problem(app, arch), "time", "max", budget=2_000_000)
    assert SAMPLE == 1024 and descent(setup.space) == 300 * 1024
