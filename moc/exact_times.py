"""Firing times as exact numbers.

A float time stands for the shortest decimal that reads back as it (``repr``): 0.1 for
the float nearest 1/10.  Sums of times written as decimals then tie where the decimals
do (0.1 + 0.2 is exactly 0.3, which the floats' own sum is not), so equal paces are
equal and the states of an execution recur.
"""
from __future__ import annotations

from fractions import Fraction

from moc.phases import Phases


def exact_time(value):
    """``value`` as an exact number: a float as the decimal it prints as, a tuple of
    per-phase times as :class:`~moc.phases.Phases` of those, anything else (an int, a
    Fraction) as it is."""
    if isinstance(value, tuple):
        return Phases(map(exact_time, value))
    return Fraction(repr(value)) if isinstance(value, float) else value
