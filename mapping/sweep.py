"""Parameter sweeps (SPEC §7, ``mapeval sweep``): one evaluation per point of a grid.

A range ``NAME=START:STOP:N[:log]`` gives ``N`` values from ``START`` to ``STOP``
inclusive, evenly spaced (or geometrically with ``log``); the grid is the product of the
ranges, the first range varying slowest.  Values that are whole numbers between whole
endpoints are given as ``int`` (so that a swept rate or size stays an integer).
"""
from __future__ import annotations

import csv
import io
import itertools
import math
from dataclasses import dataclass
from typing import Any, Mapping as MappingT, Sequence

import numpy as np

from moa import Architecture
from moc import SDFGraph
from mapping.evaluate import Evaluation, evaluate
from dsl.mappings import Mapping
from mapping.errors import MappingError
from mapping.problem import bind_problem


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
    where = f"--param {text}"
    if not sep or not name.isidentifier():
        raise MappingError(f"{where}: expected NAME=START:STOP:N[:log]")
    parts = [p.strip() for p in spec.split(":")]
    log = len(parts) == 4 and parts[3].lower() == "log"
    if len(parts) not in (3, 4) or (len(parts) == 4 and not log):
        raise MappingError(f"{where}: expected NAME=START:STOP:N[:log]")
    try:
        start, stop = float(parts[0].replace("_", "")), float(parts[1].replace("_", ""))
    except ValueError:
        raise MappingError(f"{where}: START and STOP must be numbers") from None
    try:
        n = int(parts[2])
    except ValueError:
        raise MappingError(f"{where}: N must be a whole number of points") from None
    if n < 1:
        raise MappingError(f"{where}: N must be at least 1")
    if not (math.isfinite(start) and math.isfinite(stop)):
        raise MappingError(f"{where}: START and STOP must be finite")
    if log and (start <= 0 or stop <= 0):
        raise MappingError(f"{where}: a log range needs positive START and STOP")
    return Range(name, start, stop, n, log)


def grid(ranges: Sequence[Range]) -> list[dict[str, Any]]:
    """Every point of the product of ``ranges`` (first range slowest), as name → value."""
    names = [r.name for r in ranges]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise MappingError(f"parameter {', '.join(duplicates)} is swept twice")
    return [dict(zip(names, point)) for point in itertools.product(*(r.values() for r in ranges))]


@dataclass(frozen=True)
class SweepResult:
    """``columns`` of the CSV and one row (column → value) per grid point; ``evaluations``
    keeps the full result of each point."""

    columns: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]
    evaluations: tuple[Evaluation, ...]


def sweep(app: SDFGraph, arch: Architecture, mapping: Mapping, ranges: Sequence[Range],
          metric: str = "time", aggregate: str | None = None,
          params: MappingT[str, Any] | None = None) -> SweepResult:
    """Evaluate ``mapping`` at every point of the grid of ``ranges`` (other parameters from
    ``params``, else their defaults).

    Columns: the swept parameters, ``value``, ``throughput`` and ``performance`` (for the
    ``time`` metric; empty where undefined), then one column per element (its value of
    ``metric`` before ``lambda``).
    """
    fixed = dict(params or {})
    clash = [r.name for r in ranges if r.name in fixed]
    if clash:
        raise MappingError(f"parameter {', '.join(clash)} is both swept and fixed with -p")
    points = grid(ranges)
    evaluations = []
    for point in points:
        problem = bind_problem(app, arch, {**fixed, **point})
        evaluations.append(evaluate(problem.app, problem.arch, mapping, metric, aggregate,
                                    problem=problem))
    names = [r.name for r in ranges]
    results = ["value"] + (["throughput", "performance"] if metric == "time" else [])
    taken = set(names) | set(results)
    elements = [e.name for e in (evaluations[0].elements if evaluations else ())]
    element_columns = {e: (e if e not in taken else f"element:{e}") for e in elements}
    rows = []
    for point, ev in zip(points, evaluations):
        row = dict(point)
        row["value"] = ev.value
        if metric == "time":
            row["throughput"], row["performance"] = ev.throughput, ev.performance
        for e in ev.elements:
            row[element_columns[e.name]] = e.value
        rows.append(row)
    columns = tuple(names + results + list(element_columns.values()))
    return SweepResult(columns, tuple(rows), tuple(evaluations))


def to_csv(result: SweepResult) -> str:
    """The CSV text of a sweep (``repr``-exact numbers, empty cells for ``None``)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(result.columns)
    for row in result.rows:
        writer.writerow(["" if row.get(c) is None else _cell(row[c]) for c in result.columns])
    return out.getvalue()


def _cell(value):
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ("inf" if value > 0 else
                                                         "-inf" if value < 0 else "nan")
    return str(value)
