"""Rows evaluated all at once (mapping.evaluation.row_batch) against the reference evaluator row
by row: system metrics with per-row parameters, free values (model arguments and a bare
parameter), activity rows, rules that do not broadcast, folds; the fitted values against
the row-by-row path; the stated limit on rows."""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dsl
from mapping.cli.main import main
from mapping.errors import InputError
from mapping.calibration.free import parse_free
from mapping.calibration.row_model import RowModel
from mapping.calibration.parameter_vector import ParameterVector
from mapping.calibration.solvers import fit_parameters, rank_and_groups
from mapping.calibration.measurements import read_measurements
from mapping.evaluation.row_batch import RowBatch

SDF = """sdf cores {
    param S0 = 1000
    param S1 = 1000
    param S2 = 1000
    param G0 = 1
    param G1 = 1
    param G2 = 1
    actor c0 [quanta = S0, S = S0, gamma = G0]
    actor c1 [quanta = S1, S = S1, gamma = G1]
    actor c2 [quanta = S2, S = S2, gamma = G2]
    c0 -> c1 [size = S0 / 100]
}
"""
MOA = """moa board {
    param p_static = 0.5
    lambda = 1
    metric time [unit = "s"]
    metric energy [unit = "J"]
    metric energy_total = energy[sum] + p_static * time[max]
    aggregate = sum
    pe l0 [time = gsla(alpha = 2e-9, beta = 3e-10), energy = gsla(alpha = 3e-10, beta = 5e-11)]
    pe l1 [time = gsla(alpha = 1.8e-9, beta = 3e-10), energy = gsla(alpha = 4e-10, beta = 6e-11)]
    pe b0 [time = gsla(alpha = 7e-10, beta = 1e-10), energy = gsla(alpha = 9e-10, beta = 2e-10)]
    cn bus [time = lsla(alpha = 1e-11), energy = lsla(alpha = 2e-12)]
    l0 -- bus
    l1 -- bus
    b0 -- bus
}
"""
MAP = "mapping m {\n c0 -> l0\n c1 -> l1\n c2 -> b0\n}\n"


def study(tmp_path, n=30, seed=1):
    rng = np.random.default_rng(seed)
    lines = ["S0,S1,S2,G0,G1,G2,energy_J"]
    for _ in range(n):
        S = np.round(10 ** rng.uniform(4, 6, 3))
        G = rng.choice([1, 2, 4], 3)
        lines.append(",".join([f"{s:.0f}" for s in S] + [str(g) for g in G]
                              + [f"{rng.uniform(1e-4, 1e-2):.6e}"]))
    for name, text in (("a.sdf", SDF), ("b.moa", MOA), ("m.map", MAP),
                       ("rows.csv", "\n".join(lines) + "\n")):
        (tmp_path / name).write_text(text)
    app = dsl.load_sdf(tmp_path / "a.sdf")[0]
    arch = dsl.load_moa(tmp_path / "b.moa")[0]
    mapping = dsl.load_map(tmp_path / "m.map")[0]
    rows = read_measurements(tmp_path / "rows.csv", "energy_J",
                             params=list(app.params) + list(arch.params), mapping=mapping).rows
    return app, arch, list(rows)


def one_by_one(model, indices, overrides=None):
    return np.array([model.value(i, overrides, {}) for i in indices])


@pytest.mark.parametrize("metric, aggregate", [("energy_total", None), ("time", "max"),
                                               ("energy", "sum"), ("time", None)])
def test_rows_at_once_equal_the_reference(tmp_path, metric, aggregate):
    app, arch, rows = study(tmp_path)
    model = RowModel(arch, rows, metric, aggregate, app)
    assert model.row_batch(range(len(rows))) is not None
    fast = model.predict()
    assert np.allclose(fast, [model.reference_value(i) for i in range(len(rows))],
                       rtol=1e-13, atol=0)
    # under free values: model arguments, and a bare parameter of the .moa
    free = parse_free(arch, "l0.energy.alpha,b0.time.beta,p_static", app)
    overrides = ParameterVector(free).overrides([1e-9, 3e-10, 2.5])
    some = list(range(3, 25, 2))
    assert np.allclose(model.predict(some, overrides), one_by_one(model, some, overrides),
                       rtol=1e-13, atol=0)


def test_folds_slice_the_gathered_rows(tmp_path):
    app, arch, rows = study(tmp_path)
    model = RowModel(arch, rows, "energy_total", None, app)
    every = model.row_batch(range(len(rows)))
    values = every.values(model.bound_arch)
    for part in ([0, 5, 7], [29, 1, 2], list(range(10, 30))):
        assert np.array_equal(every.subset(part).values(model.bound_arch), values[part])


@pytest.mark.parametrize("free_app", [False, True])
def test_fitted_values_equal_the_row_by_row_path(tmp_path, monkeypatch, free_app):
    """Free values of the .moa's models and parameter, and (``free_app``) of a parameter
    of the .sdf (:func:`free_study`)."""
    app, arch, rows = (free_study if free_app else study)(tmp_path, n=24)
    free = parse_free(arch, ("k,b0" if free_app else "l0.energy.alpha,b0")
                      + ".energy.alpha,p_static", app)
    train = list(range(0, 24, 2)) + [1, 3]
    fast = fit_parameters(RowModel(arch, rows, "energy_total", None, app), free, train, 1)
    monkeypatch.setattr(RowModel, "row_batch", lambda self, indices: None)
    slow = fit_parameters(RowModel(arch, rows, "energy_total", None, app), free, train, 1)
    for name, value in slow.values.items():
        assert fast.values[name] == pytest.approx(value, rel=1e-6), name
    assert fast.best_start == slow.best_start


def test_activity_rows_and_a_rule_that_does_not_broadcast(tmp_path, monkeypatch):
    from moa.cost_models.logca import LogCA

    # math.log1p takes no array: these tokens are valued one by one, from the same arrays
    monkeypatch.setattr(LogCA, "token_cost",
                        lambda self, t: self.params.o + math.log1p(t.quanta) / self.params.A)
    (tmp_path / "b.moa").write_text(
        "moa two {\n metric time [unit = \"s\"]\n aggregate = max\n"
        " pe p [time = lsla(alpha = 2.0, beta = 1.0)]\n"
        " pe q [time = logca(A = 4, o = 0.5, L = 0.1)]\n"
        " cn bus [time = lsla(alpha = 0)]\n p -- bus\n q -- bus\n}\n")
    rng = np.random.default_rng(3)
    lines = ["quanta_p,tokens_p,quanta_q,tokens_q,t"]
    for _ in range(40):
        qp, qq = rng.integers(0, 50, 2)
        lines.append(f"{qp},{int(qp > 0) * rng.integers(1, 4)},{qq},"
                     f"{int(qq > 0) * rng.integers(1, 4)},{rng.uniform(1, 9):.3f}")
    (tmp_path / "rows.csv").write_text("\n".join(lines) + "\n")
    arch = dsl.load_moa(tmp_path / "b.moa")[0]
    rows = list(read_measurements(tmp_path / "rows.csv", "t", quanta_column="quanta_{element}",
                                  tokens_column="tokens_{element}",
                                  elements=list(arch.elements)).rows)
    rows = [r for r in rows if any(r.activity[e][1] for e in ("p", "q"))]
    model = RowModel(arch, rows, "time")
    batch = model.row_batch(range(len(rows)))
    assert batch is not None
    assert np.allclose(model.predict(), [model.reference_value(i) for i in range(len(rows))],
                       rtol=1e-13, atol=0)


def test_what_the_batch_does_not_cover_goes_row_by_row(tmp_path):
    app, arch, rows = study(tmp_path)
    model = RowModel(arch, rows, "time", "schedule", app)     # the firings of each mapping
    assert model.row_batch(range(len(rows))) is None
    assert np.allclose(model.predict(), one_by_one(model, range(len(rows))), rtol=1e-13)


@pytest.mark.parametrize("metric", ["time", "energy"])
def test_exclusive_shares_are_batched(tmp_path, metric):
    """``exclusive``: each PE's phase is the max of its value and lambda times its share
    of each CN (the tokens of the channels it produces), under free values too."""
    app, arch, rows = free_study(tmp_path)
    model = RowModel(arch, rows, metric, "exclusive", app)
    assert model.row_batch(range(len(rows))) is not None
    assert np.allclose(model.predict(), [model.reference_value(i) for i in range(len(rows))],
                       rtol=1e-13, atol=0)
    free = parse_free(arch, f"k,bus.{metric}.alpha,l0.{metric}.alpha", app)
    some = list(range(0, 30, 3))
    for values in ([1.0, 1e-9, 1e-10], [40.0, 3e-8, 2e-9]):
        overrides = ParameterVector(free).overrides(values)
        fast = model.predict_batch(some, overrides, {})
        assert fast is not None
        assert np.allclose(fast, one_by_one(model, some, overrides), rtol=1e-13, atol=0)


def test_a_batch_checks_its_first_rows_against_the_reference(tmp_path, monkeypatch):
    app, arch, rows = study(tmp_path)
    model = RowModel(arch, rows, "energy", "sum", app)
    monkeypatch.setattr(RowModel, "reference_value", lambda self, i: 1.0)
    with pytest.raises(Exception, match="by the reference"):
        RowBatch(model, range(len(rows)))
    assert model.row_batch(range(len(rows))) is None


def test_the_stated_limit_on_rows(tmp_path, capsys):
    app, arch, rows = study(tmp_path, n=5)
    argv = ["fidelity", str(tmp_path / "a.sdf"), str(tmp_path / "b.moa"),
            str(tmp_path / "m.map"), str(tmp_path / "rows.csv"), "--measured", "energy_J",
            "--metric", "energy"]
    assert main(argv + ["--limit", "rows=4"]) == 2
    err = capsys.readouterr().err
    assert "has at least 5 data rows (about 4 KB of memory each), more than the limit " \
        "rows = 4; raise it with --limit rows=N" in err
    assert "Traceback" not in err
    assert main(argv + ["--limit", "rows=5"]) == 0


def test_the_rank_of_a_tall_jacobian_needs_no_n_by_n_matrix():
    # 300,000 rows: a full SVD would ask for 300,000² floats (720 GB); the thin QR
    # triangle gives the same rank and the same group of indistinguishable columns
    rng = np.random.default_rng(0)
    a = rng.normal(size=300_000)
    J = np.column_stack([a, rng.normal(size=a.size), 2 * a])
    rank, groups = rank_and_groups(J, ["x", "y", "z"], 1e-9)
    assert rank == 2 and groups == [("x", "z")]


FREE_SDF = SDF.replace("    param G0 = 1\n", "    param G0 = 1\n    param k = 1\n") \
    .replace("actor c0 [quanta = S0,", "actor c0 [quanta = k * S0,") \
    .replace("c0 -> c1 [size = S0 / 100]", "c0 -> c1 [size = k * S0 / 100]")


def free_study(tmp_path, n=30):
    """The study with a parameter ``k`` of the application that no row gives: free
    values of it change the tokens' numbers (quanta, bytes), not where they go; every
    row has its own values of the other parameters of the application."""
    app, arch, rows = study(tmp_path, n)
    (tmp_path / "a.sdf").write_text(FREE_SDF)
    return dsl.load_sdf(tmp_path / "a.sdf")[0], arch, rows


@pytest.mark.parametrize("metric, aggregate", [("energy_total", None), ("time", "max")])
def test_free_parameters_of_the_application_are_batched(tmp_path, metric, aggregate):
    app, arch, rows = free_study(tmp_path)
    model = RowModel(arch, rows, metric, aggregate, app)
    free = parse_free(arch, "k,l0.energy.alpha,b0.time.beta,p_static", app)
    some = list(range(2, 27, 3))
    for values in ([1.0, 3e-10, 1e-10, 0.5], [2.5, 1e-9, 3e-10, 2.5], [0.3, 1e-9, 3e-10, 2.5]):
        overrides = ParameterVector(free).overrides(values)
        fast = model.predict_batch(some, overrides, {})
        assert fast is not None                  # not the row-by-row path
        assert np.allclose(fast, one_by_one(model, some, overrides), rtol=1e-13, atol=0)
    assert model.row_batch(some).rebinding_checked


def test_free_parameters_of_the_application_under_a_rule_that_does_not_broadcast(
        tmp_path, monkeypatch):
    from moa.cost_models.linear import GSLA

    # math.log1p takes no array: the tokens are valued one by one, rebuilt from the
    # activity the free values bind
    monkeypatch.setattr(GSLA, "token_cost", lambda self, t: self.params.alpha * math.log1p(
        t.quanta) * t.get("gamma", 1.0) + self.params.beta)
    app, arch, rows = free_study(tmp_path)
    model = RowModel(arch, rows, "energy", "sum", app)
    free = parse_free(arch, "k,p_static", app)
    for k in (0.5, 4.0):
        overrides = ParameterVector(free).overrides([k, 0.5])
        fast = model.predict_batch(list(range(30)), overrides, {})
        assert fast is not None
        assert np.allclose(fast, one_by_one(model, range(30), overrides), rtol=1e-13, atol=0)


def test_a_batch_under_free_values_of_the_application_checks_its_first_rows(
        tmp_path, monkeypatch):
    from mapping.evaluation import row_batch
    app, arch, rows = free_study(tmp_path)
    model = RowModel(arch, rows, "energy_total", None, app)
    free = parse_free(arch, "k", app)
    overrides = ParameterVector(free).overrides([2.0])
    real = row_batch.SourceTable.__init__

    def wrong(self, sources, problems):       # a rule this path would not know
        real(self, sources, problems)
        self.quanta = self.quanta * 1.5
    monkeypatch.setattr(row_batch.SourceTable, "__init__", wrong)
    assert model.predict_batch(list(range(30)), overrides, {}) is None
    assert not model.row_batch(range(30)).rebinds
    assert np.allclose(model.predict(list(range(30)), overrides),
                       one_by_one(model, range(30), overrides), rtol=1e-13, atol=0)


def activity_rows(tmp_path, busy_bus: bool = True, n: int = 40):
    """Per-element activity rows of the study's board (quanta and tokens per element);
    without ``busy_bus`` the CN has none."""
    (tmp_path / "b.moa").write_text(MOA)
    rng = np.random.default_rng(5)
    names = ["l0", "l1", "b0", "bus"]
    lines = [",".join([f"quanta_{e}" for e in names] + [f"tokens_{e}" for e in names]
                      + ["p_static", "energy_J"])]
    for _ in range(n):
        quanta = rng.integers(0, 10**6, 4) * (rng.random(4) < 0.8)
        quanta[3] *= busy_bus
        tokens = [int(q > 0) * int(rng.integers(1, 5)) for q in quanta]
        lines.append(",".join([str(q) for q in quanta] + [str(t) for t in tokens]
                              + [str(rng.choice([0.2, 0.5])), f"{rng.uniform(1e-4, 1e-2):.4e}"]))
    (tmp_path / "rows.csv").write_text("\n".join(lines) + "\n")
    arch = dsl.load_moa(tmp_path / "b.moa")[0]
    rows = read_measurements(tmp_path / "rows.csv", "energy_J", quanta_column="quanta_{element}",
                             tokens_column="tokens_{element}", params=["p_static"],
                             elements=names).rows
    return arch, names, list(rows)


def test_exclusive_of_activity_rows(tmp_path):
    """Counted activity: without CN activity each phase is its PE's value, batched; a
    CN's total belongs to no PE, and the reference evaluator says so."""
    arch, names, rows = activity_rows(tmp_path, busy_bus=False)
    rows = [r for r in rows if any(r.activity[e][1] for e in names)]
    model = RowModel(arch, rows, "time", "exclusive")
    assert model.row_batch(range(len(rows))) is not None
    assert np.allclose(model.predict(), [model.reference_value(i) for i in range(len(rows))],
                       rtol=1e-13, atol=0)
    (tmp_path / "busy").mkdir()
    arch, names, rows = activity_rows(tmp_path / "busy")
    rows = [r for r in rows if r.activity["bus"][1]]
    with pytest.raises(InputError, match="counted activity gives only the totals of CN bus"):
        RowModel(arch, rows, "time", "exclusive").predict()


@pytest.mark.parametrize("element", [None, "b0"])
def test_a_system_metric_of_activity_rows_is_batched(tmp_path, element):
    arch, names, rows = activity_rows(tmp_path)
    rows = [r for r in rows if any(r.activity[e][1] for e in names if element in (None, e))]
    model = RowModel(arch, rows, "energy_total", element=element)
    assert model.row_batch(range(len(rows))) is not None
    assert np.allclose(model.predict(), [model.reference_value(i) for i in range(len(rows))],
                       rtol=1e-13, atol=0)
    free = parse_free(arch, "l0.energy.alpha,b0.time.alpha", None)
    overrides = ParameterVector(free).overrides([1e-9, 3e-9])
    fast = model.predict_batch(list(range(len(rows))), overrides, {})
    assert fast is not None
    assert np.allclose(fast, one_by_one(model, range(len(rows)), overrides), rtol=1e-13, atol=0)


STREAM = Path(__file__).resolve().parents[1] / "examples" / "calibration" / "streaming"


def test_copies_charged_to_the_cores_are_batched():
    """``charge = ends`` (the streaming study's board): each core pays lambda times the
    CN's rule for the copies of the channels it ends, under free values of the CNs'
    parameter and of the per-actor costs of the .sdf (``lookup``) alike."""
    app = dsl.load_sdf(STREAM / "audio.sdf")[0]
    arch = dsl.load_moa(STREAM / "board.moa")[0]
    rows = list(read_measurements(STREAM / "measurements.csv", "time_us",
                                  actor_column="t_{actor}", actors=list(app.actors),
                                  pes=arch.pes, cns=arch.cns).rows)[:60]
    model = RowModel(arch, rows, "time", None, app)
    assert model.row_batch(range(len(rows))) is not None
    assert np.allclose(model.predict(), [model.reference_value(i) for i in range(len(rows))],
                       rtol=1e-13, atol=0)
    free = parse_free(arch, "a_l2,a_cci,c_src_A7,c_fir_l_A15", app)
    some = list(range(1, 60, 4))
    for values in ([0.02, 0.001, 35.0, 80.0], [0.001, 0.05, 10.0, 300.0]):
        overrides = ParameterVector(free).overrides(values)
        fast = model.predict_batch(some, overrides, {})
        assert fast is not None
        assert np.allclose(fast, one_by_one(model, some, overrides), rtol=1e-12, atol=0)


def test_lookup_costs_arrays_of_tokens_as_it_costs_one():
    from moa.cost_models.lookup import Lookup
    from moc.activity import TokenGroup
    from mapping.evaluation.row_batch import Tokens

    groups = [[TokenGroup("a", 2, 1.0, {"exec_A7": 3.0})],
              [TokenGroup("b", 1, 1.0, {"exec_A7": math.inf}),
               TokenGroup("c", 1, 1.0, {"exec_A7": 0.5})]]
    tokens = Tokens(groups, lambda: groups)
    for scale in (0.0, 2.0):
        model = Lookup(Lookup.Parameters(key="exec_A7", scale=scale))
        one = [model.token_cost(t) for g in groups for t in g]
        assert list(np.asarray(model.token_cost(tokens), dtype=float)) == one
        assert one == ([0.0, math.inf, 0.0] if scale == 0 else [6.0, math.inf, 1.0])


@pytest.fixture(scope="module")
def free_rows(tmp_path_factory):
    return free_study(tmp_path_factory.mktemp("free"))


@settings(max_examples=30, deadline=None)
@given(k=st.floats(0.01, 100.0), alpha=st.floats(1e-11, 1e-8), p_static=st.floats(0.0, 5.0),
       rows=st.lists(st.integers(0, 29), min_size=1, max_size=30, unique=True),
       metric=st.sampled_from([("energy_total", None), ("time", "max"), ("energy", "sum")]))
def test_the_batch_under_any_free_values_equals_the_reference(free_rows, k, alpha, p_static,
                                                               rows, metric):
    """Free values of a parameter of the .sdf (the tokens' numbers), of a model and of a
    bare parameter of the .moa, on any subset of the rows in any order."""
    app, arch, study_rows = free_rows
    model = RowModel(arch, study_rows, metric[0], metric[1], app)
    free = parse_free(arch, "k,l0.energy.alpha,p_static", app)
    overrides = ParameterVector(free).overrides([k, alpha, p_static])
    fast = model.predict_batch(rows, overrides, {})
    assert fast is not None
    assert np.allclose(fast, one_by_one(model, rows, overrides), rtol=1e-12, atol=0)


@pytest.mark.parametrize("element", [None, "bus", "l0"])
@pytest.mark.parametrize("aggregate", ["sum", "exclusive"])
def test_memory_traffic_is_placed_at_each_evaluation(tmp_path, element, aggregate):
    """A roofline core with a memory CN: its traffic (bytes from the model, ``miss``
    times on the memory) is on the bus after the channels' tokens and in the core's
    share of it, under free values of ``miss`` too; one element's part sees the traffic
    of the whole mapping on the bus."""
    app, arch, rows = study(tmp_path)
    (tmp_path / "a.sdf").write_text(SDF.replace("gamma = G0]", "gamma = G0, bytes = S0 / 2]")
                                    .replace("gamma = G2]", "gamma = G2, bytes = 3 * S2]"))
    (tmp_path / "b.moa").write_text(MOA.replace(
        "pe l0 [time = gsla(alpha = 2e-9, beta = 3e-10)",
        'pe l0 [time = roofline(peak = 1e9, bandwidth = 2e8, memory = "bus", miss = 0.5)')
        .replace("pe b0 [time = gsla(alpha = 7e-10, beta = 1e-10)",
                 'pe b0 [time = roofline(peak = 2e9, bandwidth = 1e8, memory = "bus")')
        .replace("cn bus [time = lsla(alpha = 1e-11)", "cn bus [time = lsla(alpha = 1e-8)"))
    app, arch = dsl.load_sdf(tmp_path / "a.sdf")[0], dsl.load_moa(tmp_path / "b.moa")[0]
    model = RowModel(arch, rows, "time", aggregate, app, element=element)
    if element == "bus" and aggregate == "exclusive":   # the bus's part names no PE
        with pytest.raises(InputError, match="share of each CN's tokens"):
            model.predict()
        return
    assert model.row_batch(range(len(rows))) is not None
    want = [model.reference_value(i) for i in range(len(rows))]
    assert np.allclose(model.predict(), want, rtol=1e-13, atol=0)
    if element is None:       # the traffic counts: without it the values differ
        text = (tmp_path / "b.moa").read_text()
        (tmp_path / "b.moa").write_text(text.replace(', memory = "bus", miss = 0.5', "")
                                        .replace(', memory = "bus"', ""))
        plain = RowModel(dsl.load_moa(tmp_path / "b.moa")[0], rows, "time", aggregate, app)
        assert not np.allclose(plain.predict(), want, rtol=1e-6, atol=0)
    free = parse_free(arch, "l0.time.miss,b0.time.bandwidth,bus.time.alpha", app)
    overrides = ParameterVector(free).overrides([0.9, 3e8, 2e-11])
    some = list(range(0, 30, 3))
    fast = model.predict_batch(some, overrides, {})
    assert fast is not None
    assert np.allclose(fast, one_by_one(model, some, overrides), rtol=1e-13, atol=0)


def test_a_row_without_a_value_is_the_references_error_about_that_row(tmp_path):
    """The array core finds a row whose busy elements all lack a model for the metric;
    the error is the reference evaluator's, about that row, under free values too."""
    (tmp_path / "busy").mkdir()
    arch, names, rows = activity_rows(tmp_path / "busy")
    text = (tmp_path / "busy" / "b.moa").read_text().replace(
        "cn bus [time = lsla(alpha = 1e-11), energy = lsla(alpha = 2e-12)]",
        "cn bus [time = lsla(alpha = 1e-11)]")
    (tmp_path / "busy" / "b.moa").write_text(text)
    arch = dsl.load_moa(tmp_path / "busy" / "b.moa")[0]
    rows = [r for r in rows if any(r.activity[e][1] for e in names)]
    bad = next(i for i, r in enumerate(rows) if r.activity["bus"][1]) + 3
    rows[bad] = replace(rows[bad], activity={"l0": (0.0, 0), "l1": (0.0, 0), "b0": (0.0, 0),
                                             "bus": (1000.0, 2)})
    model = RowModel(arch, rows, "energy", "sum")
    with pytest.raises(InputError, match="no element it uses has a model for metric "
                                         "'energy'") as got:
        model.predict()
    assert got.value.row == bad
    free = parse_free(arch, "l0.energy.alpha", None)
    with pytest.raises(InputError, match="no element it uses has a model") as got:
        model.predict(None, ParameterVector(free).overrides([1e-9]))
    assert got.value.row == bad
