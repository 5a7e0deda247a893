"""The Pareto front of a multi-objective search: non-dominated mappings as points joined
by the staircase that bounds the dominated region (two objectives; a third, if any,
colours the points)."""
from __future__ import annotations

import numpy as np

from mapping.plots.figure_io import new_figure, plot_format, save_figure


def draw_front(ax, result) -> None:
    names = list(result.objectives)
    if len(names) < 2 or not result.front:
        raise ValueError("a Pareto plot needs a search with at least two objectives")
    F = np.array([[p["values"][n] for n in names] for p in result.front])
    order = np.argsort(F[:, 0], kind="stable")
    F = F[order]
    x, y = F[:, 0], F[:, 1]
    ax.step(x, y, where="post", color="tab:gray", linewidth=1, zorder=1)
    if len(names) > 2:
        sc = ax.scatter(x, y, c=F[:, 2], cmap="viridis", zorder=2, edgecolor="black")
        ax.figure.colorbar(sc, ax=ax, label=names[2])
    else:
        ax.scatter(x, y, color="tab:blue", zorder=2, edgecolor="black")
    for i, (xi, yi) in enumerate(zip(x, y)):
        ax.annotate(f"pareto_{order[i]}", (xi, yi), textcoords="offset points",
                    xytext=(4, 4), fontsize=7)
    ax.set_xlabel(f"{names[0]} ({result.aggregate})")
    ax.set_ylabel(f"{names[1]} ({result.aggregate})")
    ax.set_title(f"Pareto front: {len(F)} mappings ({result.strategy}, "
                 f"{result.evaluations:,} evaluations)")
    ax.grid(True, alpha=0.3)


def plot_pareto(result, path, inputs=()) -> None:
    """Draw the front of ``result`` (a :class:`mapping.search.SearchResult`) to ``path``."""
    plot_format(path)
    fig = new_figure()
    draw_front(fig.add_subplot(), result)
    save_figure(fig, path, inputs)


def plot_from_inputs(path, *, inputs=(), result) -> None:
    """``mapeval plot pareto`` (see :mod:`mapping.plots`)."""
    plot_pareto(result, path, inputs)
