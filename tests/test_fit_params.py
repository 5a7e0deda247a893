"""Issue 9 fitting: rank deficiency on the non-linear path, multi-start, bare params."""
from __future__ import annotations

from pathlib import Path

import pytest

import dsl
from mapping.evaluation.reference import evaluate
from mapping.calibration.assessment import assess
from mapping.calibration.measurements import MeasurementRow

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


# --------------------------------------------------------------------------- recovery

SDF = """sdf chain {{
    param c_src = {c_src}
    param c_fft = {c_fft}
    param c_ifft = {c_ifft}
    actor src [quanta = c_src]
    actor fft [quanta = c_fft]
    actor ifft [quanta = c_ifft]
    src -> fft [size = 4]
    fft -> ifft [size = 2]
}}
"""

MOA = """moa two {{
    param a_bus = {a_bus}
    aggregate = max
    pe p0 [time = lsla(alpha = 1.0, beta = 0)]
    pe p1 [time = lsla(alpha = {alpha}, beta = 0.5)]
    cn bus [time = lsla(alpha = a_bus, beta = 0), charge = ends]
    p0 -- bus
    p1 -- bus
}}
"""

TRUTH = dict(c_src=3.0, c_fft=11.0, c_ifft=5.0, a_bus=0.7, alpha=0.25)


def _study(tmp_path, start):
    """Noise-free measurements of every mapping of the three actors on two PEs,
    generated from ``TRUTH``; the files hold the values ``start``."""
    import itertools
    app = dsl.parse_sdf(SDF.format(**TRUTH))[0]
    arch = dsl.parse_moa(MOA.format(**TRUTH))[0]
    from dsl.mappings import Mapping
    lines = ["t_src,t_fft,t_ifft,time"]
    for pes in itertools.product(("p0", "p1"), repeat=3):
        m = Mapping("m", dict(zip(("src", "fft", "ifft"), pes)))
        lines.append(",".join(pes) + f",{evaluate(app, arch, m).value!r}")
    (tmp_path / "chain.sdf").write_text(SDF.format(**start))
    (tmp_path / "two.moa").write_text(MOA.format(**start))
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    return [str(tmp_path / n) for n in ("chain.sdf", "two.moa", "m.csv")]


def _fit_json(capsys, files, free, *extra):
    import json
    from mapping.cli.main import main
    capsys.readouterr()
    assert main(["fit", *files, "--measured", "time", "--actor-column", "t_{actor}",
                 "--free", free, "--test-fraction", "0", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_fit_recovers_actor_param_costs_and_element_parameters_through_max(tmp_path,
                                                                            capsys):
    start = {k: v * 10 for k, v in TRUTH.items()}
    files = _study(tmp_path, start)
    doc = _fit_json(capsys, files, "c_src,c_fft,c_ifft,a_bus,p1.time.alpha",
                    "--starts", "8", "-o", str(tmp_path / "fitted.moa"))
    assert doc["method"] == "least_squares" and doc["rank"] == 5
    assert doc["starts"] == 9 and 0 <= doc["best_start"] <= 8
    expected = {"c_src": 3.0, "c_fft": 11.0, "c_ifft": 5.0, "a_bus": 0.7,
                "p1.time.alpha": 0.25}
    for name, value in expected.items():
        assert doc["fitted"][name] == pytest.approx(value, rel=1e-6), name
    # a .moa parameter becomes the new default of its param in the written .moa
    written = dsl.load_moa(tmp_path / "fitted.moa")[0]
    assert float(written.params["a_bus"]) == pytest.approx(0.7, rel=1e-6)
    assert "c_fft" not in written.params


def test_fit_table_names_sdf_params_and_how_to_apply_them(tmp_path, capsys):
    from mapping.cli.main import main
    files = _study(tmp_path, TRUTH)
    capsys.readouterr()
    assert main(["fit", *files, "--measured", "time", "--actor-column", "t_{actor}",
                 "--free", "c_fft,a_bus", "--test-fraction", "0", "--starts", "2",
                 "-o", str(tmp_path / "f.moa")]) == 0
    out = capsys.readouterr().out
    assert "best of 3 starts" in out
    assert "-p c_fft=" in out and "a_bus" in out


def test_bad_bare_name_lists_the_declared_parameters(tmp_path, capsys):
    from mapping.cli.main import main
    files = _study(tmp_path, TRUTH)
    code = main(["fit", *files, "--measured", "time", "--actor-column", "t_{actor}",
                 "--free", "c_fftt"])
    err = capsys.readouterr().err
    assert code == 2
    assert "c_fftt" in err and "c_src, c_fft, c_ifft, a_bus" in err
    assert "Traceback" not in err


def test_bare_param_that_changes_nothing_is_refused(tmp_path, capsys):
    from mapping.cli.main import main
    files = _study(tmp_path, TRUTH)
    sdf = Path(files[0])
    sdf.write_text(sdf.read_text().replace("param c_ifft = 5.0",
                                           "param c_ifft = 5.0\n    param unused = 1"))
    code = main(["fit", *files, "--measured", "time", "--actor-column", "t_{actor}",
                 "--free", "unused"])
    assert code == 2 and "cannot affect" in capsys.readouterr().err


def test_multistart_is_seeded_and_reported(tmp_path):
    files = _study(tmp_path, {k: v * 10 for k, v in TRUTH.items()})
    from mapping.calibration.starts import random_starts
    import numpy as np
    u0, lower = np.array([1.0, 2.0, 0.0]), np.array([0.0, 0.0, 0.0])
    a, b = random_starts(u0, lower, 4, seed=1), random_starts(u0, lower, 4, seed=1)
    assert all((x == y).all() for x, y in zip(a, b)) and len(a) == 4
    for x in a:
        assert 1e-2 <= x[0] <= 1e2 and 2e-2 <= x[1] <= 2e2 and x[2] == 0


def test_first_start_raises_a_zero_to_its_declared_scale_only():
    """A 0 of a parameter whose model declares a typical size starts at that size (the
    term it switches off is flat there); a 0 without one, and any other value, stay."""
    from mapping.calibration.parameter_vector import ParameterVector
    import numpy as np
    from mapping.calibration.starts import first_start
    vector = ParameterVector(("dispatch", "launch", "hide"), scales=(100.0, None, 100.0))
    assert first_start(vector, np.array([0.0, 0.0, 7.0])).tolist() == [100.0, 0.0, 7.0]


def test_first_start_moves_a_parameter_without_effect_to_the_edge_of_its_plateau():
    """Predictions max(x / e, 10 c) for x = 1, 2, 6: at e = 1, c = 1 every row is 10 and
    e has no effect; DRAM-like x / e binds first for x = 6 below e = 0.6, so the start
    takes e within 1 % under 0.6 (halving to 0.5 binds, bisection back towards 1).
    c has an effect and stays; u has none on any rung and stays; the moved start predicts
    what the file's does to 1 %."""
    from mapping.calibration.parameter_vector import ParameterVector
    from mapping.calibration.starts import first_start
    from moa.cost_models import Bounds
    import numpy as np
    x = np.array([1.0, 2.0, 6.0])

    def predict(t):
        return np.maximum(x / t[0], 10 * t[1]) + 0 * t[2]

    unit = Bounds(0.0, 1.0, low_open=True, high_open=False)
    vector = ParameterVector(("e", "c", "u"), bounds=(unit, Bounds(0.0), Bounds(0.0)),
                             scales=(None, None, None))
    theta = np.array([1.0, 1.0, 3.0])
    start = first_start(vector, theta, predict)
    assert 0.6 * 0.99 <= start[0] < 0.6
    assert start[1:].tolist() == [1.0, 3.0]
    assert np.allclose(predict(start), predict(theta), rtol=0.011)
    # the same edge whatever the order of the parameters
    again = ParameterVector(("c", "e"), bounds=(Bounds(0.0), unit), scales=(None, None))
    assert first_start(again, [1.0, 1.0],
                       lambda t: np.maximum(x / t[1], 10 * t[0]))[1] == start[0]


def test_first_start_leaves_a_plateau_whose_edge_is_beyond_a_factor_4():
    """The first start reaches a plateau's edge only within a factor 2^LADDER = 4 of the
    file's value: max(x / e, 10) for x = 1, 2, 6 binds first below e = 0.6 (moved
    there) but below e = 0.05 for x = 0.5 (20 times under 1: e stays at 1, flat, as
    the file states it); the same with a doubling (c = 0.1 in max(1, c x): binds above
    c = 1/6 for x = 6, moved there; above 2.5 for x = 0.4, 25 times over, where it
    stays)."""
    from mapping.calibration.parameter_vector import ParameterVector
    from mapping.calibration.starts import LADDER, first_start
    from moa.cost_models import Bounds
    import numpy as np
    assert 2 ** LADDER == 4
    unit = Bounds(0.0, 1.0, low_open=True, high_open=False)
    vector = ParameterVector(("e",), bounds=(unit,), scales=(None,))
    for x, moved in ((np.array([1.0, 2.0, 6.0]), True), (np.array([0.5]), False)):
        start = first_start(vector, [1.0], lambda t: np.maximum(x / t[0], 10.0))
        assert (0.6 * 0.99 <= start[0] < 0.6) if moved else start[0] == 1.0
    up = ParameterVector(("c",), bounds=(Bounds(0.0),), scales=(None,))
    for x, moved in ((np.array([1.0, 6.0]), True), (np.array([0.4]), False)):
        start = first_start(up, [0.1], lambda t: np.maximum(1.0, t[0] * x))
        assert (1 / 6 < start[0] <= 1 / 6 * 1.01) if moved else start[0] == 0.1


def test_first_start_past_a_flat_rung_takes_the_binding_rung():
    """An edge beyond the first rung: max(x / e, 10) from e = 1 with x = 2 binds below
    e = 0.2, past both rungs within 4 (0.5 and 0.25 flat): e stays; with x = 3 (edge
    0.3) the rung 0.25 binds past the flat 0.5, and the start is that rung, not the
    edge (bisection only when the first rung binds, as above)."""
    from mapping.calibration.parameter_vector import ParameterVector
    from mapping.calibration.starts import first_start
    from moa.cost_models import Bounds
    import numpy as np
    vector = ParameterVector(("e",), bounds=(Bounds(0.0, 1.0, low_open=True),),
                             scales=(None,))
    assert first_start(vector, [1.0], lambda t: np.maximum(2.0 / t[0], 10.0))[0] == 1.0
    assert first_start(vector, [1.0], lambda t: np.maximum(3.0 / t[0], 10.0))[0] == 0.25


def test_negative_starts_is_an_input_error(tmp_path, capsys):
    from mapping.cli.main import main
    files = _study(tmp_path, TRUTH)
    with pytest.raises(SystemExit) as exit_:
        main(["fit", *files, "--measured", "time", "--actor-column", "t_{actor}",
              "--free", "c_fft", "--starts", "-1"])
    assert exit_.value.code == 2 and "argument --starts: expected a whole number >= 0, got '-1'" in capsys.readouterr().err


def test_starts_zero_uses_the_files_values_only(tmp_path, capsys):
    files = _study(tmp_path, {**TRUTH, "c_fft": 110.0})
    doc = _fit_json(capsys, files, "c_fft", "--starts", "0")
    assert doc["starts"] == 1 and doc["best_start"] == 0
    assert doc["fitted"]["c_fft"] == pytest.approx(11.0, rel=1e-6)
