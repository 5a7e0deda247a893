"""The working-set fit of a bandwidth-against-working-set curve (issue 44, must-show 2):
ERT's P100-host sweep, and a synthetic curve of known levels."""
import json
from pathlib import Path

import numpy as np
import pytest

from dsl.importers.ert import read_working_set
from dsl.errors import ParseError
from mapping.cli.main import main
from moa.cost_models.caches import seconds_per_byte
from moa.working_set import fit_working_set, plateaus

ROOT = Path(__file__).resolve().parents[1]
CURVE = (ROOT.parent / "shared" / "data" / "measurements" /
         "ert_p100run018_flops1_mpi1_omp1_bandwidth_vs_wss.max.txt")
#: what ERT's own summary of this run reports (Results.p100.01/Run.018/FLOPS.001/
#: MPI.0001/OpenMP.0001/sum of the Empirical Roofline Toolkit 1.1.0), GB/s
ERT_SUMMARY = {"L1": 176.44, "L2": 102.18, "L3": 45.70, "L4": 22.90, "DRAM": 18.30}


def test_plateaus_by_hand():
    assert plateaus([5, 5, 5, 2, 2, 1, 1, 1], 3) == [3, 5]
    assert plateaus([1.0], 1) == []


def test_a_synthetic_curve_is_recovered():
    """Levels 32 KiB at 200, 1 MiB at 100, 16 MiB at 45 and DRAM 20 GB/s, sharpness 1,
    8 and 3, with a loop ramp below 1 KB and 2% noise."""
    rng = np.random.default_rng(1)
    levels = ((32768.0, 200.0), (1048576.0, 100.0), (16777216.0, 45.0))
    ws = np.geomspace(64, 2 ** 30, 160)
    bw = 1 / seconds_per_byte(ws, levels, 20.0, (1.0, 8.0, 3.0))
    bw = np.where(ws < 1024, bw * ws / 1024 * 0.5, bw) * (1 + 0.02 * rng.standard_normal(ws.size))
    fit = fit_working_set(ws, bw, 3)
    assert min(fit.ws) >= 1024
    for (c, b), (c0, b0) in zip(fit.levels, levels):
        assert b == pytest.approx(b0, rel=0.05) and c == pytest.approx(c0, rel=0.05)
    assert fit.bandwidth == pytest.approx(20.0, rel=0.05)


@pytest.mark.skipif(not CURVE.is_file(), reason="../shared/data/measurements is absent")
def test_the_ert_curve_gives_the_summarys_levels():
    """Every plateau's bandwidth within 10% of ERT's summary; the capacities where the
    L1, L2 and L3 plateaus end within 10% of the measured working sets around the end
    (the last point within 10% of the level and the first below it).  The 'L4' plateau
    (80 to 368 MB, then a cliff to 18.4 GB/s at 539 MB) is fitted as a slow descent from
    71 MB: its capacity is not recovered (see docs/limitations.md)."""
    ws, gbs = map(np.asarray, read_working_set(CURVE))
    fit = fit_working_set(ws, gbs, 4)
    names = ("L1", "L2", "L3", "L4")
    for (capacity, bw), name in zip(fit.levels, names):
        assert bw == pytest.approx(ERT_SUMMARY[name], rel=0.10), name
    assert fit.bandwidth == pytest.approx(ERT_SUMMARY["DRAM"], rel=0.10)
    for (capacity, _), name in zip(fit.levels[:3], names):
        level = ERT_SUMMARY[name]
        on = np.flatnonzero((np.abs(gbs / level - 1) <= 0.10) & (ws >= min(fit.ws)))
        end, after = ws[on[-1]], ws[on[-1] + 1]
        assert 0.9 * end <= capacity <= 1.1 * after, (name, capacity, end, after)


def test_the_reader_points_at_a_bad_line(tmp_path):
    bad = tmp_path / "wss.txt"
    bad.write_text("8 1 1 1 1 5 5 5 1 1 1\n16 1 1 1 1 5 x 5 1 1 1\n")
    with pytest.raises(ParseError) as err:
        read_working_set(bad)
    assert err.value.origin[1:] == (2, 14)


def test_plot_command(tmp_path, capsys):
    """A synthetic sweep in ERT's format (two levels and DRAM): the plot is drawn and the
    fit printed."""
    ws = np.geomspace(1024, 2 ** 28, 90)
    bw = 1 / seconds_per_byte(ws, ((32768.0, 200.0), (4194304.0, 80.0)), 20.0, 6.0)
    curve = tmp_path / "wss.max.txt"
    curve.write_text("".join(f"{w:.0f} 1 1 1 1 {b} {b} {b} 1 1 1\n" for w, b in zip(ws, bw))
                     + "\nMETA_DATA\nERT_VERSION 1.1.0\n")
    out = tmp_path / "wss.png"
    assert main(["plot", "working-set", str(curve), "--levels", "2", "--json",
                 "-o", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out.split("\nwrote")[0])
    assert [lv["capacity"] for lv in doc["levels"]] == pytest.approx([32768, 4194304], rel=0.02)
    assert doc["bandwidth"] == pytest.approx(20.0, rel=0.01)
    from PIL import Image
    with Image.open(out) as image:
        assert image.size == (750, 520)
