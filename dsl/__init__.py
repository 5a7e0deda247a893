"""Text formats of mapeval: the ``.sdf``, ``.moa`` and ``.map`` languages (lark
grammars in ``dsl/grammars``), parsing to ``moc``/``moa`` objects and to the
:class:`~dsl.mappings.Mapping` records of ``.map`` files, printing back, and interchange
with SDF3 XML, Graphviz DOT, JSON and function-level profiles.

The parser (and so lark) is imported on first use of a name that needs it, so that
``dsl.mappings`` and ``dsl.errors`` serve the numeric layers where lark is absent; so is
:class:`~dsl.mappings.Mapping`, which reading a graph does not need.
"""
from __future__ import annotations

from pathlib import Path

from dsl.errors import INPUT_ERRORS, ExpressionError, ParseError
from moc.lazy_names import lazy_getattr

__all__ = [
    "parse_sdf", "parse_moa", "parse_map", "parse_expression",
    "load_sdf", "load_moa", "load_map", "load", "loads_sdf", "loads_moa", "loads_map",
    "format_sdf", "format_moa", "format_map", "format_diagnostic",
    "read_sdf3", "write_sdf3", "to_dot", "to_json",
    "ParseError", "ExpressionError", "INPUT_ERRORS", "Mapping",
    "Expression", "Num", "Name", "Neg", "Pos", "BinOp", "Call",
]

#: names served on first use, from the module that defines them
_LAZY = {
    **dict.fromkeys(("parse_sdf", "parse_moa", "parse_map", "parse_expression"), "dsl.parser"),
    **dict.fromkeys(("format_sdf", "format_moa", "format_map"), "dsl.printer"),
    **dict.fromkeys(("Expression", "Num", "Name", "Neg", "Pos", "BinOp", "Call"),
                    "dsl.expression"),
    "format_diagnostic": "dsl.diagnostics",
    "Mapping": "dsl.mappings",
}


__getattr__ = lazy_getattr(__name__, _LAZY)


_LOADERS = {".sdf": "load_sdf", ".moa": "load_moa", ".map": "load_map"}


def _read(path) -> tuple[str, str]:
    from dsl.files import read_text
    return read_text(path), str(path)


def load_sdf(path):
    """The SDF graphs (:class:`moc.graph.SDFGraph`) of a ``.sdf`` file."""
    from dsl.parser import parse_sdf
    return parse_sdf(*_read(path))


def load_moa(path):
    """The architectures (:class:`moa.architecture.Architecture`) of a ``.moa`` file."""
    from dsl.parser import parse_moa
    return parse_moa(*_read(path))


def load_map(path):
    """The mappings (:class:`dsl.mappings.Mapping`) of a ``.map`` file."""
    from dsl.parser import parse_map
    return parse_map(*_read(path))


def _loads(kind: str, text: str, filename: str):
    """Parse ``text`` with ``dsl.parser.parse_<kind>``; an input error gets the note
    ``FILE:LINE:COL: error: ...`` with the offending line, so that a traceback in a
    script or notebook shows where the text is wrong (the CLI formats it itself)."""
    import dsl.parser
    try:
        return getattr(dsl.parser, f"parse_{kind}")(text, filename)
    except INPUT_ERRORS as exc:
        if hasattr(exc, "add_note") and getattr(exc, "origin", None):
            from dsl.diagnostics import format_diagnostic
            exc.add_note(format_diagnostic(getattr(exc, "message", str(exc)), exc.origin,
                                           source=text))
        raise


def loads_sdf(text: str, filename: str = "<string>"):
    """The SDF graphs (:class:`moc.graph.SDFGraph`) of ``.sdf`` text.  A bad text raises
    one of :data:`INPUT_ERRORS` whose ``origin`` is ``(filename, line, column)``, e.g.
    ``("<string>", 3, 5)``."""
    return _loads("sdf", text, filename)


def loads_moa(text: str, filename: str = "<string>"):
    """The architectures (:class:`moa.architecture.Architecture`) of ``.moa`` text
    (errors as :func:`loads_sdf`)."""
    return _loads("moa", text, filename)


def loads_map(text: str, filename: str = "<string>"):
    """The mappings (:class:`dsl.mappings.Mapping`) of ``.map`` text (errors as
    :func:`loads_sdf`)."""
    return _loads("map", text, filename)


def load(path):
    """The objects of a ``.sdf``, ``.moa`` or ``.map`` file (a list), or the graph of an
    SDF3 ``.xml`` file (a one-element list), by the file's extension."""
    suffix = Path(path).suffix.lower()
    if suffix == ".xml":
        return [read_sdf3(path)]
    loader = _LOADERS.get(suffix)
    if loader is None:
        raise ParseError(f"unknown file kind '{suffix or Path(path).name}' "
                         "(expected .sdf, .moa, .map or .xml)", (str(path), None, None))
    return globals()[loader](path)


def read_sdf3(path):
    """An SDF graph from an SDF3 XML file (see :mod:`dsl.importers.sdf3`)."""
    from dsl.importers.sdf3 import read_sdf3 as _read_sdf3
    return _read_sdf3(path)


def write_sdf3(graph, path):
    """Write ``graph`` as an SDF3 XML file (see :mod:`dsl.importers.sdf3`)."""
    from dsl.importers.sdf3 import write_sdf3 as _write_sdf3
    return _write_sdf3(graph, path)


def to_dot(obj) -> str:
    """Graphviz text of an SDF graph or an architecture (see :mod:`dsl.dot`)."""
    from dsl.dot import to_dot as _to_dot
    return _to_dot(obj)


def to_json(obj):
    """A JSON-ready dict of a graph, architecture or mapping (see :mod:`dsl.json_export`)."""
    from dsl.json_export import to_json as _to_json
    return _to_json(obj)
