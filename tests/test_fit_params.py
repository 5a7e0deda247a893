"""Issue 9 fitting: rank deficiency on the non-linear path, multi-start, bare params."""
from __future__ import annotations

from pathlib import Path

import pytest

import dsl
from mapping.evaluation import evaluate
from mapping.fitting import assess
from mapping.measurements import MeasurementRow

REPO = Path(__file__).resolve().parents[1]
LOGCA = REPO / "examples" / "logca"


def _logca_rows(app, arch, mapping):
    rows = []
    for i, g in enumerate([16, 64, 256, 1024, 4096, 16384, 65536, 262144]):
        value = evaluate(app, arch, mapping, params={"g": g}).value
        rows.append(MeasurementRow(i + 2, i + 1, {"g": g}, value, mapping))
    return rows


def test_nonlinear_fit_reports_collinear_logca_o_and_L():
    """Under independent latency LogCA's time is o + L + C g / A: o and L only enter as
    their sum.  Started away from the truth, the fit lands where the finite-difference
    Jacobian is not exactly singular; the old tolerance (round-off of an exact matrix)
    missed it."""
    app = dsl.load_sdf(LOGCA / "aes.sdf")[0]
    truth = dsl.load_moa(LOGCA / "aes_offload.moa")[0]
    offload = [m for m in dsl.load_map(LOGCA / "aes.map") if m.name == "offload"][0]
    rows = _logca_rows(app, truth, offload)
    text = (LOGCA / "aes_offload.moa").read_text().replace(
        "A = 19, o = 2.9e4, L = 1500", "A = 190, o = 2.9e3, L = 15000")
    start = dsl.parse_moa(text)[0]
    a = assess(start, rows, app=app, free="aes.time.o,aes.time.L,aes.time.A",
               test_fraction=0)
    assert a.fit.method == "least_squares"
    assert a.fit.rank == 2
    assert a.fit.indistinguishable == (("aes.time.o", "aes.time.L"),)
    assert any("cannot tell apart aes.time.o, aes.time.L" in w for w in a.fit.warnings)
    assert a.fit.values["aes.time.A"] == pytest.approx(19, rel=1e-6)
    assert a.fit.values["aes.time.o"] + a.fit.values["aes.time.L"] == pytest.approx(30500,
                                                                                   rel=1e-6)
