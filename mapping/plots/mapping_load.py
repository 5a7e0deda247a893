"""The load of a mapping: one bar per element (its value of the metric, CNs scaled by
lambda as the aggregation sees them), the bottleneck highlighted, the actors mapped on
each PE named under its bar."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping as MappingT

from moa import Architecture
from moa.architecture import term_name
from moc import SDFGraph
from mapping.semantics.aggregation import aggregator
from mapping.evaluation.reference import Evaluation, evaluate
from mapping.semantics.metrics import system_metrics
from dsl.mappings import Mapping
from mapping.plots import style
from mapping.plots.figure_io import new_figure, plot_format, save_figure

PE_COLOR, CN_COLOR, BOTTLENECK_COLOR = style.BLUE, style.MUTED, style.HIGHLIGHT
#: actors named per line under a PE, and lines at most (then "+N more")
ACTORS_PER_LINE, ACTOR_LINES = 3, 3


def actors_on(mapping: Mapping) -> dict[str, list[str]]:
    """PE -> the actors ``mapping`` places on it, in the mapping's order."""
    out: dict[str, list[str]] = {}
    for actor, pe in mapping.assignment.items():
        out.setdefault(pe, []).append(actor)
    return out


def tick_label(name: str, actors=()) -> str:
    """An element's name over the actors it runs (three a line, at most three lines)."""
    actors = list(actors)
    shown = actors[:ACTORS_PER_LINE * ACTOR_LINES]
    if len(actors) > len(shown):
        shown = shown[:-1] + [f"+{len(actors) - len(shown) + 1} more"]
    lines = [", ".join(shown[i:i + ACTORS_PER_LINE])
             for i in range(0, len(shown), ACTORS_PER_LINE)]
    return "\n".join([name] + lines)


def draw_mapping_load(ax, ev: Evaluation, logy: bool = False, unit: str | None = None,
                      actors: MappingT[str, list[str]] | None = None) -> None:
    """Bars of ``ev``'s element values on ``ax`` (``unit``: the metric's; ``actors``: PE ->
    the actors on it, named under its bar)."""
    names = [e.name for e in ev.elements]
    heights = [e.value * (ev.lambda_ if e.kind == "cn" else 1.0) for e in ev.elements]
    colors, hatches = [], []
    for e in ev.elements:
        if e.name == ev.bottleneck:
            colors.append(BOTTLENECK_COLOR)
        else:
            colors.append(PE_COLOR if e.kind == "pe" else CN_COLOR)
        hatches.append("//" if e.name in ev.unmodelled else "")
    bars = ax.bar(range(len(names)), heights, color=colors, edgecolor="black", linewidth=0.6)
    for bar, hatch in zip(bars, hatches):
        bar.set_hatch(hatch)
    ax.bar_label(bars, labels=[style.number(h, 2) for h in heights], fontsize=style.SMALL,
                 padding=2)
    actors = actors or {}
    ax.set_xticks(range(len(names)), [tick_label(n, actors.get(n, ())) for n in names],
                  rotation=30 if len(names) > 6 else 0,
                  ha="right" if len(names) > 6 else "center", fontsize=style.SMALL)
    what = ev.metric + (" (CNs × lambda)" if ev.lambda_ != 1 else "")
    ax.set_ylabel(style.label(what, unit))
    ax.set_xlabel("element (the actors mapped on it)" if actors else "element")
    if logy:
        ax.set_yscale("log")
    if ev.aggregate in ("max", "exclusive") or ev.value <= 1.5 * max(heights + [0.0]):
        ax.axhline(ev.value, color=BOTTLENECK_COLOR, linestyle="--", linewidth=1,
                   label=f"system {ev.metric} ({ev.aggregate}) = {ev.value:.4g}"
                   + (f" {unit}" if unit else ""))
    handles = [
        _patch(PE_COLOR, "PE"), _patch(CN_COLOR, "CN"),
        _patch(BOTTLENECK_COLOR, f"bottleneck: {ev.bottleneck}" if ev.bottleneck else "bottleneck"),
    ]
    if ev.unmodelled:
        handles.append(_patch("white", "unmodelled", hatch="//"))
    line = ax.get_legend_handles_labels()
    ax.legend(handles=handles + line[0], loc="best")
    if not logy:
        ax.set_ylim(0, max(heights + [ev.value, 0.0]) * 1.45 or 1.0)
    style.tick_format(ax.yaxis)
    ax.grid(True, axis="y", alpha=0.3)


def _patch(color, label, hatch=None):
    from matplotlib.patches import Patch
    return Patch(facecolor=color, edgecolor="black", hatch=hatch, label=label)


@style.styled
def plot_mapping_load(app: SDFGraph, arch: Architecture, mapping: Mapping, path,
                      metric: str = "time", aggregate: str | None = None,
                      params: MappingT[str, Any] | None = None, logy: bool = False,
                      inputs=()) -> Path:
    """Write the load chart of ``mapping`` to ``path`` (PNG, SVG or PDF by extension).
    A system metric gets one chart per ``M[AGG]`` term, under its expression and value.
    A timed aggregation (``schedule``, ``period``) has no per-element bars that add up to
    its value: its chart is the Gantt chart of the schedule."""
    plot_format(path)
    if aggregate is not None and aggregator(aggregate).timed:
        from mapping.plots.schedule import plot_mapping_schedule
        evaluate(app, arch, mapping, metric, aggregate, params)    # refuses non-time metrics
        return plot_mapping_schedule(app, arch, mapping, path, params, inputs)
    ev = evaluate(app, arch, mapping, metric, aggregate, params)
    system = system_metrics(arch).get(metric)
    terms = [evaluate(app, arch, mapping, m, agg, params) for m, agg in system.terms] \
        if system is not None else [ev]
    fig = new_figure(max(6.0, 0.7 * len(ev.elements) + 2.5), 4.5 * len(terms))
    on = actors_on(mapping)
    for i, term in enumerate(terms):
        ax = fig.add_subplot(len(terms), 1, i + 1)
        unit = arch.unit(term.metric)
        draw_mapping_load(ax, term, logy, unit, on)
        if system is not None:
            ax.set_title(f"{term_name(term.metric, term.aggregate)} = {term.value:.4g}"
                         + (f" {unit}" if unit else ""), fontsize=style.FONT)
    what = f"{ev.metric} = {system.expr}" if system is not None else ev.metric
    unit = arch.unit(ev.metric)
    fig.suptitle(f"{what} of mapping '{ev.mapping}' of '{ev.application}' on "
                 f"'{ev.architecture}': {ev.value:.4g}{' ' + unit if unit else ''} "
                 f"({ev.aggregate})")
    return save_figure(fig, path, inputs)


def plot_from_inputs(path, *, inputs=(), app, arch, mapping, metric="time", aggregate=None,
                     params=None, logy=False) -> Path:
    """``mapeval plot mapping`` (see :mod:`mapping.plots`)."""
    return plot_mapping_load(app, arch, mapping, path, metric=metric, aggregate=aggregate,
                             params=params, logy=logy, inputs=inputs)
