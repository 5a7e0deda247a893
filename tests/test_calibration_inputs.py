"""Calibration on bad or awkward input (issue 8): every bad row is a positioned exit-2
error naming row and column, with or without fitting, and no numpy warning leaks; free
parameters that cannot change the evaluated metric and unknown metrics are errors;
``--fit``/``--free`` are one option; the fit drives the core and binds each parameter
set once."""
from __future__ import annotations

import argparse
import itertools
import warnings
from pathlib import Path

import numpy as np
import pytest

import dsl
import moa.architecture
from dsl.mappings import Mapping
from mapping.calibration import row_model
from mapping.cli.main import main
from mapping.errors import InputError
from mapping.evaluation.reference import evaluate
from mapping.calibration.assessment import assess
from mapping.calibration.free import fitted_architecture, parse_free
from mapping.calibration.parameter_vector import ParameterVector
from mapping.calibration.probes import coefficients
from mapping.calibration.row_model import RowModel
from mapping.calibration.solvers import design_matrix
from mapping.calibration.measurements import MeasurementRow, read_measurements
from moa import Architecture, CostSpec
from moc import SDFGraph

REPO = Path(__file__).resolve().parents[1]
GSLA = REPO / "examples" / "gsla"
HEAD = (GSLA / "measurements.csv").read_text().splitlines()[:21]     # header + 20 rows


def gsla_csv(tmp_path, row: int = 4, cells: dict | None = None) -> str:
    """The first 20 rows of the GSLA example with data row ``row`` changed."""
    lines = list(HEAD)
    values = lines[row].split(",")
    for i, text in (cells or {}).items():
        values[i] = text
    lines[row] = ",".join(values)
    path = tmp_path / "data.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def run(capsys, csv, *options):
    argv = ["fidelity", str(GSLA / "opencl.sdf"), str(GSLA / "gpu.moa"),
            str(GSLA / "mappings.map"), csv, "--mapping", "gpu_offload",
            "--measured", "time_s", *options]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status = main(argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "Warning" not in captured.err
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], \
        [str(w.message) for w in caught]
    return status, captured


FIT = ("--fit", "gpu.time.alpha,gpu.time.beta", "--test-fraction", "0")
MODES = {"predict": (), "fit": FIT, "fit-max": (*FIT, "--aggregate", "max")}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("gamma", ["0", "-4", "1e-320"])
def test_bad_gamma_is_a_positioned_row_error(tmp_path, capsys, mode, gamma):
    csv = gsla_csv(tmp_path, 4, {1: gamma})
    status, captured = run(capsys, csv, *MODES[mode])
    assert status == 2
    assert f"{csv}:5:5: error: row 4, column 2 'gamma': " in captured.err
    assert captured.out == ""


@pytest.mark.parametrize("column", [0, 3])
def test_integer_beyond_floats_is_a_bad_cell(tmp_path, capsys, column):
    csv = gsla_csv(tmp_path, 2, {column: "1" + "0" * 400})
    status, captured = run(capsys, csv, *FIT)
    assert status == 2
    assert f"row 2, column {column + 1}" in captured.err
    assert "is not a (finite) number" in captured.err


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "1e999"])
def test_nan_and_infinity_are_bad_cells_in_a_fit(tmp_path, capsys, text):
    csv = gsla_csv(tmp_path, 3, {1: text})
    status, captured = run(capsys, csv, *FIT)
    assert status == 2 and "row 3, column 2 'gamma'" in captured.err


def test_overflowing_fit_is_a_row_error_without_warnings(tmp_path, capsys):
    csv = gsla_csv(tmp_path, 4, {0: "1e300"})
    status, captured = run(capsys, csv, *MODES["fit-max"])
    assert status == 2
    assert "row 4, column 1 'S'" in captured.err and "overflows" in captured.err
    status, captured = run(capsys, csv, *FIT)          # linear: a fit, however absurd
    assert status == 0


def test_free_parameter_that_cannot_affect_the_metric(tmp_path, capsys):
    csv = gsla_csv(tmp_path)
    status, captured = run(capsys, csv, "--fit", "gpu.power.a")
    assert status == 2
    assert "'gpu.power.a' cannot affect the evaluated metric 'time'" in captured.err
    # power is read by power, and by energy through the energy fallback
    assert run(capsys, csv, "--fit", "gpu.power.a", "--metric", "power")[0] == 0
    assert run(capsys, csv, "--fit", "gpu.power.a", "--metric", "energy")[0] == 0


def test_energy_model_parameter_while_evaluating_time():
    arch = Architecture("e")
    arch.add_pe("p", costs={"time": CostSpec("lsla", {"alpha": 1.0}),
                            "energy": CostSpec("lsla", {"alpha": 2.0})})
    app = SDFGraph("one")
    app.add_actor("a", quanta=3)
    rows = [MeasurementRow(2, 1, {}, 3.0, Mapping("m", {"a": "p"}))]
    with pytest.raises(InputError, match="'p.energy.alpha' cannot affect the evaluated "
                                         "metric 'time'"):
        assess(arch, rows, app=app, free="p.energy.alpha", test_fraction=0)
    a = assess(arch, rows, app=app, free="p.energy.alpha", metric="energy", test_fraction=0)
    assert a.fit.values["p.energy.alpha"] == pytest.approx(1.0)


def test_unknown_metric_lists_the_known_ones(tmp_path, capsys):
    csv = gsla_csv(tmp_path)
    for options in (("--metric", "tme"), ("--metric", "tme", *FIT),
                    ("--metric", "tme", "--skip-bad-rows")):
        status, captured = run(capsys, csv, *options)
        assert status == 2
        assert "unknown metric 'tme'" in captured.err and "power, time" in captured.err


def test_fit_and_free_are_one_option(tmp_path, capsys):
    csv = gsla_csv(tmp_path)
    common = [str(GSLA / "opencl.sdf"), str(GSLA / "gpu.moa"), str(GSLA / "mappings.map"),
              csv, "--mapping", "gpu_offload", "--measured", "time_s", "--json"]
    assert main(["fit", *common, "--fit", "gpu.time.alpha"]) == 0
    via_fit = capsys.readouterr().out
    assert main(["fit", *common, "--free", "gpu.time.alpha"]) == 0
    assert capsys.readouterr().out == via_fit
    assert main(["fidelity", *common, "--free", "gpu.time.alpha"]) == 0
    assert '"gpu.time.alpha"' in capsys.readouterr().out


@pytest.mark.parametrize("command", ["fit", "fidelity"])
def test_files_may_follow_options_with_intermixed_parsing(command):
    from mapping.cli.commands import fidelity, fit
    top = argparse.ArgumentParser()
    sub = top.add_subparsers(dest="command")
    {"fit": fit, "fidelity": fidelity}[command].add_parser(sub, command)
    args = sub.choices[command].parse_intermixed_args(
        ["a.sdf", "--measured", "t", "b.moa", "--free", "x.time.alpha", "c.csv",
         "--aggregate", "max", "d.map"])
    assert args.files == ["a.sdf", "b.moa", "c.csv", "d.map"]
    assert (args.free, args.measured, args.aggregate) == ("x.time.alpha", "t", "max")


# --------------------------------------------------------------------------- the core

def gsla_objects():
    app = dsl.load_sdf(GSLA / "opencl.sdf")[0]
    arch = dsl.load_moa(GSLA / "gpu.moa")[0]
    maps = {m.name: m for m in dsl.load_map(GSLA / "mappings.map")}
    return app, arch, maps


def test_design_matrix_is_the_derivative_of_the_core(tmp_path):
    """The power coefficients come from the core's time-weighted mean, not a copy of it:
    they equal finite differences of the reference evaluator."""
    app, arch, maps = gsla_objects()
    def rows(*mappings):
        return [MeasurementRow(i + 2, i + 1, {"S": S, "gamma": g}, 1.0, m)
                for i, (S, g, m) in enumerate(itertools.product((512, 4096), (8, 64),
                                                                 mappings))]
    for metric, free, mappings in (
            ("power", "gpu.power.a,gpu.power.b,gpu.power.c", ["gpu_offload"]),
            ("time", "gpu.time.alpha,gpu.time.beta,pcie.time.alpha",
             ["gpu_offload", "all_host"])):
        model = RowModel(arch, rows(*(maps[m] for m in mappings)), metric, "sum", app)
        fps = parse_free(arch, free)
        A, c = design_matrix(model, fps, range(len(model.rows)))
        theta0 = ParameterVector(fps).current(model)
        for j in range(len(fps)):
            step = np.zeros(len(fps))
            step[j] = theta0[j]
            hi = model.predict(None, ParameterVector(fps).overrides(theta0 + step))
            lo = model.predict()
            assert np.allclose((hi - lo) / theta0[j], A[:, j], rtol=1e-9, atol=0)
        assert np.allclose(c + A @ theta0, model.predict(), rtol=1e-12)


def test_fitting_restates_no_metric_rule():
    source = "".join(p.read_text() for p in Path(row_model.__file__).parent.glob("*.py"))
    assert "INTENSIVE" not in source and ".token_cost(" not in source
    assert "is_pe" not in source            # CNs are scaled by the core's aggregation


def test_nonlinear_fit_routes_each_parameter_set_once(monkeypatch):
    app, arch, maps = gsla_objects()
    data = read_measurements(GSLA / "measurements.csv", "time_s", params=["S", "gamma"],
                             mapping=maps["gpu_offload"])
    calls = []
    real = moa.architecture.shortest_cn_path
    monkeypatch.setattr(moa.architecture, "shortest_cn_path",
                        lambda *a: calls.append(a) or real(*a))
    a = assess(arch, data.rows, app=app, aggregate="max",
               free="gpu.time.alpha,gpu.time.beta")
    assert a.fit.method == "least_squares"
    parameter_sets = len({tuple(sorted(r.params.items())) for r in data.rows})
    # one route (host -> gpu; gpu -> host) per bound parameter set, never per step
    assert len(calls) <= 2 * 2 * parameter_sets


def lsla_problem():
    app = SDFGraph("chain", {"n": 1})
    app.add_actor("a", quanta=dsl.parse_expression("n"))
    app.add_actor("b", quanta=dsl.parse_expression("2 * n + 1"))
    app.add_actor("c", quanta=5)
    app.add_channel("a", "b", size=4)
    app.add_channel("b", "c", size=2)
    arch = Architecture("tri")
    for pe, alpha in (("p0", 2e-9), ("p1", 3e-9), ("q", 7e-10)):
        arch.add_pe(pe, costs={"time": CostSpec("lsla", {"alpha": alpha, "beta": 1e-6})})
    arch.add_cn("bus", costs={"time": CostSpec("lsla", {"alpha": 1.5e-11})})
    for pe in ("p0", "p1", "q"):
        arch.add_link(pe, "bus")
    return app, arch


def test_many_mappings_per_parameter_set_go_through_the_batch_evaluator(monkeypatch):
    app, truth = lsla_problem()
    mappings = [Mapping("".join(pes), dict(zip("abc", pes)))
                for pes in itertools.product(("p0", "p1", "q"), repeat=3)]
    assert len(mappings) >= row_model.BATCH_MIN
    rows = []
    for n in (1, 100, 10_000):
        for m in mappings:
            value = evaluate(app, truth, m, aggregate="max", params={"n": n}).value
            rows.append(MeasurementRow(len(rows) + 2, len(rows) + 1, {"n": n}, value, m))
    used, one_by_one = [], []
    real = row_model.BatchEvaluator
    monkeypatch.setattr(row_model, "BatchEvaluator", lambda *a: used.append(a) or real(*a))
    model = RowModel(truth, rows, "time", "max", app)
    # all rows at once (mapping.evaluation.row_batch): neither one at a time nor per parameter set
    value = RowModel.value
    monkeypatch.setattr(RowModel, "value", lambda *a: one_by_one.append(a) or value(*a))
    assert np.allclose(model.predict(), [r.measured for r in rows], rtol=1e-12)
    assert model.row_batch(range(len(rows))) is not None
    assert not used and not one_by_one
    # timed rows (each mapping's firings scheduled): each parameter set's mappings go
    # to the search's batch evaluator, none one at a time
    model = RowModel(truth, rows, "time", "schedule", app)
    assert model.timed and model.row_batch(range(len(rows))) is None
    scheduled = [evaluate(app, truth, r.mapping, aggregate="schedule", params=r.params).value
                 for r in rows]
    assert np.allclose(model.predict(), scheduled, rtol=1e-12)
    assert len(used) == 3 and not one_by_one
    monkeypatch.undo()
    start = fitted_architecture(truth, parse_free(truth, "p0.time.alpha,q.time.alpha"),
                                [5e-9, 3e-9])
    a = assess(start, rows, app=app, aggregate="max", free="p0.time.alpha,q.time.alpha",
               test_fraction=0)
    assert a.fit.values["p0.time.alpha"] == pytest.approx(2e-9, rel=1e-5)
    assert a.fit.values["q.time.alpha"] == pytest.approx(7e-10, rel=1e-5)


def test_coefficients_of_a_type_parameter_add_its_members():
    app, arch = lsla_problem()
    arch = Architecture("typed")
    arch.add_type("T", costs={"time": CostSpec("lsla", {"alpha": 1.0, "beta": 0.5})})
    arch.add_pe("x", type_name="T")
    arch.add_pe("y", type_name="T")
    arch.add_cn("bus", costs={"time": CostSpec("lsla", {"alpha": 0.25})})
    arch.add_link("x", "bus")
    arch.add_link("y", "bus")
    app = SDFGraph("two")
    app.add_actor("a", quanta=3)
    app.add_actor("b", quanta=5)
    app.add_channel("a", "b", size=4)
    rows = [MeasurementRow(2, 1, {}, 0.0, Mapping("m", {"a": "x", "b": "y"}))]
    model = RowModel(arch, rows, app=app)
    A = coefficients(model.bound_arch(0), model.placed(0), parse_free(arch, "T.time.alpha,"
                     "T.time.beta,bus.time.alpha"), "time", "sum")
    assert A == [8.0, 2.0, 4.0]


def test_overflowing_fit_names_the_column_that_causes_it(tmp_path, capsys):
    csv = gsla_csv(tmp_path, 4, {1: "1e-300"})          # gamma, the second column
    status, captured = run(capsys, csv, *MODES["fit-max"])
    assert status == 2
    assert "row 4, column 2 'gamma'" in captured.err and "overflows" in captured.err


def test_batched_rows_check_their_mappings_as_the_reference_does():
    app, arch = lsla_problem()
    good = [Mapping("".join(pes), dict(zip("abc", pes)))
            for pes in itertools.product(("p0", "p1", "q"), repeat=3)]
    bad = Mapping("extra", {"a": "p0", "b": "p0", "c": "p0", "z": "q"})
    rows = [MeasurementRow(i + 2, i + 1, {}, 1.0, m) for i, m in enumerate([*good, bad])]
    with pytest.raises(InputError, match="row 28 .*unknown actor 'z'"):
        RowModel(arch, rows, "time", "max", app).predict()
