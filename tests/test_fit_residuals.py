"""Issue 17: ``--residuals relative`` (log ratio) and the speed of the non-linear fit."""
from __future__ import annotations

import json

import numpy as np
import pytest

import dsl
from dsl.mappings import Mapping
from mapping.evaluation.reference import evaluate
from mapping.errors import InputError
from mapping.calibration.assessment import assess
from mapping.calibration.free import fitted_architecture, parse_free
from mapping.calibration.parameter_vector import overrides_for
from mapping.calibration.residuals import RESIDUALS
from mapping.calibration.row_model import RowModel
from mapping.calibration.measurements import MeasurementRow
from mapping.calibration.validation import cross_validate, fold_splits

from tests.test_fit_params import TRUTH, _fit_json, _study

# One kernel launch on one PE: time = rate · size + launch (LSLA), sizes over 7 decades.
SDF = "sdf k {\n    param size = 100\n    actor kernel [quanta = size]\n}\n"
MOA = ("moa g {{\n    param launch = {launch}\n    param rate = {rate}\n"
       "    pe gpu [time = lsla(alpha = rate, beta = launch)]\n}}\n")
SIZES = np.logspace(2, 9, 29)


def _launch_rows(noise: float = 0.0):
    """Measurements at launch 1e-5 s, rate 1e-9 s per element; ``noise``: each time
    times 1 ± noise (alternating), as a measurement's error is relative."""
    app = dsl.parse_sdf(SDF)[0]
    m = Mapping("m", {"kernel": "gpu"})
    rows = []
    for i, size in enumerate(SIZES):
        t = 1e-9 * size + 1e-5
        rows.append(MeasurementRow(i + 2, i + 1, {"size": float(size)},
                                   t * (1 + noise * (-1) ** i), m))
    return app, rows


def _start():
    return dsl.parse_moa(MOA.format(launch=1e-3, rate=1e-7))[0]


def test_registry_names_the_rules():
    assert RESIDUALS.names() == ["absolute", "relative", "robust", "robust-relative"]
    rel = RESIDUALS.get("relative")
    assert rel.rule(np.array([2.0, 1.0]), np.array([1.0, 1.0])) == pytest.approx(
        [np.log(2), 0.0])
    with pytest.raises(InputError, match="unknown residuals 'squared'"):
        RESIDUALS.get("squared")


@pytest.mark.parametrize("residuals", ["absolute", "relative"])
def test_noise_free_recovery_bare_parameters(residuals):
    app, rows = _launch_rows()
    a = assess(_start(), rows, app=app, free="launch,rate", test_fraction=0, starts=0,
               residuals=residuals)
    assert a.fit.method == "least_squares" and a.fit.residuals == residuals
    assert a.fit.values["launch"] == pytest.approx(1e-5, rel=1e-6)
    assert a.fit.values["rate"] == pytest.approx(1e-9, rel=1e-6)


def test_relative_residuals_recover_the_small_sizes_parameter_absolute_ones_miss():
    """With 1 % measurement error, the seconds-long sizes' error (1e-2 s) dwarfs the
    launch overhead (1e-5 s): absolute residuals let them decide it, log ratios weigh
    every size alike."""
    app, rows = _launch_rows(noise=0.01)
    fits = {r: assess(_start(), rows, app=app, free="launch,rate", test_fraction=0,
                      starts=0, residuals=r).fit.values for r in ("absolute", "relative")}
    assert fits["relative"]["launch"] == pytest.approx(1e-5, rel=0.05)
    assert fits["relative"]["rate"] == pytest.approx(1e-9, rel=0.02)
    assert abs(fits["absolute"]["launch"] / 1e-5 - 1) > 0.5
    assert fits["absolute"]["rate"] == pytest.approx(1e-9, rel=0.02)


def test_relative_recovery_through_the_cli_params_of_both_files_and_an_element(
        tmp_path, capsys):
    """The chain of test_fit_params (bare params of the .sdf and .moa, an element's
    parameter, aggregate max, charged communication) recovered on log ratios, a
    linear-only free set included (NNLS fits absolute errors only)."""
    files = _study(tmp_path, {k: v * 10 for k, v in TRUTH.items()})
    doc = _fit_json(capsys, files, "c_src,c_fft,c_ifft,a_bus,p1.time.alpha",
                    "--starts", "4", "--residuals", "relative")
    assert doc["residuals"] == "relative" and doc["method"] == "least_squares"
    for name, value in {"c_src": 3.0, "c_fft": 11.0, "c_ifft": 5.0, "a_bus": 0.7,
                        "p1.time.alpha": 0.25}.items():
        assert doc["fitted"][name] == pytest.approx(value, rel=1e-6), name


def test_relative_residuals_refuse_a_measurement_of_zero(tmp_path, capsys):
    from mapping.cli.main import main
    app, rows = _launch_rows()
    rows[3] = MeasurementRow(5, 4, rows[3].params, 0.0, rows[3].mapping)
    with pytest.raises(InputError, match="--residuals relative needs a positive measured"):
        assess(_start(), rows, app=app, free="launch,rate", test_fraction=0, starts=0,
               residuals="relative")
    (tmp_path / "k.sdf").write_text(SDF)
    (tmp_path / "g.moa").write_text(MOA.format(launch=1e-3, rate=1e-7))
    (tmp_path / "t.csv").write_text("size,time\n100,1e-5\n1000,0\n10000,2e-5\n")
    capsys.readouterr()
    code = main(["fit", *(str(tmp_path / f) for f in ("k.sdf", "g.moa", "t.csv")),
                 "--map", "kernel=gpu", "--measured", "time", "--free", "launch,rate",
                 "--test-fraction", "0", "--residuals", "relative"])
    err = capsys.readouterr().err
    assert code == 2 and "t.csv:3" in err and "positive measured" in err
    assert "Traceback" not in err


def test_cross_validation_uses_the_residuals_asked_for():
    app, rows = _launch_rows(noise=0.01)
    model = RowModel(_start(), rows, app=app)
    free = parse_free(model.arch, "launch,rate", app)
    splits = fold_splits(len(rows), 3)
    r = {k: cross_validate(model, free, splits, "folds", starts=0, residuals=k)
         for k in ("absolute", "relative")}
    assert r["relative"].mape < r["absolute"].mape


# --------------------------------------------------------------------------- speed

def _chain(tmp_path):
    files = _study(tmp_path, TRUTH)
    app = dsl.load_sdf(files[0])[0]
    arch = dsl.load_moa(files[1])[0]
    from mapping.calibration.measurements import read_measurements
    data = read_measurements(files[2], "time", actor_column="t_{actor}",
                             actors=list(app.actors), pes=arch.pes, cns=arch.cns,
                             params=list(app.params) + list(arch.params))
    return app, arch, list(data.rows)


@pytest.mark.parametrize("free", ["a_bus,p1.time.alpha", "c_fft,a_bus,p1.time.alpha",
                                  "p1.time.alpha,p0.time.beta"])
def test_predictions_under_free_values_equal_the_evaluator(tmp_path, free):
    """The fit's fast path (one architecture per parameter set, placed tokens
    re-combined) gives exactly what evaluate gives on the fitted architecture."""
    app, arch, rows = _chain(tmp_path)
    model = RowModel(arch, rows, app=app)
    fps = parse_free(arch, free, app)
    theta = [1.7 + 0.3 * j for j in range(len(fps))]
    got = model.predict(None, overrides_for(fps, theta))
    fitted = fitted_architecture(arch, fps, theta)
    bare = {fp.target: v for fp, v in zip(fps, theta) if fp.level == "param"}
    want = [evaluate(app, fitted, r.mapping, params={**bare, **r.params}).value
            for r in rows]
    assert np.array_equal(got, np.array(want))


def test_a_prediction_binds_the_architecture_once_not_once_per_row(monkeypatch):
    """Rows sharing the architecture's parameters (all of them here, each with its own
    size) share one binding per set of free values: binding per row made a 12-parameter
    GPU fit on 742 rows take 84 s of CPU."""
    app, rows = _launch_rows()
    arch = _start()
    model = RowModel(arch, rows, app=app)
    model.predict()
    calls = []
    real = type(arch).bind

    def counting(self, *a, **k):
        calls.append(1)
        return real(self, *a, **k)

    monkeypatch.setattr(type(arch), "bind", counting)
    free = parse_free(arch, "launch,rate", app)
    model.predict(None, overrides_for(free, [2e-5, 3e-9]))
    assert len(calls) == 1


def test_fit_table_says_relative_residuals(tmp_path, capsys):
    from mapping.cli.main import main
    files = _study(tmp_path, TRUTH)
    capsys.readouterr()
    assert main(["fit", *files, "--measured", "time", "--actor-column", "t_{actor}",
                 "--free", "a_bus", "--test-fraction", "0", "--starts", "0",
                 "--residuals", "relative"]) == 0
    assert "fitted by least_squares on relative residuals on 8 of 8 rows" in \
        capsys.readouterr().out


def test_a_bare_parameter_that_matters_only_when_lowered_is_fitted_not_refused():
    """Found by the GPU study: a compute efficiency behind the roofline's max (memory
    bound at the start) only matters when lowered; doubling it changed nothing and the
    fit refused it as unable to affect the metric."""
    moa = ("moa r {{\n    param ceff = {}\n    aggregate = max\n"
           "    pe a [time = lsla(alpha = 1 / ceff)]\n    pe b [time = lsla(alpha = 10)]\n"
           "    cn bus [time = lsla(alpha = 0)]\n    a -- bus\n    b -- bus\n}}\n")
    arch, truth = (dsl.parse_moa(moa.format(v))[0] for v in (0.5, 0.04))
    app = dsl.parse_sdf("sdf k2 {\n    param size = 100\n    actor x [quanta = size]\n"
                        "    actor y [quanta = size]\n    x -> y [size = 1]\n}\n")[0]
    m = Mapping("m", {"x": "a", "y": "b"})
    rows = [MeasurementRow(i + 2, i + 1, {"size": s},
                           evaluate(app, truth, m, params={"size": s}).value, m)
            for i, s in enumerate([10.0, 100.0, 1000.0])]
    a = assess(arch, rows, app=app, free="ceff", test_fraction=0, starts=4)
    assert a.fit.values["ceff"] == pytest.approx(0.04, rel=1e-6)
