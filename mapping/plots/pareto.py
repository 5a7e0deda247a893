"""The Pareto front of a multi-objective search: non-dominated mappings as points joined
by the staircase that bounds the dominated region (two objectives; a third, if any,
colours the points).  Only a few points are named (``pareto_i``): the two extremes, the
knee (nearest the ideal point once each objective is scaled to [0, 1]) and points evenly
spaced between them, so that labels never overprint on large fronts."""
from __future__ import annotations

from typing import Mapping as MappingT

import numpy as np

from mapping.plots import style
from mapping.plots.figure_io import new_figure, plot_format, save_figure

#: points named at most
MAX_LABELS = 6


def labelled(F: np.ndarray, limit: int = MAX_LABELS) -> list[int]:
    """Rows of ``F`` (points sorted by the first objective) to name: the extremes, the
    knee and evenly spaced rows, at most ``limit``."""
    n = len(F)
    if n <= limit:
        return list(range(n))
    span = F.max(axis=0) - F.min(axis=0)
    scaled = (F - F.min(axis=0)) / np.where(span > 0, span, 1.0)
    knee = int(np.argmin(np.hypot(scaled[:, 0], scaled[:, 1])))
    picks = {0, n - 1, knee}
    for i in np.linspace(0, n - 1, limit - 1).round().astype(int):
        if len(picks) >= limit:
            break
        if all(abs(i - j) >= max(1, n // (2 * limit)) for j in picks):
            picks.add(int(i))
    return sorted(picks)


def draw_front(ax, result, units: MappingT[str, str | None] | None = None) -> None:
    names = list(result.objectives)
    units = units or {}
    if len(names) < 2 or not result.front:
        raise ValueError("a Pareto plot needs a search with at least two objectives")
    F = np.array([[p["values"][n] for n in names] for p in result.front])
    order = np.argsort(F[:, 0], kind="stable")
    F = F[order]
    x, y = F[:, 0], F[:, 1]
    size = 30 if len(F) <= 30 else 14
    ax.step(x, y, where="post", color=style.MUTED, linewidth=1, zorder=1)
    if len(names) > 2:
        sc = ax.scatter(x, y, c=F[:, 2], cmap=style.SEQUENTIAL, zorder=2, s=size,
                        edgecolor="black", linewidths=0.4)
        ax.figure.colorbar(sc, ax=ax, label=style.label(names[2], units.get(names[2])))
    else:
        ax.scatter(x, y, color=style.BLUE, zorder=2, s=size, edgecolor="black",
                   linewidths=0.4)
    picks = labelled(F[:, :2])
    for k, i in enumerate(picks):
        # alternate sides: neighbours on a dense front never share a side
        dx, ha = (6, "left") if k % 2 == 0 else (-6, "right")
        ax.annotate(f"pareto_{order[i]}", (x[i], y[i]), textcoords="offset points",
                    xytext=(dx, 6), ha=ha, fontsize=style.SMALL - 1, zorder=3,
                    bbox=dict(boxstyle="round,pad=0.15", facecolor="white", alpha=0.8,
                              linewidth=0),
                    arrowprops=dict(arrowstyle="-", color=style.MUTED, linewidth=0.6))
    ax.set_xlabel(style.label(f"{names[0]} ({result.aggregate})", units.get(names[0])))
    ax.set_ylabel(style.label(f"{names[1]} ({result.aggregate})", units.get(names[1])))
    style.tidy(ax)
    named = "" if len(picks) == len(F) else \
        f"\nnamed: the two extremes, the knee and {len(picks) - 3} more"
    ax.set_title(f"Pareto front: {len(F)} mappings ({result.strategy}, "
                 f"{result.evaluations:,} evaluations){named}")
    ax.grid(True, alpha=0.3)


@style.styled
def plot_pareto(result, path, inputs=(), units=None) -> None:
    """Draw the front of ``result`` (a :class:`mapping.search.SearchResult`) to ``path``
    (``units``: objective -> its unit, for the axis labels)."""
    plot_format(path)
    fig = new_figure()
    draw_front(fig.add_subplot(), result, units)
    save_figure(fig, path, inputs)


def plot_from_inputs(path, *, inputs=(), result, units=None) -> None:
    """``mapeval plot pareto`` (see :mod:`mapping.plots`)."""
    plot_pareto(result, path, inputs, units)
