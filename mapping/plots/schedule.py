"""The Gantt chart of a dataflow schedule (``mapeval plot schedule``): one row per PE and
CN of a mapped execution (or per actor without an architecture), every firing a bar
labelled with its name (``a#0``), one colour per actor, transfers hatched on the CN rows,
and the makespan and the period marked."""
from __future__ import annotations

import heapq
import math
from pathlib import Path

from mapping.evaluation.timing import transfer_channel
from mapping.plots import style
from mapping.plots.figure_io import new_figure, plot_format, save_figure

#: a row with more firings than this is left unlabelled
MAX_LABELS = 60
#: lanes of one row drawn with edges; a row with more is drawn as one band, summarised
MAX_LANES = 8
PERIOD_COLOR, MAKESPAN_COLOR = style.HIGHLIGHT, style.BLACK


def lanes(slots: list[dict]) -> list[int]:
    """The lane of each slot within its row: overlapping firings (auto-concurrency) stack
    on separate lanes, each on the lowest lane free at its start (interval partitioning,
    a heap of busy lanes: n log n)."""
    busy: list[tuple[float, int]] = []          # (end, lane)
    free: list[int] = []
    assigned = [0] * len(slots)
    for i in sorted(range(len(slots)), key=lambda i: (slots[i]["start"], slots[i]["end"])):
        while busy and busy[0][0] <= slots[i]["start"]:
            heapq.heappush(free, heapq.heappop(busy)[1])
        lane = heapq.heappop(free) if free else len(busy)
        heapq.heappush(busy, (slots[i]["end"], lane))
        assigned[i] = lane
    return assigned


def actor_colors(actors) -> dict[str, str]:
    """One colour per actor, in declaration order: the palette's seven light enough for
    black labels (not black), then tab20 for more actors."""
    from matplotlib import colormaps
    light = [c for c in style.PALETTE if c != style.BLACK]
    if len(actors) <= len(light):
        return {a: light[i] for i, a in enumerate(actors)}
    cmap = colormaps["tab20"]
    return {a: cmap(i % cmap.N) for i, a in enumerate(actors)}


def draw_schedule(ax, document: dict, rows, actors, cns=(), time_unit: str | None = None
                  ) -> None:
    """The Gantt chart of ``document`` (``mapeval analyse --json``) on ``ax``: ``rows``
    top to bottom, bars coloured by actor (``actors`` in legend order), the rows in
    ``cns`` hatched (transfers); ``time_unit`` on the time axis."""
    from matplotlib.patches import Patch
    schedule = document.get("schedule") or {}
    mapped = document.get("architecture") is not None
    rows = list(rows) + [r for r in schedule if r not in rows]
    colors = actor_colors(actors)
    ends = [s["end"] for slots in schedule.values() for s in slots]
    span = max([t for t in ends + [_number(document.get("makespan")) or 0]
                if math.isfinite(t)] + [1e-12])
    labels = []
    for y, row in enumerate(rows):
        slots = schedule.get(row, [])
        lane_of = lanes(slots)
        height = 0.8 / (max(lane_of) + 1) if lane_of else 0.8
        transfer = row in cns
        size = _label_size(max(lane_of) + 1 if lane_of else 1)
        crowded = len(set(lane_of)) > MAX_LANES
        label = size is not None and len(slots) <= MAX_LABELS
        bars: dict[tuple[int, str], list] = {}     # one collection per lane and actor
        for slot, lane in zip(slots, lane_of):
            actor = slot.get("actor", row) if mapped else row
            bottom = y - 0.4 + lane * height
            width = slot["end"] - slot["start"]
            bars.setdefault((lane, actor), []).append((slot["start"], width))
            if label:
                text = ax.text(slot["start"] + width / 2, bottom + height / 2,
                               slot["firing"], ha="center", va="center", fontsize=size,
                               clip_on=True,
                               color=style.text_color(colors.get(actor, "lightgray")))
                labels.append((text, slot["start"], slot["end"],
                               _shorter(slot["firing"], actor, size)))
        for (lane, actor), xranges in bars.items():
            ax.broken_barh(xranges, (y - 0.4 + lane * height, height),
                           facecolors=colors.get(actor, "lightgray"), edgecolor="black",
                           linewidth=0 if crowded else 0.5, hatch="///" if transfer else None,
                           alpha=0.55 if transfer else 1.0)
        if crowded:     # too thin to label one by one: say what the band holds
            first = min(s["start"] for s in slots)
            last = max(s["end"] for s in slots)
            ax.text((first + last) / 2, y, f"{len(slots)} firings, up to "
                    f"{len(set(lane_of))} at once", ha="center", va="center", fontsize=8,
                    bbox=dict(facecolor="white", alpha=0.8, linewidth=0), clip_on=True)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_ylim(len(rows) - 0.4, -1.0)      # first row on top, room for the period bracket
    # without a declared unit, time is in the unit of the firing times (the file's)
    ax.set_xlabel(style.label("time", time_unit or "time units"))
    ax.set_ylabel("PE / CN" if mapped else "actor")
    ax.grid(True, axis="x", alpha=0.3)
    handles = [Patch(facecolor=colors[a], edgecolor="black", label=a) for a in actors]
    if mapped:
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="///",
                             label="transfer on a CN"))
    _mark_period(ax, document, ends)
    ax.legend(handles=handles + ax.get_legend_handles_labels()[0], fontsize=8,
              loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    period = _number(document.get("period")) or 0
    ax.set_xlim(0, max(span, period if math.isfinite(period) else 0) * 1.04)
    style.tick_format(ax.xaxis)
    _fit_labels(ax, labels)


def _shorter(label: str, actor: str, size: int) -> list[tuple[str, int]]:
    """What to try when ``label`` (a firing of ``actor``, or a transfer of its tokens) is
    wider than its bar: a transfer as its channel, a firing in a smaller font."""
    channel = transfer_channel(label, actor)
    return [(channel, size), (channel, 6)] if channel is not None else [(label, 6)]


def _fit_labels(ax, labels) -> None:
    """Shorten, then hide, every label wider than its bar (measured after the layout)."""
    if not labels:
        return
    ax.figure.draw_without_rendering()
    x = ax.transData

    def fits(text, start, end):
        bar = abs(x.transform((end, 0))[0] - x.transform((start, 0))[0])
        return text.get_window_extent().width <= bar - 2

    for text, start, end, shorter in labels:
        for label, size in shorter:
            if fits(text, start, end):
                break
            text.set_text(label)
            text.set_fontsize(size)
        text.set_visible(fits(text, start, end))


def _label_size(lanes_in_row: int) -> int | None:
    """The font size of the labels in a row of that many lanes; None: too thin to label."""
    return {1: 8, 2: 7, 3: 7, 4: 6, 5: 6}.get(lanes_in_row)


def _number(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _mark_period(ax, document: dict, ends: list[float]) -> None:
    """A vertical line at the end of the iteration (the makespan with a mapping, else the
    latency) and a bracket from the first start, one period long, both labelled: in the
    periodic regime every firing recurs one period later."""
    schedule = document.get("schedule") or {}
    starts = [s["start"] for slots in schedule.values() for s in slots]
    name = "makespan" if document.get("makespan") is not None else "latency"
    end = _number(document.get(name))
    if end is None and ends:
        name, end = "last end", max(ends)
    if end is not None and math.isfinite(end):
        ax.axvline(end, color=MAKESPAN_COLOR, linestyle="--", linewidth=1,
                   label=f"{name} = {end:.4g}")
    period = _number(document.get("period"))
    if period is not None and 0 < period < math.inf:
        t0 = min(starts) if starts else 0.0
        y = -0.65
        ax.annotate("", xy=(t0, y), xytext=(t0 + period, y),
                    arrowprops=dict(arrowstyle="|-|", color=PERIOD_COLOR, linewidth=1.2,
                                    mutation_scale=4))
        ax.annotate(f"period = {period:.4g}", xy=(t0 + period / 2, y), xytext=(0, 2),
                    textcoords="offset points", ha="center", va="bottom",
                    color=PERIOD_COLOR, fontsize=8)
        ax.axvline(t0 + period, color=PERIOD_COLOR, linestyle=":", linewidth=1,
                   label=f"first start + period ({t0 + period:.4g})")


@style.styled
def plot_schedule(document: dict, path, rows, actors, cns=(), inputs=(),
                  time_unit: str | None = None) -> Path:
    """Write the Gantt chart of ``document`` (a ``mapeval analyse --json`` document) to
    ``path`` (PNG, SVG or PDF by extension): ``rows`` top to bottom (the PEs and CNs of
    a mapping, else the actors), one colour per actor of ``actors``, ``cns`` hatched."""
    plot_format(path)
    if not document.get("schedule"):
        from mapping.errors import InputError
        why = document.get("schedule_missing")
        raise InputError("plot schedule: the analysis has no schedule to draw"
                         + (f": {why}" if why else ""))
    fig = new_figure(10.0, 1.6 + 0.45 * max(len(rows), 2))
    ax = fig.add_subplot(1, 1, 1)
    draw_schedule(ax, document, rows, actors, cns, time_unit)
    if document.get("architecture") is not None:
        title = (f"schedule of mapping '{document['mapping']}' of '{document['application']}'"
                 f" on '{document['architecture']}'")
    else:
        title = (f"self-timed schedule of '{document['application']}' (firing time: "
                 f"'{document['exec']}', unlimited processors)")
    period = _number(document.get("period"))
    throughput = _number(document.get("throughput"))
    figures = [f"period {period:.4g}" if period is not None else None,
               f"throughput {throughput:.4g}" if throughput is not None else None]
    ax.set_title(title + "\n" + ", ".join(f for f in figures if f))
    return save_figure(fig, path, inputs)


def plot_mapping_schedule(app, arch, mapping, path, params=None, inputs=()) -> Path:
    """The Gantt chart of ``mapping`` of ``app`` onto ``arch`` (the list-scheduled
    execution of :func:`mapping.evaluation.timing.mapped_analysis`), for the plots that take the
    options of ``eval``."""
    from mapping.semantics.problem import bind_problem
    from mapping.evaluation.timing import mapped_analysis
    problem = bind_problem(app, arch, params)
    document = {"application": app.name, "architecture": arch.name,
                "mapping": mapping.name, "exec": None,
                **mapped_analysis(problem, mapping).to_dict()}
    cns = tuple(problem.arch.cns)
    return plot_schedule(document, path, tuple(problem.arch.pes) + cns, tuple(app.actors),
                         cns, inputs, problem.arch.unit("time"))


def plot_from_inputs(path, *, inputs=(), analysed, time_unit=None) -> Path:
    """``mapeval plot schedule`` (see :mod:`mapping.plots`): ``analysed`` is what
    ``mapeval analyse`` computes (its ``to_dict()``, ``rows``, ``actors``, ``cns``)."""
    return plot_schedule(analysed.to_dict(), path, analysed.rows, analysed.actors,
                         analysed.cns, inputs, time_unit)
