"""Built-in boards: ``.moa`` files shipped with the package, each number beside its source.

A board file starts with comment lines that say what it is (``# kind:``, ``# about:``)
and list its sources (``# [KEY] title, section or table``); every number in it carries
a ``[KEY]`` of that list in the comment of its line, or ``fit:`` for a parameter that no
public source gives, whose start value (0 for an additive term, 1 for an efficiency)
changes nothing until it is fitted.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

#: the directory that holds the built-in ``.moa`` files
DIRECTORY = Path(__file__).parent


@dataclass(frozen=True)
class Board:
    """A built-in board: its ``name`` (the file's stem), ``kind``, one-line ``about``,
    the ``path`` of its ``.moa`` file and its ``sources`` (``KEY -> citation``)."""

    name: str
    kind: str
    about: str
    path: Path
    sources: dict[str, str]


_FIELD = re.compile(r"#\s*(kind|about):\s*(.*\S)")
_SOURCE = re.compile(r"#\s*\[([A-Za-z0-9_.-]+)\]\s+(.*\S)")


def names() -> list[str]:
    """The names of the built-in boards, sorted."""
    return sorted(p.stem for p in DIRECTORY.glob("*.moa"))


def board(name: str) -> Board:
    """The built-in board called ``name``; an unknown name is a ValueError listing them."""
    path = DIRECTORY / f"{name}.moa"
    if name not in names():
        raise ValueError(f"no built-in board named '{name}' (boards: {', '.join(names())})")
    fields, sources = {}, {}
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        if m := _FIELD.match(line):
            fields[m.group(1)] = m.group(2)
        elif m := _SOURCE.match(line):
            sources[m.group(1)] = m.group(2)
    return Board(name, fields.get("kind", ""), fields.get("about", ""), path, sources)


def boards() -> list[Board]:
    """Every built-in board, by name."""
    return [board(n) for n in names()]
