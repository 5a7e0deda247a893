"""``--residuals robust`` and ``robust-relative``: a least-squares fit, then a soft-L1
loss scaled by the residuals' median absolute deviation, so that a few rows far off the
rest (warm-up runs, glitches) no longer decide the parameters."""
from __future__ import annotations

import json

import numpy as np
import pytest

import dsl
from dsl.mappings import Mapping
from mapping.cli.main import main
from mapping.calibration.assessment import assess
from mapping.calibration.residuals import RESIDUALS
from mapping.calibration.measurements import MeasurementRow

SDF = "sdf k {\n    param size = 100\n    actor kernel [quanta = size]\n}\n"
MOA = "moa g {\n    pe gpu [time = lsla(alpha = 1e-7, beta = 1e-3)]\n}\n"
ALPHA, BETA = 1e-9, 1e-5          # s per element, s per launch
FREE = "gpu.time.alpha,gpu.time.beta"


def launches(seed: int, outliers: int = 4, noise: float = 0.01):
    """40 launches of 1e3..1e6 elements, time = ALPHA·size + BETA with 1 % log-normal
    noise; ``outliers`` of them (chosen by ``seed``) four times slower."""
    rng = np.random.default_rng(seed)
    mapping = Mapping("m", {"kernel": "gpu"})
    slow = set(rng.choice(40, outliers, replace=False).tolist())
    rows = []
    for i, size in enumerate(np.linspace(1e3, 1e6, 40)):
        t = (ALPHA * size + BETA) * rng.lognormal(0, noise) * (4.0 if i in slow else 1.0)
        rows.append(MeasurementRow(i + 2, i + 1, {"size": float(size)}, t, mapping))
    return dsl.parse_sdf(SDF)[0], rows


def fitted(rows, app, residuals):
    fit = assess(dsl.parse_moa(MOA)[0], rows, app=app, free=FREE, test_fraction=0,
                 starts=0, residuals=residuals).fit
    return fit, fit.values["gpu.time.alpha"] / ALPHA, fit.values["gpu.time.beta"] / BETA


@pytest.mark.parametrize("seed", range(5))
def test_a_tenth_of_the_rows_four_times_slower(seed):
    app, rows = launches(seed)
    _, plain_alpha, _ = fitted(rows, app, "absolute")
    fit, alpha, _ = fitted(rows, app, "robust")
    assert fit.method == "nnls, then soft_l1" and fit.residuals == "robust"
    assert alpha == pytest.approx(1, abs=0.02)               # least squares: 3-52 % off
    assert abs(plain_alpha - 1) > 0.02
    fit, alpha, beta = fitted(rows, app, "robust-relative")
    assert fit.method == "least_squares, then soft_l1"
    assert alpha == pytest.approx(1, abs=0.01) and beta == pytest.approx(1, abs=0.05)


def test_without_outliers_the_robust_fit_is_the_least_squares_one():
    app, rows = launches(0, outliers=0, noise=0.0)
    for name in ("robust", "robust-relative"):
        fit, alpha, beta = fitted(rows, app, name)
        assert alpha == pytest.approx(1, rel=1e-6) and beta == pytest.approx(1, rel=1e-5)
    app, rows = launches(1, outliers=0)
    plain = fitted(rows, app, "absolute")
    robust = fitted(rows, app, "robust")
    assert robust[1:] == pytest.approx(plain[1:], rel=0.02)


def test_the_command_line_takes_them(tmp_path, capsys):
    app, rows = launches(2)
    (tmp_path / "k.sdf").write_text(SDF)
    (tmp_path / "g.moa").write_text(MOA)
    (tmp_path / "m.map").write_text("mapping m {\n kernel -> gpu\n}\n")
    (tmp_path / "t.csv").write_text("size,t\n" + "".join(
        f"{float(r.params['size'])!r},{float(r.measured)!r}\n" for r in rows))
    argv = ["fidelity", *(str(tmp_path / f) for f in ("k.sdf", "g.moa", "m.map", "t.csv")),
            "--measured", "t", "--fit", FREE, "--test-fraction", "0", "--json"]
    assert main(argv + ["--residuals", "robust"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["fitted"]["gpu.time.alpha"] == pytest.approx(ALPHA, rel=0.02)
    assert set(RESIDUALS.names()) >= {"robust", "robust-relative"}
