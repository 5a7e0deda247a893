"""Repetition vectors: known graphs, the consistency error, and properties on random graphs."""
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from moc import InconsistentGraphError, SDFGraph, repetition_vector


def make_graph(actors, channels):
    g = SDFGraph("g")
    for a in actors:
        g.add_actor(a)
    for i, (src, dst, prod, cons) in enumerate(channels):
        g.add_channel(src, dst, name=f"e{i}", prod=prod, cons=cons)
    return g.bind()


def test_h263_decoder():
    # H.263 decoder (Stuijk et al.): one frame is 594 macroblocks.
    g = make_graph(["vld", "iq", "idct", "mc"],
                   [("vld", "iq", 594, 1), ("iq", "idct", 1, 1), ("idct", "mc", 1, 594),
                    ("mc", "vld", 1, 1)])
    assert repetition_vector(g) == {"vld": 1, "iq": 594, "idct": 594, "mc": 1}


def test_cd_to_dat_sample_rate_converter():
    # The classic CD (44.1 kHz) to DAT (48 kHz) converter chain: rates 1:1, 2:3, 2:7, 8:7, 5:1.
    g = make_graph(["A", "B", "C", "D", "E", "F"],
                   [("A", "B", 1, 1), ("B", "C", 2, 3), ("C", "D", 2, 7), ("D", "E", 8, 7),
                    ("E", "F", 5, 1)])
    assert repetition_vector(g) == {"A": 147, "B": 147, "C": 98, "D": 28, "E": 32, "F": 160}


def test_each_component_is_scaled_on_its_own():
    g = make_graph(["a", "b", "c", "d"], [("a", "b", 2, 4), ("c", "d", 3, 1)])
    assert repetition_vector(g) == {"a": 2, "b": 1, "c": 1, "d": 3}


def test_isolated_actor_fires_once():
    g = make_graph(["lonely"], [])
    assert repetition_vector(g) == {"lonely": 1}


def test_inconsistent_graph_names_a_channel():
    g = make_graph(["a", "b", "c"], [("a", "b", 1, 1), ("b", "c", 1, 1), ("a", "c", 2, 1)])
    with pytest.raises(InconsistentGraphError) as info:
        repetition_vector(g)
    assert info.value.channel == "e2"
    assert "'e2'" in str(info.value) and "balance" in str(info.value)


@st.composite
def consistent_graphs(draw):
    """A random connected graph built from a hidden repetition vector, so it is consistent."""
    n = draw(st.integers(1, 8))
    hidden = [draw(st.integers(1, 12)) for _ in range(n)]
    edges = []
    for i in range(1, n):
        edges.append((draw(st.integers(0, i - 1)), i))
    for _ in range(draw(st.integers(0, 6))):
        edges.append((draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))))
    channels = []
    for src, dst in edges:
        if draw(st.booleans()):
            src, dst = dst, src
        # prod·q(src) = cons·q(dst): take the smallest rates, times a random factor.
        k = draw(st.integers(1, 3))
        g = math.gcd(hidden[src], hidden[dst])
        channels.append((f"a{src}", f"a{dst}", k * hidden[dst] // g, k * hidden[src] // g))
    return [f"a{i}" for i in range(n)], channels, hidden


@settings(max_examples=200, deadline=None)
@given(consistent_graphs())
def test_balance_equations_hold_and_vector_is_minimal(case):
    actors, channels, hidden = case
    q = repetition_vector(make_graph(actors, channels))
    for src, dst, prod, cons in channels:
        assert prod * q[src] == cons * q[dst]
    assert all(v > 0 for v in q.values())
    assert math.gcd(*q.values()) == 1
    # The graph is connected, so q is the hidden vector divided by its gcd.
    g = math.gcd(*hidden)
    assert q == {a: h // g for a, h in zip(actors, hidden)}


@settings(max_examples=100, deadline=None)
@given(consistent_graphs(), st.integers(0, 20))
def test_perturbed_rate_is_reported_on_a_cycle_channel(case, which):
    actors, channels, _ = case
    if len(channels) < len(actors):  # a tree: any rates are consistent
        return
    idx = which % len(channels)
    src, dst, prod, cons = channels[idx]
    if src == dst:
        return
    perturbed = channels[:idx] + [(src, dst, prod + 1, cons)] + channels[idx + 1:]
    try:
        q = repetition_vector(make_graph(actors, perturbed))
    except InconsistentGraphError as exc:
        assert exc.channel.startswith("e")
    else:
        for s, d, p, c in perturbed:
            assert p * q[s] == c * q[d]


def test_fractions_are_exact_for_large_coprime_rates():
    big = [(10**12 + 39), (10**12 + 61)]
    g = make_graph(["a", "b"], [("a", "b", big[0], big[1])])
    q = repetition_vector(g)
    assert Fraction(q["a"], q["b"]) == Fraction(big[1], big[0])


def test_a_chain_whose_repetitions_pass_two_to_the_31():
    """a writes 1 token a firing, b reads 50,000 and writes 1, c reads 50,000: c fires
    once, b 50,000 times, a 2,500,000,000 times.  SDF3 keeps the vector in C ints and
    calls the chain consistent with a = -1,794,967,296 (a campaign against SDF3,
    seed 45)."""
    g = make_graph(["a", "b", "c"], [("a", "b", 1, 50_000), ("b", "c", 1, 50_000)])
    assert repetition_vector(g) == {"a": 2_500_000_000, "b": 50_000, "c": 1}
