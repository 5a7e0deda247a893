"""Howard's improvement steps spread over the edges into the nodes they changed
(moc.policy_spread): the index of those edges, and a ladder that plain policy iteration
climbs a rung a step.  The ratios with every step spread are checked against a brute
force in ``test_cycle_ratio.py``."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from moc.policy_spread import IntoEdges


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.integers(0, n - 1), max_size=40),
    st.sets(st.integers(0, n - 1)))))
def test_into_edges_are_the_edges_whose_head_is_given(case):
    n, heads, nodes = case
    v = np.array(heads, dtype=np.int64)
    nodes = np.array(sorted(nodes), dtype=np.int64)
    found = IntoEdges(v, n).of(nodes).tolist()
    assert sorted(found) == [e for e, head in enumerate(heads) if head in set(nodes.tolist())]
    # node by node, each node's edges in order
    assert [heads[e] for e in found] == sorted(heads[e] for e in found)


def _ladder(rungs):
    """Node ``i < rungs`` steps to ``i + 1`` (weight 0) or leaves to ``s`` (weight
    ``2·(rungs − i)``, less the further along); node ``rungs`` leaves with ``10·rungs``;
    ``s`` returns to 0 with one token.  Howard's first policy leaves at once; the best
    path climbs to the top, and plain policy iteration learns it one rung a step."""
    s = rungs + 1
    u, v, w, h = [], [], [], []
    for i in range(rungs):
        u += [i, i]
        v += [i + 1, s]
        w += [0, 2 * (rungs - i)]
        h += [0, 0]
    u += [rungs, s]
    v += [s, 0]
    w += [10 * rungs, 0]
    h += [0, 1]
    return rungs + 2, *(np.array(a, dtype=np.int64) for a in (u, v, w, h))


def counted_steps(monkeypatch) -> list:
    """A list that gets an entry per evaluation of a policy (a step of Howard's)."""
    import moc.cycle_ratio as cr
    steps = []
    evaluate = cr._policy_values

    def counted(*args, **kwargs):
        steps.append(1)
        return evaluate(*args, **kwargs)
    monkeypatch.setattr(cr, "_policy_values", counted)
    return steps


def test_a_ladder_is_climbed_in_a_few_steps_not_a_rung_a_step(monkeypatch):
    import moc.cycle_ratio as cr
    steps = counted_steps(monkeypatch)
    n, u, v, w, h = _ladder(200)
    ratio, cycle = cr.max_cycle_ratio_arrays(n, u, v, w, h)
    assert ratio == 2000 and len(cycle) == 202
    assert len(steps) <= 8
    steps.clear()
    monkeypatch.setattr(cr, "CREEP_STEPS", 10 ** 9)     # never spread: a rung a step
    assert cr.max_cycle_ratio_arrays(n, u, v, w, h)[0] == 2000
    assert len(steps) > 100


def test_a_chain_to_the_best_cycle_is_climbed_in_a_few_steps_not_an_edge_a_step(
        monkeypatch):
    """Nodes ``0..L`` with a loop each, of ratio 1 (weight 1, height 1) but ``L``'s of
    ratio 10, and an edge ``i -> i + 1`` (weight 0, height 1; ``L -> 0`` closes the
    ring, one strongly connected component).  Howard's first policy
    takes the loops; every node reaches ratio 10 along the chain, and plain steps
    toward larger ratios switch one node each (the one next to those that reach it)."""
    import moc.cycle_ratio as cr
    steps = counted_steps(monkeypatch)
    last = 300
    nodes = np.arange(last + 1)
    u = np.concatenate([nodes, nodes])
    v = np.concatenate([nodes, nodes[1:], [0]])
    w = np.concatenate([np.ones(last, dtype=np.int64), [10],
                        np.zeros(last + 1, dtype=np.int64)])
    h = np.ones(len(u), dtype=np.int64)
    ratio, cycle = cr.max_cycle_ratio_arrays(last + 1, u, v, w, h)
    assert ratio == 10 and cycle == (last,)
    assert len(steps) <= 5
    steps.clear()
    monkeypatch.setattr(cr, "climb", lambda *args: None)     # an edge a step
    assert cr.max_cycle_ratio_arrays(last + 1, u, v, w, h)[0] == 10
    assert len(steps) > 100
