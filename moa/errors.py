"""Errors of architecture descriptions and cost models."""


class ArchitectureError(ValueError):
    """Bad MoA input. ``origin`` is ``(file, line, column)`` of the culprit when known."""

    def __init__(self, message, origin=None):
        super().__init__(message)
        self.origin = origin


class CostModelError(ArchitectureError):
    """A cost model is unknown, or one of its parameters is missing or invalid."""


class NoRouteError(ArchitectureError):
    """Two PEs have no path through communication nodes."""
