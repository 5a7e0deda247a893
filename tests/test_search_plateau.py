"""Local search under ``max`` on plateaus (issue 13): when several elements tie at the
maximum, no single move lowers it; the descents break ties by the pressure (sum of
squared element values) and walk off the plateau."""
from __future__ import annotations

import pytest

from mapping.problem import bind_problem
from mapping.search import search
from moa import Architecture
from moc import SDFGraph

from search_problems import lsla


def plateau_problem(actors: int = 12, pes: int = 3):
    """``actors`` equal actors without channels on ``pes`` equal PEs: the optimum puts
    ``actors / pes`` on each; a random start usually has ties at the maximum."""
    g = SDFGraph("flat")
    for i in range(actors):
        g.add_actor(f"a{i}", quanta=100)
    a = Architecture("equal", aggregate="max")
    a.add_cn("bus", costs={"time": lsla(1e-9)})
    for p in range(pes):
        a.add_pe(f"p{p}", costs={"time": lsla(1e-9)})
        a.add_link(f"p{p}", "bus")
    return bind_problem(g, a)


def test_greedy_walks_off_plateaus_of_the_maximum():
    # 60 equal actors on 6 PEs: without the tie-break every seed stopped at 11 actors on
    # the busiest PE within this budget
    problem = plateau_problem(60, 6)
    found = [search(problem, "time", "max", strategy="greedy", budget=3000, seed=s,
                    shards=1).value for s in range(8)]
    assert found == pytest.approx([10 * 100e-9] * 8)


@pytest.mark.parametrize("strategy", ["greedy", "tabu", "anneal"])
@pytest.mark.parametrize("aggregate", ["sum", "max"])
def test_delta_evaluation_of_an_application_without_channels(strategy, aggregate):
    # the CN loads of moves without channels were counted in integers: adding the
    # state's float loads to them raised
    res = search(plateau_problem(6, 2), "time", aggregate, strategy=strategy, budget=400,
                 shards=1)
    assert res.value == pytest.approx(6 * 100e-9 if aggregate == "sum" else 3 * 100e-9)
