"""Parsing of the ``.sdf``, ``.moa`` and ``.map`` formats into domain objects: the public
entry points.

A text goes through the LALR parser of its grammar (:mod:`dsl.lalr`, with the lexer of
:mod:`dsl.lexer` and the inline transformer of :mod:`dsl.transformer`, which turns each
statement into a small tuple while lark parses), then through the builder of its format
(:mod:`dsl.build_sdf`, :mod:`dsl.build_moa`, :mod:`dsl.build_map`).  The objects check
their own rules; the builders point the errors at the file.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dsl.build_sdf import build_graph
from dsl.declarations import unique_blocks
from dsl.errors import ParseError
from dsl.lalr import gc_paused, parse_text
from dsl.transformer import strict
from moa.errors import ArchitectureError
from moc.errors import SDFError
from moc.graph import SDFGraph

if TYPE_CHECKING:
    from moa.architecture import Architecture


@gc_paused
def parse_sdf(text: str, filename: str = "<string>") -> list[SDFGraph]:
    """The SDF graphs of the ``sdf NAME { ... }`` blocks of ``text``."""
    blocks = unique_blocks(parse_text("sdf", text, filename), filename, "graph", SDFError)
    return [build_graph(block, filename) for block in blocks]


@gc_paused
def parse_moa(text: str, filename: str = "<string>") -> list[Architecture]:
    """The architectures of the ``moa NAME { ... }`` blocks of ``text``."""
    from dsl.build_moa import build_architecture     # the cost models: .moa texts only
    blocks = unique_blocks(parse_text("moa", text, filename), filename, "architecture",
                           ArchitectureError)
    return [build_architecture(block, filename) for block in blocks]


@gc_paused
def parse_map(text: str, filename: str = "<string>") -> list:
    """The mappings (:class:`dsl.mappings.Mapping`) of the ``mapping NAME { ... }``
    blocks of ``text``."""
    from dsl.build_map import build_mapping           # the mappings: .map texts only
    blocks = unique_blocks(parse_text("map", text, filename), filename, "mapping", ParseError)
    return [build_mapping(block, filename) for block in blocks]


def parse_expression(text: str, filename: str = "<string>"):
    """An expression (``Expression``) from ``text``, e.g. a command-line value."""
    return strict(parse_text("expr", text, filename)[0])
