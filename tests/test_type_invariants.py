"""The types check their own rules when built through the API: a bad rate, size, delay,
count, lambda or model argument is a ValueError naming the element and the value, raised
by ``add_*`` (never a ZeroDivisionError or a nonsense result later)."""
from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moa import Architecture, CostSpec
from moa.errors import ArchitectureError, CostModelError
from moc.errors import SDFError
from moc.graph import SDFGraph
from moc.phases import Phases
from moc.repetition import repetition_vector


def _pair():
    g = SDFGraph("g")
    g.add_actor("a")
    g.add_actor("b")
    return g


# --- graphs --------------------------------------------------------------------------

@pytest.mark.parametrize("field, value, needs", [
    ("prod", -3, "prod must be a positive integer"),
    ("prod", 0, "prod must be a positive integer"),
    ("cons", 0, "cons must be a positive integer"),
    ("cons", -1, "cons must be a positive integer"),
    ("prod", 1.5, "prod must be a positive integer"),
    ("prod", True, "prod must be a positive integer"),
    ("prod", "2", "prod must be a positive integer"),
    ("delay", -1, "delay must be a non-negative integer"),
    ("delay", 0.5, "delay must be a non-negative integer"),
    ("size", -4, "size must be a finite non-negative number"),
    ("size", math.inf, "size must be a finite non-negative number"),
    ("prod", [1, -1], "prod (a phase) must be a non-negative integer"),
    ("prod", [0, 0], "the phases of prod sum to 0"),
    ("cons", [], "an empty list of phases"),
    ("delay", [1, 2], "delay cannot be given per phase"),
    ("size", Phases([1, 2]), "size cannot be given per phase"),
])
def test_a_bad_channel_value_is_refused_naming_the_channel(field, value, needs):
    g = _pair()
    with pytest.raises(SDFError) as info:
        g.add_channel("a", "b", name="link", **{field: value})
    assert isinstance(info.value, ValueError)
    assert "'link'" in str(info.value) and needs in str(info.value)
    assert info.value.attribute == field
    assert not g.channels


def test_the_example_of_the_issue_is_refused_and_no_division_by_zero():
    g = _pair()
    with pytest.raises(ValueError, match=r"channel 'a->b': prod must be .* got -3"):
        g.add_channel("a", "b", prod=-3, cons=1)
    with pytest.raises(ValueError, match=r"channel 'a->b': cons must be .* got 0"):
        g.add_channel("a", "b", prod=1, cons=0)
    g.add_channel("a", "b", prod=3, cons=2)
    assert repetition_vector(g) == {"a": 2, "b": 3}


@pytest.mark.parametrize("attrs, needs", [
    ({"quanta": -1}, "quanta must be a finite non-negative number, got -1"),
    ({"quanta": math.inf}, "quanta must be a finite non-negative number, got inf"),
    ({"quanta": [1, -2]}, "quanta must be a finite non-negative number, got -2"),
    ({"S": math.nan}, "S is not a number (nan)"),
    ({"exec": []}, "an empty list of phases"),
])
def test_a_bad_actor_value_is_refused_naming_the_actor(attrs, needs):
    g = SDFGraph("g")
    with pytest.raises(SDFError) as info:
        g.add_actor("k", **attrs)
    assert "'k'" in str(info.value) and needs in str(info.value)
    assert not g.actors


def test_ends_names_and_phase_counts_are_checked_when_added():
    g = _pair()
    with pytest.raises(SDFError, match="channel 'a->zz' uses unknown actor 'zz'") as info:
        g.add_channel("a", "zz")
    assert info.value.attribute == "dst"
    with pytest.raises(SDFError, match="duplicate actor 'a'"):
        g.add_actor("a")
    with pytest.raises(SDFError, match="actor name must be a non-empty string"):
        g.add_actor("")
    g.add_channel("a", "b", name="c", prod=[1, 2])
    with pytest.raises(SDFError, match="duplicate channel 'c'"):
        g.add_channel("b", "a", name="c")
    with pytest.raises(SDFError, match="actor 'a' has 2 phases by prod of channel 'c' but 3"):
        g.add_channel("a", "b", name="d", prod=[1, 1, 1])


def test_whole_numbers_and_lists_are_normalised():
    g = _pair()
    ch = g.add_channel("a", "b", prod=2.0, cons=Fraction(3), delay=4.0)
    assert (ch.prod, ch.cons, ch.delay) == (2, 3, 4)
    assert all(type(v) is int for v in (ch.prod, ch.cons, ch.delay))
    g2 = _pair()
    ch = g2.add_channel("a", "b", prod=[1, 0, 2])
    assert isinstance(ch.prod, Phases) and ch.prod == (1, 0, 2)


def test_expressions_wait_for_bind():
    import dsl
    n = dsl.parse_expression("n - 3")
    g = SDFGraph("g", {"n": 4})
    g.add_actor("a")
    g.add_actor("b")
    g.add_channel("a", "b", name="c", prod=n, cons=[n, 1])    # not known yet: accepted
    assert g.bind().channels["c"].prod == 1
    with pytest.raises(SDFError, match=r"channel 'c': prod must be a positive integer .* got 0"):
        g.bind({"n": 3})


def test_bind_checks_again_what_was_not_added_through_the_api():
    from moc.record import replace

    from moc.graph import Actor
    g = _pair()
    g.add_channel("a", "b", name="c", prod=[1, 2], cons=3)
    bound = g.bind()
    assert bound.channels == g.channels and bound.actors == g.actors
    g.channels["c"] = replace(g.channels["c"], prod=0)     # a copy: checked by bind
    with pytest.raises(SDFError, match=r"channel 'c': prod must be a positive integer"):
        g.bind()
    h = _pair()
    h.actors["a"] = Actor("a", {"quanta": -1})
    with pytest.raises(SDFError, match=r"actor 'a': quanta must be a finite non-negative"):
        h.bind()


_VALUES = st.integers(0, 5) | st.floats(0, 5) | st.lists(st.integers(0, 3), min_size=2,
                                                         max_size=2) | \
    st.tuples(st.integers(0, 3), st.floats(0, 3) | st.tuples(st.integers(0, 3)))


@settings(max_examples=200, deadline=None)
@given(attrs=st.lists(_VALUES, min_size=2, max_size=2),
       channels=st.lists(st.tuples(st.integers(1, 4) | st.just([1, 2]), st.integers(0, 3),
                                   st.integers(0, 9) | st.floats(0, 9)), max_size=4))
def test_bind_of_values_added_through_the_api_equals_their_check_one_by_one(attrs,
                                                                            channels):
    # what add_actor and add_channel checked binds as it is; copies of the same actors
    # and channels (dataclasses.replace, not through the API) are checked by bind one
    # value at a time: the same graph, value types included
    from moc.record import replace
    g = SDFGraph("g")
    g.add_actor("a", quanta=attrs[0], speed=attrs[1])
    g.add_actor("b", exec=[2, 1])
    for i, (prod, delay, size) in enumerate(channels):
        g.add_channel("a", "b", name=f"c{i}", prod=prod, cons=[1, 0], delay=delay,
                      size=size)
    copy = SDFGraph("g")
    copy.actors = {name: replace(a) for name, a in g.actors.items()}
    copy.channels = {name: replace(c) for name, c in g.channels.items()}
    for bound, checked in ((g.bind(), copy.bind()), (g.bind().bind(), copy.bind().bind())):
        assert repr(bound.actors) == repr(checked.actors)
        assert repr(bound.channels) == repr(checked.channels)


@settings(max_examples=200, deadline=None)
@given(rate=st.integers(max_value=0), field=st.sampled_from(["prod", "cons"]))
def test_any_rate_not_positive_is_refused(rate, field):
    g = _pair()
    with pytest.raises(ValueError) as info:
        g.add_channel("a", "b", name="e", **{field: rate})
    assert "'e'" in str(info.value) and field in str(info.value)


@settings(max_examples=200, deadline=None)
@given(rates=st.lists(st.tuples(st.integers(1, 10 ** 6), st.integers(1, 10 ** 6)),
                      min_size=1, max_size=6))
def test_any_positive_rates_are_accepted_and_balance_exactly(rates):
    # a chain a0 -> a1 -> ... ; the repetition vector balances every channel exactly,
    # is positive and is the smallest integer solution (gcd 1)
    g = SDFGraph("chain")
    for i in range(len(rates) + 1):
        g.add_actor(f"a{i}")
    for i, (p, c) in enumerate(rates):
        g.add_channel(f"a{i}", f"a{i + 1}", prod=p, cons=c)
    q = repetition_vector(g)
    assert all(isinstance(v, int) and v > 0 for v in q.values())
    for ch in g.channels.values():
        assert ch.prod * q[ch.src] == ch.cons * q[ch.dst]
    assert math.gcd(*q.values()) == 1


# --- architectures -------------------------------------------------------------------

@pytest.mark.parametrize("model, args, param", [
    ("bandwidth", {"B": 0}, "B"),
    ("bandwidth", {"B": -1e9}, "B"),
    ("lsla", {"alpha": -1}, "alpha"),
    ("roofline", {"peak": 0}, "peak"),
    ("roofline", {"peak": 1, "bandwidth": -2}, "bandwidth"),
    ("roofline", {"peak": 1, "miss": 1.5}, "miss"),
    ("gpu", {"cc": 3.5, "sms": 0, "cores": 1, "clock": 1, "bandwidth": 1}, "sms"),
])
def test_a_bad_model_argument_is_refused_naming_the_element(model, args, param):
    arch = Architecture("m")
    with pytest.raises(CostModelError) as info:
        arch.add_cn("bus", costs={"time": CostSpec(model, args)})
    msg = str(info.value)
    assert isinstance(info.value, ValueError)
    assert "element 'bus'" in msg and "metric 'time'" in msg and f"'{param}'" in msg
    assert not arch.elements


def test_a_missing_model_argument_waits_for_bind():
    arch = Architecture("m")
    arch.add_pe("p", costs={"time": CostSpec("roofline", {"bandwidth": 2})})
    with pytest.raises(CostModelError,
                       match="element 'p', metric 'time'.*missing parameter 'peak'"):
        arch.bind()


@pytest.mark.parametrize("lam", [-1, math.nan, math.inf, "x", True])
def test_lambda_is_a_finite_non_negative_number(lam):
    with pytest.raises(ArchitectureError, match="lambda must be a finite non-negative number") \
            as info:
        Architecture("m", lambda_=lam)
    assert info.value.attribute == "lambda"
    assert Architecture("m", lambda_=0).lambda_ == 0


@pytest.mark.parametrize("lo, hi, needs", [
    (3, 1, "empty range"),
    (-1, 2, "an index must be a non-negative integer, got -1"),
    (0, 1.5, "an index must be a non-negative integer, got 1.5"),
])
def test_array_counts_are_checked(lo, hi, needs):
    arch = Architecture("m")
    with pytest.raises(ArchitectureError, match=needs) as info:
        arch.add_array("core", lo, hi, "pe")
    assert "'core[" in str(info.value) and not arch.elements


def test_elements_links_and_locals_are_checked():
    arch = Architecture("m")
    arch.add_pe("p")
    arch.add_cn("bus")
    with pytest.raises(ArchitectureError, match="duplicate element 'p'"):
        arch.add_cn("p")
    with pytest.raises(ArchitectureError, match="pe 'q' has unknown type 'T'"):
        arch.add_pe("q", type_name="T")
    with pytest.raises(ArchitectureError, match="link p -- ghost uses unknown element 'ghost'"):
        arch.add_link("p", "ghost")
    with pytest.raises(ArchitectureError, match="joins an element to itself"):
        arch.add_link("bus", "bus")
    with pytest.raises(ArchitectureError, match="element 'q': x is not a number"):
        arch.add_pe("q", attrs={"x": math.nan})
    with pytest.raises(ArchitectureError, match="local 'p' is a PE"):
        arch.add_pe("q", local="p")
    with pytest.raises(ArchitectureError, match="local must name a communication node"):
        arch.add_pe("q", local=3)
    with pytest.raises(ArchitectureError, match="cn 'c': charge must be one of"):
        arch.add_cn("c", attrs={"charge": "nobody"})
    arch.add_pe("r", local="later")             # may name a CN declared after it
    with pytest.raises(ArchitectureError, match="pe 'r': local 'later' is not declared"):
        arch.bind()
    arch.add_cn("later")
    arch.bind()


def test_the_aggregation_is_checked_against_the_registry_where_mapping_uses_it():
    from mapping.semantics.aggregation import AGGREGATIONS, check_aggregate
    from mapping.errors import MappingError
    from mapping.evaluation.reference import evaluate
    with pytest.raises(ArchitectureError, match="aggregate must be the name"):
        Architecture("m", aggregate="no such")
    for name in AGGREGATIONS:                   # every registered name, `period` too
        check_aggregate(Architecture("m", aggregate=name))
    arch = Architecture("m", aggregate="median")   # moa keeps no list of names
    with pytest.raises(ArchitectureError, match="unknown aggregation 'median' \\(known: "
                       + ", ".join(AGGREGATIONS)):
        check_aggregate(arch)
    arch.add_pe("p", costs={"time": CostSpec("lsla", {"alpha": 1})})
    g = SDFGraph("g")
    g.add_actor("a")
    with pytest.raises(MappingError, match="unknown aggregation 'median'"):
        evaluate(g, arch, {"a": "p"}, "time")
