"""Measurement tables (CSV) for ``mapeval fidelity`` and ``mapeval fit``.

One row is one measured alternative.  Its columns say

- the parameter values of the row: every column named like a parameter of the ``.sdf``
  or ``.moa`` file sets it;
- the mapping of the row, one of: a column naming a mapping of the ``.map`` file
  (``mapping_column``); one column per actor naming its PE (``actor_column``, a
  template such as ``t_{actor}``); or nothing, when one mapping holds for every row;
- or, instead of a mapping, the activity each element saw, already counted
  (``quanta_column`` such as ``quanta_{element}``, optionally ``tokens_column`` and
  token attributes such as ``gamma=gamma_{element}``);
- the measured value (``measured``), in the unit its header gives (``time [ms]``) or
  ``measured_unit`` says, converted to ``metric_unit`` (the metric's unit in the
  ``.moa``) as it is read.

Every bad cell is an :class:`~mapping.cli.diagnostics.InputError` whose ``origin`` is
``(csv_path, line, column)`` -- the line of the row in the file and the character column
where the cell starts, so that the diagnostic points at it -- and whose message names
the row and the column.  With ``skip_bad_rows`` such rows are dropped and counted.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from collections.abc import Mapping as MappingABC
from typing import Iterable, Mapping as MappingT, Sequence

from mapping.bulk import paused
from mapping.errors import InputError
from mapping.options import parse_number
from dsl.diagnostics import format_located
from dsl.files import read_text
from dsl.mappings import Mapping
from moc.limits import exceeded

#: the most data rows one table may hold (``--limit rows=N``): reading, evaluating and
#: ranking take about 4 KB of memory per row (1,000,000 rows: about 4 GB)
MAX_ROWS = 2_000_000

ACTOR_FIELD = "{actor}"
ELEMENT_FIELD = "{element}"


@dataclass(frozen=True)
class MeasurementRow:
    """One data row: ``line`` in the file, its 1-based ``index`` among data rows, the
    ``params`` it sets, its ``mapping`` or per-element ``activity`` (element →
    ``(quanta, tokens)``, or ``(quanta, tokens, ((attribute, value), ...))``), the ``measured`` value and every cell in ``cells``.
    ``path`` and ``positions`` (column name → ``(column number, character column)``)
    locate its cells for :meth:`error`."""

    line: int
    index: int
    params: MappingT[str, float]
    measured: float
    mapping: Mapping | None = None
    activity: MappingT[str, tuple] | None = None
    cells: MappingT[str, str] = field(default_factory=dict, repr=False, compare=False)
    path: str | None = field(default=None, repr=False, compare=False)
    positions: MappingT[str, tuple[int, int]] = field(default_factory=dict, repr=False,
                                                      compare=False)

    def error(self, message: str, column: str | None = None) -> InputError:
        """An error about this row (at ``column`` if given), positioned in the file
        (:func:`row_error`)."""
        if column is not None and column in self.positions:
            number, char = self.positions[column]
            return row_error(message, self.index, self.line, self.path, column, number,
                             char)
        return row_error(message, self.index, self.line, self.path)

    def cell(self, column: str) -> str:
        """The cell of ``column``; an error at it when it is blank or the row too short."""
        text = self.cells.get(column, "")
        if not text.strip():
            raise self.error("missing cell", column)
        return text

    def number(self, column: str) -> float | int:
        """The number in ``column`` (:func:`cell_number`)."""
        return cell_number(self, column)


@dataclass(frozen=True)
class Measurements:
    """The good rows of a CSV file; ``skipped`` counts the bad rows dropped, whose
    messages are in ``problems``."""

    path: Path
    columns: tuple[str, ...]
    rows: tuple[MeasurementRow, ...]
    skipped: int = 0
    problems: tuple[str, ...] = ()
    #: the measured column as its header names it, its unit (header or option), and the
    #: unit of the rows' ``measured`` values: the metric's after a conversion
    column: str | None = None
    column_unit: str | None = None
    unit: str | None = None

    def __len__(self):
        return len(self.rows)

    @property
    def measured(self):
        import numpy as np
        return np.array([r.measured for r in self.rows], dtype=float)

    def column(self, name: str) -> list[str]:
        return [r.cells.get(name, "") for r in self.rows]


def row_error(message: str, index: int, line: int, path: str | None = None,
              column: str | None = None, number: int | None = None,
              char: int = 1) -> InputError:
    """An error about data row ``index`` (at line ``line`` of the file ``path``):
    ``row 2, column 3 't': MESSAGE`` at the cell of ``column`` (the ``number``-th,
    starting at character ``char``), ``row 2: MESSAGE`` at the row.  The position
    gives the line; without a file, the message does: ``row 2 (line 3): MESSAGE``."""
    where = f"row {index}" if path else f"row {index} (line {line})"
    if column is not None:
        where += f", column {number} '{column}'"
    return InputError(f"{where}: {message}", (path, line, char) if path else None)


def cell_number(row, column: str) -> float | int:
    """The number in ``column`` of ``row`` (a :class:`MeasurementRow` or a row being
    read: its ``cell`` and ``error``): a finite one as
    :func:`mapping.options.parse_number` reads it, else an error at the cell."""
    text = row.cell(column)
    value = parse_number(text)
    if value is None:
        shown = text.strip()
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise row.error(f"'{shown}' is not a (finite) number", column)
    return value


def read_measurements(path, measured: str, *,
                      params: Iterable[str] = (),
                      mappings: Sequence[Mapping] | None = None,
                      mapping_column: str | None = None,
                      actor_column: str | None = None,
                      actors: Sequence[str] | None = None,
                      pes: Sequence[str] | None = None,
                      cns: Sequence[str] = (),
                      quanta_column: str | None = None,
                      tokens_column: str | None = None,
                      attribute_columns: MappingT[str, str] | None = None,
                      elements: Sequence[str] | None = None,
                      mapping: Mapping | None = None,
                      skip_bad_rows: bool = False,
                      measured_option: str = "--measured",
                      measured_unit: str | None = None,
                      metric_unit: str | None = None,
                      metric: str = "time") -> Measurements:
    """Read the measurement table at ``path``; ``measured_option`` is the option that
    named the ``measured`` column (for the error when it is missing).

    ``measured`` names a header as written (``time [ms]``) or without its unit
    (``time``); its unit, from the header or ``measured_unit``, is converted to
    ``metric_unit``, the unit of ``metric`` (:func:`moa.units.scale`): a table in ms
    against a model in s is read in s.  Units that do not convert are an error naming
    both; without either unit the values are taken as they are.

    ``params``: the parameter names a column may set.  The mapping of each row comes
    from ``mapping_column`` (a cell names one of ``mappings``), from ``actor_column``
    (template with ``{actor}``, for each of ``actors``; cells name one of ``pes``), from
    ``quanta_column``/``tokens_column`` (templates with ``{element}``, for the
    ``elements`` that have such a column; ``attribute_columns`` maps a token attribute
    such as ``gamma`` to its template, read where the element has that column), or is
    ``mapping`` for every row.
    """
    path = Path(path)
    table = _Table.load(path)
    header = table.header
    params = [p for p in dict.fromkeys(params) if p in table.index]

    modes = [m for m in (mapping_column, actor_column, quanta_column) if m is not None]
    if len(modes) > 1:
        raise InputError("give only one of --mapping-column, --actor-column and "
                         "--quanta-column")
    measured, column_unit, factor = _measured_unit(table, measured, measured_option,
                                                   measured_unit, metric_unit, metric)

    actor_cols: dict[str, str] = {}
    if mapping_column is not None:
        table.require(mapping_column, "the mapping column (--mapping-column)")
        if not mappings:
            raise InputError(f"--mapping-column {mapping_column}: a .map file is needed "
                             "to give the mappings the column names")
        by_name = {m.name: m for m in mappings}
    if actor_column is not None:
        _check_template(actor_column, ACTOR_FIELD, "--actor-column")
        for actor in actors or ():
            actor_cols[actor] = table.require(actor_column.replace(ACTOR_FIELD, actor),
                                              f"the PE of actor '{actor}' (--actor-column)")
        pe_set, cn_set = set(pes or ()), set(cns)
    element_cols: dict[str, tuple[str, str | None]] = {}
    attr_cols: dict[str, dict[str, str]] = {}
    if attribute_columns and quanta_column is None:
        raise InputError("--attribute-column needs --quanta-column")
    if quanta_column is not None:
        _check_template(quanta_column, ELEMENT_FIELD, "--quanta-column")
        if tokens_column is not None:
            _check_template(tokens_column, ELEMENT_FIELD, "--tokens-column")
        for element in elements or ():
            qcol = quanta_column.replace(ELEMENT_FIELD, element)
            if qcol not in table.index:
                continue
            tcol = None
            if tokens_column is not None:
                tcol = table.require(tokens_column.replace(ELEMENT_FIELD, element),
                                     f"the tokens of element '{element}' (--tokens-column)")
            element_cols[element] = (qcol, tcol)
            attr_cols[element] = {}
            for attr, template in (attribute_columns or {}).items():
                _check_template(template, ELEMENT_FIELD, "--attribute-column")
                column = template.replace(ELEMENT_FIELD, element)
                if column in table.index:
                    attr_cols[element][attr] = column
        for attr, template in (attribute_columns or {}).items():
            if not any(attr in cols for cols in attr_cols.values()):
                raise InputError(f"{path}: no column matches --attribute-column "
                                 f"'{attr}={template}' for an element with activity",
                                 (str(path), table.header_line, 1))
        if not element_cols:
            expected = ", ".join(quanta_column.replace(ELEMENT_FIELD, e) for e in elements or ())
            raise InputError(f"{path}: no column matches --quanta-column '{quanta_column}' "
                             f"(expected some of: {expected or 'none'})",
                             (str(path), table.header_line, 1))
    elif tokens_column is not None:
        raise InputError("--tokens-column needs --quanta-column")

    rows, problems = [], []
    where = str(path)
    shared_mappings: dict[tuple, Mapping] = {}
    with paused():        # millions of small objects that all stay alive
        for record in table.records:
            try:
                if len(record.values) > len(header):
                    raise record.error(f"{len(record.values)} cells, but the header names "
                                       f"{len(header)} columns")
                cells = record.cells
                values = {p: record.number(p) for p in params}
                value = record.number(measured) * factor
                row_mapping, row_activity = mapping, None
                if mapping_column is not None:
                    name = record.cell(mapping_column).strip()
                    row_mapping = by_name.get(name)
                    if row_mapping is None:
                        raise record.error(f"no mapping named '{name}' in the .map "
                                           f"file (one of: {', '.join(by_name)})",
                                           mapping_column)
                elif actor_column is not None:
                    assignment = {}
                    for actor, col in actor_cols.items():
                        pe = record.cell(col).strip()
                        if pe not in pe_set:
                            what = ("a communication node, not a PE" if pe in cn_set
                                    else "an unknown PE")
                            raise record.error(f"'{pe}' is {what} "
                                               f"(PEs: {', '.join(pes or ())})", col)
                        assignment[actor] = pe
                    key = tuple(assignment.values())
                    row_mapping = shared_mappings.get(key)
                    if row_mapping is None:
                        name = ",".join(f"{a}={pe}" for a, pe in assignment.items())
                        row_mapping = shared_mappings[key] = Mapping(name, assignment)
                elif quanta_column is not None:
                    row_activity = {}
                    for element, (qcol, tcol) in element_cols.items():
                        quanta = record.number(qcol)
                        tokens = 1 if tcol is None else record.number(tcol)
                        if quanta < 0:
                            raise record.error(f"quanta must be non-negative, got "
                                               f"{quanta}", qcol)
                        if tokens < 0 or tokens != int(tokens):
                            raise record.error("a token count must be a non-negative "
                                               f"integer, got {tokens}", tcol)
                        if tokens == 0 and quanta > 0:
                            raise record.error(f"{quanta} quanta in 0 tokens", tcol)
                        attrs = []
                        for attr, col in attr_cols[element].items():
                            attr_value = record.number(col)
                            if attr_value < 0:
                                raise record.error(f"token attribute '{attr}' must be "
                                                   f"non-negative, got {attr_value}", col)
                            attrs.append((attr, float(attr_value)))
                        row_activity[element] = (float(quanta), int(tokens), tuple(attrs)) \
                            if attrs else (float(quanta), int(tokens))
                rows.append(MeasurementRow(record.line, record.index, values, float(value),
                                           row_mapping, row_activity, cells, where,
                                           _Positions(record)))
                record.release()
            except InputError as exc:
                if not skip_bad_rows:
                    raise
                problems.append(format_located(str(exc), exc.origin))
    if not rows:
        if problems:
            raise InputError(f"{path}: every data row is bad ({len(problems)} skipped); "
                             f"the first: {problems[0]}", (str(path), table.header_line, 1))
        raise InputError(f"{path}: no data rows after the header", (str(path), table.header_line, 1))
    return Measurements(path, tuple(header), tuple(rows), len(problems), tuple(problems),
                        measured, column_unit,
                        metric_unit if column_unit and metric_unit else column_unit)


def _measured_unit(table: "_Table", measured: str, option: str, measured_unit: str | None,
                   metric_unit: str | None, metric: str) -> tuple[str, str | None, float]:
    """The measured column's header, its unit and the factor to the metric's unit."""
    from moa.units import UnitError, scale, split_unit

    if measured not in table.index:
        named = [h for h in table.header if split_unit(h)[0] == measured]
        if len(named) == 1:
            measured = named[0]
    column = table.require(measured, f"the measured column ({option})")
    starts = getattr(table, "header_starts", None) or [0] * len(table.header)
    where = (str(table.path), table.header_line, starts[table.index[column]] + 1)
    header_unit = split_unit(column)[1]
    unit = measured_unit or header_unit
    try:
        same = not (measured_unit and header_unit) or scale(header_unit, measured_unit) == 1.0
    except UnitError:
        same = False
    if not same:
        raise InputError(f"the header of column '{column}' says "
                         f"'{header_unit}' and --measured-unit says '{measured_unit}'", where)
    try:
        factor = scale(unit, metric_unit) if unit and metric_unit else 1.0
    except UnitError as exc:
        raise InputError(f"the measured column '{column}' is in '{unit}' and "
                         f"metric '{metric}' in '{metric_unit}' (the .moa's unit): {exc}",
                         where) from None
    return column, unit, factor


def _check_template(template: str, field_: str, option: str) -> None:
    if field_ not in template:
        raise InputError(f"{option} '{template}': the template must contain {field_}, "
                         f"e.g. '{field_.strip('{}')[0]}_{field_}'")


class _Cells(MappingABC):
    """Column name → cell of one record, through the header's index (not a dict per
    row: a million rows are read)."""

    __slots__ = ("_record",)

    def __init__(self, record: "_Record"):
        self._record = record

    def __getitem__(self, key):
        i = self._record.table.index[key]
        values = self._record.cell_values()
        if i >= len(values):
            raise KeyError(key)
        return values[i]

    def __iter__(self):
        n = len(self._record.cell_values())
        return (name for name, i in self._record.table.index.items() if i < n)

    def __len__(self):
        return min(len(self._record.table.index), len(self._record.cell_values()))

    def __repr__(self):
        return repr(dict(self))


class _Positions(MappingABC):
    """A row's :meth:`_Record.positions`, found when an error first asks (finding them
    for every row of a large table costs more than reading it)."""

    __slots__ = ("_record", "_got")

    def __init__(self, record: "_Record"):
        self._record, self._got = record, None

    def _all(self) -> dict[str, tuple[int, int]]:
        if self._got is None:
            self._got = self._record.positions()
        return self._got

    def __getitem__(self, key):
        return self._all()[key]

    def __iter__(self):
        return iter(self._all())

    def __len__(self):
        return len(self._all())


class _Record:
    """One CSV record with its position, for error messages."""

    def __init__(self, table: "_Table", cells: list[str], line: int, index: int,
                 raw: str | None):
        self.table, self.values, self.line, self.index, self.raw = table, cells, line, index, raw

    @cached_property
    def _starts(self):
        return _field_starts(self.raw, self.table.dialect) if self.raw is not None else None

    @property
    def cells(self) -> MappingT[str, str]:
        return _Cells(self)

    def cell_values(self) -> list[str]:
        """The cells; after :meth:`release`, parsed again from the line."""
        if self.values is None:
            return next(csv.reader([self.raw], self.table.dialect))
        return self.values

    def release(self) -> None:
        """Drop the parsed cells of a one-line record (kept: its line): a million rows'
        cells as strings cost gigabytes, their lines a tenth of that."""
        if self.raw is not None:
            self.values = None

    def origin(self, column: str | None) -> tuple:
        if column is None:
            return (str(self.table.path), self.line, 1)
        i = self.table.index[column]
        if self._starts is not None and i < len(self._starts):
            col = self._starts[i] + 1
        elif self.raw is not None:
            col = len(self.raw.rstrip("\r\n")) + 1    # a missing cell: point past the end
        else:
            col = 1
        return (str(self.table.path), self.line, col)

    def positions(self) -> dict[str, tuple[int, int]]:
        """Column name → (column number, character column) of each cell."""
        return {name: (i + 1, self.origin(name)[2]) for i, name in enumerate(self.table.header)}

    def error(self, message: str, column: str | None = None) -> InputError:
        """An error about this record (at ``column`` if given): :func:`row_error`."""
        path, line, char = self.origin(column)
        if column is None:
            return row_error(message, self.index, line, path)
        return row_error(message, self.index, line, path, column,
                         self.table.index[column] + 1, char)

    def cell(self, column: str) -> str:
        i = self.table.index[column]
        values = self.cell_values()
        if i >= len(values) or not values[i].strip():
            raise self.error("missing cell", column)
        return values[i]

    def number(self, column: str) -> float | int:
        """The number in ``column`` (:func:`cell_number`)."""
        return cell_number(self, column)


class _Table:
    """A CSV file's header and records, each with the line it starts on."""

    def __init__(self, path: Path, header: list[str], header_line: int, records, dialect):
        self.path, self.header, self.header_line = path, header, header_line
        self.records, self.dialect = records, dialect
        self.index = {name: i for i, name in enumerate(header)}

    @classmethod
    def load(cls, path: Path) -> "_Table":
        text = read_text(path, newline="")
        lines = text.splitlines(keepends=True)
        # Leading blank lines and '#' comment lines come before the header.
        first = 0
        while first < len(lines) and (not lines[first].strip()
                                      or lines[first].lstrip().startswith("#")):
            first += 1
        if first == len(lines):
            raise InputError(f"{path}: empty file: expected a header row naming the columns",
                             (str(path), 1, 1))
        dialect = _dialect(lines[first])
        feeder = _LineFeeder(lines, first)
        reader = csv.reader(feeder, dialect)
        try:
            header = [h.strip() for h in next(reader)]
        except csv.Error as exc:
            raise InputError(f"{path}: bad header row: {exc}", (str(path), first + 1, 1)) from None
        header_line = first + 1
        seen = {}
        for i, name in enumerate(header):
            if not name:
                raise InputError(f"{path}: column {i + 1} of the header has no name",
                                 (str(path), header_line, _field_starts(lines[first], dialect)[i] + 1))
            if name in seen:
                raise InputError(f"{path}: column '{name}' appears twice in the header "
                                 f"(columns {seen[name] + 1} and {i + 1})",
                                 (str(path), header_line, 1))
            seen[name] = i
        records = []
        index = 0
        while True:
            start = feeder.position
            try:
                values = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                raise InputError(f"{path}: line {start + 1}: {exc}", (str(path), start + 1, 1)) from None
            if not values or all(not v.strip() for v in values):
                continue                                    # blank line
            if values[0].lstrip().startswith("#"):
                continue                                    # comment line
            index += 1
            if index > MAX_ROWS:
                raise InputError(exceeded(f"{path} has at least {MAX_ROWS + 1} data rows "
                                          f"(about 4 KB of memory each)", "rows", MAX_ROWS),
                                 (str(path), start + 1, 1))
            raw = lines[start] if feeder.position == start + 1 else None
            records.append(_Record(None, values, start + 1, index, raw))
        table = cls(path, header, header_line, records, dialect)
        table.header_starts = _field_starts(lines[first], dialect)
        for record in records:
            record.table = table
        return table

    def require(self, column: str, what: str) -> str:
        if column not in self.index:
            raise InputError(f"{self.path}: no column '{column}' for {what} "
                             f"(columns: {', '.join(self.header)})",
                             (str(self.path), self.header_line, 1))
        return column


class _LineFeeder:
    """Feeds lines to csv.reader and tells which line it is at."""

    def __init__(self, lines, start):
        self.lines, self.position = lines, start

    def __iter__(self):
        return self

    def __next__(self):
        if self.position >= len(self.lines):
            raise StopIteration
        line = self.lines[self.position]
        self.position += 1
        return line


def _dialect(header_line: str):
    """Comma by default; semicolon or tab when the header plainly uses them."""
    class Dialect(csv.excel):
        pass
    counts = {d: header_line.count(d) for d in (",", ";", "\t")}
    best = max(counts, key=counts.get)
    Dialect.delimiter = best if counts[best] > 0 else ","
    Dialect.skipinitialspace = True
    return Dialect


def _field_starts(raw: str, dialect) -> list[int]:
    """Character offsets where each field of one physical CSV line starts."""
    starts, i, n = [], 0, len(raw)
    delim, quote = dialect.delimiter, dialect.quotechar
    while True:
        while dialect.skipinitialspace and i < n and raw[i] == " ":
            i += 1
        starts.append(i)
        if i < n and raw[i] == quote:
            i += 1
            while i < n:
                if raw[i] == quote:
                    if i + 1 < n and raw[i + 1] == quote:
                        i += 2
                        continue
                    i += 1
                    break
                i += 1
        while i < n and raw[i] != delim and raw[i] not in "\r\n":
            i += 1
        if i < n and raw[i] == delim:
            i += 1
            continue
        return starts
