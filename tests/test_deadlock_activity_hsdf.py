"""Deadlock detection, the activity of one iteration (LSLA tokens) and HSDF expansion."""
import pytest

from moc import (DeadlockError, ExpansionTooLargeError, SDFError, SDFGraph, activity,
                 check_deadlock, firing_sequence, hsdf_expansion, repetition_vector)


def cycle(delay_ab=0, delay_ba=0):
    g = SDFGraph("c")
    g.add_actor("a", quanta=3)
    g.add_actor("b", quanta=5, gamma=4)
    g.add_channel("a", "b", prod=2, cons=3, size=4, delay=delay_ab)
    g.add_channel("b", "a", prod=3, cons=2, delay=delay_ba)
    return g.bind()


def test_cycle_without_tokens_deadlocks_naming_both_actors():
    with pytest.raises(DeadlockError) as info:
        check_deadlock(cycle())
    assert set(info.value.actors) == {"a", "b"}
    assert "'a'" in str(info.value) and "'b'" in str(info.value)


def test_cycle_with_too_few_tokens_deadlocks():
    # q = (3, 2); b needs 3 tokens per firing, a makes 2 per firing from 2 read on b->a.
    with pytest.raises(DeadlockError):
        check_deadlock(cycle(delay_ba=1))


def test_cycle_with_enough_tokens_runs_one_iteration():
    g = cycle(delay_ba=6)
    seq = firing_sequence(g)
    fired = {}
    for actor, n in seq:
        fired[actor] = fired.get(actor, 0) + n
    assert fired == repetition_vector(g) == {"a": 3, "b": 2}


def test_self_loop_needs_an_initial_token():
    g = SDFGraph("s")
    g.add_actor("x")
    g.add_channel("x", "x", delay=0)
    with pytest.raises(DeadlockError) as info:
        check_deadlock(g.bind())
    assert info.value.actors == ("x",)
    g2 = SDFGraph("s")
    g2.add_actor("x")
    g2.add_channel("x", "x", delay=1)
    check_deadlock(g2.bind())


def test_activity_counts_tokens_as_lsla():
    g = cycle(delay_ba=6)
    act = activity(g)
    # a fires 3 times: 3 processing tokens of quanta 3; b: 2 tokens of quanta 5.
    assert (act.processing["a"].count, act.processing["a"].quanta) == (3, 3)
    assert (act.processing["b"].count, act.processing["b"].quanta) == (2, 5)
    # a->b: one token per producer firing, prod·size = 2·4 bytes; gamma from producer b? no: a.
    ab = act.communication["a->b"]
    assert (ab.count, ab.quanta) == (3, 8)
    assert "gamma" not in ab.attrs
    ba = act.communication["b->a"]
    assert (ba.count, ba.quanta, ba.attrs["gamma"]) == (2, 3, 4)
    assert act.token_counts == {"processing": 5, "communication": 5}


def test_hsdf_of_h263_like_graph_has_one_actor_per_firing():
    g = SDFGraph("m")
    g.add_actor("src")
    g.add_actor("dst")
    g.add_channel("src", "dst", prod=3, cons=2)
    h = hsdf_expansion(g.bind())
    assert sorted(h.actors) == ["dst#0", "dst#1", "dst#2", "src#0", "src#1"]
    # Tokens 0,1 -> dst#0 from src#0; tokens 2,3 -> dst#1 from src#0 and src#1; 4,5 -> dst#2.
    pairs = {(c.src, c.dst) for c in h.channels.values()}
    assert pairs == {("src#0", "dst#0"), ("src#0", "dst#1"), ("src#1", "dst#1"),
                     ("src#1", "dst#2")}
    assert repetition_vector(h.bind()) == {a: 1 for a in h.actors}


def test_hsdf_keeps_delays_as_iteration_distance():
    g = SDFGraph("loop")
    g.add_actor("x")
    g.add_channel("x", "x", delay=1)
    h = hsdf_expansion(g.bind())
    (ch,) = h.channels.values()
    assert (ch.src, ch.dst, ch.delay) == ("x#0", "x#0", 1)


def test_hsdf_guard_refuses_large_expansions():
    g = SDFGraph("big")
    g.add_actor("a")
    g.add_actor("b")
    g.add_channel("a", "b", prod=1000, cons=1)
    with pytest.raises(ExpansionTooLargeError, match="1001 firings"):
        hsdf_expansion(g.bind(), max_firings=1000)


def test_bad_rates_are_errors_naming_the_channel():
    g = SDFGraph("bad")
    g.add_actor("a")
    g.add_actor("b")
    g.add_channel("a", "b", name="link", prod=1.5)
    with pytest.raises(SDFError, match="'link': prod must be a positive integer"):
        g.bind()
    g2 = SDFGraph("bad")
    g2.add_actor("a")
    g2.add_actor("b")
    g2.add_channel("a", "b", name="link", delay=-1)
    with pytest.raises(SDFError, match="delay must be a non-negative integer"):
        g2.bind()


def test_duplicate_and_ambiguous_names():
    g = SDFGraph("d")
    g.add_actor("a")
    with pytest.raises(SDFError, match="duplicate actor 'a'"):
        g.add_actor("a")
    g.add_actor("b")
    g.add_channel("a", "b")
    with pytest.raises(SDFError, match="second unnamed channel a->b"):
        g.add_channel("a", "b")
    with pytest.raises(SDFError, match="unknown actor 'zz'"):
        g.add_channel("a", "zz")


def test_large_chain_is_fast_enough_to_analyse():
    g = SDFGraph("chain")
    n = 10_000
    for i in range(n):
        g.add_actor(f"a{i}")
    for i in range(n - 1):
        g.add_channel(f"a{i}", f"a{i+1}", prod=2 if i % 2 == 0 else 1, cons=1 if i % 2 == 0 else 2)
    b = g.bind()
    act = activity(b)
    assert act.repetitions["a1"] == 2 and act.repetitions["a2"] == 1
    check_deadlock(b, dict(act.repetitions))
