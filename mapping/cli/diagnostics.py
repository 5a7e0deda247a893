"""Reporting bad input: ``FILE:LINE:COL: error: MESSAGE`` with the line and a caret,
``mapeval: error: MESSAGE`` (:func:`report`) where no place is known, and exit status
:data:`BAD_INPUT`.

This is the CLI layer's: numeric modules raise the errors of :mod:`mapping.errors`."""
from __future__ import annotations

import sys

from dsl.diagnostics import format_diagnostic
from dsl.errors import ParseError
from moa.errors import ArchitectureError
from moc.errors import SDFError
from mapping.errors import InputError, MappingError


BAD_INPUT_ERRORS = (ParseError, SDFError, ArchitectureError, MappingError, InputError,
                    FileNotFoundError, IsADirectoryError, PermissionError)

#: the exit status of bad input (a bad file or option, an output that cannot be written);
#: 0 is success, 1 an internal error
BAD_INPUT = 2


def report(message: str, severity: str = "error", program: str = "mapeval",
           stream=None) -> None:
    """``PROGRAM: SEVERITY: MESSAGE`` on stderr: a message of the command line that
    names no place in a file, as :func:`dsl.diagnostics.format_diagnostic` writes it."""
    print(format_diagnostic(message, None, program=program, severity=severity),
          file=stream or sys.stderr)


def report_error(exc: BaseException, stream=None) -> None:
    if isinstance(exc, OSError) and not isinstance(exc, InputError):
        message = f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
        report(message, stream=stream)
        return
    print(format_diagnostic(str(exc), getattr(exc, "origin", None)),
          file=stream or sys.stderr)


def error_entry(exc: BaseException) -> dict:
    """The ``error`` entry of a bad file in ``--json`` and ``--json-lines``: its message
    and where it is (:func:`located_entry`)."""
    return located_entry(str(exc), getattr(exc, "origin", None))


def located_entry(message: str, origin=None) -> dict:
    """A message and where it is, as ``--json`` gives an error or a warning:
    ``{"message", "file", "line", "column"}`` from ``origin`` ``(file, line, column)``,
    None where unknown."""
    origin = tuple(origin or ()) + (None,) * 3
    return {"message": message, "file": None if origin[0] is None else str(origin[0]),
            "line": origin[1], "column": origin[2]}
