"""The calibration study from Python (``mapping.calibration.study.run_study``) gives the
figures the command line prints: the README's fidelity examples run both ways."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import dsl
from dsl.json_export import json_safe
from mapping.calibration.measurements import read_measurements
from mapping.calibration.study import run_study
from mapping.cli.main import main
from mapping.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
GSLA = ROOT / "examples" / "gsla"
PREESM = ROOT / "examples" / "calibration" / "preesm"


def cli_document(capsys, *argv) -> dict:
    """The command's JSON without ``units``: the command adds the table's units beside
    the study's figures (checked in tests/test_measured_units.py)."""
    assert main(["fidelity", *map(str, argv), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    document.pop("units", None)
    return document


def api_document(study) -> dict:
    document = study.result.to_dict()
    if study.elements:
        document["elements"] = [e.to_dict() for e in study.elements]
    return json.loads(json.dumps(json_safe(document)))


def gsla_inputs():
    (app,) = dsl.load_sdf(GSLA / "opencl.sdf")
    (arch,) = dsl.load_moa(GSLA / "gpu.moa")
    mapping = {m.name: m for m in dsl.load_map(GSLA / "mappings.map")}["gpu_offload"]
    data = read_measurements(GSLA / "measurements.csv", "time_s",
                             params=[*app.params, *arch.params], mapping=mapping)
    return app, arch, data


def test_the_readme_gsla_folds_within_s_alike_from_python_and_the_command_line(capsys):
    app, arch, data = gsla_inputs()
    study = run_study(arch, data, app=app, fit="gpu.time.alpha,gpu.time.beta", folds=5,
                      within="S")
    cli = cli_document(capsys, GSLA / "opencl.sdf", GSLA / "gpu.moa", GSLA / "mappings.map",
                       GSLA / "measurements.csv", "--mapping", "gpu_offload", "--measured",
                       "time_s", "--fit", "gpu.time.alpha,gpu.time.beta", "--folds", "5",
                       "--within", "S")
    assert api_document(study) == cli
    # the README's figures (tests/test_docs_commands.py checks the printed ones)
    assert round(study.result.tau, 4) == 0.9745
    assert round(study.result.tau_within, 4) == 0.9122
    assert len(study.result.folds) == 5


def test_the_readme_preesm_activity_alike_from_python_and_the_command_line(capsys):
    (arch,) = dsl.load_moa(PREESM / "board.moa")
    data = read_measurements(PREESM / "measurements.csv", "energy_J", params=arch.params,
                             quanta_column="quanta_{element}",
                             tokens_column="tokens_{element}", elements=list(arch.elements))
    fit = ["A7.energy.alpha", "A15.energy.alpha", "p_static"]
    study = run_study(arch, data, metric="energy_total", fit=fit, within="config",
                      starts=0)
    cli = cli_document(capsys, PREESM / "board.moa", PREESM / "measurements.csv",
                       "--measured", "energy_J", "--quanta-column", "quanta_{element}",
                       "--tokens-column", "tokens_{element}", "--metric", "energy_total",
                       "--fit", ",".join(fit), "--within", "config", "--starts", "0")
    assert api_document(study) == cli
    assert round(study.result.tau, 4) == 0.8958
    assert round(study.result.tau_within, 4) == 0.9471
    assert (study.result.n_test, study.result.n_train) == (72, 288)


def test_the_per_element_and_grouped_studies_alike(capsys):
    app, arch, data = gsla_inputs()
    files = [GSLA / "opencl.sdf", GSLA / "gpu.moa", GSLA / "mappings.map",
             GSLA / "measurements.csv", "--mapping", "gpu_offload", "--measured", "time_s"]
    study = run_study(arch, data, app=app, fit=["gpu.time.alpha", "gpu.time.beta"],
                      fit_by="S", repeats=2)
    assert api_document(study) == cli_document(
        capsys, *files, "--fit", "gpu.time.alpha,gpu.time.beta", "--fit-by", "S",
        "--repeats", "2")
    assert study.result.within == "S"         # --within defaults to the --fit-by column


def test_a_study_the_options_cannot_describe_is_a_clear_error():
    app, arch, data = gsla_inputs()
    with pytest.raises(InputError, match="not both"):
        run_study(arch, data, app=app, folds=3, repeats=2)
    with pytest.raises(InputError, match="no column 'nope' for --within"):
        run_study(arch, data, app=app, within="nope")
    with pytest.raises(InputError, match="no column 'cfg' for gpu.time.alpha@cfg"):
        run_study(arch, data, app=app, fit="gpu.time.alpha@cfg")


def test_a_progress_without_a_total_gets_the_number_of_starts():
    from mapping.progress import Progress

    app, arch, data = gsla_inputs()
    bar = Progress(None, "fit", enabled=False)
    run_study(arch, data, app=app, fit="gpu.time.alpha,gpu.time.beta", folds=2, starts=1,
              progress=bar)
    # three fits (every row, then each of two folds) of 1 + 1 starts; NNLS counts all
    assert bar.total == 6 and bar.done == 6
