"""Multi-objective search (issue 13): NSGA-II finds the points of a non-convex front
that no weighted sum of the objectives picks; hypervolume reported with its reference."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mapping.evaluation.batch import BatchEvaluator
from mapping.semantics.problem import bind_problem
from mapping.search import nondominated, search
from mapping.search.common import hypervolume, reference_point
from mapping.search.nsga2 import crowding, ranks

from search_problems import random_app, small_arch
from test_search import APP, ARCH


def test_hypervolume_by_hand():
    F = np.array([[1.0, 3.0], [2.0, 2.0], [3.0, 1.0]])
    # rectangles up to (4, 4): 3·1 + 2·1 + 1·1
    assert hypervolume(F, (4, 4)) == 6.0
    # dominated, duplicate and out-of-range points add nothing
    more = np.vstack([F, [[2.5, 2.5], [2.0, 2.0], [5.0, 0.5], [np.inf, 0.0]]])
    assert hypervolume(more, (4, 4)) == 6.0
    assert hypervolume(F[:0], (4, 4)) == 0.0
    np.testing.assert_allclose(reference_point(F), [3.2, 3.2])


def test_ranks_and_crowding_by_hand():
    F = np.array([[1, 4], [2, 2], [4, 1], [3, 3], [4, 4], [2, 2], [np.inf, 0]], dtype=float)
    assert list(ranks(F)) == [0, 0, 0, 1, 2, 0, 7]
    d = crowding(F, ranks(F))
    # front 0 by the first objective: (1,4), (2,2), (2,2), (4,1); ranges 3 and 3
    assert np.isinf(d[[0, 2]]).all() and d[6] == 0
    # ties keep their order: by time (1,4) (2,2)₁ (2,2)₅ (4,1), by energy (4,1) (2,2)₁
    # (2,2)₅ (1,4)
    assert d[1] == pytest.approx((2 - 1) / 3 + (2 - 1) / 3)
    assert d[5] == pytest.approx((4 - 2) / 3 + (4 - 2) / 3)
    assert np.isinf(d[3]) and np.isinf(d[4])          # fronts of one point


def lower_hull(F: np.ndarray) -> list[int]:
    """Vertices of the lower-left convex hull of a front sorted by the first objective
    (the only points some weighted sum with positive weights minimizes)."""
    hull: list[int] = []
    for i, p in enumerate(F):
        while len(hull) >= 2:
            a, b = F[hull[-2]], F[hull[-1]]
            if (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) <= 0:
                hull.pop()
            else:
                break
        hull.append(i)
    return hull


@pytest.fixture(scope="module")
def nonconvex():
    """9 actors on 4 PEs, time and energy both under ``max``: every one of the 4^9
    mappings evaluated gives the exact front, sorted by time."""
    problem = bind_problem(random_app(9, 12, seed=3), small_arch(lambda_=0.1))
    P, A = 4, 9
    X = np.array(np.unravel_index(np.arange(P ** A), (P,) * A)).T
    F = np.column_stack([BatchEvaluator(problem, m, "max").evaluate(X)
                         for m in ("time", "energy")])
    front = np.unique(F[nondominated(F)], axis=0)
    return problem, F, front[np.argsort(front[:, 0])]


def test_the_front_is_not_convex_and_weighted_sums_miss_its_dents(nonconvex):
    _, F, front = nonconvex
    hull = lower_hull(front)
    dents = [i for i in range(len(front)) if i not in hull]
    assert len(front) == 19 and len(dents) == 11
    # every weighted sum with positive weights picks a hull vertex, never a dent (its
    # minimizer is Pareto optimal, so it lies on the front: checked over all 4^9
    # mappings for a few weights, then over the front for a fine grid)
    scale = front.max(axis=0) - front.min(axis=0)
    weights = np.linspace(0, 1, 2001)[1:-1]
    W = np.stack([weights, 1 - weights]) / scale[:, None]             # (2, weights)
    for k in range(0, len(weights), 250):
        assert (F @ W[:, k]).min() == pytest.approx((front @ W[:, k]).min(), rel=1e-12)
    picked = set(np.argmin(front @ W, axis=0).tolist())
    assert picked == set(hull)
    assert not picked & set(dents)


def test_nsga2_finds_the_dents(nonconvex):
    problem, _, front = nonconvex
    res = search(problem, "time", "max", strategy="nsga2", budget=20_000, seed=0,
                 objectives=["time", "energy"])
    assert res.evaluations <= 20_000 < 4 ** 9 / 10
    got = np.array([[p["values"]["time"], p["values"]["energy"]] for p in res.front])
    assert nondominated(got).all()
    found = [any(np.allclose(f, g, rtol=1e-12, atol=0) for g in got) for f in front]
    hull = lower_hull(front)
    dents = [i for i in range(len(front)) if i not in hull]
    assert all(found[i] for i in dents)
    assert all(found)
    ref = reference_point(front)
    assert hypervolume(got, ref) == pytest.approx(hypervolume(front, ref), rel=1e-12)
    hv = res.hypervolume
    assert hv["value"] == pytest.approx(hypervolume(front, ref), rel=1e-12)
    assert hv["reference"] == pytest.approx({"time": ref[0], "energy": ref[1]})


def test_nsga2_is_reproducible_and_single_objective(nonconvex):
    problem, F, _ = nonconvex
    a = search(problem, "time", "max", strategy="nsga2", budget=2000, seed=5,
               objectives=["time", "energy"])
    b = search(problem, "time", "max", strategy="nsga2", budget=2000, seed=5,
               objectives=["time", "energy"])
    assert a.to_dict()["front"] == b.to_dict()["front"]
    one = search(problem, "time", "max", strategy="nsga2", budget=5000, seed=0)
    assert one.front is None and one.value <= F[:, 0].min() * 1.05


def test_cli_nsga2_json_reports_the_hypervolume(tmp_path, capsys):
    from mapping.cli.main import main
    (tmp_path / "app.sdf").write_text(APP)
    (tmp_path / "arch.moa").write_text(ARCH)
    code = main(["search", str(tmp_path / "app.sdf"), str(tmp_path / "arch.moa"),
                 "--strategy", "nsga2", "--objectives", "time,energy", "--aggregate", "max",
                 "--budget", "3000", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    d = json.loads(out)
    assert d["strategy"] == "nsga2" and len(d["front"]) >= 2
    F = np.array([[p["values"]["time"], p["values"]["energy"]] for p in d["front"]])
    ref = d["hypervolume"]["reference"]
    assert d["hypervolume"]["value"] == pytest.approx(
        hypervolume(F, (ref["time"], ref["energy"])), rel=1e-12)
    code = main(["search", str(tmp_path / "app.sdf"), str(tmp_path / "arch.moa"),
                 "--strategy", "nsga2", "--objectives", "time,energy", "--budget", "3000"])
    assert code == 0 and "hypervolume" in capsys.readouterr().out
