"""Importers: other tools' formats read into mapeval's files, one module per format.

Each module reads its format into ``moc``/``moa`` objects or mapeval text and defines an
:class:`Importer`: the options of ``mapeval import FORMAT`` (plain :mod:`argparse`) and a
``convert(args)`` that returns the files to write as an :class:`Imported`.  The command
line lists the formats in one registry and writes every result the same way (``-o``
atomically, never over an input, standard output without it).

Errors are :class:`dsl.errors.ParseError` (a ``ValueError``) whose ``origin`` is
``(file, line, column)`` where the format has lines, and whose message starts with the
element's path where it is XML (by line) or protobuf (``graph.node[3] 'conv1'``).

:class:`Importer`, :class:`Imported` and :func:`output_option` (defined in
:mod:`dsl.importers.importer`) load on first use: a reader (``read_sdf3`` for
``mapeval analyse G.xml``) does without them.
"""
from __future__ import annotations

from moc.lazy_names import lazy_getattr

__all__ = ["Imported", "Importer", "output_option"]

__getattr__ = lazy_getattr(__name__, dict.fromkeys(__all__, "dsl.importers.importer"))
