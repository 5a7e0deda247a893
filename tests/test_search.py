"""Mapping search (SPEC §9): exhaustive, exact, heuristics, constraints, fronts, CLI."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mapping.evaluation.batch import BatchEvaluator
from mapping.semantics.problem import bind_problem
from mapping.search import SearchError, nondominated, search
from mapping.search.common import Progress

from search_problems import bench_arch, random_app, roofline_arch, small_arch

HEURISTICS = ("greedy", "anneal", "genetic", "tabu")


@pytest.fixture(scope="module")
def problem8():
    """8 actors × 4 PEs (two interchangeable) with communication costs."""
    return bind_problem(random_app(8, 12, seed=3), small_arch(lambda_=0.1))


def brute_force(problem, metric="time", aggregate="sum"):
    ev = BatchEvaluator(problem, metric, aggregate)
    P, A = ev.n_pes, ev.n_actors
    X = np.array(np.unravel_index(np.arange(P ** A), (P,) * A)).T
    v = ev.evaluate(X)
    return float(v.min()), X, v


@pytest.fixture(scope="module")
def optima(problem8):
    return {agg: brute_force(problem8, "time", agg)[0] for agg in ("sum", "max")}


@pytest.mark.parametrize("aggregate", ["sum", "max"])
def test_exact_and_exhaustive_find_the_optimum(problem8, optima, aggregate):
    ex = search(problem8, "time", aggregate, strategy="exhaustive")
    milp = search(problem8, "time", aggregate, strategy="exact")
    assert ex.optimal and milp.optimal
    assert ex.value == pytest.approx(optima[aggregate], rel=1e-12)
    assert milp.value == pytest.approx(optima[aggregate], rel=1e-7)
    # interchangeable cpu[0], cpu[1]: fewer than 4^8 mappings enumerated
    assert ex.evaluations < 4 ** 8
    assert ex.extra["interchangeable"] == [["cpu[0]", "cpu[1]"]]
    # the reported mapping has the reported value
    ev = BatchEvaluator(problem8, "time", aggregate)
    assert ev.value(ex.mapping) == pytest.approx(ex.value, rel=1e-12)
    assert ev.value(milp.mapping) == pytest.approx(milp.value, rel=1e-12)


def test_exhaustive_counts_one_mapping_per_orbit():
    # 6 actors on 3 identical cores + 1 accelerator: orbits counted by hand
    from moa import Architecture
    from search_problems import lsla
    arch = Architecture("sym")
    arch.add_type("core", costs={"time": lsla(1e-9, 1e-6)})
    arch.add_cn("bus", costs={"time": lsla(1e-9)})
    for i in range(3):
        arch.add_pe(f"core[{i}]", type_name="core", array=("core", i))
        arch.add_link(f"core[{i}]", "bus")
    arch.add_pe("acc", costs={"time": lsla(1e-10, 1e-5)})
    arch.add_link("acc", "bus")
    problem = bind_problem(random_app(6, 8, seed=1), arch)
    res = search(problem, "time", "max", strategy="exhaustive")
    # Σ_j C(6, j)·(number of set partitions of 6-j items into at most 3 blocks)
    from math import comb
    partitions_le3 = {0: 1, 1: 1, 2: 2, 3: 5, 4: 14, 5: 41, 6: 122}
    assert res.evaluations == sum(comb(6, j) * partitions_le3[6 - j] for j in range(7))
    best, _, _ = brute_force(problem, "time", "max")
    assert res.value == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize("strategy", HEURISTICS)
def test_heuristics_near_optimum(problem8, optima, strategy):
    for aggregate in ("sum", "max"):
        hits = 0
        for seed in range(10):
            res = search(problem8, "time", aggregate, strategy=strategy, budget=20_000,
                         seed=seed)
            assert res.evaluations <= 20_000
            hits += res.value <= optima[aggregate] * 1.01
        assert hits >= 9, (strategy, aggregate, hits)


@pytest.mark.parametrize("strategy", HEURISTICS)
def test_heuristics_are_reproducible(problem8, strategy):
    a = search(problem8, "time", "max", strategy=strategy, budget=3000, seed=7)
    b = search(problem8, "time", "max", strategy=strategy, budget=3000, seed=7)
    assert a.value == b.value and a.mapping == b.mapping and a.evaluations == b.evaluations


def test_roofline_exclusive_search_matches_brute_force():
    problem = bind_problem(random_app(6, 8, seed=5), roofline_arch())
    best, _, _ = brute_force(problem, "time", "exclusive")
    res = search(problem, "time", "exclusive", strategy="exhaustive")
    assert res.value == pytest.approx(best, rel=1e-12)
    # ip[0] and ip[1] share a memory and a bus: interchangeable
    assert ["ip[0]", "ip[1]"] in res.extra["interchangeable"]
    assert res.evaluations < 4 ** 6
    with pytest.raises(SearchError, match="exact"):
        search(problem, "time", "exclusive", strategy="exact")


def test_pins_and_allowed(problem8):
    pins = {"a0": "gpu", "a3": "cpu[1]"}
    allowed = {"a1": "dsp gpu", "a2": ["cpu"]}       # a type name
    for strategy in ("exhaustive", "exact", "anneal", "tabu", "greedy", "genetic"):
        res = search(problem8, "time", "sum", strategy=strategy, budget=2000, seed=1,
                     pins=pins, allowed=allowed)
        assert res.mapping["a0"] == "gpu" and res.mapping["a3"] == "cpu[1]"
        assert res.mapping["a1"] in ("dsp", "gpu")
        assert res.mapping["a2"] in ("cpu[0]", "cpu[1]")
    with pytest.raises(SearchError, match="unknown PE"):
        search(problem8, strategy="greedy", pins={"a0": "nope"})
    with pytest.raises(SearchError, match="not allowed"):
        search(problem8, strategy="greedy", pins={"a1": "cpu[0]"}, allowed=allowed)


def test_allowed_attribute_string():
    app = random_app(5, 6, seed=2)
    app.actors["a1"] = type(app.actors["a1"])("a1", {**app.actors["a1"].attrs,
                                                      "allowed": "dsp, cpu[1]"})
    problem = bind_problem(app, small_arch())
    res = search(problem, "time", "sum", strategy="exhaustive")
    assert res.mapping["a1"] in ("dsp", "cpu[1]")
    # cpu[0] and cpu[1] are no longer interchangeable
    assert "interchangeable" not in res.extra


def test_pareto_front(problem8):
    _, X, _ = brute_force(problem8, "time", "max")
    F = np.column_stack([BatchEvaluator(problem8, m, "max").evaluate(X)
                         for m in ("time", "energy")])
    exact_front = np.unique(F[nondominated(F)], axis=0)
    res = search(problem8, "time", "max", strategy="exhaustive",
                 objectives=["time", "energy"])
    got = np.array([[p["values"]["time"], p["values"]["energy"]] for p in res.front])
    np.testing.assert_allclose(np.unique(got, axis=0), exact_front, rtol=1e-12)
    d = res.to_dict()
    assert d["objectives"] == ["time", "energy"] and len(d["front"]) == len(res.front)
    h = search(problem8, "time", "max", strategy="anneal", budget=20_000, seed=0,
               objectives=["time", "energy"])
    hv = np.array([[p["values"]["time"], p["values"]["energy"]] for p in h.front])
    assert nondominated(hv).all()
    # the heuristic front's ends are close to the true extremes
    assert hv[:, 0].min() <= exact_front[:, 0].min() * 1.01
    assert hv[:, 1].min() <= exact_front[:, 1].min() * 1.01


def test_nondominated():
    F = np.array([[1, 5], [2, 2], [3, 3], [5, 1], [2, 2], [1, 6]], dtype=float)
    assert list(nondominated(F)) == [True, True, False, True, False, False]


def test_result_json_keys(problem8):
    res = search(problem8, "time", "sum", strategy="tabu", budget=500, seed=3)
    d = res.to_dict()
    for key in ("strategy", "metric", "aggregate", "value", "mapping", "evaluations",
                "optimal", "seconds"):
        assert key in d
    assert d["strategy"] == "tabu" and d["optimal"] is False
    json.dumps(d)


def test_budgets_and_errors(problem8):
    with pytest.raises(SearchError, match="budget"):
        search(problem8, strategy="exhaustive", budget=100)
    with pytest.raises(SearchError, match="unknown strategy"):
        search(problem8, strategy="magic")
    with pytest.raises(SearchError, match="one objective"):
        search(problem8, strategy="exact", objectives=["time", "energy"])
    res = search(problem8, strategy="genetic", budget=50, seed=0)
    assert res.evaluations <= 50


def test_large_problem_heuristic_runs():
    problem = bind_problem(random_app(20, 30, seed=1), bench_arch())
    res = search(problem, "time", "max", strategy="anneal", budget=20_000, seed=0)
    ev = BatchEvaluator(problem, "time", "max")
    assert ev.value(res.mapping) == pytest.approx(res.value, rel=1e-12)
    ex = search(problem, "time", "sum", strategy="exact", time_limit=20)
    assert ev.value(ex.mapping) >= 0


def test_progress_only_on_tty(capsys):
    import io

    class Tty(io.StringIO):
        def isatty(self):
            return True

    quiet = io.StringIO()
    p = Progress(100, "x", None, stream=quiet, interval=0)
    p(50)
    p.close()
    assert quiet.getvalue() == ""
    loud = Tty()
    p = Progress(100, "x", None, stream=loud, interval=0)
    p(50)
    p.close()
    assert "50/100" in loud.getvalue()


# ----------------------------------------------------------------------------- CLI
APP = """\
sdf app {
    param S = 1024
    actor src  [quanta = S]
    actor f1   [quanta = 4*S, gamma = 8]
    actor f2   [quanta = 2*S, allowed = "A15 gpu"]
    actor f3   [quanta = 3*S]
    actor sink [quanta = S]
    src -> f1 [size = 4]
    src -> f2 [size = 4]
    f1 -> f3 [size = 4]
    f2 -> f3 [size = 4]
    f3 -> sink [size = 4]
}
"""
ARCH = """\
moa board {
    lambda = 1.0
    type A7  [time = lsla(alpha = 2.0e-9, beta = 1e-6), energy = lsla(alpha = 3e-10)]
    type A15 [time = lsla(alpha = 0.7e-9, beta = 1e-6), energy = lsla(alpha = 9e-10)]
    pe little[0..3] : A7
    pe big[0..3]    : A15
    pe gpu  [time = gsla(alpha = 3.1e-8, beta = 1.2e-10), energy = lsla(alpha = 2e-10, beta = 1e-6)]
    cn cci  [time = lsla(alpha = 1e-10, beta = 2e-6), energy = lsla(alpha = 1e-11)]
    cn l2_little [time = lsla(alpha = 5e-11), energy = lsla(alpha = 1e-12)]
    little[*] -- l2_little
    l2_little -- cci
    big[*] -- cci
    gpu -- cci
}
"""


@pytest.fixture
def files(tmp_path):
    (tmp_path / "app.sdf").write_text(APP)
    (tmp_path / "arch.moa").write_text(ARCH)
    return tmp_path


def _main(argv, capsys):
    from mapping.cli.main import main
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("strategy", ["exhaustive", "exact", "anneal", "tabu"])
@pytest.mark.parametrize("aggregate", ["sum", "max"])
def test_cli_search_then_eval_reproduces_value(files, capsys, strategy, aggregate):
    best = files / "best.map"
    code, out, err = _main(["search", files / "app.sdf", files / "arch.moa", "--strategy",
                            strategy, "--aggregate", aggregate, "--budget", "5000",
                            "-o", best, "--json"], capsys)
    assert code == 0, err
    found = json.loads(out)
    assert found["strategy"] == strategy and found["mapping"]["f2"] in (
        "big[0]", "big[1]", "big[2]", "big[3]", "gpu")
    code, out, err = _main(["eval", files / "app.sdf", files / "arch.moa", best,
                            "--aggregate", aggregate, "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["value"] == pytest.approx(found["value"], rel=1e-9)


def test_cli_front_and_pins(files, capsys):
    front = files / "front.map"
    code, out, err = _main(["search", files / "app.sdf", files / "arch.moa", "--aggregate",
                            "max", "--objectives", "time,energy", "--pin", "src=little[2]",
                            "--strategy", "genetic", "--seed", "4", "-o", front, "--json"],
                           capsys)
    assert code == 0, err
    d = json.loads(out)
    assert len(d["front"]) >= 2
    assert all(p["mapping"]["src"] == "little[2]" for p in d["front"])
    import dsl
    maps = dsl.load_map(front)
    assert len(maps) == len(d["front"])
    for m, p in zip(maps, d["front"]):
        code, out, _ = _main(["eval", files / "app.sdf", files / "arch.moa", front,
                              "--mapping", m.name, "--aggregate", "max", "--metric",
                              "energy", "--json"], capsys)
        assert json.loads(out)["value"] == pytest.approx(p["values"]["energy"], rel=1e-9)


def test_cli_text_output_and_errors(files, capsys):
    code, out, err = _main(["search", files / "app.sdf", files / "arch.moa"], capsys)
    assert code == 0 and "exhaustive search" in out
    code, out, err = _main(["search", files / "app.sdf", files / "arch.moa", "--pin",
                            "src=nowhere"], capsys)
    assert code == 2 and "nowhere" in err and out == ""
    code, out, err = _main(["search", files / "app.sdf", files / "arch.moa", "--strategy",
                            "exact", "--aggregate", "exclusive"], capsys)
    assert code == 2 and "exact" in err
    code, out, err = _main(["search", files / "app.sdf", files / "arch.moa", "-o",
                            files / "app.sdf"], capsys)
    assert code == 2
    code, out, err = _main(["search", files / "app.sdf", files / "arch.moa", "--progress",
                            "--strategy", "anneal", "--json"], capsys)
    assert code == 0 and json.loads(out)["strategy"] == "anneal"
    assert "anneal" in err            # progress went to stderr, never stdout


def test_plot_pareto(files, capsys):
    out_png = files / "front.png"
    code, out, err = _main(["plot", "pareto", files / "app.sdf", files / "arch.moa",
                            "--aggregate", "max", "-o", out_png], capsys)
    assert code == 0, err
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, out, err = _main(["plot", "pareto", files / "app.sdf", files / "arch.moa",
                            "--objectives", "time", "-o", out_png], capsys)
    assert code == 2
