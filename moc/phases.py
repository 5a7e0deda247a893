"""Phases of cyclo-static dataflow (Bilsen, Engels, Lauwereins & Peperstraete, "Cyclo-static
dataflow", IEEE Trans. Signal Processing 44(2), 1996).

A cyclo-static actor cycles through ``n`` phases: its firing ``k`` (from 0) is phase
``k mod n``, with that phase's execution time and rates.  A value given per phase is a
:class:`Phases` (``[3, 1, 1]`` in the ``.sdf`` language); a plain number is the same in
every phase, and an actor with no per-phase value has one phase: SDF is the special
case.  Every per-phase value of an actor (its attributes, the ``prod`` of the channels
it writes and the ``cons`` of those it reads) lists the same number of phases.
Phases fired once before the periodic ones are an actor's :class:`InitialPhases`
(analysed by :mod:`moc.initial_phases`).
"""
from __future__ import annotations

import math
import numbers
from bisect import bisect_left
from collections.abc import Mapping
from itertools import accumulate, repeat
from types import MappingProxyType

from moc.errors import SDFError
from moc.record import field, record


_NUMBERS = {int, float}


class Phases(tuple):
    """Per-phase values ``(v0, v1, ...)``, each a number or an expression (an object with
    ``evaluate(env)``); :meth:`evaluate` gives the tuple of their values."""

    def evaluate(self, env):
        if set(map(type, self)) <= _NUMBERS:
            return self                 # numbers alone: their own values
        return Phases(getattr(v, "evaluate", lambda e, v=v: v)(env) for v in self)

    def __repr__(self):
        return f"Phases({list(self)!r})"

    def __str__(self):
        return "[" + ", ".join(map(str, self)) + "]"


@record
class InitialPhases:
    """The ``count`` phases an actor fires once each, in order, before its periodic
    ones: per attribute (``exec``, ``quanta``, ``exec_<type>``) and per channel it
    writes (``prod``) or reads (``cons``), one number per initialisation phase.  A
    channel not named moves no token in them.  Rates are non-negative integers, times
    finite non-negative numbers; every tuple has ``count ≥ 1`` entries."""

    count: int
    attrs: Mapping[str, tuple] = field(default_factory=dict)
    prod: Mapping[str, tuple] = field(default_factory=dict)
    cons: Mapping[str, tuple] = field(default_factory=dict)

    def __post_init__(self):
        if type(self.count) is not int or self.count < 1:
            raise SDFError(f"initialisation phases: the count must be a positive integer, "
                           f"got {self.count!r}")
        for name, what, rate in (("attrs", "attribute", False),
                                 ("prod", "prod of channel", True),
                                 ("cons", "cons of channel", True)):
            frozen = {}
            for key, value in getattr(self, name).items():
                value = tuple(value)
                if len(value) != self.count:
                    raise SDFError(f"initialisation phases: {what} '{key}' gives "
                                   f"{len(value)} values for {self.count} phases")
                for v in value:
                    if rate and (type(v) is not int or v < 0):
                        raise SDFError(f"initialisation phases: {what} '{key}' must be "
                                       f"non-negative integers, got {v!r}")
                    if not rate and (isinstance(v, bool) or not isinstance(
                            v, numbers.Real) or not math.isfinite(v) or v < 0):
                        raise SDFError(f"initialisation phases: {what} '{key}' must be "
                                       f"finite non-negative numbers, got {v!r}")
                frozen[key] = value
            object.__setattr__(self, name, MappingProxyType(frozen))

    def rate(self, kind: str, channel: str, k: int) -> int:
        """The tokens initialisation phase ``k`` writes (``kind="prod"``) or reads
        (``"cons"``) on ``channel``."""
        return self.rates(kind, channel)[k]

    def rates(self, kind: str, channel: str) -> tuple:
        """The tokens each initialisation phase writes (``kind="prod"``) or reads
        (``"cons"``) on ``channel``: 0 in each where it is not named."""
        return (self.prod if kind == "prod" else self.cons).get(channel, (0,) * self.count)


def is_phased(value) -> bool:
    return isinstance(value, tuple)


def cyclo_static(graph) -> bool:
    """Whether some value of ``graph`` is given per phase."""
    return any(is_phased(v) for a in graph.actors.values() for v in a.attrs.values()) or \
        any(is_phased(ch.prod) or is_phased(ch.cons) for ch in graph.channels.values())


class PhaseCounter:
    """The number of phases of each actor, learnt value by value: :meth:`see` raises an
    :class:`SDFError` at an empty list of phases, or at a per-phase value whose number
    of phases disagrees with one seen before for the same actor (naming both)."""

    def __init__(self):
        self.counts: dict[str, tuple[int, str]] = {}

    def see(self, actor: str, value, what: str, origin=None) -> None:
        if not is_phased(value):
            return
        if len(value) == 0:
            raise SDFError(f"{what}: an empty list of phases", origin)
        known = self.counts.get(actor)
        if known is None:
            self.counts[actor] = (len(value), what)
        elif known[0] != len(value):
            raise SDFError(f"actor '{actor}' has {known[0]} phases by {known[1]} but "
                           f"{len(value)} by {what}", origin)

    def see_actor(self, actor) -> None:
        counts = self.counts
        for key, value in actor.attrs.items():
            # a count already seen needs no check (nor the text naming the value)
            if isinstance(value, tuple) and counts.get(actor.name, (-1,))[0] != len(value):
                self.see(actor.name, value, f"attribute '{key}' of actor '{actor.name}'",
                         actor.origin)

    def see_channel(self, ch) -> None:
        counts, prod, cons = self.counts, ch.prod, ch.cons
        if isinstance(prod, tuple) and counts.get(ch.src, (-1,))[0] != len(prod):
            self.see(ch.src, prod, f"prod of channel '{ch.name}'", ch.origin)
        if isinstance(cons, tuple) and counts.get(ch.dst, (-1,))[0] != len(cons):
            self.see(ch.dst, cons, f"cons of channel '{ch.name}'", ch.origin)


class InitialCounter:
    """The number of initialisation phases of each actor, learnt value by value (a
    value without any gives 0): :meth:`see` raises ``error`` (a ``ValueError`` class
    taking ``(message, origin)``) at a count that disagrees with one seen before for
    the same actor, naming both values."""

    def __init__(self, error=SDFError):
        self.counts: dict[str, tuple[int, str]] = {}
        self.error = error

    def see(self, actor: str, count: int, telling: str, origin=None) -> None:
        known = self.counts.setdefault(actor, (count, telling))
        if known[0] != count:
            raise self.error(f"actor '{actor}' has {_initial_count(known[0])} by {known[1]} "
                             f"but {_initial_count(count)} by {telling}", origin)

    def count(self, actor: str) -> int:
        return self.counts.get(actor, (0,))[0]


def _initial_count(n: int) -> str:
    return "no initialisation phase" if n == 0 else \
        f"{n} initialisation phase{'s' if n > 1 else ''}"


def phase_counts(graph) -> dict[str, int]:
    """The number of phases of every actor; an :class:`SDFError` names an actor whose
    per-phase values disagree on it (and the channel or attribute that does)."""
    counter = PhaseCounter()
    for a in graph.actors.values():
        counter.see_actor(a)
    for ch in graph.channels.values():
        counter.see_channel(ch)
    return {a: counter.counts.get(a, (1, None))[0] for a in graph.actors}


def phase_value(value, k: int):
    """``value`` in phase ``k`` (a per-phase value's entry ``k mod n``)."""
    return value[k % len(value)] if is_phased(value) else value


def cycle_total(value, n: int):
    """The sum of ``value`` over one cycle of ``n`` phases."""
    return sum(value) if is_phased(value) else value * n


def cumulative(value, n: int, firings: int):
    """The sum of ``value`` over the first ``firings`` firings of an actor of ``n``
    phases, :class:`Cumulative`'s ``F`` for one query (phases from 0; negative counts
    extend it periodically: ``cumulative(v, n, -n) == -cycle_total(v, n)``)."""
    return Cumulative(value, n)(firings)


def tokens_after(ch, fired_src: int, fired_dst: int, n_src: int, n_dst: int) -> int:
    """The tokens of channel ``ch`` once its producer fired ``fired_src`` times and its
    consumer ``fired_dst`` times."""
    return ch.delay + cumulative(ch.prod, n_src, fired_src) - \
        cumulative(ch.cons, n_dst, fired_dst)


class Cumulative:
    """The cumulative sums ``F(ν)`` of a per-phase value over the first ``ν`` firings of
    an actor of ``n`` phases (periodic: ``F(ν + n) = F(ν) + F(n)``; a bound graph's
    channels move tokens in every cycle, ``F(n) > 0``), and their inverse."""

    def __init__(self, value, n: int):
        self.n = n
        values = value * (n // len(value)) + value[:n % len(value)] if is_phased(value) \
            else repeat(value, n)
        self.prefix = list(accumulate(values, initial=0))
        self.total = self.prefix[-1]
        self._prefix_array = None

    def __call__(self, firings: int) -> int:
        cycles, rest = divmod(firings, self.n)
        return cycles * self.total + self.prefix[rest]

    def writer(self, needed: int) -> int:
        """The least ``w`` with ``F(w + 1) ≥ needed`` (``total`` must be positive)."""
        cycles = (needed - 1) // self.total         # needed − cycles·total in (0, total]
        rest = bisect_left(self.prefix, needed - cycles * self.total)
        return cycles * self.n + rest - 1

    def most(self, start: int, available: int) -> int:
        """The most firings after the first ``start`` whose values sum to at most
        ``available`` (≥ 0)."""
        return self.writer(self(start) + available + 1) - start

    def over(self, firings):
        """``F`` of each of a numpy integer array of ``firings``, or of one Python
        integer (a small graph's rules run on both: :mod:`moc.occupancy_lists`)."""
        if self.n == 1:
            return firings * self.total
        if type(firings) is int:
            return self(firings)
        return (firings // self.n) * self.total + self._array()[firings % self.n]

    def writers(self, needed):
        """:meth:`writer` of each of a numpy integer array of ``needed``, or of one
        Python integer."""
        if type(needed) is int:
            return self.writer(needed)
        import numpy as np
        cycles = (needed - 1) // self.total
        return cycles * self.n + \
            np.searchsorted(self._array(), needed - cycles * self.total, "left") - 1

    def _array(self):
        """``prefix`` as an int64 array, made once (numpy only where arrays are asked)."""
        if self._prefix_array is None:
            import numpy as np
            self._prefix_array = np.asarray(self.prefix, dtype=np.int64)
        return self._prefix_array


class InitialCumulative(Cumulative):
    """:class:`Cumulative` of an actor whose first ``len(initial)`` firings are its
    initialisation phases (values ``initial``, :class:`InitialPhases`), the periodic
    ones after them: ``F(ν) = I(ν)`` for ``ν ≤ m``, ``I(m) + F_periodic(ν − m)`` past."""

    def __init__(self, value, n: int, initial: tuple):
        super().__init__(value, n)
        self.m = len(initial)
        self.head = list(accumulate(initial, initial=0))

    def __call__(self, firings: int) -> int:
        if firings <= self.m:
            return self.head[firings]
        return self.head[-1] + super().__call__(firings - self.m)


def mean(value, n: int):
    """The mean of ``value`` over a cycle: the value of a token per firing that linear
    costs price as the phases' own (an int where it is whole)."""
    if not is_phased(value):
        return value
    total = sum(value)
    return total // len(value) if total % len(value) == 0 else total / len(value)


def phased_durations(durations: Mapping[str, object], counts: Mapping[str, int]):
    """Per actor, the tuple of its ``n`` phase durations."""
    return {a: tuple(phase_value(d, k) for k in range(counts[a]))
            for a, d in durations.items()}
