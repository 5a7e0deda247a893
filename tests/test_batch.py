"""The batch evaluator agrees with the reference evaluator (SPEC §9, §11)."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from moa import Architecture, CostSpec, available_models
from mapping.evaluation.batch import BatchEvaluator, compiled, evaluate_batch, evaluate_value
from mapping.evaluation.reference import evaluate
from dsl.mappings import Mapping
from mapping.errors import MappingError
from mapping.semantics.metrics import known_metrics
from mapping.semantics.problem import bind_problem

from search_problems import bench_arch, gsla, lsla, random_app, small_arch, split_arch

RTOL = 1e-9


def power_arch(lambda_=0.5):
    """GSLA time and power everywhere, LogCA on an accelerator, energy only on some."""
    a = Architecture("powered", lambda_=lambda_)
    pw = CostSpec("gsla_power", {"a": 0.1, "b": 1e-6, "c": 2e-5})
    a.add_type("core", costs={"time": gsla(2e-9, 1e-10), "power": pw})
    a.add_cn("bus", costs={"time": lsla(1e-9, 1e-6),
                           "power": CostSpec("gsla_power", {"a": 0.05})})
    a.add_cn("noc", costs={"time": gsla(1e-10)})
    a.add_pe("core[0]", type_name="core", array=("core", 0), local="noc")
    a.add_pe("core[1]", type_name="core", array=("core", 1))
    a.add_pe("acc", costs={"time": CostSpec("logca", {"A": 8.0, "o": 1e-6, "L": 1e-10}),
                           "power": CostSpec("gsla_power", {"a": 0.5, "b": 1e-7})})
    a.add_pe("dsp", costs={"time": lsla(1e-9, 1e-6), "energy": lsla(2e-10)})
    for p in ("core[0]", "core[1]", "acc", "dsp"):
        a.add_link(p, "bus")
    a.add_link("core[0]", "noc")
    a.add_link("core[1]", "noc")
    return a


CASES = [
    ("bench-lsla-gsla", lambda: bench_arch(lambda_=0.7)),
    ("small-local", lambda: small_arch(lambda_=1.3)),
    ("power-logca", lambda: power_arch()),
]


def _reference(app, arch, problem, ev, X, metric, aggregate):
    return np.array([_value(app, arch, problem, ev, row, metric, aggregate) for row in X])


def _value(app, arch, problem, ev, row, metric, aggregate):
    try:
        return evaluate(app, arch, ev.to_mapping(row), metric, aggregate, problem=problem).value
    except MappingError as exc:
        # every element the mapping uses is unmodelled: an error there, inf in a batch
        assert "no element it uses has a model" in str(exc)
        return np.inf


@pytest.mark.parametrize("name,make_arch", CASES)
@pytest.mark.parametrize("metric", ["time", "energy", "power"])
@pytest.mark.parametrize("aggregate", ["sum", "max"])
def test_batch_equals_reference(name, make_arch, metric, aggregate):
    rng = np.random.default_rng(hash((name, metric, aggregate)) % 2**32)
    for seed in range(2):
        app = random_app(int(rng.integers(5, 12)), int(rng.integers(8, 18)), seed=seed)
        arch = make_arch()
        problem = bind_problem(app, arch)
        if metric not in known_metrics(problem.arch):
            # issue 8: a metric no element models is an error, not a value of 0
            with pytest.raises(MappingError, match="unknown metric"):
                BatchEvaluator(problem, metric, aggregate)
            return
        ev = BatchEvaluator(problem, metric, aggregate, chunk=37)   # several chunks
        assert ev.vectorized
        X = rng.integers(0, len(arch.pes), (120, len(app.actors)))
        got = ev.evaluate(X)
        ref = _reference(app, arch, problem, ev, X, metric, aggregate)
        np.testing.assert_allclose(got, ref, rtol=RTOL, atol=0)
        # the single-mapping path, from dicts, Mappings and rows
        for row, want in zip(X[:20], ref[:20]):
            assert ev.value(ev.decode(row)) == pytest.approx(want, rel=RTOL, abs=0)
            assert ev.value(ev.to_mapping(row)) == pytest.approx(want, rel=RTOL, abs=0)
            assert ev.value(row) == pytest.approx(want, rel=RTOL, abs=0)


@pytest.mark.parametrize("metric", ["time", "energy", "power"])
def test_loads_equal_reference_elements(metric):
    app = random_app(10, 16, seed=7)
    arch = power_arch()
    problem = bind_problem(app, arch)
    ev = BatchEvaluator(problem, metric, "max")
    X = np.random.default_rng(1).integers(0, 4, (30, 10))
    loads = ev.loads(X)
    assert loads.shape == (30, len(arch.elements))
    for row, got in zip(X, loads):
        ref = evaluate(app, arch, ev.to_mapping(row), metric, "max", problem=problem)
        np.testing.assert_allclose(got, [e.value for e in ref.elements], rtol=RTOL, atol=1e-300)


def test_encode_decode_and_errors():
    app, arch = random_app(6, 8, seed=2), small_arch()
    ev = BatchEvaluator(bind_problem(app, arch))
    row = np.array([0, 1, 2, 3, 0, 1])
    assert list(ev.encode(ev.decode(row))) == list(row)
    with pytest.raises(MappingError):
        ev.encode({"a0": "cpu[0]"})
    with pytest.raises(ValueError):
        ev.evaluate(np.zeros((3, 4), dtype=int))
    with pytest.raises(ValueError):
        ev.evaluate(np.zeros((3, 6)))


def test_public_fast_path_and_cache():
    app, arch = random_app(20, 30, seed=1), bench_arch()
    problem = bind_problem(app, arch)
    m = Mapping("m", {a: arch.pes[i % 8] for i, a in enumerate(app.actors)})
    ref = evaluate(app, arch, m, problem=problem).value
    assert evaluate_value(problem, m) == pytest.approx(ref, rel=RTOL)
    assert compiled(problem) is compiled(problem)
    X = np.random.default_rng(0).integers(0, 8, (10, 20))
    np.testing.assert_allclose(evaluate_batch(problem, X, "energy", "max"),
                               BatchEvaluator(problem, "energy", "max").evaluate(X))


def test_unroutable_pairs_cost_inf():
    app = random_app(3, 3, seed=0)
    problem = bind_problem(app, split_arch())
    for agg in ("sum", "max"):
        ev = BatchEvaluator(problem, "time", agg)
        v = ev.evaluate(np.array([[0, 0, 0], [0, 1, 1], [1, 1, 1]]))
        assert np.isfinite(v[0]) and np.isinf(v[1]) and np.isfinite(v[2])
        assert np.isinf(ev.value([0, 1, 1]))


def test_pickles_for_workers():
    app, arch = random_app(8, 12, seed=3), bench_arch()
    problem = bind_problem(app, arch)
    ev = BatchEvaluator(problem, "time", "max")
    clone = pickle.loads(pickle.dumps(ev))
    X = np.random.default_rng(0).integers(0, 8, (50, 8))
    np.testing.assert_array_equal(clone.evaluate(X), ev.evaluate(X))


def test_large_batch_is_chunked():
    app, arch = random_app(20, 30, seed=1), bench_arch()
    ev = BatchEvaluator(bind_problem(app, arch), "time", "sum", chunk=1000)
    X = np.random.default_rng(0).integers(0, 8, (5_500, 20))
    whole = ev.evaluate(X)
    parts = np.concatenate([ev.evaluate(X[i:i + 700]) for i in range(0, len(X), 700)])
    np.testing.assert_allclose(whole, parts, rtol=1e-12)


@pytest.mark.skipif("roofline" not in available_models(), reason="roofline model not available")
def test_element_level_models_match_reference():
    """Element-level models (roofline/bandwidth) and exclusive: vectorized or through the
    reference fallback, always equal to the reference."""
    from search_problems import roofline_arch
    app = random_app(8, 12, seed=4)
    arch = roofline_arch()
    problem = bind_problem(app, arch)
    X = np.random.default_rng(2).integers(0, len(arch.pes), (60, 8))
    for aggregate in ("sum", "max", "exclusive"):
        ev = BatchEvaluator(problem, "time", aggregate)
        ref = _reference(app, arch, problem, ev, X, "time", aggregate)
        np.testing.assert_allclose(ev.evaluate(X), ref, rtol=RTOL)
