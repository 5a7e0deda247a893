"""The storage-throughput trade-off of a dataflow application (``mapeval plot
tradeoff``): throughput against total buffer size, the Pareto points joined by the
staircase of the best throughput any size reaches, as in Stuijk, Geilen & Basten (DAC
2006, Fig. 4); a search stopped by its budget marks the size up to which it is proven,
and the distribution found to reach the largest throughput (a star)."""
from __future__ import annotations

from mapping.plots import style
from mapping.plots.figure_io import new_figure, plot_format, save_figure


def draw_front(ax, front) -> None:
    """Draw ``front`` (a :class:`mapping.cli.commands.tradeoff.Front`) on ``ax``."""
    t = front.tradeoff
    if not t.points:
        raise ValueError("no trade-off point found within the budget: nothing to draw")
    x = [p.size for p in t.points]
    y = [float(p.throughput) for p in t.points]
    ax.step(x + [max(x[-1], t.proven_size)], y + [y[-1]], where="post", color=style.MUTED,
            linewidth=1, zorder=1)
    ax.scatter(x, y, color=style.BLUE, s=30 if len(x) <= 30 else 14, zorder=2,
               edgecolor="black", linewidths=0.4)
    for size, value, p in zip(x, y, t.points):
        if len(x) <= 12:
            ax.annotate(str(size), (size, value), textcoords="offset points",
                        xytext=(4, -10), fontsize=style.SMALL - 1)
    maximum = float(t.max_throughput)
    if maximum < float("inf"):
        ax.axhline(maximum, color=style.HIGHLIGHT, linestyle="--", linewidth=0.8,
                   label=f"unbounded buffers: {style.number(maximum)}")
    if t.top is not None:
        low, high = t.last_sizes
        ax.scatter([t.top.size], [float(t.top.throughput)], marker="*", s=90,
                   color=style.HIGHLIGHT, edgecolor="black", linewidths=0.4, zorder=3,
                   label=f"reaches it: size {t.top.size}, " + (
                       "the last point" if low == high else
                       f"the last point at {low}-{high}"))
    if not t.complete:
        ax.axvline(t.proven_size, color=style.BLACK, linestyle=":", linewidth=0.8,
                   label=f"proven up to size {t.proven_size} (budget)")
    ax.set_xlabel("total buffer size (tokens)")
    ax.set_ylabel(style.label("throughput", "iterations / time unit"))
    style.tidy(ax)
    from matplotlib.ticker import MaxNLocator, ScalarFormatter
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.xaxis.set_major_formatter(ScalarFormatter(useOffset=False))
    if maximum < float("inf") or not t.complete:
        ax.legend(loc="lower right", fontsize=style.SMALL - 1)
    ax.set_title(f"storage-throughput trade-off of '{front.application}': {len(x)} Pareto "
                 f"points, {t.explored} distributions explored")
    ax.grid(True, alpha=0.3)


@style.styled
def plot_tradeoff(front, path, inputs=()) -> None:
    """Draw the trade-off ``front`` to ``path``."""
    plot_format(path)
    fig = new_figure()
    draw_front(fig.add_subplot(), front)
    save_figure(fig, path, inputs)


def plot_from_inputs(path, *, inputs=(), front) -> None:
    """``mapeval plot tradeoff`` (see :mod:`mapping.plots`)."""
    plot_tradeoff(front, path, inputs)
