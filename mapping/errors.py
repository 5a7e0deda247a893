"""The errors of the mapping layer: bad mappings and bad command-line or CSV input.

This module sits at the bottom of ``mapping``: it imports nothing of the parser or the
CLI, so that numeric modules can raise positioned errors wherever lark is absent.
``origin`` is ``(file, line, column)`` of the culprit where known.  A cost model that
fails on an element's tokens is worded here too (:func:`on_element`), for every layer
that runs models: placing memory traffic as well as valuing elements.
"""
from __future__ import annotations

from moa.errors import ArchitectureError


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


def on_element(element, metric: str, model, compute, *args):
    """``compute(*args)``: ``element``'s ``model`` for ``metric`` at work (a rule's value,
    a model's memory traffic).  A ``ValueError`` or ``ZeroDivisionError`` it raises (the
    tokens do not suit the model) is a :class:`MappingError` at the element: ``element
    'E', metric 'M', model 'X': why``; errors that already say where pass unchanged."""
    try:
        return compute(*args)
    except (MappingError, ArchitectureError):
        raise
    except (ValueError, ZeroDivisionError) as exc:
        raise MappingError(f"element '{element.name}', metric '{metric}', model "
                           f"'{model.name}': {exc}", element.origin) from None
