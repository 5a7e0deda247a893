"""GSLA per-element fit (issue 16, must-show 3): host, kernel and interconnect each
fitted on their own measured column (t_1, t_k and t_c = t_w - t_1 - t_k), and the
four-term power model of GSLA eq. 7."""
import csv
import json
from pathlib import Path

import numpy as np
import pytest

import dsl
from mapping.cli.main import main
from mapping.errors import InputError
from mapping.calibration.assessment import assess
from mapping.calibration.elements import assess_elements, parse_element_columns
from mapping.calibration.measurements import read_measurements
from moa import make_model
from moc import TokenGroup

GSLA = Path(__file__).resolve().parents[1] / "examples" / "gsla"
HOST, GPU, PCIE = (3.0e-8, 7.0e-9), (4.5e-7, 2.0e-9), (1.5e-8, 2.5e-9)
FREE = ("host.time.alpha,host.time.beta,gpu.time.alpha,gpu.time.beta,"
        "pcie.time.alpha,pcie.time.beta")


def gsla(ab, S, gamma):
    return (ab[0] / gamma + ab[1]) * S                    # GSLA eq. 5


def write_columns(path):
    """Noise-free t_w, t_1 (host), t_k (kernel) of the paper's grid; the interconnect
    carries two buffers of S items per iteration."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["S", "gamma", "t_w", "t_1", "t_k"])
        for S in (512, 1024, 2048, 4096, 8192, 16384):
            for g in (8, 16, 32, 64, 128, 256):
                t1, tk, tc = gsla(HOST, S, g), gsla(GPU, S, g), 2 * gsla(PCIE, S, g)
                w.writerow([S, g, repr(t1 + tk + tc), repr(t1), repr(tk)])
    return path


def inputs(tmp_path):
    app, = dsl.load_sdf(GSLA / "opencl.sdf")
    arch, = dsl.load_moa(GSLA / "gpu.moa")
    mapping = next(m for m in dsl.load_map(GSLA / "mappings.map") if m.name == "gpu_offload")
    data = read_measurements(write_columns(tmp_path / "columns.csv"), "t_w",
                             params=["S", "gamma"], mapping=mapping)
    return app, arch, list(data.rows)


def test_per_element_fit_recovers_host_kernel_interconnect(tmp_path):
    app, arch, rows = inputs(tmp_path)
    got = assess_elements(arch, rows, parse_element_columns("host=t_1,gpu=t_k,pcie=-"),
                          app=app, free=FREE)
    want = {"host.time.alpha": HOST[0], "host.time.beta": HOST[1],
            "gpu.time.alpha": GPU[0], "gpu.time.beta": GPU[1],
            "pcie.time.alpha": PCIE[0], "pcie.time.beta": PCIE[1]}
    assert got.fit.values == pytest.approx(want, rel=1e-9)
    assert [e.element for e in got.elements] == ["host", "gpu", "pcie"]
    assert all(e.result.r2 == pytest.approx(1.0) for e in got.elements)
    assert got.result.mape < 1e-9 and not got.fit.warnings
    # on t_w alone the three alphas multiply the same S/gamma: not separable
    whole = assess(arch, rows, app=app, free=FREE)
    assert any("cannot tell apart" in w for w in whole.fit.warnings)


def test_cli_measured_element(tmp_path, capsys):
    write_columns(tmp_path / "columns.csv")
    args = [str(GSLA / "opencl.sdf"), str(GSLA / "gpu.moa"), str(GSLA / "mappings.map"),
            str(tmp_path / "columns.csv"), "--mapping", "gpu_offload", "--measured", "t_w",
            "--measured-element", "host=t_1,gpu=t_k,pcie=-", "--free", FREE]
    assert main(["fit", *args, "--json", "-o", str(tmp_path / "fitted.moa")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["fitted"]["gpu.time.alpha"] == pytest.approx(GPU[0], rel=1e-9)
    assert [e["element"] for e in doc["elements"]] == ["host", "gpu", "pcie"]
    fitted, = dsl.load_moa(tmp_path / "fitted.moa")
    assert fitted.bind().elements["pcie"].model("time").params.beta == \
        pytest.approx(PCIE[1], rel=1e-9)
    assert main(["fidelity", *args]) == 0
    out = capsys.readouterr().out
    assert "per element" in out and "pcie" in out
    assert main(["fidelity", *args, "--fit-by", "S"]) == 2
    assert "does not go with --fit-by" in capsys.readouterr().err


def noisy_columns(path, seed=3):
    """The grid of :func:`write_columns` twice, each part with its own 5 % noise (as
    the paper's separately measured t_1, t_k and t_w)."""
    rng = np.random.default_rng(seed)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["S", "gamma", "t_w", "t_1", "t_k"])
        for _ in range(2):
            for S in (512, 1024, 2048, 4096, 8192, 16384):
                for g in (8, 16, 32, 64, 128, 256):
                    t1, tk, tc = (v * rng.lognormal(0, 0.05) for v in (
                        gsla(HOST, S, g), gsla(GPU, S, g), 2 * gsla(PCIE, S, g)))
                    w.writerow([S, g, repr(t1 + tk + tc), repr(t1), repr(tk)])
    return path


def test_per_element_fit_cross_validated(tmp_path, capsys):
    """--folds with --measured-element: each fold fits every element on its own column
    over the fold's training rows and ranks the whole model's t_w on its test rows."""
    from scipy import stats

    from mapping.calibration.elements import element_models, fit_elements
    from mapping.calibration.row_model import RowModel
    from mapping.calibration.solvers import predict_fitted
    from mapping.calibration.validation import fold_splits

    path = noisy_columns(tmp_path / "noisy.csv")
    args = [str(GSLA / "opencl.sdf"), str(GSLA / "gpu.moa"), str(GSLA / "mappings.map"),
            str(path), "--mapping", "gpu_offload", "--measured", "t_w",
            "--measured-element", "host=t_1,gpu=t_k,pcie=-", "--fit", FREE]
    assert main(["fidelity", *args, "--folds", "3", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    app, = dsl.load_sdf(GSLA / "opencl.sdf")
    arch, = dsl.load_moa(GSLA / "gpu.moa")
    mapping = next(m for m in dsl.load_map(GSLA / "mappings.map") if m.name == "gpu_offload")
    rows = list(read_measurements(path, "t_w", params=["S", "gamma"], mapping=mapping).rows)
    elements = element_models(arch, rows, parse_element_columns("host=t_1,gpu=t_k,pcie=-"),
                              app=app, free=FREE)
    total = RowModel(arch, rows, "time", None, app)
    measured = np.array([r.measured for r in rows])
    taus = []
    for train, test in fold_splits(len(rows), 3, 0):
        _, merged = fit_elements(elements, arch, train, test)
        predicted = predict_fitted(total, merged, test)
        taus.append(stats.kendalltau(np.round(predicted, 12), measured[test]).statistic)
    assert [f["tau"] for f in doc["folds"]] == pytest.approx(taus, abs=1e-9)
    assert doc["tau"] == pytest.approx(np.mean(taus), abs=1e-9)
    assert doc["fitted"]["gpu.time.alpha"] == pytest.approx(GPU[0], rel=0.05)
    # the same figures within one size, and over repeated splits
    assert main(["fidelity", *args, "--folds", "3", "--within", "S", "--json"]) == 0
    within = json.loads(capsys.readouterr().out)
    assert within["tau"] == pytest.approx(doc["tau"]) and within["tau_within"] > 0.9
    assert main(["fidelity", *args, "--repeats", "2", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["repeats"]) == 2
    assert main(["plot", "fidelity", *args, "-o", str(tmp_path / "f.png")]) == 0
    assert (tmp_path / "f.png").stat().st_size > 0


def test_measured_element_errors(tmp_path, capsys):
    app, arch, rows = inputs(tmp_path)
    with pytest.raises(InputError, match="exactly one element"):
        assess_elements(arch, rows, {"host": "t_1"}, app=app, free="gpu.time.alpha")
    with pytest.raises(InputError, match="not an element"):
        assess_elements(arch, rows, {"cpu": "t_1"}, app=app)
    with pytest.raises(InputError, match="no column 't_9'"):
        assess_elements(arch, rows, {"host": "t_9"}, app=app)
    with pytest.raises(InputError, match="ELEMENT=COLUMN"):
        parse_element_columns("host")
    with pytest.raises(InputError, match="only one element"):
        parse_element_columns("host=-,gpu=-")


@pytest.mark.parametrize("cell, message", [("x", "'x' is not a (finite) number"),
                                           ("inf", "'inf' is not a (finite) number"),
                                           ("", "missing cell")])
def test_an_element_column_is_read_as_every_cell_is(tmp_path, cell, message):
    """A bad cell of a ``--measured-element`` column gets the error of any bad cell, at
    the cell (it said "expected a number for element 'gpu', got 'x'", a blank too)."""
    path = write_columns(tmp_path / "columns.csv")
    lines = path.read_text().splitlines()
    cells = lines[3].split(",")
    char = len(",".join(cells[:4])) + 2
    lines[3] = ",".join(cells[:4] + [cell])
    path.write_text("\n".join(lines) + "\n")
    app, = dsl.load_sdf(GSLA / "opencl.sdf")
    arch, = dsl.load_moa(GSLA / "gpu.moa")
    mapping, = (m for m in dsl.load_map(GSLA / "mappings.map") if m.name == "gpu_offload")
    rows = read_measurements(path, "t_w", params=["S", "gamma"], mapping=mapping).rows
    with pytest.raises(InputError) as info:
        assess_elements(arch, rows, {"host": "t_1", "gpu": "t_k"}, app=app)
    assert str(info.value) == f"row 3, column 5 't_k': {message}"
    assert info.value.origin == (str(path), 4, char)


def test_gsla_power4_is_eq7():
    model = make_model("gsla_power4", {"a": 0.12, "b": 1e-6, "c": 0.5, "d": 2e-5})
    token = TokenGroup("k", 1, 1.0, {"S": 4096, "gamma": 16})
    assert model.token_cost(token) == pytest.approx(0.12 + 1e-6 * 4096 + 0.5 / 16
                                                    + 2e-5 * 4096 / 16)
    terms = model.linear_terms(token)
    assert terms == pytest.approx({"a": 1.0, "b": 4096, "c": 1 / 16, "d": 256.0})
    assert model.linear_parameters == ("a", "b", "c", "d")


def test_gsla_power4_fitted_by_nnls(tmp_path):
    text = (GSLA / "gpu.moa").read_text().replace(
        "power = gsla_power(a = 0.12, b = 1.0e-6, c = 2.0e-5)",
        "power = gsla_power4(a = 0.1, b = 1e-6, c = 0.1, d = 1e-5)")
    assert "gsla_power4" in text
    (tmp_path / "p4.moa").write_text(text)
    truth = {"gpu.power.a": 0.12, "gpu.power.b": 2e-6, "gpu.power.c": 0.3,
             "gpu.power.d": 4e-5}
    a, b, c, d = truth.values()
    with open(tmp_path / "power.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["S", "gamma", "p"])
        for S in (512, 1024, 2048, 4096, 8192, 16384):
            for g in (8, 16, 32, 64, 128, 256):
                w.writerow([S, g, repr(a + b * S + c / g + d * S / g)])
    app, = dsl.load_sdf(GSLA / "opencl.sdf")
    arch, = dsl.load_moa(tmp_path / "p4.moa")
    mapping = next(m for m in dsl.load_map(GSLA / "mappings.map") if m.name == "gpu_offload")
    rows = read_measurements(tmp_path / "power.csv", "p", params=["S", "gamma"],
                             mapping=mapping).rows
    got = assess(arch, list(rows), app=app, metric="power", free=",".join(truth))
    assert got.fit.method == "nnls"
    assert got.fit.values == pytest.approx(truth, rel=1e-9)
