"""Where the storage-throughput front ends (issue 42): the distribution found to reach
the throughput with unbounded buffers and the least size any such distribution has
(``moc.tradeoff.front_top``, and ``top`` / ``top_least`` of a front stopped by its
budget), against the complete front on small random graphs and SDF3's examples, and
timed by the bounded state space (not the K-periodic scheduling that found them)."""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings

import dsl
from moc import throughput
from moc.errors import DeadlockError
from moc.record import replace
from moc.timing import prepared
from moc.tradeoff import (TradeOff, _BoundedExecution, bounded_graph, capacity_bounds,
                          front_top, tradeoff)
from test_tradeoff import small_graphs

EXAMPLES = Path(__file__).resolve().parents[1] / "tests" / "data" / "sdf3_examples"


def _state_space(graph, capacities):
    graph, durations, q, _ = prepared(graph, "exec")
    return _BoundedExecution(graph, durations, q).run([capacities[n]
                                                       for n in graph.channels])[0]


def _check(graph, front):
    """The top reaches the most, no channel of it can lose a step and still reach it,
    and the front's last point lies between the least size and the top's."""
    top, least = front_top(graph)
    (dist,) = top.distributions
    bounds = capacity_bounds(graph.bind())
    assert top.throughput == front.max_throughput == _state_space(graph, dist)
    for name, ch in graph.channels.items():
        lower, step = bounds[name]
        if ch.src != ch.dst and dist[name] - step >= lower:
            assert _state_space(graph, {**dist, name: dist[name] - step}) < top.throughput
    last = front.points[-1]
    assert last.throughput == front.max_throughput
    assert least <= last.size <= top.size


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_graphs())
def test_the_top_bounds_the_last_point_of_the_front(graph):
    try:
        front = tradeoff(graph, method="kperiodic", max_explored=400)
    except DeadlockError:
        return
    assume(front.complete and front.max_throughput < float("inf"))
    _check(graph, front)


@pytest.mark.parametrize("name", ["samplerate", "modem", "satellite"])
def test_the_top_of_sdf3_s_examples(name):
    (graph,) = dsl.load_sdf(EXAMPLES / f"{name}.sdf")
    _check(graph, tradeoff(graph))


def test_mp3playback_ends_at_2910_tokens():
    """SDF3 gives no front in 60 s, and the search proves it only to about 2000 tokens;
    its last point is 1/120000 at 2910 tokens: src (10000 per firing, a self-loop) is
    the bottleneck, and claims space for 441 tokens as it starts while the 441 it wrote
    last are still being read one by one (22 each), so ch1 needs 882; ch0 needs 2016
    = 1536 + 480 (a step of 96), ch2 and ch3 two each, the four self-loops two each."""
    (graph,) = dsl.load_sdf(EXAMPLES / "mp3playback.sdf")
    top, least = front_top(graph)
    assert top.throughput == Fraction(1, 120000) and least == top.size == 2910
    (dist,) = top.distributions
    assert dict(dist) == {"mp3s": 2, "srcs": 2, "apps": 2, "dacs": 2, "ch0": 2016,
                          "ch1": 882, "ch2": 2, "ch3": 2}
    assert _state_space(graph, dist) == Fraction(1, 120000)
    for name, less in (("ch0", 2016 - 96), ("ch1", 881), ("ch2", 1)):
        assert _state_space(graph, {**dist, name: less}) < Fraction(1, 120000)
    assert throughput(bounded_graph(graph, dist)).throughput == Fraction(1, 120000)


def test_a_budget_stop_gives_the_top():
    (graph,) = dsl.load_sdf(EXAMPLES / "mp3playback.sdf")
    result = tradeoff(graph, budget=12)
    assert not result.complete and result.top is not None
    assert (result.top.size, result.top_least) == (2910, 2910)
    assert result.to_dict()["top"]["size"] == 2910


def _stopped(graph):
    """mp3playback's front as a budget stop leaves it: two points proven to 1989, and
    its top (from ``front_top``)."""
    top, least = front_top(graph)
    points = tradeoff(graph, method="kperiodic", max_explored=5).points[:2]
    return TradeOff(points, Fraction(1, 120000), False, 1989, 5, top=top, top_least=least)


def test_the_table_and_the_plot_give_the_top(tmp_path):
    from mapping.cli.commands.tradeoff import Front
    from mapping.plots.tradeoff import draw_front
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    (graph,) = dsl.load_sdf(EXAMPLES / "mp3playback.sdf")
    front = Front("mp3playback", "exec", _stopped(graph), graph)
    text = str(front).splitlines()
    at = text.index("  stopped at the budget: the front is exact up to total size 1989")
    assert text[at + 1] == ("  max throughput reached with size 2910: mp3s=2, srcs=2, "
                            "apps=2, dacs=2, ch0=2016, ch1=882, ch2=2, ch3=2")
    assert text[at + 2] == "    the front's last point (no smaller distribution reaches it)"
    wider = Front("mp3playback", "exec", replace(front.tradeoff, top_least=2500), graph)
    assert "    the front's last point has a size from 2500 to 2910" in str(wider)
    fig, ax = plt.subplots()
    draw_front(ax, wider)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "reaches it: size 2910, the last point at 2500-2910" in labels
    plt.close(fig)
