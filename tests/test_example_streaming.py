"""examples/calibration/streaming: a streaming pipeline whose run time is the busiest
core's load, copies charged to the end cores. The first release's model (common quanta x
per-type alpha, communication on CNs) ranks it clearly worse than lookup + charge = ends."""
from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pytest

from mapping.cli.main import main

HERE = Path(__file__).resolve().parent.parent / "examples" / "calibration" / "streaming"
ACTORS = ["src", "deint", "fir_l", "fir_r", "mix", "eq", "comp", "sink"]
NEW_FREE = [f"c_{a}_{t}" for a in ACTORS for t in ("A7", "A15")] + ["a_l2", "a_cci"]
OLD_FREE = [f"q_{a}" for a in ACTORS] + [
    "A15.time.alpha", "l2_little.time.alpha", "l2_big.time.alpha", "cci.time.alpha"]


def generator():
    spec = importlib.util.spec_from_file_location("make_streaming", HERE / "make_measurements.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fidelity_json(capsys, moa, data, *extra):
    argv = ["fidelity", str(HERE / "audio.sdf"), str(HERE / moa), str(data),
            "--measured", "time_us", "--actor-column", "t_{actor}", *extra, "--json"]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_ground_truth_is_the_new_model_with_its_values(tmp_path, capsys):
    """With the generator's costs set as parameters (copies 0.01/byte per cache, so 0.03
    across: l2 + cci + l2), board.moa predicts every noise-free time the script computes
    by hand: lookup and charge = ends say what the ground truth says."""
    gen = generator()
    data = tmp_path / "m.csv"
    gen.NOISE = 0.0
    gen.main([str(data), "--rows", "30", "--seed", "1"])
    capsys.readouterr()
    params = [f"c_{a}_{t}={gen.EXEC[a][i]}" for a in ACTORS for i, t in enumerate(("A7", "A15"))]
    params += ["a_l2=0.01", "a_cci=0.01"]
    argv = ["fidelity", str(HERE / "audio.sdf"), str(HERE / "board.moa"), str(data),
            "--measured", "time_us", "--actor-column", "t_{actor}", "--json"]
    for p in params:
        argv += ["-p", p]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tau"] == pytest.approx(1.0)
    assert doc["mape"] < 1e-4
    with open(data) as f:
        rows = list(csv.DictReader(f))
    cores = {r[f"t_{a}"] for r in rows for a in ACTORS}
    assert cores <= set(gen.CORES)


def test_new_constructs_rank_better_than_first_release(tmp_path, capsys):
    """A reduced run of the README's study (100 rows, one start): the fitted lookup +
    charge = ends model ranks the test rows above 0.8, the fitted first-release model
    well below it."""
    gen = generator()
    data = tmp_path / "m.csv"
    gen.main([str(data), "--rows", "100", "--seed", "3"])
    capsys.readouterr()
    new = fidelity_json(capsys, "board.moa", data, "--fit", ",".join(NEW_FREE), "--starts", "1")
    old = fidelity_json(capsys, "board_lsla.moa", data, "--fit", ",".join(OLD_FREE), "--starts", "1")
    assert new["tau"] > 0.8
    assert old["tau"] < 0.7
    assert new["tau"] - old["tau"] > 0.15
