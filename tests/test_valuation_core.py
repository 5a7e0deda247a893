"""The valuation core (:mod:`mapping.evaluation.core`) is one function for one
alternative and for many: ``n`` mappings valued at once (their element values arrays)
equal each mapping valued alone (plain numbers) by the reference evaluator, under every
aggregation that combines element values, charged copies, memory traffic and a system
metric; the missing-model rule names the first alternative it refuses; and a small
case by hand."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dsl
from dsl.mappings import Mapping
from mapping.errors import MappingError
from mapping.evaluation.core import Placement, placed_values
from mapping.evaluation.reference import TokenLists, evaluate
from mapping.semantics.metrics import is_charged
from mapping.semantics.problem import bind_problem
from mapping.semantics.routing import place_tokens
from mapping.semantics.traffic import tokens_by_pe

SDF = """sdf app {
    actor a [quanta = 1000, bytes = 400]
    actor b [quanta = 3000, bytes = 100]
    actor c [quanta = 500]
    a -> b [size = 200]
    b -> c [prod = 2, cons = 1, size = 50]
    a -> c [prod = 2, cons = 1, size = 10]
}
"""
ACTORS, PES = ["a", "b", "c"], ["p0", "p1", "p2"]


def moa(charge: str, aggregate: str, memory: bool, energy_on_bus: bool) -> str:
    roof = 'roofline(peak = 1e6, bandwidth = 2e5, memory = "bus", miss = 0.5)' if memory \
        else "lsla(alpha = 2e-6, beta = 1e-5)"
    bus_energy = ", energy = lsla(alpha = 1e-9, beta = 0)" if energy_on_bus else ""
    return f"""moa board {{
    param s = 0.25
    lambda = 0.5
    metric total = energy[sum] + s * time[max]
    aggregate = {aggregate}
    pe p0 [time = {roof}, energy = lsla(alpha = 3e-9, beta = 0)]
    pe p1 [time = lsla(alpha = 1e-6, beta = 0), energy = lsla(alpha = 1e-9, beta = 2e-7)]
    pe p2 [time = lsla(alpha = 4e-6, beta = 3e-6), energy = lsla(alpha = 5e-9, beta = 0)]
    cn bus [time = lsla(alpha = 1e-7, beta = 2e-6){bus_energy}, charge = {charge}]
    cn link [time = bandwidth(B = 1e8)]
    p0 -- bus
    p1 -- bus
    p2 -- bus
    p1 -- link
    p2 -- link
}}
"""


class Mappings(Placement):
    """Several mappings of one problem at once, their tokens as objects (the
    reference's lists, ``n`` of them)."""

    def __init__(self, problem, mappings):
        self.problem, self.mappings, self.count = problem, mappings, len(mappings)

    def parts(self, metric):
        p = self.problem
        placed = [place_tokens(p.app, p.arch, m, p.activity, metric, charge=is_charged(metric))
                  for m in self.mappings]
        mapping_of = {id(t): m for t, m in zip(placed, self.mappings)}
        return TokenLists(p.arch, placed, metric,
                          lambda t: tokens_by_pe(p.app, p.arch, mapping_of[id(t)], t))


@settings(max_examples=60, deadline=None)
@given(charge=st.sampled_from(["self", "ends", "both"]),
       aggregate=st.sampled_from(["sum", "max", "exclusive"]),
       memory=st.booleans(), energy_on_bus=st.booleans(),
       metric=st.sampled_from(["time", "energy", "total"]),
       rows=st.lists(st.tuples(*[st.sampled_from(PES)] * len(ACTORS)), min_size=2,
                     max_size=6))
def test_many_alternatives_at_once_equal_each_alone(charge, aggregate, memory, energy_on_bus,
                                                    metric, rows):
    app, = dsl.parse_sdf(SDF)
    arch, = dsl.parse_moa(moa(charge, aggregate, memory, energy_on_bus))
    problem = bind_problem(app, arch)
    mappings = [Mapping(f"m{k}", dict(zip(ACTORS, row))) for k, row in enumerate(rows)]
    got = placed_values(problem.arch, Mappings(problem, mappings), metric, None,
                        problem.params)
    assert got.value.shape == (len(rows),)
    for k, m in enumerate(mappings):
        alone = evaluate(problem, m, metric)
        assert math.isclose(got.value[k], alone.value, rel_tol=1e-13, abs_tol=0), k
        one = got.one(k)
        assert one.bottleneck == alone.bottleneck
        for e in alone.elements:
            assert math.isclose(one.values[e.name], e.value, rel_tol=1e-13, abs_tol=0)


def test_the_missing_model_rule_names_the_first_refused_alternative():
    """``power`` is modelled on p1 only: a mapping on p0, p2 and the bus between them
    alone has no value."""
    app, = dsl.parse_sdf(SDF)
    text = moa("self", "sum", False, False).replace(
        "pe p1 [time = lsla(alpha = 1e-6, beta = 0),",
        "pe p1 [time = lsla(alpha = 1e-6, beta = 0), power = lsla(alpha = 0, beta = 2),")
    arch, = dsl.parse_moa(text)
    problem = bind_problem(app, arch)
    fine = Mapping("fine", {"a": "p1", "b": "p1", "c": "p2"})
    bad = Mapping("bad", {"a": "p0", "b": "p2", "c": "p2"})
    assert evaluate(problem, fine, "power").value == pytest.approx(2.0)
    with pytest.raises(MappingError, match=r"no element it uses has a model for metric "
                                           r"'power' \(unmodelled: p0, p2, bus\)"):
        placed_values(problem.arch, Mappings(problem, [fine, bad]), "power")


def test_charged_copies_by_hand():
    """Two PEs on one bus that charges the ends: ``a`` on p1, ``b`` and ``c`` on p2.
    ``lsla`` costs ``Σ count·(alpha·quanta + beta)``.  Channel a->b puts 1 token of 200
    on the bus: ``1e-7·200 + 2e-6 = 2.2e-5``; a->c one of its 2 × 10 quanta:
    ``1e-7·20 + 2e-6 = 4e-6``; each end
    pays ``λ = 0.5`` times that, the bus keeps nothing (``ends``).  p1 runs ``a``
    (``1e-6·1000``), p2 ``b`` once and ``c`` twice (``4e-6·quanta + 3e-6`` each)."""
    app, = dsl.parse_sdf(SDF)
    arch, = dsl.parse_moa(moa("ends", "sum", False, False))
    problem = bind_problem(app, arch)
    m = Mapping("m", {"a": "p1", "b": "p2", "c": "p2"})
    got = evaluate(problem, m, "time")
    charged = 0.5 * (1e-7 * 200 + 2e-6) + 0.5 * (1e-7 * 20 + 2e-6)
    p1 = 1e-6 * 1000 + charged
    p2 = (4e-6 * 3000 + 3e-6) + 2 * (4e-6 * 500 + 3e-6) + charged
    values = {e.name: e.value for e in got.elements}
    assert values["p1"] == pytest.approx(p1, rel=1e-12)
    assert values["p2"] == pytest.approx(p2, rel=1e-12)
    assert values["bus"] == 0.0
    assert got.value == pytest.approx(p1 + p2, rel=1e-12)
    assert np.isfinite(got.value)
