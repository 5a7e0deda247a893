"""Every plot kind, drawn from the examples as their READMEs do, carries a unit on each
numeric axis that is not dimensionless: in the axis label (``time (s)``) or in the tick
labels (``16 B``, ``4 KiB``). Dimensionless axes (speedup, fractions, counts of the
application's own scale, parallelism) are named in ``DIMENSIONLESS``."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from mapping.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples"

#: axis labels whose quantity has no unit: ratios, fractions, counts and categories
DIMENSIONLESS = re.compile(
    r"^(speedup|fraction|gamma|S$|element|actor|PE / CN|consumer|producer|model error"
    r"|.*\(%\)$)")
#: (kind, folder to run in, arguments)
PLOTS = [
    ("fidelity", ".", ["examples/gsla/opencl.sdf", "examples/gsla/gpu.moa",
                       "examples/gsla/mappings.map", "examples/gsla/measurements.csv",
                       "--mapping", "gpu_offload", "--measured", "time_s",
                       "--fit", "gpu.time.alpha,gpu.time.beta"]),
    ("gsla", ".", ["examples/gsla/opencl.sdf", "examples/gsla/gpu.moa",
                   "examples/gsla/mappings.map", "examples/gsla/measurements.csv",
                   "--mapping", "gpu_offload", "--measured", "time_s",
                   "--fit", "gpu.time.alpha,gpu.time.beta"]),
    ("gables", "examples/gables", ["two_ip.sdf", "two_ip.moa", "two_ip.map", "-p", "f=0.75"]),
    ("mapping", "examples/gables", ["two_ip.sdf", "two_ip.moa", "two_ip.map", "-p", "f=0.75"]),
    ("logca", ".", ["--table", "examples/logca/table5.csv"]),
    ("schedule", "examples/timing", ["video.sdf"]),
    ("schedule", "examples/timing", ["video.sdf", "duo.moa", "mappings.map",
                                     "--mapping", "split"]),
    ("pareto", ".", ["examples/tutorial/camera.sdf", "examples/tutorial/board.moa",
                     "--aggregate", "max", "--objectives", "time,energy"]),
    ("tradeoff", "examples/csdf", ["pair.sdf"]),
    ("roofline", "examples/roofline", ["roofline.json", "--kernels", "kernels.csv"]),
    ("breakdown", "examples/accelerator_store", ["decoder.sdf", "decoder_exclusive.sdf"]),
    ("heatmap", "examples/accelerator_store", ["decoder_exclusive.sdf"]),
]
UNIT_IN_LABEL = re.compile(r"\([^()]*[A-Za-zµ%/][^()]*\)\s*$")
UNIT_IN_TICKS = re.compile(r"\d\s*[A-Za-zµ]+$")


def _figures(monkeypatch, tmp_path, kind, folder, args):
    shutil.copytree(EX, tmp_path / "examples")
    drawn = []
    original = Figure.savefig

    def keep(self, *a, **k):
        drawn.append(self)
        return original(self, *a, **k)
    monkeypatch.setattr(Figure, "savefig", keep)
    monkeypatch.chdir(tmp_path / folder)
    assert main(["plot", kind, *args, "-o", str(tmp_path / f"{kind}.png")]) == 0
    return drawn


def _numeric_axes(fig):
    """``(label, tick labels)`` of each axis of ``fig`` whose ticks are numbers."""
    fig.canvas.draw()
    found = []
    for ax in fig.axes:
        if ax.get_label() == "<colorbar>" and not ax.get_ylabel():
            continue
        axes = [ax.xaxis, ax.yaxis] + ([ax.zaxis] if hasattr(ax, "zaxis") else [])
        for axis in axes:
            ticks = [t.get_text() for t in axis.get_ticklabels() if t.get_text()]
            if ticks and all(re.match(r"^[−\-+]?[\d.]", t) for t in ticks):
                found.append((axis.label.get_text(), ticks))
    return found


@pytest.mark.parametrize("kind, folder, args", PLOTS,
                         ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(PLOTS)])
def test_every_numeric_axis_has_a_unit(kind, folder, args, tmp_path, monkeypatch):
    figures = _figures(monkeypatch, tmp_path, kind, folder, args)
    assert figures
    missing = []
    for fig in figures:
        for label, ticks in _numeric_axes(fig):
            if UNIT_IN_LABEL.search(label) or DIMENSIONLESS.match(label) \
                    or all(UNIT_IN_TICKS.search(t) for t in ticks):
                continue
            missing.append(f"{label!r} (ticks {ticks[:4]})")
    assert not missing, f"plot {kind}: axes without a unit: {missing}"


def test_many_logca_series_differ_in_colour_or_line_style(tmp_path, monkeypatch):
    (fig,) = _figures(monkeypatch, tmp_path, "logca", ".", ["--table",
                                                             "examples/logca/table5.csv"])
    speedup = fig.axes[0]
    styles = [(line.get_color(), line.get_linestyle()) for line in speedup.get_lines()
              if not line.get_label().startswith("_") and len(line.get_xdata()) > 2]
    assert len(styles) == 19 and len(set(styles)) == 19
    legend = speedup.get_legend()
    box, axes_box = legend.get_window_extent(), speedup.get_window_extent()
    assert box.y1 <= axes_box.y0        # below the chart, not over its lowest curves


def test_the_mapping_diagram_gives_values_with_units():
    from mapping.evaluation.diagram import mapping_diagram
    import dsl
    (app,) = dsl.load_sdf(EX / "odroid" / "stereo.sdf")
    (arch,) = dsl.load_moa(EX / "odroid" / "odroid.moa")
    maps = {m.name: m for m in dsl.load_map(EX / "odroid" / "mappings.map")}
    text = mapping_diagram(app, arch, maps["mixed"])
    assert "time (sum) = 0.0937113 s" in text
    assert 'label="little[0]\\n0.0003385 s"' in text


def test_fit_keeps_the_declared_units(tmp_path):
    """A fitted architecture keeps the units its file declares (they were dropped, and
    every figure of a fit lost them)."""
    import dsl
    from mapping.calibration.free import fitted_architecture
    (arch,) = dsl.load_moa(EX / "gsla" / "gpu.moa")
    assert fitted_architecture(arch, [], []).unit("time") == "s"
