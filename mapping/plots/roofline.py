"""Hierarchical roofline (ERT style): one slanted roof per memory level, one flat
ceiling per compute peak, each labelled with its value; ridge points marked; kernels as
points coloured by their compute- or memory-bound classification
(:mod:`moa.roofline_analysis`, Gables eq. 9 per level)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from moa.roofline_analysis import RooflineAnalysis
from mapping.plots import style
from mapping.plots.figure_io import new_figure, plot_format, save_figure

BOUND_COLORS = {"compute": style.HIGHLIGHT, "memory": style.BLUE}
#: the memory levels, fastest first: dark to light (one hue, as the roofs are ordered)
LEVEL_SHADES = ("#08306b", "#2171b5", "#4292c6", "#6baed6", "#9ecae1", "#c6dbef")


def _decades(values, pad):
    values = [v for v in values if 0 < v < math.inf]
    lo, hi = min(values), max(values)
    return 10.0 ** (math.floor(math.log10(lo)) - pad), 10.0 ** (math.ceil(math.log10(hi)) + pad)


def _slope_angle(ax) -> float:
    """Screen angle (degrees) of a slope-1 line on ``ax``'s log-log axes."""
    (x0, y0), (x1, y1) = ax.transData.transform([(1.0, 1.0), (10.0, 10.0)])
    return math.degrees(math.atan2(y1 - y0, x1 - x0))


def draw_roofline(ax, analysis: RooflineAnalysis) -> None:
    """Roofs, ceilings, ridge points and kernels of ``analysis`` on ``ax`` (log-log)."""
    peak = analysis.peak
    xs = [r for _, r in analysis.ridges] + [k.intensity for k in analysis.kernels
                                             if math.isfinite(k.intensity)]
    xlo, xhi = _decades(xs, 1)
    ys = [peak] + [v * xlo for _, v in analysis.levels] + [
        k.attained for k in analysis.kernels if k.attained]
    ylo, yhi = _decades(ys, 0)
    yhi = max(yhi, peak * 100)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(xlo, xhi)
    ax.set_ylim(ylo, yhi)
    grid = np.geomspace(xlo, xhi, 400)
    for i, ((level, bw), (_, ridge)) in enumerate(zip(analysis.levels, analysis.ridges)):
        color = LEVEL_SHADES[i % len(LEVEL_SHADES)]
        ax.plot(grid[grid <= ridge], bw * grid[grid <= ridge], color=color, linewidth=1.8,
                label=f"{level}: {bw:g} GB/s, ridge at {ridge:.3g} FLOP/B")
        ax.plot([ridge], [peak], "D", color=color, markersize=5)
        x0 = xlo * 2
        text = ax.annotate(f"{level}", (x0, bw * x0), xytext=(0, 3),
                           textcoords="offset points", fontsize=style.SMALL, color=color,
                           rotation_mode="anchor")
        text.set_gid("level-label")
    first_ridge = min(r for _, r in analysis.ridges)
    for label, value in analysis.ceilings:
        start = first_ridge * value / peak
        top = value == peak
        ax.plot([start, xhi], [value, value], color=style.BLACK if top else style.MUTED,
                linestyle="-" if top else "--", linewidth=1.8 if top else 1.4,
                label=f"{label}: {value:g} GFLOP/s")
        ax.annotate(f"{value:g} GFLOP/s", (xhi, value), xytext=(-4, 4),
                    textcoords="offset points", ha="right", fontsize=style.SMALL)
    for bound, color in BOUND_COLORS.items():
        points = [k for k in analysis.kernels if k.bound == bound]
        if not points:
            continue
        xk = [k.intensity for k in points]
        yk = [k.attained if k.attained is not None else k.roof for k in points]
        ax.scatter(xk, yk, s=40, color=color, zorder=5, edgecolors="black",
                   label=f"{bound}-bound kernels")
        for k, x, y in zip(points, xk, yk):
            ax.vlines(x, ylo, k.roof, colors=color, linestyles=":", linewidth=1)
            note = f"{k.name} ({k.level})"
            if k.fraction is not None:
                note += f", {k.fraction:.0%} of roof"
            ax.annotate(note, (x, y), xytext=(5, -10), textcoords="offset points",
                        fontsize=style.SMALL, color=color)
    style.log_log(ax, style.label("operational intensity", "FLOP/B"),
                  style.label("performance", "GFLOP/s"))
    ax.set_xlim(xlo, xhi)
    ax.set_ylim(ylo, yhi)
    ax.legend(fontsize=style.SMALL, loc="upper left")


@style.styled
def plot_roofline(analysis: RooflineAnalysis, path, inputs=()) -> Path:
    """Write the hierarchical roofline of ``analysis`` to ``path`` (PNG, SVG or PDF)."""
    plot_format(path)
    fig = new_figure(7.5, 5.2)
    ax = fig.add_subplot()
    draw_roofline(ax, analysis)
    ax.set_title(f"Empirical roofline of '{analysis.name}'")
    fig.draw_without_rendering()             # the final layout, then the labels' slope
    for text in ax.texts:
        if text.get_gid() == "level-label":
            text.set_rotation(_slope_angle(ax))
    return save_figure(fig, path, inputs)


def plot_from_inputs(path, *, inputs=(), analysis) -> Path:
    """``mapeval plot roofline`` (see :mod:`mapping.plots`)."""
    return plot_roofline(analysis, path, inputs)

