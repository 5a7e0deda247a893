"""Generated SDF graphs for the timing analyses' tests and benchmarks (issue 33): rings
of a given repetition vector, random strongly connected graphs, and the two-actor cycle
whose iteration has about 2·10^5 firings.

Every graph is consistent and live by construction: rates come from a drawn repetition
vector ``q`` (``prod·q(src) = cons·q(dst)``), and a channel that goes back in the order
of the actors carries one iteration's worth of tokens (``prod·q(src)``), so that one
iteration fires in that order.
"""
from __future__ import annotations

import math
import random

from moc import SDFGraph


def _rates(q, i, j, scale=1):
    g = math.gcd(q[i], q[j])
    return scale * q[j] // g, scale * q[i] // g


def ring(q, exec_times=None, tokens=None, name="ring"):
    """Actors ``a0 -> a1 -> ... -> a{n-1} -> a0`` with repetition vector ``q``; the
    closing channel holds ``tokens`` (default one iteration's worth)."""
    n = len(q)
    g = SDFGraph(name)
    for i in range(n):
        g.add_actor(f"a{i}", exec=(exec_times or [1] * n)[i])
    for i in range(n):
        j = (i + 1) % n
        prod, cons = _rates(q, i, j)
        delay = 0 if j else (tokens if tokens is not None else prod * q[i])
        g.add_channel(f"a{i}", f"a{j}", f"c{i}", prod=prod, cons=cons, delay=delay)
    return g


def random_strongly_connected(n, seed=0, chords=None, max_q=4, max_exec=100,
                              self_loops=0.3, name=None):
    """A ring of ``n`` actors with ``chords`` (default ``n``) more channels between
    random actors, repetition counts ``1..max_q``, times ``1..max_exec``, a self-loop of
    one token on a fraction ``self_loops`` of the actors; back channels carry between
    one and one and a half iterations' worth of tokens."""
    rng = random.Random(seed)
    q = [rng.randint(1, max_q) for _ in range(n)]
    g = SDFGraph(name or f"scc{n}s{seed}")
    for i in range(n):
        g.add_actor(f"a{i}", exec=rng.randint(1, max_exec))
    pairs = [(i, (i + 1) % n) for i in range(n)]
    pairs += [(rng.randrange(n), rng.randrange(n)) for _ in range(n if chords is None
                                                                   else chords)]
    for k, (i, j) in enumerate(pairs):
        if i == j:
            continue
        prod, cons = _rates(q, i, j)
        delay = 0 if i < j else rng.randint(prod * q[i], 3 * prod * q[i] // 2)
        g.add_channel(f"a{i}", f"a{j}", f"c{k}", prod=prod, cons=cons, delay=delay)
    for i in range(n):
        if rng.random() < self_loops:
            g.add_channel(f"a{i}", f"a{i}", f"s{i}", delay=1)
    return g


def big_two_actor_cycle(name="big_cycle"):
    """Issue 33: ``a -> b`` at rates 99,991/99,989 and back, with 9,999,100,000 tokens
    on the way back (q = (99989, 99991), about 2·10^5 firings per iteration)."""
    g = SDFGraph(name)
    g.add_actor("a", exec=1)
    g.add_actor("b", exec=1)
    g.add_channel("a", "b", "ab", prod=99_991, cons=99_989)
    g.add_channel("b", "a", "ba", prod=99_989, cons=99_991, delay=9_999_100_000)
    return g


def cyclo_static_ring(draw, st, tokens, min_time=0, actors=4, max_time=4, max_weight=3,
                      chords=2):
    """A hypothesis-drawn ring of 2-``actors`` actors of 1-3 phases (times
    ``min_time``..``max_time``) plus up to ``chords`` chords, rates split over the
    phases from a common scale, so that the graph is consistent: a cycle of ``a_i``'s
    phases writes ``w_j`` tokens to ``a_j``, which reads ``w_i`` (``w`` up to
    ``max_weight``; one iteration moves ``w_i·w_j`` tokens at most).  ``tokens(i, j,
    w_i, w_j)``: the initial tokens of channel ``a_i -> a_j``.  ``st``: hypothesis's
    strategies (this module does not need hypothesis otherwise)."""
    from moc.phases import Phases
    k = draw(st.integers(2, actors))
    n = [draw(st.integers(1, 3)) for _ in range(k)]
    g = SDFGraph("random")
    for i in range(k):
        times = [draw(st.integers(min_time, max_time)) for _ in range(n[i])]
        g.add_actor(f"a{i}", exec=Phases(times) if n[i] > 1 else times[0])

    def split(total, parts):
        cuts = sorted(draw(st.lists(st.integers(0, total), min_size=parts - 1,
                                    max_size=parts - 1)))
        values = [b - a for a, b in zip([0] + cuts, cuts + [total])]
        return Phases(values) if parts > 1 else values[0]
    weight = [draw(st.integers(1, max_weight)) for _ in range(k)]
    pairs = [(i, (i + 1) % k) for i in range(k)]
    pairs += draw(st.lists(st.tuples(st.integers(0, k - 1), st.integers(0, k - 1)),
                           max_size=chords))
    for number, (i, j) in enumerate(pairs):
        g.add_channel(f"a{i}", f"a{j}", f"c{number}", prod=split(weight[j], n[i]),
                      cons=split(weight[i], n[j]),
                      delay=tokens(i, j, weight[i], weight[j]))
    return g
