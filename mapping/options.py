"""The kinds of option value: one rule each (whole or real, its range, finite), checked
at the door.

A kind is an argparse ``type=``: ``p.add_argument("--seed", type=NATURAL)`` refuses
``--seed -1`` before any work, with argparse's usual error (exit 2)::

    mapeval search: error: argument --seed: expected a whole number >= 0, got '-1'

and :meth:`Kind.check` applies the same rule to a value a library caller passes
(``NATURAL.check(seed, "seed")``).  A new option picks the kind that says what its value
means; a new kind (another range) is one line here, :func:`whole` or :func:`real`.
Every number a user types -- an option's, ``-p``'s, a measurement table's cell -- is
read by :func:`parse_number`.
"""
from __future__ import annotations

import argparse
import math

from mapping.errors import InputError
from moc.record import record


@record
class Kind:
    """Numbers of one kind: whole or real, finite, within ``[low, high]`` (an end is
    left out when ``low_open``/``high_open``; ``None``: unbounded)."""

    whole: bool
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    unit: str = ""

    @property
    def description(self) -> str:
        """``"a whole number >= 0"``, ``"a number > 0 and < 1"``, ..."""
        what = "a whole number" if self.whole else "a finite number"
        if self.unit:
            what += f" of {self.unit}"
        bounds = []
        if self.low is not None:
            bounds.append(f"{'>' if self.low_open else '>='} {_shown(self.low)}")
        if self.high is not None:
            bounds.append(f"{'<' if self.high_open else '<='} {_shown(self.high)}")
        return " ".join([what] + [" and ".join(bounds)] if bounds else [what])

    def fits(self, value) -> bool:
        """Whether the number ``value`` is of this kind."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if isinstance(value, float) and not math.isfinite(value):
            return False
        if self.whole and not float(value).is_integer():
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return self.high is None or (value < self.high if self.high_open else value <= self.high)

    def parse(self, text: str) -> int | float | None:
        """``text`` as a number of this kind, or ``None``: a finite number as
        :func:`parse_number` reads it (``1000``, ``1_000``, ``1e3``, ``0x10``), whole
        where the kind is (``1e3`` is 1000)."""
        value = parse_number(text)
        if value is None:
            return None
        if self.whole:
            if not float(value).is_integer():
                return None
            value = int(value)
        else:
            value = float(value)
        return value if self.fits(value) else None

    def __call__(self, text: str) -> int | float:
        """The argparse ``type=``: the value of ``text``, or argparse's error."""
        value = self.parse(text)
        if value is None:
            raise argparse.ArgumentTypeError(f"expected {self.description}, got '{text}'")
        return value

    def check(self, value, option: str, error: type[Exception] = InputError):
        """``value`` if it is of this kind, else an ``error`` naming ``option``."""
        if not self.fits(value):
            raise error(f"{option} must be {self.description}, got {value}")
        return value

    def __repr__(self) -> str:        # argparse names the type in some messages
        return self.description


def parse_number(text: str, finite: bool = True) -> int | float | None:
    """A number as a user writes it -- in a table's cell, an option or ``-p`` -- or
    ``None``: a whole number (``12``, ``0x10``, ``1_000``) is an int, any other a float
    (``1e-3``, ``2.5``); ``_`` groups digits anywhere.  The models compute in floats, so
    an int beyond them (``1`` and 400 zeros) is no number; ``inf`` and ``nan`` are
    numbers only when not ``finite`` (a parameter may be infinite)."""
    text = text.strip()
    value: int | float
    if "_" not in text and ("." in text or "e" in text or "E" in text):
        try:                                # the common case of a measured table first
            value = float(text)
        except ValueError:
            pass
        else:
            if not finite or math.isfinite(value):
                return value
    digits = text.replace("_", "")
    try:
        value = int(digits, 0)
    except ValueError:
        pass
    else:
        try:
            float(value)
        except OverflowError:
            return None
        return value
    try:
        value = float(digits)
    except ValueError:
        return None
    return value if not finite or math.isfinite(value) else None


def _shown(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def whole(low: int | None = None, high: int | None = None) -> Kind:
    """Whole numbers within ``[low, high]``."""
    return Kind(True, low, high)


def real(low: float | None = None, high: float | None = None, low_open: bool = False,
         high_open: bool = False, unit: str = "") -> Kind:
    """Finite real numbers within ``low``..``high`` (ends open as told)."""
    return Kind(False, low, high, low_open, high_open, unit)


#: counts that may be zero: seeds, retries, random starts
NATURAL = whole(0)
#: counts of at least one: budgets, workers, repeats
POSITIVE_WHOLE = whole(1)
#: any finite number
FINITE = real()
#: finite and > 0: scales, rates, ratios
POSITIVE = real(0, low_open=True)
#: finite and >= 0: latencies, overheads
NON_NEGATIVE = real(0)
#: a fraction of the rows held out: 0 <= f < 1
FRACTION = real(0, 1, high_open=True)
#: a probability strictly between 0 and 1: confidence levels
PROBABILITY = real(0, 1, low_open=True, high_open=True)
#: a wall-clock duration: > 0 and at most a year (timers overflow past ~10^9 s)
SECONDS = real(0, 365 * 24 * 3600, low_open=True, unit="seconds")
#: a wall-clock budget where 0 means none
SECONDS_OR_ZERO = real(0, 365 * 24 * 3600, unit="seconds")
