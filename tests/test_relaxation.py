"""Issue 13: the cluster relaxation (alike PEs merged into one of averaged load) bounds
the ``max`` optimum from below, and ``exact`` proves that bound first."""
from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mapping.evaluation.batch import BatchEvaluator
from mapping.semantics.problem import bind_problem
from mapping.search import exact
from mapping.search.common import Objectives, Space
from mapping.search.engine import prepare
from mapping.search.relaxation import TablesEvaluator, mergeable_classes, relax
from search_instances import instance
from test_exact_max import OPTIMA, stored


def compiled(stem):
    setup = prepare(stored(stem), "time", "max")
    return setup, setup.objectives.evaluators[0]


def test_alike_pes_merge_and_the_others_stay():
    # a10_p4_s0: two little cores behind their own CN, one big core, one DSP
    setup, ev = compiled("a10_p4_s0")
    merged = relax(ev, setup.space.allowed)
    assert merged.classes == [[0, 1], [2], [3]]
    assert merged.evaluator.pes == ["little[0]+little[1]", "big[0]", "dsp[0]"]
    assert merged.project([1, 0, 2, 3, 1, 0, 0, 2, 3, 1]).tolist() == \
        [0, 0, 1, 2, 0, 0, 0, 1, 2, 0]


def test_merged_values_by_hand():
    setup, ev = compiled("a10_p4_s0")
    merged = relax(ev, setup.space.allowed)
    A = ev.n_actors
    elements = list(ev.elements)
    lam = ev.tables.lambda_

    def fine_loads(row):
        return dict(zip(elements, ev.loads(np.array([row]))[0]))

    # everything on one little core: the class carries half of that core's load
    row = [0] * A
    loads = fine_loads(row)
    assert merged.evaluator.evaluate(merged.project(row)[None])[0] == \
        pytest.approx(loads["little[0]"] / 2, rel=1e-12)
    assert ev.evaluate(np.array([row]))[0] == pytest.approx(loads["little[0]"], rel=1e-12)
    # everything on the big core (a class of one): the same value as the mapping's
    row = [2] * A
    assert merged.evaluator.evaluate(merged.project(row)[None])[0] == \
        pytest.approx(ev.evaluate(np.array([row]))[0], rel=1e-12)
    # the little cores in turn: their average; the channels between them are inner
    # channels of the class, which a route within one core would not charge to l2
    row = [i % 2 for i in range(A)]
    loads = fine_loads(row)
    assert loads["l2_little"] > 0 and loads["bus"] == 0
    want = (loads["little[0]"] + loads["little[1]"]) / 2
    assert merged.evaluator.evaluate(merged.project(row)[None])[0] == \
        pytest.approx(want, rel=1e-12)
    assert ev.evaluate(np.array([row]))[0] == pytest.approx(
        max(loads["little[0]"], loads["little[1]"], lam * loads["l2_little"]), rel=1e-12)


def test_spread_puts_each_class_largest_first_onto_its_least_loaded_member():
    # the relaxation's mappings go back to the PEs by cut_starts.spread; a10_p4_s0:
    # class 0 the two little cores, sizes by hand, largest first: 9 on little[0], 7 on
    # little[1], 4 on little[1] (7 < 9), 3 on little[0] (9 < 11)
    from mapping.search.cut_starts import spread
    setup, ev = compiled("a10_p4_s0")
    merged = relax(ev, setup.space.allowed)
    proc = np.ones((10, 4))
    proc[[0, 1, 2, 3], :2] = [[3, 3], [9, 9], [4, 4], [7, 7]]
    row = np.array([0, 0, 0, 0, 1, 2, 1, 2, 1, 2])
    lifted = spread(row, merged.classes, replace(ev.tables, proc=proc), np.zeros((3, 3)))
    assert lifted[[1, 3, 2, 0]].tolist() == [0, 1, 1, 0]
    assert lifted[4:].tolist() == [2, 3, 2, 3, 2, 3]
    assert (merged.project(lifted) == row).all()


def test_cluster_floor_hands_out_its_mapping_lifted():
    """The relaxation's mapping, lifted, is a mapping of the allowed PEs whose
    projection is the merged program's optimum: the bound, solved to the end."""
    setup, ev = compiled("a30_p8_s1")
    found = []
    bound = exact.cluster_floor(setup, found=found)
    (row,) = found
    assert setup.space.allowed[np.arange(len(row)), row].all()
    merged = relax(ev, setup.space.allowed)
    assert merged.evaluator.evaluate(merged.project(row)[None])[0] == \
        pytest.approx(bound, rel=1e-6)
    assert ev.evaluate(row[None])[0] >= bound


def test_no_two_pes_alike_no_relaxation():
    setup, ev = compiled("a10_p4_s0")
    allowed = setup.space.allowed.copy()
    allowed[0, 1] = False                      # one actor may not use little[1]
    assert mergeable_classes(ev.tables, allowed) == [[0], [1], [2], [3]]
    assert relax(ev, allowed) is None
    # an actor that cannot run on the big core: delta loads take no inf, so no merging
    proc = ev.tables.proc.copy()
    proc[0, 2] = np.inf
    impossible = SimpleNamespace(tables=replace(ev.tables, proc=proc),
                                 aggregation=ev.aggregation, pes=ev.pes, cns=ev.cns,
                                 metric=ev.metric)
    assert relax(impossible, setup.space.allowed) is None


@settings(max_examples=25, deadline=None)
@given(n=st.integers(3, 14), P=st.integers(4, 10), seed=st.integers(0, 50),
       draw=st.integers(0, 2 ** 31))
def test_projection_never_raises_the_value(n, P, seed, draw):
    """The relaxation's promise: value(project(x)) ≤ value(x) for every mapping x."""
    problem = bind_problem(*instance(n, P, seed))
    ev = BatchEvaluator(problem, "time", "max")
    allowed = np.ones((n, P), dtype=bool)
    merged = relax(ev, allowed)
    assert merged is not None                   # at least two little cores
    X = np.random.default_rng(draw).integers(0, P, size=(200, n))
    fine = ev.evaluate(X)
    coarse = merged.evaluator.evaluate(merged.project(X))
    assert np.all(coarse <= fine * (1 + 1e-12))


@pytest.mark.parametrize("stem", ["a30_p8_s1", "a50_p12_s4"])
def test_stored_best_mappings_respect_the_relaxation(stem):
    setup, ev = compiled(stem)
    merged = relax(ev, setup.space.allowed)
    row = ev.encode(OPTIMA[stem]["mapping"])
    assert merged.evaluator.evaluate(merged.project(row)[None])[0] <= OPTIMA[stem]["value"]


def test_relaxation_closes_most_of_the_gap_on_a30_p8_s1():
    # the full program's root node (its LP relaxation and cuts) proves far less than
    # the merged program solved to optimality, which leaves < 1% to the stored best
    setup, ev = compiled("a30_p8_s1")
    root = exact._program(ev, setup.space.allowed, exact.symmetry_classes(setup), None,
                          1e-9, None, 1)
    merged = relax(ev, setup.space.allowed)
    res = exact._program(merged.evaluator, merged.allowed, [], None, 1e-9, None, None)
    assert res.optimal
    best = OPTIMA["a30_p8_s1"]["value"]
    assert root.bound < res.bound <= best
    assert (best - res.bound) / best < 0.01


def test_an_incumbent_at_the_floor_is_optimal_without_the_full_program(monkeypatch):
    # two actors with equal work and no channel on two alike cores: the balanced
    # mapping meets the averaged bound, so exact stops after the relaxation
    setup, ev = compiled("a10_p4_s0")
    t = ev.tables
    proc = np.repeat(t.proc[:1], 2, axis=0)
    none = np.zeros(0, dtype=np.intp)
    tables = replace(t, proc=proc, src=none, dst=none, comm=np.zeros((0, t.comm.shape[1])),
                     charged=None)
    small = TablesEvaluator(tables, ev.aggregation, ev.metric, ev.cns, ev.pes)
    allowed = np.zeros((2, 4), dtype=bool)
    allowed[:, :2] = True                          # the two little cores only
    tiny = SimpleNamespace(objectives=Objectives([small]),
                           space=Space(["a", "b"], list(ev.pes), allowed), info={})
    programs = []
    monkeypatch.setattr(exact, "symmetry_classes", lambda setup: programs.append(1) or [])
    res = exact.solve(tiny, incumbent=np.array([0, 1]))
    assert res.optimal and res.gap == 0.0 and not programs
    assert res.value == pytest.approx(proc[0, 0], rel=1e-12)
    assert res.relaxation_bound == pytest.approx(res.value, rel=1e-9)


def test_cli_names_the_relaxation_bound(capsys):
    import itertools
    import re
    from mapping.cli.main import main
    from test_exact_max import DATA
    code = main(["search", str(DATA / "a10_p4_s0.sdf"), str(DATA / "a10_p4_s0.moa"),
                 "--strategy", "exact", "--engine", "milp", "--budget", "200",
                 "--time-limit", "60"])
    out, err = capsys.readouterr()
    assert code == 0, err
    found = re.search(r"proven lower bound (\S+) \(cluster relaxation (\S+)\), gap", out)
    assert found and "(within the time limit)" in out
    # HiGHS's optimum of the merged problem is every merged mapping's minimum,
    # enumerated here (3 classes, 10 actors: 59,049 mappings)
    setup, ev = compiled("a10_p4_s0")
    merged = relax(ev, setup.space.allowed)
    X = np.array(list(itertools.product(range(3), repeat=ev.n_actors)))
    assert float(found.group(2)) == pytest.approx(merged.evaluator.evaluate(X).min(),
                                                  rel=1e-5)
    assert float(found.group(2)) <= OPTIMA["a10_p4_s0"]["value"]


def test_members_whose_own_routes_differ_charge_only_what_every_inner_route_uses():
    # little[0]'s channels to itself made to cross l2_little while little[1]'s do not:
    # the alike test compares routes to other PEs only, so the class keeps both and
    # its inner channels may charge only the CNs common to every inner route
    setup, ev = compiled("a10_p4_s0")
    t = ev.tables
    P = ev.n_pes
    l2 = list(ev.cns).index("l2_little")
    route = t.route.copy()
    route[0 * P + 0, l2] = 1
    fine = TablesEvaluator(replace(t, route=route), ev.aggregation, ev.metric, ev.cns,
                           ev.pes)
    merged = relax(fine, setup.space.allowed)
    assert merged.classes[0] == [0, 1]
    inner = merged.evaluator.tables.route.reshape(3, 3, -1)[0, 0]
    assert inner.tolist() == [0.0, 0.0]
    X = np.random.default_rng(3).integers(0, P, size=(500, ev.n_actors))
    X[:250] %= 2                                   # many on the little cores alone
    assert np.all(merged.evaluator.evaluate(merged.project(X))
                  <= fine.evaluate(X) * (1 + 1e-12))
