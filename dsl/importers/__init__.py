"""Importers: other tools' formats read into mapeval's files, one module per format.

Each module reads its format into ``moc``/``moa`` objects or mapeval text and defines an
:class:`Importer`: the options of ``mapeval import FORMAT`` (plain :mod:`argparse`) and a
``convert(args)`` that returns the files to write as an :class:`Imported`.  The command
line lists the formats in one registry and writes every result the same way (``-o``
atomically, never over an input, standard output without it).

Errors are :class:`dsl.errors.ParseError` (a ``ValueError``) whose ``origin`` is
``(file, line, column)`` where the format has lines, and whose message starts with the
element's path where it is XML (by line) or protobuf (``graph.node[3] 'conv1'``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping


@dataclass(frozen=True)
class Imported:
    """What an import writes: ``text`` to ``-o`` (a file ending in one of ``suffixes``)
    or standard output, or ``files`` (path -> text) into a directory; ``inputs`` are
    never written over; ``note`` is said when a file is written; ``document`` (a
    JSON-ready dict) is printed instead of ``text`` when given and no ``-o``; ``messages``
    go to standard error (warnings, corrections)."""
    text: str | None = None
    suffixes: tuple[str, ...] = (".sdf",)
    inputs: tuple = ()
    note: str = ""
    files: Mapping[str, str] = field(default_factory=dict)
    document: dict | None = None
    messages: tuple[str, ...] = ()


@dataclass(frozen=True)
class Importer:
    """One format of ``mapeval import``: ``arguments(parser)`` adds its positional
    input(s) and options (``-o`` included, as its output differs: a file or a
    directory); ``convert(args)`` reads them into an :class:`Imported`."""
    arguments: Callable
    convert: Callable[..., Imported]
    description: str
    epilog: str = ""


def output_option(parser, metavar: str = "APP.sdf") -> None:
    """``-o``: the file an import writes (default: standard output)."""
    parser.add_argument("-o", "--output", metavar=metavar,
                        help="write the file here, or to a FIFO or device (default: "
                        "standard output)")
