"""The stated limits: inputs that would take unbounded memory or time are refused past them.

Each limit is a module constant read where it is enforced (so that this registry imports
nothing until a limit is set); ``mapeval ... --limit NAME=N`` sets it for one run, and
the message of a limit error (worded by ``moc.limits.exceeded``) says "raise it with
--limit NAME=N".
"""
from __future__ import annotations

import importlib
from contextlib import contextmanager
from collections.abc import Iterator, Sequence

from mapping.errors import InputError
from mapping.options import POSITIVE_WHOLE
from mapping.registry import Registry
from moc.record import record


@record
class Limit:
    """The constant ``constant`` of module ``module``."""

    module: str
    constant: str

    @property
    def value(self) -> int:
        return getattr(importlib.import_module(self.module), self.constant)

    def set(self, value: int) -> None:
        setattr(importlib.import_module(self.module), self.constant, value)


LIMITS: Registry[Limit] = Registry("limit")


def _limit(name: str, module: str, constant: str, help: str) -> None:
    LIMITS.add(name, Limit(module, constant), help)


_limit("array", "dsl.limits", "MAX_ARRAY_MEMBERS", "members of one array declaration")
_limit("elements", "dsl.limits", "MAX_ELEMENTS",
       "elements (PEs, CNs, array members) of one architecture")
_limit("links", "dsl.limits", "MAX_LINKS",
       "links of one architecture, a link between arrays counting one per pair")
_limit("firings", "moc.limits", "MAX_FIRINGS", "firings of one iteration an analysis expands")
_limit("states", "moc.limits", "MAX_STATES",
       "instants (states) of one self-timed execution explored")
_limit("schedule", "moc.limits", "MAX_SCHEDULE",
       "firings of one iteration whose schedule analyse gives")
_limit("latency", "moc.limits", "MAX_LATENCY",
       "firings of one iteration that analyse computes one by one for the latency")
_limit("sweep", "mapping.evaluation.sweep", "MAX_POINTS", "points of one sweep grid")
_limit("rows", "mapping.calibration.measurements", "MAX_ROWS", "data rows of one measurement table")


def parse_limit(text: str) -> tuple[str, int]:
    """``NAME=N`` as ``(name, N)``; ``N`` a positive whole number (``1_000``, ``1e6``)."""
    name, sep, number = text.partition("=")
    name = name.strip()
    if not sep:
        raise InputError(f"--limit {text}: expected NAME=N (limits: {', '.join(LIMITS)})")
    LIMITS.get(name)
    value = POSITIVE_WHOLE.parse(number)
    if value is None:
        raise InputError(f"--limit {text}: N must be {POSITIVE_WHOLE.description}")
    return name, value


@contextmanager
def limits_set(items: Sequence[str]) -> Iterator[dict[str, int]]:
    """Set the limits ``NAME=N`` of ``items`` while the block runs, then restore them."""
    wanted = dict(parse_limit(item) for item in items)
    saved = {name: LIMITS.get(name).value for name in wanted}
    try:
        for name, value in wanted.items():
            LIMITS.get(name).set(value)
        yield wanted
    finally:
        for name, value in saved.items():
            LIMITS.get(name).set(value)
