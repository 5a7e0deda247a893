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
    8 and 3, with a loop ramp below 1 KB and 3% noise."""
    rng = np.random.default_rng(1)
    levels = ((32768.0, 200.0), (1048576.0, 100.0), (16777216.0, 45.0))
    ws = np.geomspace(64, 2 ** 30, 160)
    bw = 1 / seconds_per_byte(ws, levels, 20.0, (1.0, 8.0, 3.0))
    bw = np.where(ws < 1024, bw * ws / 1024 * 0.5, bw) * (1 + 0.03 * rng.standard_normal(ws.size))
    fit = fit_working_set(ws, bw, 3)
    assert min(fit.ws) >= 1024
    for (c, b), (c0, b0) in zip(fit.levels, levels):
        assert b == pytest.approx(b0, rel=0.05) and c == pytest.approx(c0, rel=0.05)
    assert fit.bandwidth == pytest.approx(20.0, rel=0.05)


def test_a_slow_level_then_a_cliff_is_recovered():
    """ERT's shape past its L3: 16 MiB at 45 GB/s with sharpness 1 (a slow descent),
    then 512 MiB at 23 with sharpness 40 (a cliff) above DRAM at 18, 3% noise: each
    level's own sharpness draws both, and every capacity and bandwidth is back within
    5%."""
    rng = np.random.default_rng(2)
    levels = ((1048576.0, 100.0), (16777216.0, 45.0), (536870912.0, 23.0))
    ws = np.geomspace(4096, 2 ** 31, 150)
    bw = 1 / seconds_per_byte(ws, levels, 18.0, (6.0, 1.0, 40.0))
    bw = bw * (1 + 0.03 * rng.standard_normal(ws.size))
    fit = fit_working_set(ws, bw, 3)
    for (c, b), (c0, b0) in zip(fit.levels, levels):
        assert b == pytest.approx(b0, rel=0.05) and c == pytest.approx(c0, rel=0.05)
    assert fit.bandwidth == pytest.approx(18.0, rel=0.05)


@pytest.mark.skipif(not CURVE.is_file(), reason="../shared/data/measurements is absent")
def test_the_ert_curve_gives_the_summarys_levels():
    """Every plateau's bandwidth within 10% of ERT's summary.  The summary gives no
    capacity (ERT's summary.py prints a bandwidth per plateau only), so each capacity is
    held against the curve: within 10% of the measured working sets around the end of
    its plateau (the last point within 10% of the summary's level, and the first past
    it).  The 'L4' plateau ends at 490 MB (21.5 GB/s), the next point is 18.4 GB/s at
    539 MB."""
    ws, gbs = map(np.asarray, read_working_set(CURVE))
    fit = fit_working_set(ws, gbs, 4)
    names = ("L1", "L2", "L3", "L4")
    for (capacity, bw), name in zip(fit.levels, names):
        assert bw == pytest.approx(ERT_SUMMARY[name], rel=0.10), name
    assert fit.bandwidth == pytest.approx(ERT_SUMMARY["DRAM"], rel=0.10)
    for (capacity, _), name in zip(fit.levels, names):
        level = ERT_SUMMARY[name]
        on = np.flatnonzero((np.abs(gbs / level - 1) <= 0.10) & (ws >= min(fit.ws)))
        end, after = ws[on[-1]], ws[on[-1] + 1]
        assert 0.9 * end <= capacity <= 1.1 * after, (name, capacity, end, after)
    assert fit.levels[3][0] == pytest.approx(490120136, rel=0.10)


def test_the_level_order_is_a_bound_of_the_fit():
    """A sweep whose first plateau (130 GB/s to 32 KiB) is below its second (150 to
    1 MiB, then 40): least squares free of the order fits the first level slower than
    the second; the fit keeps L1 >= L2 >= last and the capacities rising."""
    from scipy.optimize import least_squares

    rng = np.random.default_rng(0)
    ws = np.geomspace(1024, 2 ** 30, 120)
    bw = np.where(ws < 32768, 130.0, np.where(ws < 2 ** 20, 150.0, 40.0))
    bw = bw * (1 + 0.01 * rng.standard_normal(ws.size))

    def free(x):
        v = np.exp(x)
        return np.log(1 / seconds_per_byte(ws, tuple(zip(v[:2], v[2:4])), v[4], v[5:])) \
            - np.log(bw)

    loose = np.exp(least_squares(free, np.log([32768, 2 ** 20, 140, 140, 40, 16, 16]),
                                 x_scale="jac").x)
    assert loose[2] < 0.9 * loose[3]                 # unordered: L1 slower than L2
    fit = fit_working_set(ws, bw, 2)
    (c1, b1), (c2, b2) = fit.levels
    assert c1 < c2 and b1 >= b2 >= fit.bandwidth
    assert fit.bandwidth == pytest.approx(40.0, rel=0.05)


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
    text = capsys.readouterr().out.split("\nwrote")[0]
    doc = json.loads(text)
    # the one JSON convention of mapeval (mapping.output.print_json), layout and all
    from dsl.json_export import json_text
    assert text == json_text(doc) + "\n"
    assert [lv["capacity"] for lv in doc["levels"]] == pytest.approx([32768, 4194304], rel=0.02)
    assert doc["bandwidth"] == pytest.approx(20.0, rel=0.01)
    from PIL import Image
    with Image.open(out) as image:
        assert image.size == (750, 520)
