"""Predicted against measured values, one point per row, tau and fidelity in the title."""
from __future__ import annotations


import numpy as np
from matplotlib.figure import Figure

from mapping.calibration.assessment import Assessment
from mapping.calibration.fidelity import figure_text
from mapping.plots import style
from mapping.plots.figure_io import new_figure, save_figure


def _spans_decades(values) -> bool:
    v = np.asarray(values, dtype=float)
    return v.size > 0 and bool(np.all(v > 0)) and v.max() / v.min() >= 10


@style.styled
def fidelity_figure(assessment: Assessment, *, measured_label: str = "measured",
                    metric: str = "time", title: str | None = None) -> Figure:
    """Scatter of predicted (x) against measured (y): the test rows in colour, the rows
    that fitted the parameters in grey; the diagonal ``y = x``; log axes where the
    values span a decade or more."""
    a = assessment
    r = a.result
    fig = new_figure(6.4, 5.6)
    ax = fig.add_subplot()
    test, train = a.test, a.train
    if r.splits is not None:         # cross-validated figures; the points: the fit on all rows
        test, train = np.arange(len(a.measured)), np.array([], dtype=int)
    if len(train):
        ax.scatter(a.predicted[train], a.measured[train], s=12, color=style.MUTED, alpha=0.6,
                   label=f"train rows ({len(train)})", linewidths=0)
    ax.scatter(a.predicted[test], a.measured[test], s=18, color=style.BLUE, alpha=0.85,
               label=f"{'test' if len(train) else 'all'} rows ({len(test)})", linewidths=0)
    both = np.concatenate([a.predicted, a.measured])
    if _spans_decades(both):
        ax.set_xscale("log")
        ax.set_yscale("log")
    finite = both[np.isfinite(both)]
    if finite.size:
        lo, hi = finite.min(), finite.max()
        ax.plot([lo, hi], [lo, hi], color="k", lw=0.8, ls="--", label="predicted = measured")
    style.tidy(ax)
    # measurements are compared with predictions, so they are in the metric's unit
    unit = a.model.arch.unit(metric)
    ax.set_xlabel(style.label(f"predicted {metric}", unit))
    ax.set_ylabel(style.label(measured_label, unit))
    where = r.rows_described()
    heading = title or f"{a.model.arch.name}: model against measurements"
    ax.set_title(f"{heading}\nKendall tau-b = {figure_text(r.tau, '.3f')}, "
                 f"pairs ordered = {figure_text(r.fidelity, '.3f')} ({where})")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left")
    return fig


@style.styled
def plot_fidelity(assessment: Assessment, path, *, inputs=(), **kwargs):
    """Draw :func:`fidelity_figure` to ``path`` (.png, .svg, .pdf)."""
    return save_figure(fidelity_figure(assessment, **kwargs), path, inputs)


def plot_from_inputs(path, *, inputs=(), assessment, measured_label="measured",
                     metric="time"):
    """``mapeval plot fidelity`` (see :mod:`mapping.plots`)."""
    return plot_fidelity(assessment, path, inputs=inputs, measured_label=measured_label,
                         metric=metric)
