"""Issue 17: ``mapeval import gpu-table`` on a tiny synthetic table (its faults
corrected and reported), the study it writes run by ``fidelity``, bad tables, and the
shared measurements when present."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mapping.cli.main import main

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "measurements" / "gpus"

HEADER = ('"","compute_version","gpu_id","gpu_name","max_clock_rate","num_of_cores","L2",'
          '"bus","memory_clock","bandwith","AppName","Input.Size","Duration","Grid.X",'
          '"Grid.Y","Grid.Z","Block.X","Block.Y","Block.Z","Registers.Per.Thread",'
          '"Static.SMem","Dynamic.SMem"')
# GTX-970: 3072 cores as in the shared files (13 SMs x 128 = 1664); a decimal comma
GTX970 = '"1",5.2,10,"GTX-970",1076,3072,1.75,256,3505,"224,32","vadd",{n},{t},{g},1,1,{b},1,1,10,0,0'
# a GPU the data-sheet table does not know: 2496 cores = 13 SMX of 192
OTHER = '"1",3.5,3,"My-K20",706,2496,1,320,2600,208,"vadd",{n},{t},{g},1,1,{b},1,1,10,0,0'


def _table(path: Path, line: str, scale: float) -> Path:
    rows = [HEADER]
    for n in (4096, 65536, 1048576):
        for b in (64, 256):
            t = scale * (2e-6 + n * 12 / 150e9) * (1.2 if b == 64 else 1.0)
            rows.append(line.format(n=n, t=repr(t), g=n // b, b=b))
    path.write_text("\n".join(rows) + "\n")
    return path


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_import_then_fidelity_two_commands(tmp_path, capsys):
    a = _table(tmp_path / "vadd-GTX-970.csv", GTX970, 1.0)
    b = _table(tmp_path / "vadd-My-K20.csv", OTHER, 1.6)
    out_dir = tmp_path / "study"
    code, out, err = _run(capsys, "import", "gpu-table", a, b, "-o", out_dir,
                          "--bytes-per-element", "12", "--flops-per-element", "1", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kernel"] == "vadd" and doc["gpus"] == ["gtx_970", "my_k20"]
    assert doc["launches"] == 12
    assert any("decimal comma" in c and "224,32" in c for c in doc["corrections"])
    assert any(c.startswith("GTX-970: num_of_cores 3072 corrected to 1664")
               for c in doc["corrections"])
    assert not any("My-K20" in c for c in doc["corrections"])
    assert "corrected: GTX-970" in err
    for name in ("app.sdf", "gpu.moa", "lsla.moa", "gsla.moa", "roofline.moa",
                 "mappings.map", "measurements.csv"):
        assert (out_dir / name).is_file()
    moa = (out_dir / "gpu.moa").read_text()
    assert "pe gtx_970 [time = gpu(cc = 5.2, sms = 13, cores = 1664" in moa
    assert "pe my_k20 [time = gpu(cc = 3.5, sms = 13, cores = 2496" in moa
    assert "bandwidth = 224.32" in moa
    # the data-sheet roofline: 2 flops (an FMA) x 1664 cores x 1076 MHz, 224.32 GB/s
    roof = (out_dir / "roofline.moa").read_text()
    assert "pe gtx_970 [time = roofline(peak = 3580928000000, bandwidth = 224320000000)]" \
        in roof

    code, out, err = _run(capsys, "fidelity", out_dir / "app.sdf", out_dir / "gpu.moa",
                          out_dir / "mappings.map", out_dir / "measurements.csv",
                          "--mapping-column", "gpu", "--measured", "time_s",
                          "--within", "size", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["n"] == 12
    # the GTX 970's achieved 0.7 x 224 GB/s beats the K20's 0.7 x 208 as measured
    assert doc["tau_within"] > 0.5 and -1 <= doc["tau"] <= 1


def test_bad_tables_are_input_errors(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER.replace('"Duration",', "") + "\n")
    code, _, err = _run(capsys, "import", "gpu-table", bad, "-o", tmp_path / "o")
    assert code == 2 and "Duration" in err and "bad.csv:1:1" in err
    assert "Traceback" not in err

    nan = tmp_path / "nan.csv"
    nan.write_text(HEADER + "\n" + GTX970.format(n=1, t="NA", g=1, b=64) + "\n")
    code, _, err = _run(capsys, "import", "gpu-table", nan, "-o", tmp_path / "o")
    assert code == 2 and "nan.csv:2:1" in err and "'Duration'" in err

    other = _table(tmp_path / "other.csv", GTX970.replace('"vadd"', '"vmul"'), 1.0)
    first = _table(tmp_path / "first.csv", GTX970, 1.0)
    code, _, err = _run(capsys, "import", "gpu-table", first, other, "-o", tmp_path / "o")
    assert code == 2 and "different kernels" in err

    code, _, err = _run(capsys, "import", "gpu-table", first, "-o", tmp_path / "o",
                        "--elements", "size +* 2")
    assert code == 2 and "Traceback" not in err


@pytest.mark.skipif(not (SHARED / "matrix_sum_normal-GTX-970.csv").exists(),
                    reason="the shared GPU measurements are not here")
def test_shared_tables_corrected_and_the_spec_sheet_roofline(tmp_path, capsys):
    files = sorted(SHARED.glob("matrix_sum_normal-*.csv"))
    code, out, err = _run(capsys, "import", "gpu-table", *files, "-o", tmp_path,
                          "--elements", "size**2", "--bytes-per-element", "12",
                          "--flops-per-element", "1", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["launches"] == 928 and len(doc["gpus"]) == 9
    fixed = [c.split(":")[0] for c in doc["corrections"]]
    assert fixed == ["bandwith", "GTX-970", "TitanBlack"]
    code, out, err = _run(capsys, "fidelity", tmp_path / "app.sdf", tmp_path / "roofline.moa",
                          tmp_path / "mappings.map", tmp_path / "measurements.csv",
                          "--mapping-column", "gpu", "--measured", "time_s",
                          "--within", "size", "--json")
    assert code == 0, err
    # the table: 0.57 within sizes for the data-sheet roofline
    assert json.loads(out)["tau_within"] == pytest.approx(0.57, abs=0.005)


def test_l2_capacity_and_partial_sectors_are_written(tmp_path, capsys):
    """Issue 44: each GPU's L2 column becomes its l2_capacity (MB x 2^20 bytes) with a
    sharpness per generation; --partial-sectors marks the kernel's surplus sectors."""
    a = _table(tmp_path / "vadd-GTX-970.csv", GTX970, 1.0)
    out_dir = tmp_path / "study"
    code, _, err = _run(capsys, "import", "gpu-table", a, "-o", out_dir,
                        "--bytes-per-element", "4", "--l2-bytes-per-element", "32",
                        "--partial-sectors")
    assert code == 0, err
    moa = (out_dir / "gpu.moa").read_text()
    assert "l2_capacity = 1835008, l2_sharpness = l2s_maxwell" in moa
    assert "param l2s_maxwell = 1" in moa
    assert "partial_sectors = 1" in (out_dir / "app.sdf").read_text()
    code, _, err = _run(capsys, "import", "gpu-table", a, "-o", tmp_path / "plain",
                        "--bytes-per-element", "4")
    assert code == 0 and "partial_sectors" not in (tmp_path / "plain" / "app.sdf").read_text()
