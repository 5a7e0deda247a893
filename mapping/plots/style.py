"""The figure style shared by every plot: a colour-blind-safe palette (Okabe & Ito),
font sizes, figure sizes, axis labels with units and readable tick labels.

A plot draws inside :func:`styled` (a decorator) or ``with figure_style():`` so that the
rc settings apply to the artists it creates and to the ticks matplotlib makes when it
saves the figure."""
from __future__ import annotations

import functools
import math
from contextlib import contextmanager

import matplotlib
from matplotlib.ticker import FuncFormatter, LogLocator

#: Okabe & Ito's eight colours, told apart under every common colour-vision deficiency
BLACK, ORANGE, SKY_BLUE, GREEN, YELLOW, BLUE, VERMILLION, PURPLE = (
    "#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")
#: series colours in order (yellow last: weak on white)
PALETTE = (BLUE, ORANGE, GREEN, VERMILLION, PURPLE, SKY_BLUE, BLACK, YELLOW)
#: what a plot highlights (a bottleneck, a limit) and what it plays down (CNs, train rows)
HIGHLIGHT, MUTED = VERMILLION, "#999999"
#: sequential and diverging colour maps (perceptually uniform, colour-blind safe)
SEQUENTIAL, DIVERGING = "viridis", "RdBu_r"

#: font sizes in points: text, small (legends, annotations, tick labels), titles
FONT, SMALL, TITLE = 9, 8, 10
#: figure sizes in inches: one column of a two-column paper, the full page width
COLUMN, PAGE = 3.5, 7.0
#: pixels per inch of a PNG (SVG and PDF are vector)
DPI = 100

RC = {
    "font.size": FONT,
    "axes.titlesize": TITLE,
    "axes.labelsize": FONT,
    "xtick.labelsize": SMALL,
    "ytick.labelsize": SMALL,
    "legend.fontsize": SMALL,
    "figure.titlesize": TITLE,
    "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
    "image.cmap": SEQUENTIAL,
    "axes.grid": False,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.5,
    "savefig.dpi": DPI,
    "pdf.fonttype": 42,          # TrueType in PDF: editable, accepted by publishers
    "svg.fonttype": "none",      # text stays text in SVG
    "axes.formatter.use_mathtext": False,
}


@contextmanager
def figure_style():
    """The rc settings of :data:`RC` for the plots drawn and saved inside."""
    with matplotlib.rc_context(RC):
        yield


def styled(function):
    """Run ``function`` (which draws and saves a figure) under :func:`figure_style`."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with figure_style():
            return function(*args, **kwargs)
    return wrapper


def color(i: int) -> str:
    """The ``i``-th series colour (cycling through :data:`PALETTE`)."""
    return PALETTE[i % len(PALETTE)]


#: line styles that tell apart series whose colours repeat (more than the palette holds)
LINESTYLES = ("-", "--", ":", "-.")


def series(i: int) -> tuple[str, str]:
    """The ``i``-th series' colour and line style: the palette's colours first with solid
    lines, then again dashed, dotted and dash-dotted, so that the first
    ``len(PALETTE) * len(LINESTYLES)`` series all differ."""
    return color(i), LINESTYLES[(i // len(PALETTE)) % len(LINESTYLES)]


def text_color(rgba) -> str:
    """Black or white, whichever reads better on a cell of colour ``rgba``: black when
    the colour's relative luminance (WCAG 2.x) is above 0.179, where the contrast
    ratios against black and against white are equal."""
    def linear(c):
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(float(c)) for c in matplotlib.colors.to_rgb(rgba))
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.179 else "white"


def label(quantity: str, unit: str | None = None) -> str:
    """An axis label: ``quantity (unit)``, or the quantity alone without a unit."""
    return f"{quantity} ({unit})" if unit else quantity


_PREFIXES = {-12: "p", -9: "n", -6: "µ", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T",
             15: "P"}


def number(value: float, digits: int = 3) -> str:
    """A tick label: a plain number from 0.01 to 9999 (``0.5``, ``20``, ``4096``), else
    an engineering prefix (``20k``, ``1.5M``, ``2m``, ``800µ``): never ``2x10^0``."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    magnitude = abs(value)
    if 1e-2 <= magnitude < 1e4:
        return f"{float(f'{value:.{digits + 1}g}'):.10g}"
    exponent = max(-12, min(15, 3 * math.floor(math.log10(magnitude) / 3)))
    scaled = value / 10.0 ** exponent
    if abs(scaled) >= 999.5 and exponent < 15:
        exponent, scaled = exponent + 3, scaled / 1000
    return f"{scaled:.{digits}g}{_PREFIXES[exponent]}"


def _decades(axis) -> float:
    lo, hi = sorted(axis.get_view_interval())
    return math.log10(hi / lo) if lo > 0 and hi > 0 else math.inf


def tick_format(axis) -> None:
    """Readable tick labels on ``axis`` (an ``ax.xaxis`` or ``ax.yaxis``) by
    :func:`number`; on a log axis, the decades labelled, and the 2x and 5x minor ticks
    too when the axis spans less than two decades (else they are left bare)."""
    formatter = FuncFormatter(lambda v, _pos: number(v))
    axis.set_major_formatter(formatter)
    if axis.get_scale() != "log":
        return
    axis.set_major_locator(LogLocator(base=10, numticks=12))
    axis.set_minor_locator(LogLocator(base=10, subs=tuple(range(2, 10)), numticks=12))

    def minor(v, _pos):
        if _decades(axis) >= 2:
            return ""
        mantissa = round(v / 10 ** math.floor(math.log10(v) + 1e-9), 6)
        return number(v) if mantissa in (2.0, 5.0) else ""
    axis.set_minor_formatter(FuncFormatter(minor))


def tidy(ax) -> None:
    """:func:`tick_format` on both axes of ``ax`` (call after setting the scales)."""
    tick_format(ax.xaxis)
    tick_format(ax.yaxis)


def log_log(ax, xlabel: str, ylabel: str) -> None:
    """``ax`` as a log-log plot (the roofline's kind): both scales logarithmic,
    :func:`tidy`, labelled, a light grid at the major ticks."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    tidy(ax)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)


__all__ = ["PALETTE", "HIGHLIGHT", "MUTED", "SEQUENTIAL", "DIVERGING", "FONT", "SMALL",
           "TITLE", "COLUMN", "PAGE", "DPI", "RC", "LINESTYLES", "figure_style", "styled", "color",
           "series",
           "text_color", "label", "number", "tick_format", "tidy", "log_log"]
