"""The LogCA plot: speedup against granularity (LogCA Figs. 3, 4, 7) beside the
optimization regions (LogCA Fig. 6). Drawn on an Agg canvas; never shown."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from mapping.plots.figure_io import plot_format, save_figure
from moa.logca_analysis import GMAX, GMIN, PARAMETERS, LogCAAnalysis, analyse

COLOURS = {"L": "#2ca02c", "o": "#1f77b4", "C": "#9467bd", "A": "#d62728"}
NAMES = {"L": "latency L", "o": "overhead o", "C": "comput. index C", "A": "acceleration A"}


def _size(value):
    for size, suffix in ((2 ** 30, "GB"), (2 ** 20, "MB"), (2 ** 10, "KB")):
        if value >= size:
            return f"{value / size:.3g} {suffix}"
    return f"{value:.3g} B"


def _check_path(path) -> Path:
    """``path`` if its extension names a format (.png, .svg, .pdf), else an InputError."""
    plot_format(path)
    return Path(path)


def draw_speedup(ax, a: LogCAAnalysis, points=400):
    """Speedup vs granularity, log-log, with g1, g_{A/2} and the limit marked."""
    g = np.logspace(math.log10(a.gmin), math.log10(a.gmax), points)
    s = a.speedup(g)
    ax.loglog(g, s, color="black", lw=2, label="LogCA speedup")
    ax.axhline(1.0, color="grey", lw=0.8, ls=":")
    if a.speedup_limit > 0:
        which = ("A (eq. 3)" if a.bound == "compute" else
                 "A·C/(A·L+C) (eq. 9)")
        ax.axhline(a.speedup_limit, color="tab:red", ls="--", lw=1.2,
                   label=f"limit {a.speedup_limit:.3g} = {which}")
    marks = [("g_1", a.g1, 1.0, "tab:blue"), ("g_{A/2}", a.g_half, a.A / 2, "tab:orange")]
    for name, value, level, colour in marks:
        if value is None or not (a.gmin <= value <= a.gmax):
            continue
        ax.axvline(value, color=colour, ls="-.", lw=1)
        ax.plot([value], [level], "o", color=colour)
        ax.annotate(f"${name}$ = {_size(value)}", (value, level), textcoords="offset points",
                    xytext=(6, -14), color=colour, fontsize=9)
    if a.g_peak is not None and a.gmin <= a.g_peak <= a.gmax:
        ax.plot([a.g_peak], [a.peak_speedup], "v", color="tab:red")
        ax.annotate(f"peak {a.peak_speedup:.3g} at {_size(a.g_peak)}", (a.g_peak, a.peak_speedup),
                    textcoords="offset points", xytext=(0, 8), ha="center", fontsize=8,
                    color="tab:red")
    notes = [f"no ${name}$ (never reached)" if value is None else
             f"${name}$ = {_size(value)} (off the axis)"
             for name, value, _, _ in marks if value is None or not a.gmin <= value <= a.gmax]
    if notes:
        ax.text(0.98, 0.03, "\n".join(notes), transform=ax.transAxes, ha="right",
                va="bottom", fontsize=8, color="grey")
    for gv, sv in a.speedup_at:
        if a.gmin <= gv <= a.gmax and sv > 0:
            ax.plot([gv], [sv], "s", color="tab:green", ms=5)
            ax.annotate(f"S({_size(gv)}) = {sv:.3g}", (gv, sv), textcoords="offset points",
                        xytext=(-8, 6), ha="right", fontsize=8, color="tab:green")
    positive = s[s > 0]
    lo = min(positive.min() if positive.size else 1.0, 1.0) / 1.5
    hi = max(positive.max() if positive.size else 1.0, a.speedup_limit, 1.0) * 1.5
    ax.set_ylim(lo, hi)
    ax.set_xlim(a.gmin, a.gmax)
    ax.set_xlabel("granularity g (bytes)")
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
                end, text = start + width, f"{_size(start)} – {_size(start + width)}"
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
    ax.set_ylim(0.4, len(rows) + 1.5)
    ax.set_yticks(range(len(rows) + 1, 0, -1), ["regions"] + [NAMES[p] for p in rows])
    ax.set_xlabel("granularity g (bytes)")
    ax.set_title("optimization regions (10× better → ≥ 20% speedup)")
    ax.grid(True, axis="x", which="major", alpha=0.3)


def plot_analysis(a: LogCAAnalysis, path, title: str | None = None) -> Path:
    """Write the two-panel LogCA figure of ``a`` to ``path`` (.png, .svg or .pdf)."""
    path = _check_path(path)
    fig = Figure(figsize=(13, 5), dpi=100, layout="constrained")   # Agg canvas, no pyplot
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.1]})
    draw_speedup(left, a)
    draw_regions(right, a)
    fig.suptitle(title or (f"LogCA: L = {a.L:g}, o = {a.o:g}, C = {a.C:g}, A = {a.A:g}, "
                           f"β = {a.beta:g}, latency {a.latency}"))
    return save_figure(fig, path)


def plot_logca(L, o, C, A, beta=1.0, latency="dependent", gmin=GMIN, gmax=GMAX, at=(), *,
               path, title: str | None = None) -> Path:
    """Analyse one accelerator and write its LogCA figure to ``path`` (.png/.svg/.pdf)."""
    _check_path(path)
    return plot_analysis(analyse(L, o, C, A, beta, latency, gmin, gmax, at), path, title)


def plot_from_inputs(path, *, inputs=(), analysis: LogCAAnalysis) -> Path:
    """``mapeval plot logca`` (see :mod:`mapping.plots`)."""
    return plot_analysis(analysis, path)
