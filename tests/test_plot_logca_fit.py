"""The LogCA figures of issue 16: readable ticks, the fitted curve with its observations
and the latency bound, several accelerators on one chart."""
import csv

import matplotlib.image as mpimg
import numpy as np
from matplotlib.figure import Figure

from mapping.cli.main import main
from mapping.calibration.logca import synthetic
from mapping.plots.logca import draw_speedup
from moa.logca_analysis import analyse

AES = ["--L", "1500", "--o", "2.9e4", "--C", "90", "--A", "19", "--latency", "independent"]


def _labels(axis):
    return [t.get_text() for t in axis.get_majorticklabels() if t.get_text()]


def test_speedup_ticks_are_plain_numbers_and_byte_sizes():
    """Before: the y axis of the T2 AES chart read 2×10^0, 3×10^0 (minor log labels)."""
    fig = Figure()
    ax = fig.subplots()
    draw_speedup(ax, analyse(1500, 2.9e4, 90, 19, latency="independent"))
    fig.canvas.draw()
    ys = _labels(ax.yaxis) + [t.get_text() for t in ax.yaxis.get_minorticklabels()]
    assert ys and not any("times" in y or "^" in y for y in ys), ys
    assert {"1", "10"} <= set(ys), ys
    xs = _labels(ax.xaxis)
    assert "4 KiB" in xs and "1 MiB" in xs, xs


def test_latency_bound_line_of_fig_4b():
    from mapping.plots.logca import latency_bound
    a = analyse(3, 5e3, 20, 16, beta=0.9, latency="dependent")
    g = np.array([10.0, 1000.0])
    assert np.allclose(latency_bound(a, g), 20 / 3 * g ** -0.1)
    assert latency_bound(analyse(1500, 2.9e4, 90, 19, latency="independent"), g) is None


def _render(path):
    image = mpimg.imread(path)
    assert image.ndim == 3 and image.shape[0] > 300 and np.ptp(image[..., :3]) > 0.5


def test_fit_and_table_plots_render(tmp_path, capsys):
    g, t0, t1 = synthetic(3e3, 2e8, 2, 30, beta=1.7, latency="dependent", noise=0.02)
    data = tmp_path / "gemm.csv"
    with open(data, "w", newline="") as f:
        csv.writer(f).writerows([("granularity", "host", "accelerator"), *zip(g, t0, t1)])
    svg = tmp_path / "fit.svg"
    assert main(["plot", "logca", "--fit", str(data), "-o", str(svg)]) == 0
    text = svg.read_text()
    assert "observed T0/T1" in text and "latency bound" in text
    two = tmp_path / "two.svg"
    assert main(["logca", "--fit", str(data), "--fit", "examples/logca/t2_aes_measured.csv",
                 "--plot", str(two)]) == 0
    assert "observed T0/T1" in two.read_text() and "== t2_aes_measured" in capsys.readouterr().out
    rows = ["UltraSPARC T2 AES", "SPARC T4 AES", "Sandy Bridge AES", "APU AES"]
    chart = tmp_path / "fig7.png"
    assert main(["plot", "logca", "--table", "examples/logca/table5.csv",
                 *[a for r in rows for a in ("--row", r)], "-o", str(chart)]) == 0
    _render(chart)
