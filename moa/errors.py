"""Errors of architecture descriptions and cost models."""


class ArchitectureError(ValueError):
    """Bad MoA input. ``origin`` is ``(file, line, column)`` of the culprit when known;
    ``attribute`` names the attribute (``lambda``, ``type``, ``local``, an attribute's
    key...) of the element or architecture at fault where one is."""

    def __init__(self, message, origin=None, attribute=None):
        super().__init__(message)
        self.origin = origin
        self.attribute = attribute


class CostModelError(ArchitectureError):
    """A cost model is unknown, or one of its parameters is missing or invalid."""


class NoRouteError(ArchitectureError):
    """Two PEs have no path through communication nodes."""
