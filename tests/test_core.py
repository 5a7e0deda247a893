"""The semantic core (issue 8): cost models that state their features, metric rules and
aggregations as registries, the batch evaluator compiled from them, and the defects of
unknown metrics, NaN parameters and attributes, and an exact search stopped by its limit."""
from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import numpy as np
import pytest
from pydantic import Field

from moa import Architecture, CostSpec
from moc.errors import SDFError
from moa.cost_models import CostModel, Parameters, register
from moa.errors import CostModelError
from moc import SDFGraph
from dsl.mappings import Mapping
from mapping.semantics.aggregation import (AGGREGATIONS, Aggregation, aggregator,
                                          contributions, untimed_names)
from mapping.evaluation.batch import MAX_PLAN_PES, BatchEvaluator
from mapping.cli.main import main
from mapping.errors import MappingError
from mapping.evaluation.reference import evaluate
from mapping.semantics.metrics import element_metric, known_metrics
from mapping.semantics.problem import bind_problem

from search_problems import bench_arch, lsla, random_app, roofline_arch

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
CHAIN = [str(DATA / "chain.sdf"), str(DATA / "chain.moa"), str(DATA / "chain.map")]


# ------------------------------------------------------------------ unknown metrics
def test_unknown_metric_is_an_error_listing_the_known_ones(capsys):
    code = main(["eval", *CHAIN, "--mapping", "spread", "--metric", "tme"])
    err = capsys.readouterr().err
    assert code == 2
    assert "unknown metric 'tme'" in err and "energy, power, time" in err
    problem = bind_problem(random_app(6, 8), bench_arch())
    m = Mapping("m", {a: "dsp" for a in problem.app.actors})
    with pytest.raises(MappingError, match=r"unknown metric 'tme'.*known metrics: energy, time"):
        evaluate(problem.app, problem.arch, m, "tme", problem=problem)
    with pytest.raises(MappingError, match="unknown metric 'tme'"):
        BatchEvaluator(problem, "tme")


def test_known_metrics_include_the_energy_fallback():
    a = Architecture("a")
    a.add_pe("p", costs={"time": lsla(1.0), "power": CostSpec("gsla_power", {"a": 2.0})})
    assert known_metrics(a.bind()) == ["energy", "power", "time"]


def test_every_used_element_unmodelled_is_an_error(capsys):
    # only the dsp models power; a mapping that leaves it idle has no power value at all
    code = main(["eval", *CHAIN[:2], "--map", "src=cpu0,work=cpu1,sink=cpu1", "--metric", "power"])
    err = capsys.readouterr().err
    assert code == 2 and "no element it uses has a model for metric 'power'" in err
    assert "cpu0" in err and "bus0" in err
    # one modelled element among the used ones is enough
    code = main(["eval", *CHAIN, "--mapping", "spread", "--metric", "power", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["value"] == pytest.approx(2.0)


# -------------------------------------------------------------- model parameters
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_model_parameters_reject_nan_and_infinity(value):
    arch = Architecture("m")
    with pytest.raises(CostModelError) as info:
        arch.add_pe("gpu", costs={"time": CostSpec("lsla", {"alpha": value})})
    msg = str(info.value)
    assert "element 'gpu'" in msg and "metric 'time'" in msg and "'lsla'" in msg
    assert "'alpha'" in msg and "finite" in msg


def test_roofline_bandwidth_may_be_infinite_but_not_nan():
    arch = Architecture("m")
    arch.add_pe("ip", costs={"time": CostSpec("roofline", {"peak": 2.0, "bandwidth": math.inf})})
    arch.bind()
    bad = Architecture("m")
    with pytest.raises(CostModelError, match="'bandwidth'"):
        bad.add_pe("ip", costs={"time": CostSpec("roofline", {"peak": 2.0, "bandwidth": math.nan})})
    for peak in (math.inf, math.nan):
        worse = Architecture("m")
        with pytest.raises(CostModelError, match="'peak'"):
            worse.add_pe("ip", costs={"time": CostSpec("roofline", {"peak": peak})})


# --------------------------------------------------------------- token attributes
def _one_actor(model: CostSpec, **attrs):
    g = SDFGraph("g")
    g.add_actor("kernel", quanta=4.0, **attrs)
    a = Architecture("a")
    a.add_pe("p", costs={"time": model})
    return g, a, Mapping("m", {"kernel": "p"})


@pytest.mark.parametrize("model, attr", [
    (CostSpec("gsla", {"alpha": 1.0}), "gamma"),
    (CostSpec("gsla", {"alpha": 1.0}), "S"),
    (CostSpec("logca", {"A": 2.0}), "g"),
    (CostSpec("logca", {"A": 2.0}), "C"),
    (CostSpec("roofline", {"peak": 2.0, "bandwidth": 1.0}), "ops"),
    (CostSpec("roofline", {"peak": 2.0, "bandwidth": 1.0}), "bytes"),
    (CostSpec("roofline", {"peak": 2.0, "bandwidth": 1.0}), "intensity"),
])
@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_nan_or_infinite_token_attribute_is_an_error(model, attr, bad):
    if math.isnan(bad):
        # NaN is no value of any attribute: the graph refuses it when the actor is added
        # (moc), before any model reads it
        with pytest.raises(SDFError, match=f"actor 'kernel': {attr} is not a number"):
            _one_actor(model, **{attr: bad})
        return
    g, a, m = _one_actor(model, **{attr: bad})
    if attr == "intensity" and bad == math.inf:
        # infinite intensity is meaningful: no memory traffic, compute-bound (4 ops / 2)
        assert evaluate(g, a, m).value == 2.0
        return
    with pytest.raises(MappingError) as info:
        evaluate(g, a, m)
    msg = str(info.value)
    assert "'kernel'" in msg and "element 'p'" in msg and "metric 'time'" in msg
    assert f"model '{model.model}'" in msg and attr in msg
    problem = bind_problem(g, a)
    with pytest.raises(MappingError, match="'kernel'"):
        BatchEvaluator(problem).evaluate(np.zeros((1, 1), dtype=int))


def test_infinite_memory_traffic_is_an_error():
    g = SDFGraph("g")
    g.add_actor("kernel", quanta=4.0, bytes=math.inf)
    a = Architecture("a")
    a.add_cn("dram", costs={"time": CostSpec("bandwidth", {"B": 1.0})})
    # the energy model has no memory; the traffic comes from the time model
    a.add_pe("p", costs={"time": CostSpec("roofline", {"peak": 1.0, "memory": "dram"}),
                         "energy": lsla(1.0)})
    a.add_link("p", "dram")
    with pytest.raises(MappingError, match="element 'p', metric 'energy', model 'roofline'"):
        evaluate(g, a, Mapping("m", {"kernel": "p"}), "energy")


# ---------------------------------------------------------------- aggregations
def test_aggregations_declare_their_properties():
    assert aggregator("sum").separable and not aggregator("sum").bottleneck
    assert aggregator("max").bottleneck and not aggregator("max").separable
    assert aggregator("exclusive").needs_shares
    # issue 10 implements schedule and period: timed aggregations, not element combiners
    assert list(AGGREGATIONS) == ["sum", "max", "exclusive", "schedule", "period"]
    assert [n for n in AGGREGATIONS if aggregator(n).timed] == ["schedule", "period"]


def test_refusals_offer_the_aggregations_of_element_values_from_the_registry():
    assert untimed_names() == "sum, max or exclusive"
    pe, cn = np.zeros((2, 1)), np.zeros((1, 1))
    for name in ("schedule", "period"):
        with pytest.raises(MappingError, match=f"'{name}' schedules the firings.*: use "
                                               "sum, max or exclusive$"):
            aggregator(name).combine(pe, cn, 1.0)
    with pytest.raises(MappingError, match="'exclusive' needs the share of each CN's "
                                           "tokens.*\\(a mapping\\); none was given"):
        aggregator("exclusive").combine(pe, cn, 1.0)


def test_aggregations_on_arrays_match_one_at_a_time():
    rng = np.random.default_rng(3)
    pe, cn, shares = rng.random((4, 50)), rng.random((2, 50)), rng.random((4, 2, 50))
    for name in AGGREGATIONS:
        agg = aggregator(name)
        if agg.timed:                   # firing-level tables, not element values
            continue
        values, where = agg.combine(pe, cn, 1.5, shares)
        for j in range(50):
            v, w = agg.combine(pe[:, j:j + 1], cn[:, j:j + 1], 1.5, shares[:, :, j:j + 1])
            assert v[0] == values[j] and w[0] == where[j]
    v, w = aggregator("max").combine(pe, cn, 1.5)
    np.testing.assert_array_equal(v, np.maximum(pe.max(0), 1.5 * cn.max(0)))
    np.testing.assert_array_equal(w, np.concatenate([pe, 1.5 * cn]).argmax(0))


# ------------------------------------------------------- third-party cost models
@register
class Overlap(CostModel):
    """An element-level model stated by features and finish: compute and transfers
    overlap, the slower one sets the time."""

    name = "test_overlap"
    per_token = False
    additive = False
    features = ("quanta", "tokens")

    class Parameters(Parameters):
        rate: float = Field(gt=0)
        latency: float = Field(ge=0)

    def token_features(self, token):
        return token.quanta, 1.0

    def finish(self, totals):
        quanta, tokens = totals
        return np.maximum(quanta / self.params.rate, tokens * self.params.latency)


@register
class OpaqueSquare(CostModel):
    """A model that only overrides element_value: evaluated one mapping at a time."""

    name = "test_opaque_square"
    per_token = False

    class Parameters(Parameters):
        scale: float = Field(gt=0)

    def element_value(self, tokens):
        return self.params.scale * sum(t.count * t.quanta for t in tokens) ** 2


def _third_party_arch(model: str, params: dict) -> Architecture:
    a = bench_arch(lambda_=0.8)
    a.add_pe("npu", costs={"time": CostSpec(model, params), "energy": lsla(1e-10)})
    a.add_link("npu", "cci")
    return a


@pytest.mark.parametrize("aggregate", ["sum", "max", "exclusive"])
def test_third_party_element_level_model_is_vectorized(aggregate):
    app = random_app(9, 14, seed=4)
    problem = bind_problem(app, _third_party_arch("test_overlap",
                                                  {"rate": 1e9, "latency": 2e-6}))
    ev = BatchEvaluator(problem, "time", aggregate)
    assert ev.vectorized and ev.plan == "tables"
    rng = np.random.default_rng(1)
    X = rng.integers(0, ev.n_pes, (60, ev.n_actors))
    X[:, :3] = ev.pe_index["npu"]
    ref = [evaluate(problem.app, problem.arch, ev.to_mapping(r), "time", aggregate,
                    problem=problem).value for r in X]
    np.testing.assert_allclose(ev.evaluate(X), ref, rtol=1e-9)


def test_opaque_third_party_model_falls_back_to_the_reference():
    app = random_app(6, 8, seed=2)
    problem = bind_problem(app, _third_party_arch("test_opaque_square", {"scale": 1e-12}))
    ev = BatchEvaluator(problem, "time", "max")
    assert not ev.vectorized and ev.plan == "reference"
    X = np.random.default_rng(0).integers(0, ev.n_pes, (10, ev.n_actors))
    ref = [evaluate(problem.app, problem.arch, ev.to_mapping(r), "time", "max",
                    problem=problem).value for r in X]
    np.testing.assert_allclose(ev.evaluate(X), ref, rtol=1e-12)


# ------------------------------------------------------------- batch evaluator
def _wide_arch(n_pes: int) -> Architecture:
    a = Architecture("wide")
    a.add_type("core", costs={"time": lsla(1e-9, 1e-6)})
    a.add_type("fast", costs={"time": lsla(4e-10, 2e-6)})
    a.add_cn("bus", costs={"time": lsla(1e-10, 1e-6)})
    a.add_cn("l2", costs={"time": lsla(5e-11)})
    for i in range(n_pes):
        a.add_pe(f"pe[{i}]", type_name="fast" if i % 2 else "core", array=("pe", i))
        a.add_link(f"pe[{i}]", "l2" if i % 4 == 0 else "bus")
    a.add_link("l2", "bus")
    return a


@pytest.mark.parametrize("n_pes", [8, MAX_PLAN_PES - 1, MAX_PLAN_PES, 64])
def test_max_chooses_the_group_tables_by_problem_size(n_pes):
    problem = bind_problem(random_app(12, 18, seed=5), _wide_arch(n_pes))
    ev = BatchEvaluator(problem, "time", "max")
    assert ev.plan == ("groups" if n_pes < MAX_PLAN_PES else "tables")
    other = BatchEvaluator(problem, "time", "max", max_plan=ev.plan != "groups")
    assert other.plan != ev.plan
    X = np.random.default_rng(n_pes).integers(0, n_pes, (300, ev.n_actors))
    np.testing.assert_allclose(ev.evaluate(X), other.evaluate(X), rtol=1e-12)
    ref = [evaluate(problem.app, problem.arch, ev.to_mapping(r), "time", "max",
                    problem=problem).value for r in X[:20]]
    np.testing.assert_allclose(ev.evaluate(X[:20]), ref, rtol=1e-9)


def test_cost_tables_are_public():
    problem = bind_problem(random_app(6, 8), bench_arch())
    t = BatchEvaluator(problem, "time", "sum").tables
    assert t.linear and t.proc.shape == (6, 8) and t.comm.shape == (8, 3)
    assert t.route.shape == (64, 3) and t.unroutable.shape == (64,)
    assert not BatchEvaluator(bind_problem(random_app(6, 8), roofline_arch()), "time",
                              "max").tables.linear


# ---------------------------------------------------------------------- search
def test_exact_search_says_when_the_time_limit_stopped_it(monkeypatch):
    from mapping.search import exact, search
    real = exact.milp

    def stopped(*args, **kwargs):
        res = real(*args, **kwargs)
        res.status = 1
        return res
    monkeypatch.setattr(exact, "milp", stopped)
    problem = bind_problem(random_app(5, 6), bench_arch())
    from mapping.search.engine import prepare
    setup = prepare(problem, "time", "sum", None, None, None, None, 0)
    res = exact.solve(setup, time_limit=0.5)
    assert not res.optimal and res.limited
    assert "time limit of 0.5 s" in res.message and "best found" in res.message
    assert search  # the package imports


# ------------------------------------------------------------ no name dispatch
def _name_comparisons(path: Path):
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        names = [s for s in sides if isinstance(s, ast.Attribute) and s.attr == "name"
                 and "model" in ast.unparse(s.value).lower()]
        strings = [s for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, str)
                   or isinstance(s, (ast.Tuple, ast.List, ast.Set))
                   and any(isinstance(e, ast.Constant) for e in s.elts)]
        if names and strings:
            yield f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}"


def test_no_dispatch_on_model_names_outside_the_cost_models():
    found = [hit for pkg in ("mapping", "moa", "dsl", "moc") for p in (ROOT / pkg).rglob("*.py")
             if "cost_models" not in p.parts for hit in _name_comparisons(p)]
    assert found == []


def test_the_name_dispatch_check_sees_a_dispatch(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(element):\n    model = element.model('time')\n"
                   "    return model.name == 'lsla' or element.model('x').name in ('a', 'b')\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert len(list(_name_comparisons(bad))) == 2
    finally:
        ROOT = saved


def test_a_new_aggregation_is_one_class_and_one_registry_line(monkeypatch):
    class Mean(Aggregation):
        """The mean of the contributions (an example, not a product feature)."""

        name = "test_mean"

        def combine(self, pe, cn, lambda_, shares=None, locate=True):
            c = contributions(pe, cn, lambda_)
            return c.mean(axis=0), (c.argmax(axis=0) if locate else None)

    monkeypatch.setitem(AGGREGATIONS._entries, "test_mean", Mean())    # the registry line
    monkeypatch.setitem(AGGREGATIONS._help, "test_mean", "")
    problem = bind_problem(random_app(7, 10, seed=8), bench_arch(lambda_=0.6))
    ev = BatchEvaluator(problem, "time", "test_mean")
    assert ev.vectorized
    X = np.random.default_rng(2).integers(0, ev.n_pes, (40, ev.n_actors))
    ref = [evaluate(problem.app, problem.arch, ev.to_mapping(r), "time", "test_mean",
                    problem=problem) for r in X]
    np.testing.assert_allclose(ev.evaluate(X), [r.value for r in ref], rtol=1e-9)
    sums = BatchEvaluator(problem, "time", "sum").evaluate(X)
    np.testing.assert_allclose(ev.evaluate(X), sums / 11, rtol=1e-9)   # 8 PEs + 3 CNs
    assert all(r.bottleneck is not None for r in ref)


def test_activity_on_unmodelled_elements_only_is_an_error():
    from mapping.evaluation.activity import evaluate_activity
    a = Architecture("a")
    a.add_pe("p", costs={"time": lsla(1.0)})
    a.add_pe("q", costs={"time": lsla(2.0), "energy": lsla(1.0)})
    arch = a.bind()
    assert evaluate_activity(arch, {"p": (4.0, 2), "q": (1.0, 1)}, "energy") == 1.0
    with pytest.raises(MappingError, match="no element it uses has a model for metric 'energy'"):
        evaluate_activity(arch, {"p": (4.0, 2)}, "energy")
    with pytest.raises(MappingError, match="unknown metric 'tme'"):
        evaluate_activity(arch, {"p": (4.0, 2)}, "tme")


@pytest.mark.parametrize("aggregate", ["sum", "max", "exclusive"])
def test_batch_gives_inf_where_every_used_element_is_unmodelled(aggregate):
    g = SDFGraph("g")
    for a in ("x", "y"):
        g.add_actor(a, quanta=3.0)
    g.add_channel("x", "y", "xy")
    arch = Architecture("a")
    arch.add_pe("p", costs={"time": lsla(1.0), "energy": lsla(2.0)})
    arch.add_pe("q", costs={"time": lsla(1.0)}, local="mem")
    arch.add_cn("bus", costs={"time": lsla(1.0)})
    arch.add_cn("mem", costs={"time": lsla(1.0), "energy": lsla(0.5)})
    arch.add_link("p", "bus")
    arch.add_link("q", "bus")
    arch.add_link("mem", "q")
    problem = bind_problem(g, arch)
    ev = BatchEvaluator(problem, "energy", aggregate)
    X = np.array([[1, 1], [0, 0], [0, 1]])      # q only (its local CN models energy), p, both
    values = ev.evaluate(X)
    for row, value in zip(X, values):
        assert ev.value(row) == value
        want = evaluate(g, arch, ev.to_mapping(row), "energy", aggregate, problem=problem).value
        assert value == pytest.approx(want)
    arch2 = Architecture("a")
    arch2.add_pe("p", costs={"time": lsla(1.0), "energy": lsla(2.0)})
    arch2.add_pe("q", costs={"time": lsla(1.0)})
    arch2.add_cn("bus", costs={"time": lsla(1.0)})
    arch2.add_link("p", "bus")
    arch2.add_link("q", "bus")
    problem2 = bind_problem(g, arch2)
    ev2 = BatchEvaluator(problem2, "energy", aggregate)
    assert np.isinf(ev2.evaluate(np.array([[1, 1]]))[0]) and np.isinf(ev2.value([1, 1]))
    with pytest.raises(MappingError, match="no element it uses"):
        evaluate(g, arch2, ev2.to_mapping([1, 1]), "energy", aggregate, problem=problem2)
    assert ev2.evaluate(np.array([[0, 1]]))[0] == pytest.approx(6.0)
