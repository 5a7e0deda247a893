"""``mapeval plot schedule``: a Gantt chart with one row per PE and CN (or per actor),
written as a non-blank image."""
from fractions import Fraction
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest

from mapping.cli.main import main
from mapping.cli.commands.analyse import Analysed
from mapping.plots.figure_io import new_figure
from mapping.plots.schedule import draw_schedule, lanes, plot_mapping_schedule, plot_schedule

TIMING = Path(__file__).resolve().parent.parent / "examples" / "timing"
VIDEO, DUO, MAPS = (str(TIMING / n) for n in ("video.sdf", "duo.moa", "mappings.map"))


class Timing:
    """A mapped analysis as ``mapping.evaluation.timing.MappedTiming`` gives it (by hand: a on p0
    0-2 and 2-4, its tokens over the bus 2-3 and 4-5, b on p1 3-6 and 6-9)."""

    makespan, period, throughput, latency = 9, Fraction(6), Fraction(1, 6), 9
    critical_cycle = ("b",)
    buffers = {"ab": 1}

    def to_dict(self):
        def slot(name, actor, start, end):
            return {"firing": name, "actor": actor, "start": start, "end": end}
        return {"makespan": 9, "period": Fraction(6), "throughput": Fraction(1, 6),
                "critical_cycle": ["b"], "latency": 9, "buffers": {"ab": 1},
                "schedule": {"p0": [slot("a#0", "a", 0, 2), slot("a#1", "a", 2, 4)],
                             "bus": [slot("ab#0", "a", 2, 3), slot("ab#1", "a", 4, 5)],
                             "p1": [slot("b#0", "b", 3, 6), slot("b#1", "b", 6, 9)]}}


MAPPED = Analysed("app", "arch", "m", None, Timing(), ("a", "b"), ("p0", "p1", "idle"),
                  ("bus",))


def colours(path):
    image = mpimg.imread(path)
    rgb = image[..., :3]
    return rgb, np.unique((rgb.reshape(-1, 3) * 255).astype(int), axis=0)


def test_a_row_per_pe_and_cn_in_order_and_a_labelled_bar_per_firing():
    fig = new_figure()
    ax = fig.add_subplot(1, 1, 1)
    draw_schedule(ax, MAPPED.to_dict(), MAPPED.rows, MAPPED.actors, MAPPED.cns)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["p0", "p1", "idle", "bus"]
    labels = {t.get_text() for t in ax.texts}
    assert {"a#0", "a#1", "b#0", "b#1", "ab#0", "ab#1"} <= labels
    assert any("period = 6" in text for text in labels)
    assert any("makespan = 9" in label for label in ax.get_legend_handles_labels()[1])


def test_overlapping_firings_stack_on_lanes():
    slots = [{"start": 0, "end": 3}, {"start": 0, "end": 3}, {"start": 3, "end": 4},
             {"start": 1, "end": 2}]
    assert lanes(slots) == [0, 1, 0, 2]


def test_png_is_not_blank(tmp_path):
    path = tmp_path / "gantt.png"
    plot_schedule(MAPPED.to_dict(), path, MAPPED.rows, MAPPED.actors, MAPPED.cns)
    rgb, distinct = colours(path)
    assert rgb.std() > 0.05 and len(distinct) > 20


def test_mapped_through_the_cli(tmp_path):
    png = tmp_path / "mapped.png"
    assert main(["plot", "schedule", VIDEO, DUO, MAPS, "--mapping", "split",
                 "-o", str(png)]) == 0
    rgb, distinct = colours(png)
    assert rgb.std() > 0.05 and len(distinct) > 20


def test_unmapped_through_the_cli(tmp_path):
    svg = tmp_path / "actors.svg"
    assert main(["plot", "schedule", VIDEO, "-o", str(svg)]) == 0
    text = svg.read_text()
    assert "<svg" in text and "filt#0" in text


def test_bad_output_extension_fails_before_any_work(tmp_path, capsys):
    assert main(["plot", "schedule", VIDEO, "-o", str(tmp_path / "g.txt")]) == 2
    err = capsys.readouterr().err
    assert ".png, .svg or .pdf" in err and "Traceback" not in err


def test_labels_wider_than_their_bars_are_shortened_or_hidden():
    class Narrow(Timing):
        def to_dict(self):
            doc = super().to_dict()
            doc["schedule"]["bus"] = [{"firing": "a_long_channel_name:a#0", "actor": "a",
                                       "start": 2, "end": 2.05}]
            return doc
    analysed = Analysed("app", "arch", "m", None, Narrow(), ("a", "b"), ("p0", "p1"),
                        ("bus",))
    fig = new_figure()
    ax = fig.add_subplot(1, 1, 1)
    draw_schedule(ax, analysed.to_dict(), analysed.rows, analysed.actors, analysed.cns)
    shown = {t.get_text() for t in ax.texts if t.get_visible()}
    assert "a_long_channel_name:a#0" not in shown and "b#0" in shown


def test_the_chart_of_a_mapping_from_the_inputs_of_eval(tmp_path):
    import dsl
    app, arch = dsl.load_sdf(VIDEO)[0], dsl.load_moa(DUO)[0]
    split = {m.name: m for m in dsl.load_map(MAPS)}["split"]
    path = plot_mapping_schedule(app, arch, split, tmp_path / "split.png")
    rgb, distinct = colours(path)
    assert rgb.std() > 0.05 and len(distinct) > 20


def test_a_crowded_row_is_one_band_with_a_summary():
    class Wide:
        throughput, period, latency = Fraction(1, 4), Fraction(4), 4

        def to_dict(self):
            return {"throughput": 0.25, "period": 4, "critical_cycle": ["a"],
                    "latency": 4, "buffers": None, "method": "by hand",
                    "schedule": {"a": [{"firing": f"a#{k}", "start": 0, "end": 4}
                                       for k in range(20)],
                                 "b": [{"firing": "b#0", "start": 0, "end": 1}]}}
    analysed = Analysed("app", None, None, "exec", Wide(), ("a", "b"))
    fig = new_figure()
    ax = fig.add_subplot(1, 1, 1)
    draw_schedule(ax, analysed.to_dict(), analysed.rows, analysed.actors)
    shown = {t.get_text() for t in ax.texts if t.get_visible()}
    assert "20 firings, up to 20 at once" in shown and "b#0" in shown
    assert not any(text.startswith("a#") for text in shown)


def test_plot_mapping_of_a_timed_aggregation_is_the_gantt_chart(tmp_path, capsys):
    """SPEC §10: ``plot mapping`` draws a Gantt chart for ``schedule``: the same image as
    ``plot schedule``; a metric other than time is refused as ``eval`` refuses it."""
    gantt, bars = tmp_path / "gantt.png", tmp_path / "mapping.png"
    assert main(["plot", "schedule", VIDEO, DUO, MAPS, "--mapping", "split",
                 "-o", str(gantt)]) == 0
    assert main(["plot", "mapping", VIDEO, DUO, MAPS, "--mapping", "split",
                 "--aggregate", "schedule", "-o", str(bars)]) == 0
    assert np.array_equal(mpimg.imread(gantt), mpimg.imread(bars))
    assert main(["plot", "mapping", VIDEO, DUO, MAPS, "--mapping", "split", "--metric",
                 "energy", "--aggregate", "period", "-o", str(tmp_path / "e.png")]) == 2
    assert "time" in capsys.readouterr().err
