"""examples/onnx_soc: the CNN's partition over the mobile SoC is what its README says:
DRAM-bound, within 2% of the bound every mapping has (all bytes / 30 GB/s), no layer on
a CPU, and one GPU -> NPU cut."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("onnx")
import dsl  # noqa: E402
from mapping.cli.main import main  # noqa: E402

EX = Path(__file__).resolve().parents[1] / "examples" / "onnx_soc"


def test_partition_is_dram_bound_and_split_once(tmp_path, capsys):
    model, sdf, best = tmp_path / "cnn.onnx", tmp_path / "cnn.sdf", tmp_path / "best.map"
    subprocess.run([sys.executable, str(EX / "make_cnn.py"), str(model)], check=True)
    assert main(["import", "onnx", str(model), "-o", str(sdf)]) == 0
    (graph,) = dsl.load_sdf(sdf)
    actors = graph.bind().actors
    bound = sum(a.attrs["bytes"] for a in actors.values()) / 30e9
    assert bound == pytest.approx(54.8896e6 / 30e9)
    assert main(["search", str(sdf), str(EX / "soc.moa"), "--aggregate", "max", "-o",
                 str(best)]) == 0
    capsys.readouterr()
    assert main(["eval", str(sdf), str(EX / "soc.moa"), str(best), "--aggregate", "max",
                 "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["bottleneck"] == "dram"
    assert bound <= result["value"] <= 1.02 * bound
    (mapping,) = dsl.load_map(best)
    order = [mapping.assignment[a] for a in actors]
    assert set(order) == {"gpu", "npu"}
    assert sum(1 for x, y in zip(order, order[1:]) if x != y) == 1
