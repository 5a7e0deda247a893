"""The Gantt chart of a dataflow schedule (``mapeval plot schedule``): one row per PE and
CN of a mapped execution (or per actor without an architecture), every firing a bar
labelled with its name (``a#0``), one colour per actor, transfers hatched on the CN rows,
and the makespan and the period marked."""
from __future__ import annotations

from pathlib import Path

from mapping.plots.figure_io import new_figure, plot_format, save_figure

#: bars drawn with their firing's name; beyond this many the chart is left unlabelled
MAX_LABELS = 300
PERIOD_COLOR, MAKESPAN_COLOR = "tab:red", "black"


def lanes(slots: list[dict]) -> list[int]:
    """The lane of each slot within its row: overlapping firings (auto-concurrency) stack
    on separate lanes, the lowest free one first (interval partitioning)."""
    ends: list[float] = []
    assigned = [0] * len(slots)
    for i in sorted(range(len(slots)), key=lambda i: (slots[i]["start"], slots[i]["end"])):
        slot = slots[i]
        lane = next((k for k, end in enumerate(ends) if end <= slot["start"]), len(ends))
        if lane == len(ends):
            ends.append(slot["end"])
        else:
            ends[lane] = slot["end"]
        assigned[i] = lane
    return assigned


def actor_colors(actors) -> dict[str, str]:
    """One colour per actor, in declaration order (tab10, then tab20)."""
    from matplotlib import colormaps
    cmap = colormaps["tab10" if len(actors) <= 10 else "tab20"]
    return {a: cmap(i % cmap.N) for i, a in enumerate(actors)}


def draw_schedule(ax, document: dict, rows, actors, cns=()) -> None:
    """The Gantt chart of ``document`` (``mapeval analyse --json``) on ``ax``: ``rows``
    top to bottom, bars coloured by actor (``actors`` in legend order), the rows in
    ``cns`` hatched (transfers)."""
    from matplotlib.patches import Patch
    schedule = document.get("schedule") or {}
    mapped = document.get("architecture") is not None
    rows = list(rows) + [r for r in schedule if r not in rows]
    colors = actor_colors(actors)
    count = sum(len(s) for s in schedule.values())
    label_all = count <= MAX_LABELS
    ends = [s["end"] for slots in schedule.values() for s in slots]
    span = max(ends + [document.get("makespan") or 0, 1e-12])
    labels = []
    for y, row in enumerate(rows):
        slots = schedule.get(row, [])
        lane_of = lanes(slots)
        height = 0.8 / (max(lane_of) + 1) if lane_of else 0.8
        transfer = row in cns
        size = _label_size(max(lane_of) + 1 if lane_of else 1)
        for slot, lane in zip(slots, lane_of):
            actor = slot.get("actor", row) if mapped else row
            bottom = y - 0.4 + lane * height
            width = slot["end"] - slot["start"]
            ax.broken_barh([(slot["start"], width)], (bottom, height),
                           facecolors=colors.get(actor, "lightgray"), edgecolor="black",
                           linewidth=0.5, hatch="///" if transfer else None,
                           alpha=0.55 if transfer else 1.0)
            if label_all and size:
                text = ax.text(slot["start"] + width / 2, bottom + height / 2,
                               slot["firing"], ha="center", va="center", fontsize=size,
                               clip_on=True)
                labels.append((text, slot["start"], slot["end"], _shorter(slot["firing"], size)))
    ax.set_yticks(range(len(rows)), rows)
    ax.set_ylim(len(rows) - 0.4, -1.0)      # first row on top, room for the period bracket
    ax.set_xlabel("time")
    ax.set_ylabel("PE / CN" if mapped else "actor")
    ax.grid(True, axis="x", alpha=0.3)
    handles = [Patch(facecolor=colors[a], edgecolor="black", label=a) for a in actors]
    if mapped:
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="///",
                             label="transfer on a CN"))
    _mark_period(ax, document, ends)
    ax.legend(handles=handles + ax.get_legend_handles_labels()[0], fontsize=8,
              loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.set_xlim(0, max(span, _number(document.get("period")) or 0) * 1.04)
    _fit_labels(ax, labels)


def _shorter(label: str, size: int) -> list[tuple[str, int]]:
    """What to try when ``label`` is wider than its bar: a transfer ``channel:a#0`` as
    its channel, a firing in a smaller font."""
    channel, sep, _ = label.partition(":")
    return [(channel, size), (channel, 6)] if sep else [(label, 6)]


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
    if end is not None:
        ax.axvline(end, color=MAKESPAN_COLOR, linestyle="--", linewidth=1,
                   label=f"{name} = {end:.4g}")
    period = _number(document.get("period"))
    if period is not None and period > 0 and period != float("inf"):
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


def plot_schedule(analysed, path, inputs=()) -> Path:
    """Write the Gantt chart of ``analysed`` (what ``mapeval analyse`` computes: a
    document ``to_dict()`` with the names of its ``rows``, ``actors`` and ``cns``) to
    ``path`` (PNG, SVG or PDF by extension)."""
    plot_format(path)
    document = analysed.to_dict()
    rows = analysed.rows
    if not document.get("schedule"):
        from mapping.errors import InputError
        raise InputError("plot schedule: the analysis has no schedule to draw")
    fig = new_figure(10.0, 1.6 + 0.45 * max(len(rows), 2))
    ax = fig.add_subplot(1, 1, 1)
    draw_schedule(ax, document, rows, analysed.actors, analysed.cns)
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
    ax.set_title(title + "\n" + ", ".join(f for f in figures if f), fontsize=10)
    return save_figure(fig, path, inputs)


def plot_from_inputs(path, *, inputs=(), analysed) -> Path:
    """``mapeval plot schedule`` (see :mod:`mapping.plots`)."""
    return plot_schedule(analysed, path, inputs=inputs)
