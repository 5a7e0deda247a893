"""The plot of a parameter sweep: a column against the first parameter, one line per
value of the second (per combination of the others, if more than two).  A linear value
axis starts at 0, so that a plateau (a memory wall) is seen at its true height."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from matplotlib import colormaps

from mapping.errors import InputError
from mapping.plots import style
from mapping.plots.figure_io import new_figure, plot_format, save_figure
from moa.units import OPS, per


def sweep_units(arch, metric: str, columns: Sequence[str], ranges) -> dict[str, str | None]:
    """The unit of each column of a sweep of ``metric`` on ``arch`` and of each swept
    parameter: ``value`` and the element columns in the metric's unit, ``throughput``
    in iterations and ``performance`` in ops per unit of time."""
    unit = arch.unit(metric)
    time = arch.unit("time") if metric == "time" else None
    units = {c: unit for c in columns}
    units.update(throughput=per("iterations", time), performance=per(OPS, time))
    units.update({r.name: arch.unit(r.name) for r in ranges})
    return units


def draw_sweep(ax, columns: Sequence[str], rows: Sequence[dict], ranges, y: str = "value",
               logy: bool = False, ylabel: str | None = None, normalize: bool = False,
               units: Mapping[str, str | None] | None = None) -> None:
    """Draw ``y`` against the first swept parameter on ``ax`` (``normalize``: divided by
    its value in the first row; ``units``: column or parameter -> unit, on the axes)."""
    units = units or {}
    if y not in columns:
        raise InputError(f"--y {y}: no such column (columns: {', '.join(columns)})")
    scale = 1.0
    if normalize:
        first_value = rows[0].get(y) if rows else None
        if not first_value:
            raise InputError(f"--normalize: column '{y}' is empty or zero at the first point")
        scale = 1.0 / first_value
        ylabel = ylabel or f"{y} / {y} at " + ", ".join(
            f"{r.name} = {rows[0][r.name]:g}" for r in ranges)
    first, others = ranges[0], [r.name for r in ranges[1:]]
    lines: dict[tuple, list[tuple[float, float]]] = {}
    for row in rows:
        key = tuple(row[name] for name in others)
        if row.get(y) is not None:
            lines.setdefault(key, []).append((row[first.name], row[y] * scale))
    markers = "osD^v<>ph*"
    cmap = colormaps[style.SEQUENTIAL]
    for i, (key, points) in enumerate(lines.items()):
        points.sort()
        label = ", ".join(f"{n} = {style.number(v)}" for n, v in zip(others, key)) or None
        color = style.color(i) if len(lines) <= len(style.PALETTE) - 1 else \
            cmap(0.9 * i / (len(lines) - 1))
        ax.plot([p[0] for p in points], [p[1] for p in points], marker=markers[i % len(markers)],
                markersize=4, linewidth=1.4, label=label, color=color)
    if first.log:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    elif all(p[1] >= 0 for points in lines.values() for p in points):
        ax.set_ylim(bottom=0)
    style.tidy(ax)
    ax.set_xlabel(style.label(first.name, units.get(first.name)))
    ax.set_ylabel(ylabel or style.label(y, units.get(y)))
    ax.grid(True, which="major", alpha=0.3)
    if others:
        ax.legend(ncols=2 if len(lines) > 6 else 1)


@style.styled
def plot_sweep(columns, rows, ranges, path, y: str = "value", logy: bool = False,
               normalize: bool = False, title: str | None = None, inputs=(),
               units: Mapping[str, str | None] | None = None) -> Path:
    """Write the sweep plot to ``path`` (PNG, SVG or PDF by extension); ``units`` as
    :func:`sweep_units` gives them."""
    plot_format(path)
    if not ranges:
        raise InputError("a sweep plot needs at least one --param range")
    fig = new_figure()
    ax = fig.add_subplot()
    draw_sweep(ax, columns, rows, ranges, y, logy, normalize=normalize, units=units)
    if title:
        ax.set_title(title)
    return save_figure(fig, path, inputs)
