"""Kim & Edwards' profile figures (Computation vs. Memory Systems, Figs. 3, 4 and 9),
from imported profiles (:mod:`moc.breakdown`).

``breakdown``: left, one stacked bar per run (Fig. 3): the fractions of computation,
local and global communication, a byte counting ``byte_cost`` instructions (1 by
default, as the example's ``t_op = t_byte``); right, per function of every run (Fig.
4): its instructions and the local and global bytes it reads, on a shared log axis.
``heatmap`` (Fig. 9): bytes from each producer (row) to each consumer (column), the
functions sorted by computation (largest first), local traffic on the diagonal.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np

from moc.breakdown import Breakdown
from mapping.errors import InputError
from mapping.plots import style
from mapping.plots.figure_io import new_figure, plot_format, save_figure

PARTS = (("computation", style.ORANGE, "instructions"),
         ("local communication", style.BLUE, "bytes within the function"),
         ("global communication", style.MUTED, "bytes read from other functions"))


def run_fractions(b: Breakdown, byte_cost: float = 1.0) -> tuple[float, float, float]:
    """Computation, local and global communication of run ``b`` as fractions of their
    sum, a byte weighing ``byte_cost`` instructions."""
    parts = (b.computation, byte_cost * b.local, byte_cost * b.global_)
    total = sum(parts)
    if total <= 0:
        raise InputError(f"'{b.name}': no instructions and no bytes to break down")
    return tuple(p / total for p in parts)


@style.styled
def plot_breakdown(runs: Sequence[Breakdown], path, byte_cost: float = 1.0,
                   inputs=()) -> Path:
    """Write the per-run and per-function breakdowns of ``runs`` (module docstring)."""
    plot_format(path)
    if not math.isfinite(byte_cost) or byte_cost <= 0:
        raise InputError(f"--byte-cost must be a positive number, got {byte_cost}")
    rows = sum(len(b.functions) for b in runs)
    fig = new_figure(11.0, max(4.0, 1.2 + 0.32 * (rows + len(runs))))
    left, right = fig.subplots(1, 2, width_ratios=[1, 2.4])
    names = [b.name for b in runs]
    bottom = np.zeros(len(runs))
    fractions = np.array([run_fractions(b, byte_cost) for b in runs])
    for k, (label, color, _) in enumerate(PARTS):
        left.bar(names, fractions[:, k], bottom=bottom, color=color, label=label,
                 edgecolor="white")
        for x, (f, y0) in enumerate(zip(fractions[:, k], bottom)):
            if f >= 0.04:
                left.text(x, y0 + f / 2, f"{f:.0%}", ha="center", va="center",
                          fontsize=style.SMALL, color=style.text_color(color))
        bottom += fractions[:, k]
    left.set_ylim(0, 1)
    left.set_ylabel("fraction of the run" + (f" (1 byte = {byte_cost:g} instructions)"
                                             if byte_cost != 1 else " (1 byte = 1 instruction)"))
    left.set_title("per run (Fig. 3)")
    left.tick_params(axis="x", rotation=30)

    labels, y = [], 0.0
    ticks = []
    height = 0.27
    for b in runs:
        for f in b.by_load():
            values = (f.ops, f.local, f.global_in)
            for k, (v, (_, color, _)) in enumerate(zip(values, PARTS)):
                if v > 0:
                    right.barh(y + (k - 1) * height, v, height=height, color=color, left=0)
            ticks.append(y)
            labels.append(f"{f.name}" + (f" [{b.name}]" if len(runs) > 1 else ""))
            y += 1.0
        y += 0.6
    right.set_yticks(ticks, labels, fontsize=style.SMALL)
    right.invert_yaxis()
    right.set_xscale("log")
    right.set_xlabel(style.label("computation or communication, log scale",
                                 "instructions or B"))
    style.tick_format(right.xaxis)
    right.set_title("per function (Fig. 4), by computation")
    handles, _ = left.get_legend_handles_labels()
    fig.legend(handles, [f"{label}: {unit}" for label, _, unit in PARTS],
               loc="outside lower center", ncols=3)
    right.grid(True, axis="x", which="major", alpha=0.3)
    fig.suptitle("Computation and communication")
    return save_figure(fig, path, inputs)


def transfer_matrix(b: Breakdown) -> tuple[list[str], np.ndarray]:
    """``(functions by load, M)`` with ``M[i, j]`` the bytes function ``i`` produced
    and function ``j`` read."""
    order = [f.name for f in b.by_load()]
    index = {n: i for i, n in enumerate(order)}
    M = np.zeros((len(order), len(order)))
    for p, c, moved in b.transfers:
        M[index[p], index[c]] += moved
    return order, M


@style.styled
def plot_heatmap(b: Breakdown, path, inputs=()) -> Path:
    """Write the producer-consumer heat map of run ``b`` (Fig. 9)."""
    from matplotlib.colors import LogNorm

    plot_format(path)
    order, M = transfer_matrix(b)
    ops = {f.name: f.ops for f in b.functions}
    n = len(order)
    fig = new_figure(max(6.0, 2.5 + 0.55 * n), max(4.5, 1.8 + 0.45 * n))
    ax = fig.add_subplot()
    shown = np.ma.masked_where(M <= 0, M)
    if shown.count():
        image = ax.imshow(shown, cmap=style.SEQUENTIAL, norm=LogNorm(vmin=M[M > 0].min(),
                                                                     vmax=M.max()))
        bar = fig.colorbar(image, ax=ax, label=style.label("transferred", "B, log scale"))
        style.tick_format(bar.ax.yaxis)
    else:
        ax.imshow(np.zeros_like(M), cmap="Greys", vmin=0, vmax=1)
    for i in range(n):
        for j in range(n):
            if M[i, j] > 0:
                ax.text(j, i, style.number(M[i, j]), ha="center", va="center",
                        fontsize=style.SMALL, color=style.text_color(image.to_rgba(M[i, j])))
    ax.set_xticks(range(n), order, rotation=45, ha="right", fontsize=style.SMALL)
    ax.set_yticks(range(n), [f"{name} ({style.number(ops[name])} instr.)" for name in order],
                  fontsize=style.SMALL)
    ax.set_xlabel("consumer (reads the bytes)")
    ax.set_ylabel("producer (wrote them), by computation")
    ax.set_title(f"'{b.name}': bytes from producer to consumer (Fig. 9); "
                 "diagonal = local")
    return save_figure(fig, path, inputs)


def breakdown_from_inputs(path, *, inputs=(), runs, byte_cost=1.0) -> Path:
    """``mapeval plot breakdown`` (see :mod:`mapping.plots`)."""
    return plot_breakdown(runs, path, byte_cost, inputs)


def heatmap_from_inputs(path, *, inputs=(), runs) -> Path:
    """``mapeval plot heatmap`` (see :mod:`mapping.plots`)."""
    if len(runs) != 1:
        raise InputError(f"plot heatmap draws one run; got {len(runs)}")
    return plot_heatmap(runs[0], path, inputs)
