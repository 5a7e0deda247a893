"""What an actor's self-loops allow: how many of its firings run at once, and the floor
that this puts on the period of any execution of the graph."""
from __future__ import annotations

import math
from fractions import Fraction

from moc.phases import phase_value


def concurrency(ch, phases: int) -> int | None:
    """The most firings of the actor of the self-loop ``ch`` (``phases`` phases) that
    it lets run at once, ``⌊M0/r⌋``, where every phase reads and writes the same ``r >
    0`` tokens on it: a firing under way holds ``r`` of its ``M0`` tokens.  None where
    ``ch`` is no such loop (another channel, rates that vary by phase, or zero)."""
    if ch.src != ch.dst:
        return None
    rates = {phase_value(rate, k) for rate in (ch.prod, ch.cons) for k in range(phases)}
    if len(rates) != 1 or (r := next(iter(rates))) <= 0:
        return None
    return ch.delay // r


def busiest(actors, channels, durations, q, n) -> tuple | None:
    """``(floor, actor, loop)``: of ``actors`` whose self-loop among ``channels`` lets
    at most ``c ≥ 1`` firings run at once (:func:`concurrency`; of several loops the
    tightest), the one whose firings take the longest, and that loop.  Its firing
    ``ν + c`` waits for the end of firing ``ν`` (it reads the tokens ``ν`` puts back),
    so each of the ``c`` chains of every ``c``-th firing runs one firing at a time.
    Over ``c`` iterations a chain fires ``q_t`` times, the phases ``p ≡ m (mod g)``,
    ``g = gcd(c, n_t)``, ``q_t·g/n_t`` times each: no execution, self-timed or
    K-periodic, in either order of an actor's firings, has a period below
    ``max_m (q_t·g/n_t)·Σ_{p ≡ m} d(t, p) / c`` (``(q_t/n_t)·Σ_p d(t, p)`` for one
    firing at a time).  None where no actor has such a loop."""
    tightest = {}
    for ch in channels:
        c = concurrency(ch, n[ch.src])
        if c and (ch.src not in tightest or c < tightest[ch.src][0]):
            tightest[ch.src] = (c, ch.name)
    found = None
    for a in actors:
        if a not in tightest:
            continue
        c, loop = tightest[a]
        floor = busy_time(durations[a], q[a], n[a], c)
        if found is None or floor > found[0]:
            found = (floor, a, loop)
    return found


def busy_time(times, q: int, n: int, c: int = 1) -> Fraction:
    """The least time in which an actor of ``n`` phases (``times``: one time or one per
    phase) runs its ``q`` firings of one iteration, at most ``c`` at once and firing
    ``ν + c`` after the end of firing ``ν`` (:func:`busiest`): ``max_m (q·g/n)·Σ_{p ≡ m}
    d(p) / c`` with ``g = gcd(c, n)``, ``(q/n)·Σ_p d(p)`` one at a time."""
    g = math.gcd(c, n)
    chain = max(sum(Fraction(phase_value(times, k)) for k in range(m, n, g))
                for m in range(g))
    return chain * (q * g // n) / c
