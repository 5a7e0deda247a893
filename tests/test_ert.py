"""ERT import (issue 16, must-show 2): roofline.json -> roofline PE parameters, the
hierarchical roofline analysis and its plot."""
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

import dsl
from dsl.importers.ert import ErtRoofline, read_ert, read_kernels, ert_moa
from dsl.errors import ParseError
from mapping.cli.main import main
from moa.roofline_analysis import Kernel, analyse

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "measurements"
REAL = sorted(DATA.glob("ert_roofline.*.json")) if DATA.is_dir() else []


def synthetic(tmp_path, gflops=(("GFLOPs", 100.0),), gbytes=(("L1", 800.0), ("DRAM", 50.0))):
    doc = {"empirical": {"gflops": {"data": [list(r) for r in gflops]},
                         "gbytes": {"data": [list(r) for r in gbytes]},
                         "metadata": {"HOSTNAME": "toy"}},
           "spec": {"gbytes": {"data": []}, "gflops": {"data": []}}}
    path = tmp_path / "roofline.json"
    path.write_text(json.dumps(doc))
    return path


def mapeval(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=out, stderr=err)


def bound_pe(moa_text, tmp_path):
    path = tmp_path / "imported.moa"
    path.write_text(moa_text)
    arch, = dsl.load_moa(path)
    arch = arch.bind()
    return arch, arch.elements["cpu"].model("time").params, arch.params


def check_equal(ert_path, tmp_path):
    """Every ceiling and level of the file is a parameter of the .moa, x 1e9 exactly;
    the PE's peak and bandwidth are the file's highest ceiling and its last level."""
    raw = json.loads(Path(ert_path).read_text())["empirical"]
    ert = read_ert(ert_path)
    assert [list(r) for r in ert.ceilings] == raw["gflops"]["data"]
    assert [list(r) for r in ert.levels] == raw["gbytes"]["data"]
    arch, pe, params = bound_pe(ert_moa(ert), tmp_path)
    assert pe.peak / 1e9 == pytest.approx(max(v for _, v in raw["gflops"]["data"]), rel=1e-15)
    assert pe.bandwidth / 1e9 == pytest.approx(raw["gbytes"]["data"][-1][1], rel=1e-15)
    for level, value in raw["gbytes"]["data"]:
        assert params[f"bw_{level}"] / 1e9 == pytest.approx(value, rel=1e-15)
        _, pe_l, _ = bound_pe(ert_moa(ert, level=level), tmp_path)
        assert pe_l.bandwidth / 1e9 == pytest.approx(value, rel=1e-15)


@pytest.mark.skipif(not REAL, reason="../shared/data/measurements is absent")
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_real_ert_files_import_exactly(path, tmp_path):
    check_equal(path, tmp_path)


def test_synthetic_ert_imports_exactly(tmp_path):
    check_equal(synthetic(tmp_path, gbytes=(("L1", 1234.56), ("L2", 321.5), ("DRAM", 7.25))),
                tmp_path)


def test_names_are_identifiers_of_the_grammar_whatever_the_labels():
    # a non-ASCII letter is no letter of the grammar's NAME: it becomes _ as any other
    # character (a Unicode-aware cleaning once kept it, and the .moa did not parse)
    ert = ErtRoofline("nœud-1", (("FP64 GFLOPs", 100.0),), (("L1 é", 800.0), ("DRAM", 5.0)))
    arch, = dsl.parse_moa(ert_moa(ert, level="L1 é"))
    assert arch.name == "n_ud_1"
    assert set(arch.params) == {"peak_FP64_GFLOPs", "bw_L1__", "bw_DRAM"}
    pe = arch.bind().elements["cpu"].model("time").params
    assert (pe.peak, pe.bandwidth) == (100e9, 800e9)


def test_ridges_and_classification():
    a = analyse("toy", [("GFLOPs", 100.0)], [("L1", 800.0), ("DRAM", 50.0)],
                [Kernel("stream", 2e9, 24e9, 1.0), Kernel("gemm", 2e12, 1e10),
                 Kernel("cached", 1e9, 4e9, None, "L1")])
    assert dict(a.ridges) == {"L1": 0.125, "DRAM": 2.0}
    stream, gemm, cached = a.kernels
    assert (stream.bound, stream.level) == ("memory", "DRAM")
    assert stream.roof == pytest.approx(50.0 / 12)
    assert stream.attained == 2.0 and stream.fraction == pytest.approx(0.48)
    assert (gemm.bound, gemm.roof, gemm.attained) == ("compute", 100.0, None)
    assert (cached.bound, cached.roof) == ("compute", 100.0)   # I = 0.25 >= 0.125


def test_cli_import_json_and_plot(tmp_path, capsys):
    ert = synthetic(tmp_path)
    kernels = tmp_path / "kernels.csv"
    kernels.write_text("kernel,flops,bytes,seconds,level\nstream,2e9,24e9,1,\n"
                       "gemm,2e12,1e10,25,DRAM\n")
    out = tmp_path / "toy.moa"
    run = mapeval(capsys, "import", "ert", ert, "--kernels", kernels, "--json", "-o", out)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["bandwidths"] == {"L1": 800.0, "DRAM": 50.0}
    assert [k["bound"] for k in doc["kernels"]] == ["memory", "compute"]
    assert "roofline(peak = peak_GFLOPs, bandwidth = bw_DRAM" in out.read_text()
    png = tmp_path / "roof.png"
    run = mapeval(capsys, "plot", "roofline", ert, "--kernels", kernels, "-o", png)
    assert run.returncode == 0, run.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_bad_inputs_exit_2(tmp_path, capsys):
    ert = synthetic(tmp_path)
    run = mapeval(capsys, "import", "ert", ert, "--level", "L7")
    assert run.returncode == 2 and "no memory level 'L7'" in run.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"empirical": {"gflops": {"data": [["GFLOPs", -1]]}}}')
    run = mapeval(capsys, "import", "ert", bad)
    assert run.returncode == 2 and "positive number" in run.stderr
    assert "Traceback" not in run.stderr
    kernels = tmp_path / "k.csv"
    kernels.write_text("kernel,flops,bytes\nk,abc,3\n")
    with pytest.raises(ParseError) as info:
        read_kernels(kernels)
    assert info.value.origin == (str(kernels), 2, 3)
    kernels.write_text("# no bytes\nkernel,flops,bytes\nk,3,0\n")
    with pytest.raises(ParseError, match="bytes must be a finite positive") as info:
        read_kernels(kernels)
    assert info.value.origin == (str(kernels), 3, 5)
