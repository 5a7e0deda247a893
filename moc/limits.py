"""Limits of the SDF analyses: work that no exact method bounds is refused past these.

Each is a module constant read where it is enforced; the command line raises it with
``--limit NAME=N`` (``mapping.cli.limits`` lists the names).  :func:`exceeded` words the
error (or the note of what is left out) of every stated limit, these and the others.
"""

#: firings (HSDF expansion) or firing runs (deadlock check) of one iteration, and the
#: firings of all iterations computed for the buffer maxima (moc.occupancy)
MAX_FIRINGS = 10_000_000

#: instants (states visited) of one exploration of a self-timed execution
#: (moc.self_timed); a few microseconds each, so the default ``analyse`` answers in
#: about a second, leaving buffers it cannot reach unexplored
MAX_STATES = 200_000

#: firings of the first iteration whose schedule ``analyse`` gives (moc.timing): past
#: it the rows (about 67 bytes of JSON and 2 µs each) are left out,
#: the latency and the rest still computed
MAX_SCHEDULE = 1_000_000

#: firings of the first iteration that ``analyse`` computes one by one for its latency
#: (and schedule) where the buffers' method did not give them (moc.timing): about a
#: microsecond and 110 bytes each, so past it (and past ``MAX_SCHEDULE``) the latency
#: is left out, the rest still computed
MAX_LATENCY = 2_000_000


def exceeded(what: str, name: str, value: int, enough: int | None = None) -> str:
    """``"WHAT, more than the limit NAME = VALUE; raise it with --limit NAME=N"``: the
    words of every stated limit passed.  ``what`` says what was counted and how many
    (``at least`` so many where the count stopped at the limit); ``enough``, where
    known, is the value that would do and stands for ``N``."""
    n = "N" if enough is None else enough
    return f"{what}, more than the limit {name} = {value}; raise it with --limit {name}={n}"
