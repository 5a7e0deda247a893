"""Exact numbers in the dataflow analyses: how a firing time is read, counted and
written.

A float time stands for the shortest decimal that reads back as it (``repr``): 0.1 for
the float nearest 1/10.  Sums of times written as decimals then tie where the decimals
do (0.1 + 0.2 is exactly 0.3, which the floats' own sum is not), so equal paces are
equal and the states of an execution recur.  The analyses then count time in ticks, a
common fraction of every time (:func:`ticks`).  Their exact results are written as
floats in JSON (:func:`as_float`, the exact form beside them) and as ``1/6 (0.166667)``
for people (:func:`exact_text`).  A throughput is the inverse of a period, exact where
the period is (:func:`throughput_of`).
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from fractions import Fraction

from moc.phases import Phases


def exact_time(value):
    """``value`` as an exact number: a float as the decimal it prints as, a tuple of
    per-phase times as :class:`~moc.phases.Phases` of those, anything else (an int, a
    Fraction) as it is."""
    if isinstance(value, tuple):
        return Phases(map(exact_time, value))
    return Fraction(repr(value)) if isinstance(value, float) else value


def ticks(times):
    """``(unit, times·unit)``: the least common denominator ``unit`` of exact ``times``
    and every time as the whole number of ticks of ``1/unit`` it lasts, in the shape of
    ``times`` (a number, or a mapping, tuple or list of those, per-phase times
    included).  Integer arithmetic keeps every sum of times exact, and the least unit
    keeps the integers small.  A float counts as the binary number it is
    (:func:`exact_time` reads it as a decimal first)."""
    exact = _shaped(_exact, times)
    unit = math.lcm(*{t.denominator for t in _leaves([exact])})
    return unit, _shaped(lambda t: t * unit if type(t) is int
                         else t.numerator * (unit // t.denominator), exact)


def _exact(t):
    # integers as Python ones: a numpy integer's products could wrap around
    return int(t) if isinstance(t, numbers.Integral) else Fraction(t)


_NESTED = (tuple, list, Mapping)


def _shaped(f, times):
    """``f`` of every number of ``times``, in its shape."""
    if isinstance(times, Mapping):
        return {k: _shaped(f, t) if isinstance(t, _NESTED) else f(t)
                for k, t in times.items()}
    if isinstance(times, (tuple, list)):
        return type(times)(_shaped(f, t) if isinstance(t, _NESTED) else f(t)
                           for t in times)
    return f(times)


def _leaves(times):
    for t in times.values() if isinstance(times, Mapping) else times:
        if isinstance(t, _NESTED):
            yield from _leaves(t)
        else:
            yield t


def throughput_of(period):
    """Iterations per time unit of an execution repeating every ``period``: ``1/period``,
    a Fraction where the period is exact (an int or a Fraction), a float otherwise.  A
    period of 0 (no cycle bounds the execution) gives ``math.inf``, as SDF3 reports it,
    and an infinite one (the execution never repeats) 0; None, or a period that is no
    duration (negative, NaN), gives None."""
    if period is None or not period >= 0:
        return None
    if period == 0:
        return math.inf
    return 1 / Fraction(period) if isinstance(period, (int, Fraction)) else 1 / period


def as_float(value):
    """An exact result as the float JSON holds (a Fraction as a float; an int, a float
    or None as it is)."""
    return float(value) if isinstance(value, Fraction) else value


def exact_string(value) -> str | None:
    """An exact result as JSON holds its exact form, ``"n/d"`` (``"n"`` when whole);
    None for a float or None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Rational):
        return None
    return str(Fraction(value))


def exact_text(value) -> str:
    """An exact result for people: a whole number as it is, another Fraction with its
    decimal beside it (``1/6 (0.166667)``), a float to 6 digits, None as ``-``."""
    if value is None:
        return "-"
    if isinstance(value, Fraction) and value.denominator != 1:
        return f"{value} ({float(value):.6g})"
    if isinstance(value, Fraction):
        return str(value.numerator)
    return f"{value:.6g}" if isinstance(value, float) else str(value)
