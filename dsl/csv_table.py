"""Small CSV tables of the import formats (profiles, roofline kernels): a header row
naming the columns (any case, any order), ``#`` comment lines, and errors at
``file:line:col``."""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterator, TextIO

from dsl.errors import ParseError
from dsl.files import open_text


def open_table(path: str | Path) -> TextIO:
    """The CSV file at ``path`` opened for :mod:`csv` (UTF-8; a byte-order mark, as
    spreadsheets write, dropped); an unreadable file is a :class:`ParseError` naming it."""
    return open_text(path, newline="")


def csv_rows(path: str | Path, columns: tuple[str, ...], optional: tuple[str, ...] = ()
             ) -> Iterator[tuple[int, dict[str, tuple[str, int]]]]:
    """``(line, {column: (text, col)})`` for each data row of the CSV file at ``path``.
    The header must name every one of ``columns``, whose cells may not be empty;
    ``optional`` columns appear in a row's cells when the header names them (their
    text may be empty).  Blank rows and rows whose first cell starts with ``#`` are
    skipped, and line numbers count them."""
    path = Path(path)
    with open_table(path) as handle:
        reader = csv.reader(handle)
        index = None
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row) or row[0].lstrip().startswith("#"):
                continue
            if index is None:
                header = [cell.strip().lower() for cell in row]
                missing = [c for c in columns if c not in header]
                if missing:
                    raise ParseError(f"missing column{'s' if len(missing) > 1 else ''} "
                                     f"{', '.join(missing)} (the header must name "
                                     f"{', '.join(columns)})", (str(path), line, 1))
                index = {c: header.index(c) for c in (*columns, *optional) if c in header}
                continue
            cells = {}
            for c, i in index.items():
                text = row[i].strip() if i < len(row) else ""
                if not text and c in columns:
                    raise ParseError(f"row has no '{c}' cell", (str(path), line, 1))
                cells[c] = (text, 1 + sum(len(cell) + 1 for cell in row[:i]))
            yield line, cells
        if index is None:
            raise ParseError(f"empty file: expected a header naming {', '.join(columns)}",
                             (str(path), 1, 1))
