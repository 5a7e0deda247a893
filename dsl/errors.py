"""Errors of the text formats.

Every error that a bad input file can cause carries ``origin = (file, line, column)``
(1-based line and column) where it is known, so that the command line can point at the
culprit with :func:`dsl.diagnostics.format_diagnostic`.

Syntax errors and expression errors are :class:`ParseError`.  Semantic errors found
while building objects (a duplicate actor, an unknown type, ...) are raised by the
object model itself: :class:`moc.errors.SDFError`, :class:`moa.errors.ArchitectureError`
with the origin of the offending statement; a ``.map`` file's own errors (an actor mapped
twice) are :class:`ParseError`.
All of them are :class:`ValueError`; :data:`INPUT_ERRORS` lists them for ``except``.
"""
from __future__ import annotations

from moa.errors import ArchitectureError
from moc.errors import SDFError


class ParseError(ValueError):
    """A syntax error, or an error in an expression, at ``origin = (file, line, col)``."""

    def __init__(self, message: str, origin: tuple | None = None):
        super().__init__(message)
        self.message = message
        self.origin = origin

    def __str__(self):
        return self.message


class ExpressionError(ParseError):
    """An expression cannot be evaluated: unknown parameter, cycle between parameters,
    division by zero, a function outside its domain."""


#: every exception a bad input file can raise while parsing (all carry ``.origin``)
INPUT_ERRORS: tuple[type[Exception], ...] = (ParseError, SDFError, ArchitectureError)
