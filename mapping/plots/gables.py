"""Gables' scaled rooflines (Hill & Reddi, HPCA 2019, Fig. 6).

For a mapping evaluated with ``time``, every ``roofline`` PE that does work draws its
roofline scaled by its work fraction ``f_i``: ``min(B_i·I, P_i) / f_i`` (Gables eq. 12),
with a drop line at its operational intensity ``I_i = ops_i / D_i``.  Every CN with a
``bandwidth`` model that carries traffic draws its slanted roofline ``B·I / lambda``
(Gables eq. 13 for memory, eq. 16-17 for a bus) with a drop line at
``I = Σ ops / bytes crossing it`` — for the memory with ``miss = 1`` the harmonic mean
``I_avg = 1 / Σ (f_i / I_i)`` of Gables eq. 13.  The attainable performance
(``Σ ops / time`` of the evaluation) is marked and annotated.

Under ``max`` (concurrent work, Gables eq. 11) that mark is the lowest scaled roofline at
its own drop line.  Under another aggregation (``exclusive``: serialized work, Gables
eq. 18-19; ``sum``) no roofline passes through it, so the plot draws the system's own
curve: the attainable performance with every ``roofline`` and ``bandwidth`` bandwidth
multiplied by ``s`` (every intensity scaled by ``s``), at ``x = s·I`` of the mark.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from types import MappingProxyType
from pathlib import Path
from typing import Any, Mapping as MappingT

import numpy as np

from moa import Architecture
from moa.cost_models.roofline import Bandwidth, Roofline, attainable, operational_intensity, \
    ridge_point
from mapping.semantics.metrics import work as total_work
from moc import SDFGraph
from mapping.errors import InputError
from mapping.evaluation.reference import Evaluation, evaluate
from dsl.mappings import Mapping
from mapping.plots import style
from mapping.plots.figure_io import new_figure, plot_format, save_figure
from mapping.semantics.problem import bind_problem
from mapping.semantics.routing import place_tokens
from moa.units import BYTES, OPS, per


@dataclass(frozen=True)
class Roof:
    """One scaled roofline: ``peak`` (ops per time unit, ``inf`` for a CN), ``bandwidth``
    (bytes per time unit, already divided by lambda for a CN), the work fraction ``f``
    it is scaled by (1 for a CN) and the operational ``intensity`` its drop line marks."""

    name: str
    kind: str
    peak: float
    bandwidth: float
    f: float
    intensity: float

    def bound(self, intensity):
        """Scaled attainable performance at ``intensity`` (array or number): the roofline
        of :func:`~moa.cost_models.roofline.attainable` over ``f`` (Gables eq. 12)."""
        return attainable(self.peak, self.bandwidth, intensity) / self.f

    @property
    def selected(self) -> float:
        """The bound at the roof's own intensity (its drop line's top)."""
        return float(self.bound(self.intensity)) if math.isfinite(self.intensity) \
            else self.peak / self.f


@dataclass(frozen=True)
class GablesData:
    roofs: tuple[Roof, ...]
    work: float
    evaluation: Evaluation
    #: the unit of time of the architecture (None: unknown)
    time_unit: str | None = None
    #: ``(s, performance)`` of the system curve (not under ``max``; see the module)
    system_curve: tuple[tuple[float, float], ...] = ()


def _scaled(arch: Architecture, s: float) -> Architecture:
    """A copy of the bound ``arch`` whose roofline and bandwidth models have ``s`` times
    their bandwidth (the same as every operational intensity times ``s``)."""
    copy = object.__new__(Architecture)
    copy.__dict__.update(arch.__dict__)
    copy.elements = {}
    for name, e in arch.elements.items():
        model = e.model("time")
        if isinstance(model, Roofline):
            new = Roofline(model.params.model_copy(update={"bandwidth": model.params.bandwidth * s}))
        elif isinstance(model, Bandwidth):
            new = Bandwidth(model.params.model_copy(update={"B": model.params.B * s}))
        else:
            copy.elements[name] = e
            continue
        copy.elements[name] = dataclasses.replace(e, costs=MappingProxyType({**e.costs, "time": new}))
    return copy


def system_curve(problem, mapping: Mapping, aggregate: str | None, scales):
    """``(s, P(s))``: the attainable performance of ``mapping`` with every intensity
    scaled by ``s`` (Gables eq. 19 for ``exclusive``), P(1) that of the evaluation."""
    out = []
    for s in scales:
        ev = evaluate(problem.app, _scaled(problem.arch, float(s)), mapping, "time", aggregate)
        out.append((float(s), ev.performance))
    return tuple(out)


def gables_data(app: SDFGraph, arch: Architecture, mapping: Mapping,
                params: MappingT[str, Any] | None = None, aggregate: str | None = None
                ) -> GablesData:
    """The scaled rooflines of a mapping (see the module docstring)."""
    problem = bind_problem(app, arch, params)
    evaluation = evaluate(problem.app, problem.arch, mapping, "time", aggregate, problem=problem)
    arch_b = problem.arch
    placed = place_tokens(problem.app, arch_b, mapping, problem.activity, "time",
                          charge=False)          # each roofline PE's own work and data
    work = total_work(problem.activity)
    if work <= 0:
        raise InputError(f"'{app.name}' does no work (Σ ops = 0): there is nothing to plot")
    lambda_ = float(arch_b.lambda_)
    roofs = []
    for name, element in arch_b.elements.items():
        model = element.model("time")
        if isinstance(model, Roofline) and element.is_pe:
            ops, data = model.totals(placed[name])
            if ops <= 0:
                continue  # Gables: an IP with f_i = 0 is omitted
            roofs.append(Roof(name, "pe", model.params.peak, model.params.bandwidth,
                              ops / work, operational_intensity(ops, data)))
        elif isinstance(model, Bandwidth) and not element.is_pe and lambda_ > 0:
            (data,) = model.feature_totals(placed[name])      # Σ bytes, as evaluated
            if data <= 0:
                continue
            roofs.append(Roof(name, "cn", math.inf, model.params.B / lambda_, 1.0, work / data))
    if not any(r.kind == "pe" for r in roofs):
        raise InputError(f"architecture '{arch.name}': no PE with a roofline time model does "
                         "work under this mapping; the gables plot needs roofline PEs")
    data = GablesData(tuple(roofs), work, evaluation, arch_b.unit("time"))
    if evaluation.aggregate == "max" or not evaluation.performance:
        return data
    x, (xlo, xhi) = _attainable_x(data), _x_range(data)
    scales = np.unique(np.concatenate([np.geomspace(xlo / x, xhi / x, 81), [1.0]]))
    return dataclasses.replace(data, system_curve=system_curve(problem, mapping, aggregate,
                                                               scales))


def _decade_floor(x):
    return 10.0 ** math.floor(math.log10(x))


def _decade_ceil(x):
    return 10.0 ** math.ceil(math.log10(x))


def _x_range(data: GablesData) -> tuple[float, float]:
    """Whole decades around every drop line and ridge point, one more on each side."""
    xs = [r.intensity for r in data.roofs if math.isfinite(r.intensity)]
    xs += [ridge_point(r.peak, r.bandwidth) for r in data.roofs
           if math.isfinite(r.peak) and math.isfinite(r.bandwidth)]
    xs = [x for x in xs if x > 0] or [1.0]
    return _decade_floor(min(xs)) / 10, _decade_ceil(max(xs)) * 10


def draw_gables(ax, data: GablesData) -> None:
    """Scaled rooflines, drop lines and the attainable point on ``ax`` (log-log)."""
    ev = data.evaluation
    xlo, xhi = _x_range(data)
    grid = np.geomspace(xlo, xhi, 400)

    ys = [r.selected for r in data.roofs]
    ys += [r.peak / r.f for r in data.roofs if math.isfinite(r.peak)]
    if ev.performance:
        ys.append(ev.performance)
    ys = [y for y in ys if 0 < y < math.inf] or [1.0]
    ylo, yhi = _decade_floor(min(ys)) / 10, _decade_ceil(max(ys)) * 10

    perf_unit = per(OPS, data.time_unit)
    rate = f" {perf_unit}" if perf_unit else ""
    bw = f" {per(BYTES, data.time_unit)}" if perf_unit else ""
    pe_index = 0
    memory = _memory_roof(data)
    for roof in data.roofs:
        if roof.kind == "pe":
            color = style.color(pe_index)
            pe_index += 1
            label = (f"{roof.name}: min({roof.bandwidth:g}·I, {roof.peak:g}) / {roof.f:.3g}"
                     if math.isfinite(roof.bandwidth) else f"{roof.name}: {roof.peak:g} / {roof.f:.3g}")
            linestyle = "-"
            drop = f"I_{roof.name} = {roof.intensity:.4g}"
        else:
            color = style.BLACK if roof is memory else style.MUTED
            label = f"{roof.name}: {roof.bandwidth:g}{bw}·I"
            linestyle = "-" if roof is memory else "--"
            drop = (f"I_avg = {roof.intensity:.4g}" if roof is memory
                    else f"I_{roof.name} = {roof.intensity:.4g}")
        ax.plot(grid, roof.bound(grid), linestyle=linestyle, color=color, linewidth=2,
                label=f"{label}; drop at {drop}")
        if math.isfinite(roof.intensity) and xlo <= roof.intensity <= xhi:
            top = roof.selected
            ax.vlines(roof.intensity, ylo, top, colors=color, linestyles=":", linewidth=1.5)
            ax.plot([roof.intensity], [top], "o", color=color, markersize=5)

    if ev.performance:
        x = _attainable_x(data)
        if data.system_curve:
            s, p = np.array(data.system_curve).T
            ax.plot(s * x, p, color=style.HIGHLIGHT, linewidth=1.5, linestyle="-.",
                    label=f"system ({ev.aggregate}): every intensity × s, mark at s = 1",
                    gid="system-curve")
        ax.plot([x], [ev.performance], marker="*", color=style.HIGHLIGHT, markersize=16,
                zorder=5, linestyle="none", markeredgecolor="black", markeredgewidth=0.5,
                label=f"P_attainable = {ev.performance:.4g}{rate}", gid="attainable")
        ax.annotate(f"P_attainable = {ev.performance:.4g}{rate}\n(bottleneck: {ev.bottleneck})",
                    (x, ev.performance), xytext=(12, -22), textcoords="offset points",
                    fontsize=style.SMALL + 1, color=style.HIGHLIGHT,
                    arrowprops={"arrowstyle": "->", "color": style.HIGHLIGHT})
    style.log_log(ax, style.label("operational intensity I", per(OPS, BYTES)),
                  style.label("attainable performance", perf_unit or "ops per time unit"))
    ax.set_xlim(xlo, xhi)
    ax.set_ylim(ylo, yhi)
    ax.legend(loc="upper left")


def _memory_roof(data: GablesData) -> Roof | None:
    """The CN roof whose drop line is I_avg: the one carrying the most bytes (lowest I)."""
    cns = [r for r in data.roofs if r.kind == "cn"]
    return min(cns, key=lambda r: r.intensity) if cns else None


def _attainable_x(data: GablesData) -> float:
    by_name = {r.name: r for r in data.roofs}
    roof = by_name.get(data.evaluation.bottleneck or "")
    if roof is not None and math.isfinite(roof.intensity):
        return roof.intensity
    memory = _memory_roof(data)
    if memory is not None:
        return memory.intensity
    finite = [r.intensity for r in data.roofs if math.isfinite(r.intensity)]
    return float(np.exp(np.mean(np.log(finite)))) if finite else 1.0


@style.styled
def plot_gables(app: SDFGraph, arch: Architecture, mapping: Mapping, path,
                params: MappingT[str, Any] | None = None, aggregate: str | None = None,
                inputs=()) -> Path:
    """Write the Gables plot of ``mapping`` to ``path`` (PNG, SVG or PDF by extension)."""
    plot_format(path)
    data = gables_data(app, arch, mapping, params, aggregate)
    fig = new_figure(7.5, 5.2)
    ax = fig.add_subplot()
    draw_gables(ax, data)
    ev = data.evaluation
    ax.set_title(f"Gables: '{ev.application}' on '{ev.architecture}', mapping '{ev.mapping}' "
                 f"({ev.aggregate})")
    return save_figure(fig, path, inputs)


def plot_from_inputs(path, *, inputs=(), app, arch, mapping, metric="time", aggregate=None,
                     params=None) -> Path:
    """``mapeval plot gables`` (see :mod:`mapping.plots`)."""
    if metric != "time":
        raise InputError(f"plot gables: the rooflines are of time; --metric {metric} does "
                         "not apply")
    return plot_gables(app, arch, mapping, path, params=params, aggregate=aggregate,
                       inputs=inputs)
