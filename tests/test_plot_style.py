"""The figure style (mapping.plots.style): tick labels, text colour on cells, labels."""
import pytest

from mapping.plots.figure_io import new_figure
from mapping.plots.style import figure_style, label, number, text_color, tidy


@pytest.mark.parametrize("value, text", [
    (2.0, "2"), (3.0, "3"), (0.5, "0.5"), (1500, "1500"), (4096, "4096"), (0.002, "2m"), (0.0012, "1.2m"), (0.05, "0.05"),
    (20_000, "20k"), (1.5e6, "1.5M"), (2e-6, "2µ"), (1e9, "1G"), (999_999, "1M"), (0, "0")])
def test_tick_labels_are_plain_numbers_or_engineering_prefixes(value, text):
    assert number(value) == text


def test_log_axis_of_less_than_two_decades_labels_2x_and_5x_plainly():
    with figure_style():
        fig = new_figure(4, 3)
        ax = fig.add_subplot()
        ax.loglog([1.5, 40], [1.5, 40])
        tidy(ax)
        fig.draw_without_rendering()
        labels = [t.get_text() for t in ax.yaxis.get_ticklabels(minor=True) if t.get_text()]
        labels += [t.get_text() for t in ax.yaxis.get_ticklabels() if t.get_text()]
    assert {"2", "5", "10", "20"} <= set(labels)
    assert not any("10^" in t or "times" in t or "$" in t for t in labels)


def test_text_on_a_cell_is_white_on_dark_and_black_on_light():
    assert text_color("#000000") == "white" and text_color("#ffffff") == "black"
    assert text_color((0.02, 0.19, 0.38)) == "white"        # dark blue of RdBu_r
    assert text_color((0.97, 0.97, 0.97)) == "black"


def test_label_with_and_without_unit():
    assert label("time", "s") == "time (s)" and label("time") == "time"
