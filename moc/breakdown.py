"""Computation and communication of a profiled program (Kim & Edwards, Figs. 3, 4 and 9).

An imported profile is a graph whose actors carry ``ops`` (arithmetic and logic
instructions; ``quanta`` when absent) and whose channels carry ``size`` bytes per token,
one iteration being one run.  Per iteration, an actor's computation is ``q·ops``; a
channel moves ``q(src)·prod·size`` bytes.  A channel from a function to itself is
*local* communication (within the function, or within its call tree when imported with
``--inclusive``); any other is *global* and counts for its consumer (the function that
read the bytes).  Instructions and bytes are kept apart; a plot that adds them says how.
"""
from __future__ import annotations


from moc.graph import SDFGraph
from moc.phases import mean, phase_counts
from moc.record import record
from moc.repetition import repetition_vector


@record
class FunctionLoad:
    """One function (actor): its ``ops``, ``local`` bytes (to itself) and the global
    bytes it reads (``global_in``) and that others read from it (``global_out``)."""

    name: str
    ops: float
    local: float
    global_in: float
    global_out: float


@record
class Breakdown:
    """A run: every function's load (in the graph's actor order) and the bytes of each
    ``(producer, consumer)`` pair."""

    name: str
    functions: tuple[FunctionLoad, ...]
    transfers: tuple[tuple[str, str, float], ...]

    @property
    def computation(self) -> float:
        return sum(f.ops for f in self.functions)

    @property
    def local(self) -> float:
        return sum(f.local for f in self.functions)

    @property
    def global_(self) -> float:
        return sum(f.global_in for f in self.functions)

    def by_load(self) -> tuple[FunctionLoad, ...]:
        """The functions sorted by computation, largest first (Fig. 9's order)."""
        return tuple(sorted(self.functions, key=lambda f: -f.ops))


def breakdown(graph: SDFGraph) -> Breakdown:
    """The :class:`Breakdown` of one iteration of a bound graph (module docstring)."""
    q = repetition_vector(graph)
    n = phase_counts(graph)
    ops = {a: q[a] * float(mean(actor.attrs.get("ops", actor.quanta), n[a])) for a, actor in
           graph.actors.items()}
    local = dict.fromkeys(graph.actors, 0.0)
    g_in, g_out = dict(local), dict(local)
    pairs: dict[tuple[str, str], float] = {}
    for ch in graph.channels.values():
        moved = q[ch.src] * float(mean(ch.prod, n[ch.src])) * float(ch.size)
        pairs[ch.src, ch.dst] = pairs.get((ch.src, ch.dst), 0.0) + moved
        if ch.src == ch.dst:
            local[ch.src] += moved
        else:
            g_in[ch.dst] += moved
            g_out[ch.src] += moved
    functions = tuple(FunctionLoad(a, ops[a], local[a], g_in[a], g_out[a]) for a in graph.actors)
    return Breakdown(graph.name, functions, tuple((p, c, b) for (p, c), b in pairs.items()))
