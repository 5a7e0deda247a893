"""Firing times as exact numbers.

A float time stands for the shortest decimal that reads back as it (``repr``): 0.1 for
the float nearest 1/10.  Sums of times written as decimals then tie where the decimals
do (0.1 + 0.2 is exactly 0.3, which the floats' own sum is not), so equal paces are
equal and the states of an execution recur.  The analyses then count time in ticks, a
common fraction of every time (:func:`ticks`).
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
