"""Issue 14: every plot kind, drawn from the examples, is a non-blank image of the size
its module states; and the defects of the figures, checked from the artists' data."""
from pathlib import Path
from types import SimpleNamespace

import matplotlib.image as mpimg
import numpy as np
import pytest

from dsl import load_map, load_moa, load_sdf, parse_moa
from mapping.cli.main import main

EX = Path(__file__).resolve().parent.parent / "examples"
G = EX / "gables"
TWO_IP = [str(G / "two_ip.sdf"), str(G / "two_ip.moa"), str(G / "two_ip.map")]
GSLA = [str(EX / "gsla" / n) for n in ("opencl.sdf", "gpu.moa", "mappings.map",
                                         "measurements.csv")]
GSLA_OPTIONS = ["--mapping", "gpu_offload", "--measured", "time_s",
                "--fit", "gpu.time.alpha,gpu.time.beta"]
TIMING = [str(EX / "timing" / n) for n in ("video.sdf", "duo.moa", "mappings.map")]
STORE = [str(EX / "accelerator_store" / n) for n in ("decoder.sdf", "private.moa",
                                                     "mappings.map")]

#: kind -> (arguments, (width, height) in pixels: the module's figure size x 100 dpi);
#: fidelity and gsla below share one fitted study; logca (1300 x 500):
#: tests/test_logca.py::test_cli_plot_png
KINDS = {
    "gables": (["plot", "gables", *TWO_IP, "-p", "f=0.75"], (750, 520)),
    "mapping": (["plot", "mapping", *TWO_IP, "-p", "f=0.75"], (600, 450)),
    "schedule": (["plot", "schedule", *TIMING, "--mapping", "split"], (1000, 295)),
    "pareto": (["plot", "pareto", str(EX / "odroid" / "stereo.sdf"),
                str(EX / "odroid" / "odroid.moa"), "--objectives", "time,energy",
                "--strategy", "genetic", "--budget", "300", "--seed", "1"], (700, 480)),
    "sweep": (["sweep", *STORE, "--mapping", "idct", "--range", "s_comp=1:1000:4:log",
               "--y", "throughput", "-o", "{dir}/sweep.csv", "--plot"], (700, 480)),
    "roofline": (["plot", "roofline", str(EX / "roofline" / "roofline.json"), "--kernels",
                  str(EX / "roofline" / "kernels.csv")], (750, 520)),
    "breakdown": (["plot", "breakdown", STORE[0],
                   str(EX / "accelerator_store" / "decoder_exclusive.sdf")], (1100, 760)),
    "tradeoff": (["plot", "tradeoff", str(EX.parent / "tests" / "data" / "sdf3_examples" /
                                          "h263encoder.sdf")], (700, 480)),
    "heatmap": (["plot", "heatmap", str(EX / "accelerator_store" / "decoder_exclusive.sdf")],
                (910, 720)),
}
#: kinds drawn by another test: fidelity and gsla below, logca in tests/test_logca.py,
#: diagram (Graphviz's layout, its size follows the graph) in tests/test_api_dot.py,
#: working-set in tests/test_working_set.py
ELSEWHERE = {"fidelity", "gsla", "logca", "diagram", "working-set"}


def test_every_registered_plot_kind_is_drawn_by_a_test():
    from mapping.plots import PLOTS
    drawn_by_commands = {"sweep"}                    # mapeval sweep --plot, not plot KIND
    assert set(PLOTS.names()) == set(KINDS) - drawn_by_commands | ELSEWHERE


def assert_image(path, width, height):
    image = mpimg.imread(path)
    assert image.shape[:2] == (height, width)
    rgb = image[..., :3]
    assert rgb.std() > 0.05                                    # not one colour
    colours = np.unique((rgb.reshape(-1, 3) * 255).astype(int), axis=0)
    assert len(colours) > 20                                   # lines, text, marks
    assert (rgb.mean(axis=2) < 0.5).mean() > 0.003             # dark ink: text and lines


@pytest.mark.parametrize("kind", KINDS)
def test_each_plot_kind_is_a_non_blank_image_of_its_size(kind, tmp_path, capsys):
    args, (width, height) = KINDS[kind]
    out = tmp_path / f"{kind}.png"
    args = [a.format(dir=tmp_path) for a in args]
    assert main(args + ([str(out)] if args[-1] == "--plot" else ["-o", str(out)])) == 0
    capsys.readouterr()
    assert_image(out, width, height)


def _axes_of(draw):
    from mapping.plots.figure_io import new_figure
    from mapping.plots.style import figure_style
    with figure_style():
        fig = new_figure()
        ax = fig.add_subplot()
        draw(ax)
        fig.draw_without_rendering()
    return fig, ax


def _on_a_line(ax, x, y, rel=1e-6):
    """The drawn lines (not marks) through (x, y), by log-log interpolation of their data."""
    through = []
    for line in ax.get_lines():
        lx, ly = (np.asarray(d, dtype=float) for d in line.get_data())
        if len(lx) < 10 or not (lx.min() <= x <= lx.max()):
            continue
        at = np.exp(np.interp(np.log(x), np.log(lx), np.log(ly)))
        if abs(at - y) <= rel * y:
            through.append(line.get_label())
    return through


@pytest.mark.parametrize("aggregate", ["max", "sum", "exclusive"])
def test_gables_attainable_mark_sits_on_a_drawn_line(aggregate):
    """Issue 16: under serialized work the mark floated below every line."""
    from mapping.plots.gables import draw_gables, gables_data
    app, arch, m = load_sdf(TWO_IP[0])[0], load_moa(TWO_IP[1])[0], load_map(TWO_IP[2])[0]
    data = gables_data(app, arch, m, {"f": 0.75}, aggregate)
    _, ax = _axes_of(lambda ax: draw_gables(ax, data))
    mark = next(line for line in ax.get_lines() if line.get_marker() == "*")
    (x,), (y,) = mark.get_data()
    assert y == pytest.approx(data.evaluation.performance)
    assert _on_a_line(ax, x, y), f"the mark ({x}, {y}) is on no line"
    if aggregate == "exclusive":
        assert y == pytest.approx(1 / (0.00625 + 0.75), rel=1e-4)    # Gables eq. 19
        assert any("system (exclusive)" in label for label in _on_a_line(ax, x, y))
    assert "ops/s" in ax.get_ylabel() and "ops/B" in ax.get_xlabel()


def _front(n):
    t = np.linspace(0.1, 0.25, n)
    points = [{"values": {"time": a, "energy": 0.12 - 0.3 * (a - 0.1) ** 0.8}} for a in t]
    return SimpleNamespace(objectives=("time", "energy"), front=points, aggregate="sum",
                           strategy="genetic", evaluations=20000)


def test_pareto_labels_of_a_142_point_front_do_not_overprint():
    from mapping.plots.pareto import MAX_LABELS, draw_front
    fig, ax = _axes_of(lambda ax: draw_front(ax, _front(142), {"time": "s", "energy": "J"}))
    texts = [t for t in ax.texts if t.get_text().startswith("pareto_")]
    assert 3 <= len(texts) <= MAX_LABELS
    names = {t.get_text() for t in texts}
    assert {"pareto_0", "pareto_141"} <= names                  # the extremes
    boxes = [t.get_window_extent() for t in texts]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    assert ax.get_xlabel() == "time (sum) (s)" and ax.get_ylabel() == "energy (sum) (J)"


def test_pareto_names_every_point_of_a_small_front():
    from mapping.plots.pareto import draw_front
    _, ax = _axes_of(lambda ax: draw_front(ax, _front(4)))
    assert sorted(t.get_text() for t in ax.texts) == [f"pareto_{i}" for i in range(4)]


def test_mapping_bars_name_the_actors_on_each_pe_and_carry_the_unit():
    from mapping.evaluation.reference import evaluate
    from mapping.plots.mapping_load import actors_on, draw_mapping_load, tick_label
    app, arch, m = load_sdf(TWO_IP[0])[0], load_moa(TWO_IP[1])[0], load_map(TWO_IP[2])[0]
    ev = evaluate(app, arch, m, params={"f": 0.75})
    _, ax = _axes_of(lambda ax: draw_mapping_load(ax, ev, unit="s", actors=actors_on(m)))
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks == ["cpu\nwork0", "gpu\nwork1", "dram"]
    assert ax.get_ylabel() == "time (s)"
    many = tick_label("p", [f"a{i}" for i in range(12)])
    assert many.splitlines() == ["p", "a0, a1, a2", "a3, a4, a5", "a6, a7, +4 more"]


def test_sweep_value_axis_starts_at_zero_and_carries_units():
    from mapping.plots.sweep import draw_sweep, sweep_units
    from mapping.evaluation.sweep import parse_range
    ranges = [parse_range("s=1:1000:4:log")]
    rows = [{"s": s, "throughput": 1000 + 300 * (1 - 1 / s)} for s in (1, 10, 100, 1000)]
    arch = parse_moa('moa a {\n param s = 1 [unit = "x"]\n metric time [unit = "ms"]\n'
                    ' pe p [time = lsla(alpha = s)]\n}')[0]
    units = sweep_units(arch, "time", ["value", "throughput"], ranges)
    assert units["throughput"] == "iterations/ms" and units["value"] == "ms"
    _, ax = _axes_of(lambda ax: draw_sweep(ax, ["s", "throughput"], rows, ranges,
                                           "throughput", units=units))
    assert ax.get_ylim()[0] == 0
    assert ax.get_ylabel() == "throughput (iterations/ms)" and ax.get_xlabel() == "s (x)"
    _, ax = _axes_of(lambda ax: draw_sweep(ax, ["s", "throughput"], rows, ranges,
                                           "throughput", logy=True))
    assert ax.get_ylim()[0] > 0


@pytest.fixture(scope="module")
def assessment():
    """The fitted GSLA study of examples/gsla (as ``mapeval plot gsla`` loads it)."""
    import argparse
    from mapping.cli.commands.measured import add_measurement_options, load_study
    p = argparse.ArgumentParser()
    add_measurement_options(p, "--fit")
    return load_study(p.parse_args(GSLA + GSLA_OPTIONS), "plot gsla").assessment


@pytest.mark.parametrize("kind, size", [("fidelity", (640, 560)), ("gsla", (1200, 520))])
def test_fidelity_and_gsla_are_non_blank_images_of_their_size(assessment, kind, size,
                                                              tmp_path):
    from mapping.plots import fidelity, gsla
    out = tmp_path / f"{kind}.png"
    {"fidelity": fidelity, "gsla": gsla}[kind].plot_from_inputs(
        out, assessment=assessment, measured_label="measured time_s")
    assert_image(out, *size)


def test_gsla_heat_map_text_is_legible_and_z_label_clear_of_its_ticks(assessment):
    from matplotlib.colors import to_rgb
    from mapping.plots.gsla import gsla_figure
    from mapping.plots.style import text_color
    fig = gsla_figure(assessment, measured_label="measured time_s")
    fig.draw_without_rendering()
    ax3d, heat = fig.axes[0], fig.axes[1]
    cells = [t for t in heat.texts if t.get_text().lstrip("+-").isdigit()]
    image = heat.get_images()[0]
    assert cells
    whites = 0
    for t in cells:
        value = float(t.get_text())
        background = image.cmap(image.norm(value))
        assert to_rgb(t.get_color()) == to_rgb(text_color(background))
        whites += t.get_color() == "white"
    assert whites > 0                                   # the dark cells of the example
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    renderer = FigureCanvasAgg(fig).get_renderer()
    label = ax3d.zaxis.label.get_window_extent(renderer)
    ticks = [t.get_window_extent(renderer) for t in ax3d.zaxis.get_ticklabels()
             if t.get_visible() and t.get_text()]
    assert ticks and not any(label.overlaps(t) for t in ticks)


def test_gables_readme_states_the_fig8_speedups_the_model_gives():
    """The README claimed 8x at f = 7/8 for every intensity; at I = 1 the GPU's 24·I
    limits it to 24 / (7.5 · 7/8) = 3.66x."""
    from mapping.evaluation.reference import evaluate
    app, m = load_sdf(G / "fig8.sdf")[0], load_map(G / "fig8.map")[0]
    arch = load_moa(G / "snapdragon835.moa")[0]

    def performance(f, i):
        return evaluate(app, arch, m, params={"f": f, "I": i}).performance
    base = performance(0, 1)
    text = " ".join((G / "README.md").read_text().split())
    for i, shown in ((1, "3.66x at `I = 1`"), (2, "7.31x at `I = 2`"), (4, "8x from `I = 4`")):
        speedup = performance(0.875, i) / base
        assert shown in text and f"{speedup:.3g}" == shown.split("x")[0]


@pytest.mark.parametrize("kind", ["schedule", "mapping"])
def test_a_declared_unit_reaches_the_axis_through_the_cli(kind, tmp_path, capsys):
    moa = tmp_path / "duo.moa"
    text = Path(TIMING[1]).read_text()
    moa.write_text(text.replace("moa duo {", 'moa duo {\n    metric time [unit = "ms"]', 1))
    out = tmp_path / f"{kind}.svg"
    assert main(["plot", kind, TIMING[0], str(moa), TIMING[2], "--mapping", "split",
                 "-o", str(out)]) == 0
    capsys.readouterr()
    assert "time (ms)" in out.read_text()           # SVG keeps text as text



def test_a_declared_unit_reaches_the_sweep_plot_through_the_cli(tmp_path, capsys):
    sdf, moa, maps = (tmp_path / n for n in ("one.sdf", "one.moa", "one.map"))
    sdf.write_text("sdf one { actor a [quanta = 2] }\n")
    moa.write_text('moa one {\n param s = 1 [unit = "GHz"]\n metric time [unit = "ms"]\n'
                   ' pe p [time = lsla(alpha = 1 / s)]\n}\n')
    maps.write_text("mapping only { a -> p }\n")
    out = tmp_path / "sweep.svg"
    assert main(["sweep", str(sdf), str(moa), str(maps), "--range", "s=1:4:4",
                 "--plot", str(out), "-o", str(tmp_path / "sweep.csv")]) == 0
    capsys.readouterr()
    text = out.read_text()
    assert "(ms)" in text and "(GHz)" in text
