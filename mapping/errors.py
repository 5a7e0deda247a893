"""The errors of the mapping layer: bad mappings and bad command-line or CSV input.

This module sits at the bottom of ``mapping``: it imports nothing of the parser or the
CLI, so that numeric modules can raise positioned errors wherever lark is absent.
``origin`` is ``(file, line, column)`` of the culprit where known.
"""
from __future__ import annotations


class MappingError(ValueError):
    """A mapping that does not fit its application or architecture."""

    def __init__(self, message, origin=None):
        super().__init__(message)
        self.origin = origin


class InputError(ValueError):
    """Bad command-line input (files, options, CSV cells)."""

    def __init__(self, message, origin=None):
        super().__init__(message)
        self.origin = origin


def interrupted_status(interrupt: KeyboardInterrupt) -> int:
    """The exit status of a command stopped by ``interrupt``: 143 on SIGTERM
    (:class:`Terminated`), 130 on Ctrl-C (128 + the signal's number, as shells do)."""
    return 143 if isinstance(interrupt, Terminated) else 130


class Terminated(KeyboardInterrupt):
    """SIGTERM under the command line: handled as Ctrl-C is (temporary files removed,
    the cluster shut down), with exit status 143."""
