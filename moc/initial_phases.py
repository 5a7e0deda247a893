"""Initialisation phases of cyclo-static actors (Kiter's ``a;b`` rates: Bodin et al.'s
dataflow tool reads ``rate="1;3,1"`` as one phase of rate 1 fired once, then the
periodic phases 3, 1 repeated).

An actor with ``m`` initialisation phases fires each of them once, in order, then its
periodic phases cyclically: its firing ``ν < m`` is initialisation phase ``ν`` (its
own rates and times, :class:`InitialPhases`), firing ``m + k`` periodic phase
``k mod n``.  A channel's rate in an initialisation phase that does not name it is 0.

The throughput of such a graph is that of its periodic phases alone from the tokens
the initialisation leaves (:func:`after_initial_phases`).  Why: let ``R`` be the
self-timed execution with the initialisation phases and ``S`` that of the periodic
graph whose marking is ``M' = M0 + (initial production − initial consumption)``,
from time 0.  A periodic firing ``k`` of a consumer needs, on each input channel, the
producer's overall firing ``ν`` with ``M0 + P_R(ν) ≥ C_R(m + k + 1)``: where
``ν ≥ m_a`` that is ``S``'s precedence ``M' + P(ν − m_a) ≥ C(k + 1)``, and where
``ν < m_a`` ``S`` has none.  So ``R``'s constraints on periodic firings hold ``S``'s,
``S ≤ R`` (both are least solutions).  Conversely, with ``T`` the end of the last
initialisation firing and of the periodic firings they wait for (finitely many),
``R``'s times there and ``T + S`` elsewhere satisfy ``R``'s constraints, so
``R ≤ T + S``: ``R`` and ``S`` have one throughput.  ``M'`` may be negative where an
initialisation phase consumes tokens that the producer's periodic phases write; the
marking is then taken after those periodic firings too (the state an untimed
execution reaches, its phases rotated by the firings made), which shifts ``S`` by
finitely many firings and leaves its throughput as it is, with every marking a count
of tokens.  Liveness likewise: the initialisation phases complete (an untimed
execution firing only what they need, persistent: any order of firings reaches the
same counts) and the periodic graph after them is live.
"""
from __future__ import annotations

from collections import deque

from moc import limits
from moc.deadlock import raise_deadlock
from moc.errors import LimitError, SDFError
from moc.graph import SDFGraph
from moc.phases import InitialPhases, Phases, is_phased, phase_counts, phase_value

__all__ = ["InitialPhases", "after_initial_phases", "check_initial_phases",
           "has_initial_phases", "initial_times", "initialised_state",
           "refuse_initial_phases"]

#: what ``method`` says of a graph with initialisation phases
RUN_ONCE = "initialisation phases run once before: the throughput is the periodic " \
    "phases' from the tokens they leave"
#: why the outputs of the transient are not given under Kiter's order of firings
STARTS_ORDER = "latency, buffers and schedule not computed: the execution with the " \
    "initialisation phases ends an actor's firings in order (--csdf-order ends)"
#: why they are not given where an actor fires without bound
UNPACED = "latency, buffers and schedule not computed: an actor fires without bound " \
    "(no cycle limits it), and the execution with the initialisation phases is " \
    "explored state by state"


def has_initial_phases(graph) -> bool:
    """Whether an actor of ``graph`` has initialisation phases."""
    return any(a.initial_phases is not None for a in graph.actors.values())


def initial_times(graph, exec_attr: str = "exec") -> dict[str, tuple]:
    """Per actor with initialisation phases, the time of each: its
    :class:`InitialPhases` attribute ``exec_attr``, 0 in each where it gives none."""
    return {a: tuple(actor.initial_phases.attrs.get(
                exec_attr, (0,) * actor.initial_phases.count))
            for a, actor in graph.actors.items() if actor.initial_phases is not None}


def refuse_initial_phases(graph, what: str) -> None:
    """Raise :class:`SDFError` naming the first actor with initialisation phases, for
    ``what`` (an analysis that does not model them)."""
    for actor in graph.actors.values():
        if actor.initial_phases is not None:
            raise SDFError(f"actor '{actor.name}' of '{graph.name}' has initialisation "
                           f"phases (fired once before its periodic ones), which {what} "
                           f"does not model; 'mapeval analyse' (without an architecture) "
                           f"and 'check' do", actor.origin)


def check_initial_phases(graph) -> None:
    """Raise :class:`SDFError` where an actor's initialisation phases name a channel
    that is not one of its outputs (``prod``) or inputs (``cons``)."""
    for actor in graph.actors.values():
        init = actor.initial_phases
        if init is None:
            continue
        for kind, end in (("prod", "src"), ("cons", "dst")):
            for name in getattr(init, kind):
                ch = graph.channels.get(name)
                if ch is None or getattr(ch, end) != actor.name:
                    raise SDFError(f"actor '{actor.name}': initialisation phases give a "
                                   f"{kind} for '{name}', which is not a channel it "
                                   f"{'writes' if kind == 'prod' else 'reads'}",
                                   actor.origin)


def initialised_state(graph) -> tuple[dict[str, int], dict[str, int]]:
    """The firings of each actor and the tokens of each channel once every
    initialisation phase of the bound ``graph`` has fired, by an untimed execution that
    fires an actor only where an initialisation phase needs it (so no periodic firing
    where none is needed).  Raises :class:`~moc.errors.DeadlockError` naming the actors
    that wait and the channels they starve on, and :class:`LimitError` past
    ``moc.limits.MAX_FIRINGS`` firings."""
    check_initial_phases(graph)
    init = {a: actor.initial_phases for a, actor in graph.actors.items()}
    m = {a: 0 if i is None else i.count for a, i in init.items()}
    inputs = {a: [] for a in graph.actors}
    outputs = {a: [] for a in graph.actors}
    for ch in graph.channels.values():
        inputs[ch.dst].append(ch)
        outputs[ch.src].append(ch)

    def rate(actor, kind, ch, k):
        if k < m[actor]:
            return init[actor].rate(kind, ch.name, k)
        return phase_value(getattr(ch, kind), k - m[actor])

    fired = dict.fromkeys(graph.actors, 0)
    demand = dict(m)
    tokens = {name: ch.delay for name, ch in graph.channels.items()}
    queue = deque(a for a in graph.actors if m[a])
    queued = set(queue)
    limit, count = limits.MAX_FIRINGS, 0

    def past_limit():
        return LimitError(f"the initialisation phases of '{graph.name}' need more than "
                          f"{limit} firings (the limit firings = {limit}); raise it with "
                          f"--limit firings=N", "firings", limit, graph.origin)

    while queue:
        a = queue.popleft()
        queued.discard(a)
        while fired[a] < demand[a]:
            k = fired[a]
            short = next((ch for ch in inputs[a] if tokens[ch.name] < rate(a, "cons", ch, k)),
                         None)
            if short is not None:
                p = short.src
                if p != a:      # the producer must fire up to where the tokens suffice
                    need, have, j = rate(a, "cons", short, k), tokens[short.name], fired[p]
                    while have < need:
                        have += rate(p, "prod", short, j)
                        j, count = j + 1, count + 1
                        if count > limit:
                            raise past_limit()
                    if j > demand[p]:
                        demand[p] = j
                        if p not in queued:
                            queue.append(p)
                            queued.add(p)
                break
            for ch in inputs[a]:
                tokens[ch.name] -= rate(a, "cons", ch, k)
            for ch in outputs[a]:
                tokens[ch.name] += rate(a, "prod", ch, k)
                if ch.dst not in queued and fired[ch.dst] < demand[ch.dst]:
                    queue.append(ch.dst)
                    queued.add(ch.dst)
            fired[a] = k + 1
            count += 1
            if count > limit:
                raise past_limit()
    blocked = [a for a in graph.actors if fired[a] < demand[a]]
    if blocked:
        starving = {ch.name for ch in graph.channels.values() if ch.dst in blocked and
                    tokens[ch.name] < rate(ch.dst, "cons", ch, fired[ch.dst])}
        raise_deadlock(graph, blocked, tokens, starving, "the initialisation phases")
    return fired, tokens


def after_initial_phases(graph):
    """The bound ``graph`` as it stands once its initialisation phases have fired: the
    same actors and channels without initialisation phases, each actor's periodic
    phases rotated by the periodic firings it made meanwhile (none where the
    initialisation needs none), each channel's delay its tokens then (``M'`` of the
    module docstring where no periodic firing was needed).  Its throughput is the
    graph's; a graph without initialisation phases is returned as it is."""
    if not has_initial_phases(graph):
        return graph
    fired, tokens = initialised_state(graph)
    n = phase_counts(graph)
    shift = {a: (fired[a] - (actor.initial_phases.count if actor.initial_phases else 0))
             % n[a] for a, actor in graph.actors.items()}
    after = SDFGraph(graph.name, graph.params, graph.origin)
    for a, actor in graph.actors.items():
        after.add_actor(a, origin=actor.origin,
                        **{k: _rotated(v, shift[a]) for k, v in actor.attrs.items()})
    for name, ch in graph.channels.items():
        after.add_channel(ch.src, ch.dst, name, prod=_rotated(ch.prod, shift[ch.src]),
                          cons=_rotated(ch.cons, shift[ch.dst]), delay=tokens[name],
                          size=ch.size, origin=ch.origin, **ch.attrs)
    return after


def _rotated(value, r: int):
    """A per-phase ``value`` started at its phase ``r`` (anything else as it is)."""
    if not r or not is_phased(value):
        return value
    return Phases(value[r:] + value[:r])
