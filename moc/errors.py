"""Errors raised by SDF analyses; each names the actor or channel at fault."""
from moc.limits import exceeded


class SDFError(ValueError):
    """Bad SDF input. ``origin`` is ``(file, line, column)`` of the culprit when known;
    ``attribute`` names the attribute (``prod``, ``quanta``, ``src``...) of the actor or
    channel at fault where one is, so that a parser can point at it."""

    def __init__(self, message, origin=None, attribute=None):
        super().__init__(message)
        self.origin = origin
        self.attribute = attribute


class InconsistentGraphError(SDFError):
    """The balance equations have no positive solution; ``channel`` is one that fails."""

    def __init__(self, message, channel, origin=None):
        super().__init__(message, origin)
        self.channel = channel


class DeadlockError(SDFError):
    """One iteration cannot complete; ``actors`` are those left unable to fire,
    ``channels`` (where known) those they starve on."""

    def __init__(self, message, actors, origin=None, channels=()):
        super().__init__(message, origin)
        self.actors = tuple(actors)
        self.channels = tuple(channels)


class LimitError(SDFError):
    """An analysis would exceed a stated limit of ``moc.limits`` (``limit`` names it, as
    ``--limit NAME=N`` does; ``value`` is the limit in force); ``what`` says what was
    counted, and the message is :func:`moc.limits.exceeded`'s."""

    def __init__(self, what, limit, value, origin=None):
        super().__init__(exceeded(what, limit, value), origin)
        self.limit = limit
        self.value = value


class ExpansionTooLargeError(LimitError):
    """An HSDF expansion would exceed the stated number of firings."""


class UnboundedCycleError(SDFError):
    """A cycle whose heights sum to zero or less: no finite ratio bounds it (in a
    dataflow graph, a cycle without tokens, that is a deadlock). ``cycle`` names it."""

    def __init__(self, message, cycle, origin=None):
        super().__init__(message, origin)
        self.cycle = tuple(cycle)
