"""Bandwidth against working set (ERT's sweep): the measured points, the curve the
working-set term fits (:mod:`moa.working_set`), each level's plateau and capacity."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from mapping.plots import style
from mapping.plots.figure_io import new_figure, plot_format, save_figure
from mapping.plots.roofline import LEVEL_SHADES
from moa.working_set import WorkingSetFit


def draw_working_set(ax, fit: WorkingSetFit, all_ws=(), all_bandwidths=()) -> None:
    """The fit and its points on ``ax`` (log-log); ``all_ws``/``all_bandwidths``: the
    whole curve, the ramp the fit leaves out drawn hollow."""
    if len(all_ws):
        ax.scatter(all_ws, all_bandwidths, s=14, facecolors="none", edgecolors=style.MUTED,
                   label="measured (left out: the loop's ramp)")
    ax.scatter(fit.ws, fit.measured, s=14, color=style.BLUE, zorder=4, label="measured (fitted)")
    grid = np.geomspace(min(fit.ws), max(fit.ws), 600)
    ax.plot(grid, fit.predict(grid), color=style.BLACK, linewidth=1.6, zorder=5,
            label=f"working-set term (rms log residual {fit.rms_log:.3g})")
    for i, (capacity, bw) in enumerate(fit.levels):
        color = LEVEL_SHADES[i % len(LEVEL_SHADES)]
        ax.axhline(bw, color=color, linestyle="--", linewidth=1)
        ax.axvline(capacity, color=color, linestyle=":", linewidth=1)
        ax.annotate(f"L{i + 1}: {bw:.4g} GB/s up to {capacity:.3g} B", (capacity, bw),
                    xytext=(-4, 4), textcoords="offset points", ha="right",
                    fontsize=style.SMALL, color=color)
    ax.axhline(fit.bandwidth, color=style.MUTED, linestyle="--", linewidth=1)
    ax.annotate(f"last level: {fit.bandwidth:.4g} GB/s", (max(fit.ws), fit.bandwidth),
                xytext=(-4, -12), textcoords="offset points", ha="right",
                fontsize=style.SMALL)
    style.log_log(ax, style.label("working set", "B"), style.label("bandwidth", "GB/s"))
    ax.legend(fontsize=style.SMALL, loc="lower left")


@style.styled
def plot_working_set(fit: WorkingSetFit, path, inputs=(), all_ws=(),
                     all_bandwidths=()) -> Path:
    """Write the working-set plot of ``fit`` to ``path`` (PNG, SVG or PDF)."""
    plot_format(path)
    fig = new_figure(7.5, 5.2)
    ax = fig.add_subplot()
    draw_working_set(ax, fit, all_ws, all_bandwidths)
    ax.set_title(f"Bandwidth against working set: {len(fit.levels)} cache levels fitted")
    return save_figure(fig, path, inputs)


def plot_from_inputs(path, *, inputs=(), fit, all_ws=(), all_bandwidths=()) -> Path:
    """``mapeval plot working-set`` (see :mod:`mapping.plots`)."""
    return plot_working_set(fit, path, inputs, all_ws, all_bandwidths)
