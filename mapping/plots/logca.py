"""The LogCA plots: speedup against granularity (LogCA Figs. 3, 4, 7) beside the
optimization regions (LogCA Fig. 6); fitted curves with the observed speedups over them;
several accelerators on one chart (Figs. 1b, 7, 10, 11). Sizes in binary units (KiB,
as LogCA's power-of-two granularities) and tick labels by :mod:`mapping.plots.style`.
Drawn on an Agg canvas; never shown."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from mapping.plots import style
from mapping.plots.figure_io import plot_format, save_figure
from moa.logca_analysis import GMAX, GMIN, PARAMETERS, LogCAAnalysis, analyse
from moa.units import binary_size

COLOURS = {"L": style.GREEN, "o": style.BLUE, "C": style.PURPLE, "A": style.VERMILLION}
NAMES = {"L": "latency L", "o": "overhead o", "C": "comput. index C", "A": "acceleration A"}


def granularity_axis(axis):
    """Granularities at powers of 16 (16 B, 256 B, 4 KiB, 64 KiB, 1 MiB, 16 MiB)."""
    axis.set_major_locator(LogLocator(base=16))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: binary_size(v)))
    axis.set_minor_locator(LogLocator(base=2))
    axis.set_minor_formatter(NullFormatter())


def format_axes(ax):
    """Log-log speedup axes: granularities in bytes, speedups by :func:`style.tick_format`
    (plain numbers, never 2×10^0)."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    granularity_axis(ax.xaxis)
    style.tick_format(ax.yaxis)


def _check_path(path) -> Path:
    """``path`` if its extension names a format (.png, .svg, .pdf), else an InputError."""
    plot_format(path)
    return Path(path)


def latency_bound(a: LogCAAnalysis, g):
    """The latency-bound line of LogCA Fig. 4b, ``(C/L)·g^(beta-1)`` (eq. 9 with A -> inf),
    for granularity-dependent latency; ``None`` otherwise."""
    if a.latency != "dependent" or a.L <= 0:
        return None
    return a.C / a.L * np.asarray(g, dtype=float) ** (a.beta - 1)


def draw_speedup(ax, a: LogCAAnalysis, points=400, fit=None):
    """Speedup vs granularity, log-log, with g1, g_{A/2} and the limit marked; the
    latency bound (C/L)·g^(beta-1) when latency grows with g; the observed speedups of
    ``fit`` (a :class:`mapping.calibration.logca.LogCAFit`) over the model."""
    g = np.logspace(math.log10(a.gmin), math.log10(a.gmax), points)
    s = a.speedup(g)
    ax.plot(g, s, color="black", lw=2, label="LogCA model" if fit else "LogCA speedup")
    shown = [s[s > 0]]
    bound_line = latency_bound(a, g)
    if bound_line is not None:
        ax.plot(g, bound_line, color=style.GREEN, ls="--", lw=1.2,
                label="latency bound (C/L)·g^(β−1) (Fig. 4b)")
    if fit is not None:
        observed = fit.observed_speedup()
        ax.plot(fit.g, observed, "o", ms=4, mfc="none", color=style.PURPLE,
                label=f"observed T0/T1 ({len(fit.g)} rows)")
        shown.append(observed)
    ax.axhline(1.0, color="grey", lw=0.8, ls=":")
    if a.speedup_limit > 0:
        which = ("A (eq. 3)" if a.bound == "compute" else
                 "A·C/(A·L+C) (eq. 9)")
        ax.axhline(a.speedup_limit, color=style.HIGHLIGHT, ls="--", lw=1.2,
                   label=f"limit {a.speedup_limit:.3g} = {which}")
    marks = [("g_1", a.g1, 1.0, style.BLUE), ("g_{A/2}", a.g_half, a.A / 2, style.ORANGE)]
    for name, value, level, colour in marks:
        if value is None or not (a.gmin <= value <= a.gmax):
            continue
        ax.axvline(value, color=colour, ls="-.", lw=1)
        ax.plot([value], [level], "o", color=colour)
        ax.annotate(f"${name}$ = {binary_size(value)}", (value, level), textcoords="offset points",
                    xytext=(6, -14), color=colour, fontsize=9)
    if a.g_peak is not None and a.gmin <= a.g_peak <= a.gmax:
        ax.plot([a.g_peak], [a.peak_speedup], "v", color=style.HIGHLIGHT)
        ax.annotate(f"peak {a.peak_speedup:.3g} at {binary_size(a.g_peak)}",
                    (a.g_peak, a.peak_speedup), textcoords="offset points", xytext=(0, 8), ha="center", fontsize=8,
                    color=style.HIGHLIGHT)
    notes = [f"no ${name}$ (never reached)" if value is None else
             f"${name}$ = {binary_size(value)} (off the axis)"
             for name, value, _, _ in marks if value is None or not a.gmin <= value <= a.gmax]
    if notes:
        ax.text(0.98, 0.03, "\n".join(notes), transform=ax.transAxes, ha="right",
                va="bottom", fontsize=8, color="grey")
    for gv, sv in a.speedup_at:
        if a.gmin <= gv <= a.gmax and sv > 0:
            ax.plot([gv], [sv], "s", color=style.SKY_BLUE, ms=5)
            ax.annotate(f"S({binary_size(gv)}) = {sv:.3g}", (gv, sv), textcoords="offset points",
                        xytext=(-8, 6), ha="right", fontsize=8, color=style.SKY_BLUE)
    positive = np.concatenate(shown)
    positive = positive[positive > 0]
    lo = min(positive.min() if positive.size else 1.0, 1.0) / 1.5
    hi = max(positive.max() if positive.size else 1.0, a.speedup_limit, 1.0) * 1.5
    ax.set_ylim(lo, hi)
    ax.set_xlim(a.gmin, a.gmax)
    format_axes(ax)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("granularity g")
    ax.set_ylabel("speedup T0(g) / T1(g)")
    ax.set_title(f"speedup ({a.bound}-bound)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)


def _combined(a: LogCAAnalysis):
    """Sub-intervals of [gmin, gmax] labelled with the parameters that pay there ('oC')."""
    edges = sorted({a.gmin, a.gmax, *(r.start for r in a.regions), *(r.end for r in a.regions)})
    out = []
    for lo, hi in zip(edges, edges[1:]):
        mid = math.sqrt(lo * hi)
        label = "".join(p for p in PARAMETERS
                        if any(r.parameter == p and r.start <= mid <= r.end for r in a.regions))
        if label:
            if out and out[-1][2] == label and math.isclose(out[-1][1], lo):
                out[-1] = (out[-1][0], hi, label)
            else:
                out.append((lo, hi, label))
    return out


def draw_regions(ax, a: LogCAAnalysis):
    """LogCA Fig. 6: one bar per parameter over the granularities where a 10x better
    value raises speedup by >= 20%, and the combined regions on top."""
    rows = list(PARAMETERS)
    decades = math.log10(a.gmax / a.gmin)
    for i, p in enumerate(rows):
        y = len(rows) - i
        spans = [(r.start, r.end - r.start) for r in a.regions if r.parameter == p]
        if spans:
            ax.broken_barh(spans, (y - 0.35, 0.7), facecolors=COLOURS[p], alpha=0.8)
            for start, width in spans:
                end, text = start + width, f"{binary_size(start)} – {binary_size(start + width)}"
                if math.log10(end / start) >= 0.3 * decades:        # inside the bar
                    ax.annotate(text, (math.sqrt(start * end), y), ha="center", va="center",
                                fontsize=8, color="white", fontweight="bold")
                elif start / a.gmin > a.gmax / end:                 # left of the bar
                    ax.annotate(text, (start, y), textcoords="offset points", xytext=(-4, 0),
                                ha="right", va="center", fontsize=8, color=COLOURS[p])
                else:                                               # right of the bar
                    ax.annotate(text, (end, y), textcoords="offset points", xytext=(4, 0),
                                ha="left", va="center", fontsize=8, color=COLOURS[p])
        else:
            ax.annotate("no region", (math.sqrt(a.gmin * a.gmax), y), ha="center",
                        va="center", fontsize=8, color="grey")
    for lo, hi, label in _combined(a):
        ax.broken_barh([(lo, hi - lo)], (len(rows) + 0.65, 0.7), facecolors="none",
                       edgecolors="black")
        if math.log10(hi / lo) < 0.04 * decades:
            continue                     # too narrow to be labelled legibly
        ax.annotate(label, (math.sqrt(lo * hi), len(rows) + 1), ha="center", va="center",
                    fontsize=9)
    ax.set_xscale("log")
    ax.set_xlim(a.gmin, a.gmax)
    granularity_axis(ax.xaxis)
    ax.set_ylim(0.4, len(rows) + 1.5)
    ax.set_yticks(range(len(rows) + 1, 0, -1), ["regions"] + [NAMES[p] for p in rows])
    ax.set_xlabel("granularity g")
    ax.set_title("optimization regions (10× better → ≥ 20% speedup)")
    ax.grid(True, axis="x", which="major", alpha=0.3)


@style.styled
def plot_analysis(a: LogCAAnalysis, path, title: str | None = None, fit=None) -> Path:
    """Write the two-panel LogCA figure of ``a`` to ``path`` (.png, .svg or .pdf); with
    ``fit``, the observed speedups over the fitted model."""
    path = _check_path(path)
    fig = Figure(figsize=(13, 5), dpi=100, layout="constrained")   # Agg canvas, no pyplot
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.1]})
    draw_speedup(left, a, fit=fit)
    draw_regions(right, a)
    overheads = (f"L = {a.L:.4g}, o = {a.o:.4g}" if fit is None or fit.separable else
                 f"o + L = {a.o:.4g} (split not identified)")
    fig.suptitle(title or (f"LogCA{' fit' if fit else ''}: {overheads}, C = {a.C:.4g}, "
                           f"A = {a.A:.4g}, β = {a.beta:.4g}, latency {a.latency}"
                           + (f", host fixed cost o0 = {a.o0:.4g}" if a.o0 else "")))
    return save_figure(fig, path)


def draw_curves(ax, curves, points=400):
    """Several accelerators on one speedup chart (LogCA Figs. 1b, 7): one curve each with
    its g1 (circle) and g_{A/2} (triangle) marked, observed speedups where fitted."""
    gmin = min(c.analysis.gmin for c in curves)
    gmax = max(c.analysis.gmax for c in curves)
    g = np.logspace(math.log10(gmin), math.log10(gmax), points)
    shown = []
    for i, c in enumerate(curves):
        a, (colour, line) = c.analysis, style.series(i)
        s = a.speedup(g)
        shown.append(s[s > 0])
        ax.plot(g, s, color=colour, ls=line, lw=1.8, label=c.label)
        for value, level, marker in ((a.g1, 1.0, "o"), (a.g_half, a.A / 2, "^")):
            if value is not None and gmin <= value <= gmax:
                ax.plot([value], [level], marker, color=colour, ms=7, mec="black", mew=0.6)
        if c.fit is not None:
            ax.plot(c.fit.g, c.fit.observed_speedup(), "x", ms=4, color=colour)
            shown.append(c.fit.observed_speedup())
    ax.axhline(1.0, color="grey", lw=0.8, ls=":")
    values = np.concatenate(shown) if shown else np.array([1.0])
    values = values[values > 0]
    lo = max(min(values.min() if values.size else 1.0, 1.0) / 1.5, 1e-6)
    hi = max(values.max() if values.size else 1.0, 1.0) * 1.5
    ax.set_xlim(gmin, gmax)
    ax.set_ylim(lo, hi)
    format_axes(ax)
    ax.set_ylim(lo, hi)
    ax.plot([], [], "o", color="white", mec="black", label="$g_1$ (speedup 1)")
    ax.plot([], [], "^", color="white", mec="black", label="$g_{A/2}$ (speedup A/2)")
    if any(c.fit is not None for c in curves):
        ax.plot([], [], "x", color="black", label="observed T0/T1")
    ax.set_xlabel("granularity g")
    ax.set_ylabel("speedup T0(g) / T1(g)")
    ax.grid(True, which="major", alpha=0.3)
    if len(curves) > 6:     # outside, below the chart: inside it would hide the lowest curves
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), fontsize=8,
                  ncol=3, frameon=False)
    else:
        ax.legend(loc="lower right", fontsize=8)


def draw_region_rows(ax, curves):
    """LogCA Figs. 10-11: one row per accelerator, a stripe per parameter (L, o, C, A
    from the top) over the granularities where its 10x improvement pays (§3.2)."""
    gmin = min(c.analysis.gmin for c in curves)
    gmax = max(c.analysis.gmax for c in curves)
    stripe = 0.8 / len(PARAMETERS)
    for i, c in enumerate(curves):
        y = len(curves) - i
        for k, p in enumerate(PARAMETERS):
            spans = [(r.start, r.end - r.start) for r in c.analysis.regions if r.parameter == p]
            ax.broken_barh(spans, (y + 0.4 - (k + 1) * stripe, stripe * 0.9),
                           facecolors=COLOURS[p])
    for p in PARAMETERS:
        ax.plot([], [], "s", color=COLOURS[p], label=NAMES[p])
    ax.set_xscale("log")
    ax.set_xlim(gmin, gmax)
    granularity_axis(ax.xaxis)
    ax.set_ylim(0.5, len(curves) + 0.5)
    ax.set_yticks(range(len(curves), 0, -1), [c.label for c in curves])
    ax.set_xlabel("granularity g")
    ax.set_title("optimization regions (10× better → ≥ 20% speedup)")
    ax.grid(True, axis="x", which="major", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=4, fontsize=8)


@style.styled
def plot_curves(curves, path, title: str | None = None) -> Path:
    """Write the speedup chart of several accelerators (Fig. 7) beside their
    optimization regions (Figs. 10-11) to ``path``."""
    path = _check_path(path)
    fig = Figure(figsize=(15, max(5.5, 1.5 + 0.4 * len(curves))), dpi=100,
                 layout="constrained")
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.2, 1]})
    draw_curves(left, curves)
    draw_region_rows(right, curves)
    fig.suptitle(title or "LogCA speedup against granularity")
    return save_figure(fig, path)


def plot_logca(L, o, C, A, beta=1.0, latency="dependent", gmin=GMIN, gmax=GMAX, at=(), *,
               path, title: str | None = None) -> Path:
    """Analyse one accelerator and write its LogCA figure to ``path`` (.png/.svg/.pdf)."""
    _check_path(path)
    return plot_analysis(analyse(L, o, C, A, beta, latency, gmin, gmax, at), path, title)


def plot_from_inputs(path, *, inputs=(), analysis) -> Path:
    """``mapeval plot logca`` (see :mod:`mapping.plots`): ``analysis`` is one
    :class:`LogCAAnalysis`, or curves (:class:`mapping.calibration.logca.Curve`): one fitted
    accelerator gets the two-panel figure with its observations, several one chart."""
    if isinstance(analysis, LogCAAnalysis):
        return plot_analysis(analysis, path)
    if len(analysis) == 1:
        return plot_analysis(analysis[0].analysis, path, fit=analysis[0].fit,
                             title=None if analysis[0].fit else f"LogCA: {analysis[0].label}")
    return plot_curves(analysis, path)
