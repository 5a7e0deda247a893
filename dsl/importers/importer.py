"""What an import format is (:class:`Importer`: its options and its conversion) and what
it writes (:class:`Imported`); see :mod:`dsl.importers`."""
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
