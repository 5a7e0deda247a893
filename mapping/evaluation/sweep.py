"""Parameter sweeps (``mapeval sweep``): one evaluation per point of a grid.

A range ``NAME=START:STOP:N[:log]`` gives ``N`` values from ``START`` to ``STOP``
inclusive, evenly spaced (or geometrically with ``log``); the grid is the product of the
ranges, the first range varying slowest.  Values that are whole numbers between whole
endpoints are given as ``int`` (so that a swept rate or size stays an integer).

The grid is never materialized: :func:`iter_sweep` evaluates it point by point, and a
grid of more than :data:`MAX_POINTS` points is refused before any work
(``--limit sweep=N`` raises it).
"""
from __future__ import annotations

import csv
import io
import itertools
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping as MappingT, Sequence

import numpy as np

from moa import Architecture
from moc import SDFGraph
from moc.limits import exceeded
from mapping.evaluation.reference import Evaluation, evaluate
from dsl.json_export import json_number
from dsl.mappings import Mapping
from mapping.errors import MappingError
from mapping.options import FINITE, POSITIVE_WHOLE
from mapping.semantics.problem import bind_problem

#: the largest number of points of one sweep grid (``--limit sweep=N``)
MAX_POINTS = 1_000_000
#: bound applications and architectures a sweep keeps for the points that follow
BINDINGS_KEPT = 256


@dataclass(frozen=True)
class Range:
    """``n`` values of parameter ``name`` from ``start`` to ``stop`` (``log``: geometric)."""

    name: str
    start: float
    stop: float
    n: int
    log: bool = False

    def values(self) -> list[float | int]:
        if self.n == 1:
            return [_tidy(self.start, self)]
        points = (np.geomspace if self.log else np.linspace)(self.start, self.stop, self.n)
        return [_tidy(float(v), self) for v in points]

    def __str__(self):
        return f"{self.name}={self.start:g}:{self.stop:g}:{self.n}{':log' if self.log else ''}"


def _tidy(value: float, r: Range):
    whole = all(float(x).is_integer() for x in (r.start, r.stop))
    if whole and abs(value - round(value)) <= 1e-9 * max(1.0, abs(value)):
        return int(round(value))
    return value


def parse_range(text: str) -> Range:
    """``NAME=START:STOP:N[:log]`` as a :class:`Range`; a :class:`MappingError` says what
    is wrong otherwise."""
    name, sep, spec = text.partition("=")
    name = name.strip()
    where = f"--range {text}"
    if not sep or not name.isidentifier():
        raise MappingError(f"{where}: expected NAME=START:STOP:N[:log]")
    parts = [p.strip() for p in spec.split(":")]
    log = len(parts) == 4 and parts[3].lower() == "log"
    if len(parts) not in (3, 4) or (len(parts) == 4 and not log):
        raise MappingError(f"{where}: expected NAME=START:STOP:N[:log]")
    start, stop = FINITE.parse(parts[0]), FINITE.parse(parts[1])
    if start is None or stop is None:
        raise MappingError(f"{where}: START and STOP must be finite numbers")
    n = POSITIVE_WHOLE.parse(parts[2])
    if n is None:
        raise MappingError(f"{where}: N (points) must be {POSITIVE_WHOLE.description}")
    if log and (start <= 0 or stop <= 0):
        raise MappingError(f"{where}: a log range needs positive START and STOP")
    return Range(name, start, stop, n, log)


def grid_size(ranges: Sequence[Range]) -> int:
    """The number of points of the grid of ``ranges``."""
    return math.prod(r.n for r in ranges)


def iter_grid(ranges: Sequence[Range]) -> Iterator[dict[str, Any]]:
    """Every point of the product of ``ranges`` (first range slowest), as name → value,
    one at a time; a :class:`MappingError` for a parameter swept twice or a grid larger
    than :data:`MAX_POINTS`."""
    names = [r.name for r in ranges]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise MappingError(f"parameter {', '.join(duplicates)} is swept twice")
    size = grid_size(ranges)
    if size > MAX_POINTS:
        raise MappingError(exceeded(f"the sweep grid has {size} points "
                                    f"({' x '.join(str(r.n) for r in ranges)})", "sweep",
                                    MAX_POINTS, size))
    # each range has at most MAX_POINTS values: its list is small; the product is lazy
    return (dict(zip(names, point))
            for point in itertools.product(*(r.values() for r in ranges)))


def grid(ranges: Sequence[Range]) -> list[dict[str, Any]]:
    """Every point of :func:`iter_grid`, as a list."""
    return list(iter_grid(ranges))


@dataclass(frozen=True)
class SweepResult:
    """``columns`` of the CSV and one row (column → value) per grid point; ``evaluations``
    keeps the full result of each point."""

    columns: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]
    evaluations: tuple[Evaluation, ...]


def sweep_columns(ranges: Sequence[Range], metric: str, evaluation: Evaluation
                  ) -> tuple[tuple[str, ...], dict[str, str]]:
    """The CSV columns of a sweep, and element name → its column (``element:NAME`` where
    an element is named like a parameter or a result column)."""
    names = [r.name for r in ranges]
    results = ["value"] + (["throughput", "performance"] if metric == "time" else [])
    taken = set(names) | set(results)
    elements = [e.name for e in evaluation.elements]
    element_columns = {e: (e if e not in taken else f"element:{e}") for e in elements}
    return tuple(names + results + list(element_columns.values())), element_columns


def iter_sweep(app: SDFGraph, arch: Architecture, mapping: Mapping, ranges: Sequence[Range],
               metric: str = "time", aggregate: str | None = None,
               params: MappingT[str, Any] | None = None
               ) -> Iterator[tuple[dict[str, Any], Evaluation]]:
    """``(point, evaluation)`` for every point of the grid of ``ranges``, one at a time
    (other parameters from ``params``, else their defaults)."""
    fixed = dict(params or {})
    clash = [r.name for r in ranges if r.name in fixed]
    if clash:
        raise MappingError(f"parameter {', '.join(clash)} is both swept and fixed with -p")
    # Points that leave one file's parameters alone share its binding (a swept parameter
    # of the .moa does not rebind the application, nor recount its repetition vector);
    # the bindings are forgotten now and then, since a sweep may have a million points.
    bindings: dict = {}
    for point in iter_grid(ranges):
        if len(bindings) > BINDINGS_KEPT:
            bindings.clear()
        problem = bind_problem(app, arch, {**fixed, **point}, cache=bindings)
        yield point, evaluate(problem.app, problem.arch, mapping, metric, aggregate,
                              problem=problem)


def sweep_row(point: dict[str, Any], evaluation: Evaluation, metric: str,
              element_columns: dict[str, str]) -> dict[str, Any]:
    """One CSV row (column → value) of a sweep."""
    row = dict(point)
    row["value"] = evaluation.value
    if metric == "time":
        row["throughput"], row["performance"] = evaluation.throughput, evaluation.performance
    for e in evaluation.elements:
        row[element_columns[e.name]] = e.value
    return row


def sweep(app: SDFGraph, arch: Architecture, mapping: Mapping, ranges: Sequence[Range],
          metric: str = "time", aggregate: str | None = None,
          params: MappingT[str, Any] | None = None) -> SweepResult:
    """Evaluate ``mapping`` at every point of the grid of ``ranges`` (other parameters from
    ``params``, else their defaults), kept in memory (:func:`iter_sweep` streams).

    Columns: the swept parameters, ``value``, ``throughput`` and ``performance`` (for the
    ``time`` metric; empty where undefined), then one column per element (its value of
    ``metric`` before ``lambda``).
    """
    columns: tuple[str, ...] = tuple(r.name for r in ranges)
    element_columns: dict[str, str] = {}
    rows, evaluations = [], []
    for point, ev in iter_sweep(app, arch, mapping, ranges, metric, aggregate, params):
        if not evaluations:
            columns, element_columns = sweep_columns(ranges, metric, ev)
        rows.append(sweep_row(point, ev, metric, element_columns))
        evaluations.append(ev)
    return SweepResult(columns, tuple(rows), tuple(evaluations))


def write_csv(stream, ranges: Sequence[Range], points: Iterator[tuple[dict, Evaluation]],
              metric: str, keep: Callable[[dict], None] | None = None,
              progress: Callable[[int], None] | None = None) -> tuple[str, ...]:
    """Write the CSV of a streamed sweep to ``stream`` row by row; ``keep(row)`` sees every
    row (for a plot), ``progress(1)`` every point.  Returns the columns."""
    writer = csv.writer(stream, lineterminator="\n")
    columns: tuple[str, ...] = ()
    element_columns: dict[str, str] = {}
    for point, ev in points:
        if not columns:
            columns, element_columns = sweep_columns(ranges, metric, ev)
            writer.writerow(columns)
        row = sweep_row(point, ev, metric, element_columns)
        writer.writerow(_cells(row, columns))
        if keep is not None:
            keep(row)
        if progress is not None:
            progress(1)
    return columns


def _cells(row: dict, columns: Sequence[str]) -> list[str]:
    return ["" if row.get(c) is None else _cell(row[c]) for c in columns]


def to_csv(result: SweepResult) -> str:
    """The CSV text of a sweep (``repr``-exact numbers, empty cells for ``None``)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(result.columns)
    for row in result.rows:
        writer.writerow(_cells(row, result.columns))
    return out.getvalue()


def _cell(value) -> str:
    """A cell of the CSV: a float as the JSON convention writes it (``repr``-exact,
    ``inf``, ``-inf``, ``nan``: :func:`dsl.json_export.json_number`)."""
    return str(json_number(value) if isinstance(value, float) else value)
