"""Measured points and the (fitted) model surface over (S, gamma), as the GSLA paper's
Figs. 5-9 (Payvar et al. 2021): dots are the mean of the repeated measurements of each
(S, gamma) configuration, the mesh is the model's prediction.  A second panel maps the
model's error against those means over the same grid."""
from __future__ import annotations

import math
import textwrap
from collections import defaultdict

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter

from mapping.errors import InputError
from mapping.calibration.assessment import Assessment
from mapping.calibration.fidelity import figure_text
from mapping.calibration.row_model import RowModel
from mapping.calibration.measurements import MeasurementRow
from mapping.plots import style
from mapping.plots.figure_io import new_figure, save_figure


def _grid(values, n=24):
    v = np.unique(np.asarray(values, dtype=float))
    if v.size < 2 or v.min() <= 0:
        return v
    dense = np.geomspace(v.min(), v.max(), n)
    if np.all(v == np.round(v)):
        dense = np.unique(np.round(dense))
    return np.unique(np.concatenate([dense, v]))


def _label(v, _pos=None):
    value = 2.0 ** v
    return f"{value:.0f}" if abs(value - round(value)) < 1e-9 else f"{value:.3g}"


@style.styled
def gsla_figure(assessment: Assessment, x: str = "S", y: str = "gamma", *,
                measured_label: str = "measured", title: str | None = None) -> Figure:
    a = assessment
    rows = a.model.rows
    for name in (x, y):
        if any(name not in r.params for r in rows):
            raise InputError(f"plot gsla: '{name}' must be a parameter column of every row "
                             f"(parameter columns: {', '.join(rows[0].params) or 'none'})")
    if any(r.activity is not None for r in rows):
        raise InputError("plot gsla needs an application and a mapping per row, not "
                         "--quanta-column")
    mappings = {r.mapping.name for r in rows}
    if len(mappings) > 1:
        raise InputError("plot gsla draws one mapping's surface; the rows use several "
                         f"({', '.join(sorted(mappings))}): give a table of one mapping")
    groups = defaultdict(list)
    for r, m in zip(rows, a.measured):
        groups[(float(r.params[x]), float(r.params[y]))].append(m)
    keys = sorted(groups)
    mx = np.array([k[0] for k in keys])
    my = np.array([k[1] for k in keys])
    mz = np.array([np.mean(groups[k]) for k in keys])
    if np.any(mx <= 0) or np.any(my <= 0):
        raise InputError(f"plot gsla: '{x}' and '{y}' must be positive (log2 axes)")

    # The model surface: the rows' other parameters at those of the first row.
    gx, gy = _grid(mx), _grid(my)
    ref = rows[0]
    grid_rows = [MeasurementRow(ref.line, ref.index, {**ref.params, x: _num(X), y: _num(Y)},
                                math.nan, ref.mapping)
                 for Y in gy for X in gx]
    surface = RowModel(a.model.arch, grid_rows, a.model.metric, a.model.aggregate,
                       a.model.app, a.model.params, a.model.source).predict()
    Z = surface.reshape(len(gy), len(gx))
    at_points = RowModel(a.model.arch, [MeasurementRow(ref.line, ref.index,
                                                       {**ref.params, x: _num(X), y: _num(Y)},
                                                       math.nan, ref.mapping)
                                        for X, Y in keys],
                         a.model.metric, a.model.aggregate, a.model.app, a.model.params,
                         a.model.source).predict()

    fig = new_figure(12.0, 5.2)
    ax = fig.add_subplot(1, 2, 1, projection="3d")
    LX, LY = np.meshgrid(np.log2(gx), np.log2(gy))
    arch = a.model.arch
    ax.plot_wireframe(LX, LY, Z, color=style.BLUE, linewidth=0.6, alpha=0.8,
                      label=f"model ({arch.name})")
    ax.scatter(np.log2(mx), np.log2(my), mz, color=style.HIGHLIGHT, s=14, depthshade=False,
               label=f"{measured_label} (mean of repeats)")
    for axis, values in ((ax.xaxis, mx), (ax.yaxis, my)):
        axis.set_major_locator(FixedLocator(np.unique(np.log2(values))))
        axis.set_major_formatter(FuncFormatter(_label))
    ax.zaxis.set_major_formatter(FuncFormatter(lambda v, _pos: style.number(v)))
    ax.set_xlabel(style.label(x, arch.unit(x)))
    ax.set_ylabel(style.label(y, arch.unit(y)))
    # the z tick labels sit left of the axis at this view: the label beyond them
    ax.set_zlabel(style.label(a.model.metric, arch.unit(a.model.metric)), labelpad=14)
    ax.tick_params(axis="z", pad=6)
    ax.view_init(elev=22, azim=-130)
    ax.set_box_aspect(None, zoom=0.8)
    ax.legend(loc="upper left")

    r = a.result
    fit = a.fit
    # a long list of fitted parameters wraps: the 3-D axes leave the title no margin
    heading = title or ("\n".join(textwrap.wrap(
        f"{a.model.arch.name}: fitted {', '.join(fit.values)}", 60)) if fit
        else f"{a.model.arch.name}: model as written")
    ax.set_title(f"{heading}\nKendall tau-b = {figure_text(r.tau, '.3f')} "
                 f"({r.rows_described()})",
                 fontsize=style.FONT)

    # Error of the model against the mean measurement of each configuration.
    hx, hy = np.unique(mx), np.unique(my)
    err = np.full((len(hy), len(hx)), np.nan)
    for (X, Y), pred, meas in zip(keys, at_points, mz):
        if meas != 0:
            err[np.searchsorted(hy, Y), np.searchsorted(hx, X)] = (pred - meas) / meas * 100
    ax2 = fig.add_subplot(1, 2, 2)
    limit = max(float(np.nanmax(np.abs(err))) if np.any(np.isfinite(err)) else 1.0, 1e-9)
    im = ax2.imshow(err, origin="lower", cmap=style.DIVERGING, vmin=-limit, vmax=limit,
                    aspect="auto")
    ax2.set_xticks(range(len(hx)), [_label(v) for v in np.log2(hx)])
    ax2.set_yticks(range(len(hy)), [_label(v) for v in np.log2(hy)])
    ax2.set_xlabel(style.label(x, arch.unit(x)))
    ax2.set_ylabel(style.label(y, arch.unit(y)))
    if len(hx) * len(hy) <= 100:
        for i in range(len(hy)):
            for j in range(len(hx)):
                if np.isfinite(err[i, j]):
                    ax2.text(j, i, f"{err[i, j]:+.0f}", ha="center", va="center",
                             fontsize=style.SMALL - 1, gid="cell",
                             color=style.text_color(im.cmap(im.norm(err[i, j]))))
    fig.colorbar(im, ax=ax2, label="model error against the mean measurement (%)")
    ax2.set_title("(predicted - measured) / measured, per configuration",
                  fontsize=style.FONT)
    return fig


def _num(v):
    return int(v) if float(v).is_integer() else float(v)


@style.styled
def plot_gsla(assessment: Assessment, path, *, inputs=(), **kwargs):
    """Draw :func:`gsla_figure` to ``path`` (.png, .svg, .pdf)."""
    return save_figure(gsla_figure(assessment, **kwargs), path, inputs)


def plot_from_inputs(path, *, inputs=(), assessment, measured_label="measured",
                     metric="time", x="S", y="gamma"):
    """``mapeval plot gsla`` (see :mod:`mapping.plots`)."""
    return plot_gsla(assessment, path, x=x, y=y, inputs=inputs, measured_label=measured_label)
