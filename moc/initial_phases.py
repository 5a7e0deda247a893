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
from moc.repetition import repetition_vector

__all__ = ["InitialPhases", "after_initial_phases", "check_initial_phases",
           "first_firings", "has_initial_phases", "initial_times", "initialised_state",
           "refuse_initial_phases"]

#: what ``method`` says of a graph with initialisation phases
RUN_ONCE = "initialisation phases run once before: the throughput is the periodic " \
    "phases' from the tokens they leave"
#: why the outputs of the transient are not given under Kiter's order of firings
STARTS_ORDER = "latency, buffers and schedule not computed: the execution with the " \
    "initialisation phases ends an actor's firings in order (--csdf-order ends)"


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


def firing_rate(initial, kind: str, ch, k: int):
    """The tokens firing ``k`` of an actor with ``initial`` phases (None: none) moves on
    ``ch`` (``kind``: ``"prod"`` or ``"cons"``): its initialisation phase ``k`` while
    ``k`` is below their count, then periodic phase ``k − count``."""
    m = 0 if initial is None else initial.count
    if k < m:
        return initial.rate(kind, ch.name, k)
    return phase_value(getattr(ch, kind), k - m)


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

    fired = dict.fromkeys(graph.actors, 0)
    demand = dict(m)
    tokens = {name: ch.delay for name, ch in graph.channels.items()}
    queue = deque(a for a in graph.actors if m[a])
    queued = set(queue)
    limit, count = limits.MAX_FIRINGS, 0

    def past_limit():
        return LimitError(f"the initialisation phases of '{graph.name}' need at least "
                          f"{limit + 1} firings", "firings", limit, graph.origin)

    while queue:
        a = queue.popleft()
        queued.discard(a)
        while fired[a] < demand[a]:
            k = fired[a]
            short = next((ch for ch in inputs[a]
                          if tokens[ch.name] < firing_rate(init[a], "cons", ch, k)), None)
            if short is not None:
                p = short.src
                if p != a:      # the producer must fire up to where the tokens suffice
                    need = firing_rate(init[a], "cons", short, k)
                    have, j = tokens[short.name], fired[p]
                    while have < need:
                        have += firing_rate(init[p], "prod", short, j)
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
                tokens[ch.name] -= firing_rate(init[a], "cons", ch, k)
            for ch in outputs[a]:
                tokens[ch.name] += firing_rate(init[a], "prod", ch, k)
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
                    tokens[ch.name] < firing_rate(init[ch.dst], "cons", ch, fired[ch.dst])}
        raise_deadlock(graph, blocked, tokens, starving, "the initialisation phases")
    return fired, tokens


def first_firings(graph, durations, times, q) -> dict[str, list[tuple]]:
    """Per actor the ``(start, end)`` of the first iteration's firings (its ``m``
    initialisation firings and ``q(a)`` periodic ones) of the self-timed execution of
    the bound, live ``graph`` that fires its initialisation phases first, from the
    firings' precedences alone, so an actor that fires without bound is no obstacle:
    firing ``k`` starts once firing ``k − 1`` has started and, on each input, the
    producer's firing that writes the last token it reads has ended (tokens are read
    in order: the least ``j`` with ``M0 + P(j) ≥ C(k)``, ``P`` and ``C`` counted from
    the first firing, initialisation phases included); it ends its phase's time later,
    not before firing ``k − 1`` (firings end in order).  ``durations``: per actor its
    periodic phases' times; ``times``: per actor with initialisation phases theirs.
    Firings past the first iteration are computed where one in it waits for them.
    Raises :class:`LimitError` past ``moc.limits.MAX_FIRINGS`` firings."""
    init = {a: actor.initial_phases for a, actor in graph.actors.items()}
    m = {a: 0 if i is None else i.count for a, i in init.items()}
    inputs = {a: [] for a in graph.actors}
    for ch in graph.channels.values():
        inputs[ch.dst].append(ch)

    def time(actor, k):
        if k < m[actor]:
            return times[actor][k]
        return phase_value(durations[actor], k - m[actor])

    read = {name: 0 for name in graph.channels}      # C(k) of the next firing k
    written = {name: [0, -1] for name in graph.channels}  # P(j) and j, the last asked
    starts = {a: [] for a in graph.actors}
    ends = {a: [] for a in graph.actors}
    limit = limits.MAX_FIRINGS

    def producer(ch, need):
        """The least firing ``j`` of ``ch``'s producer with ``M0 + P(j) ≥ need``."""
        total, j = written[ch.name]
        while ch.delay + total < need:
            j += 1
            total += firing_rate(init[ch.src], "prod", ch, j)
            if j > limit:
                raise LimitError(f"the first iteration of '{graph.name}' needs at least "
                                 f"{limit + 1} firings of '{ch.src}'", "firings", limit,
                                 graph.origin)
        written[ch.name] = [total, j]
        return j

    for goal in graph.actors:
        # each actor on the stack waits, through those above it, for the top's firing
        stack, on = [(goal, m[goal] + q[goal] - 1)], {goal}
        while stack:
            a, upto = stack[-1]
            k = len(ends[a])
            if k > upto:
                on.discard(stack.pop()[0])
                continue
            reads = {ch.name: firing_rate(init[a], "cons", ch, k) for ch in inputs[a]}
            waits = [(ch.src, producer(ch, read[ch.name] + reads[ch.name]))
                     for ch in inputs[a] if reads[ch.name]]
            waits = [(b, j) for b, j in waits if j >= 0]    # else initial tokens
            missing = [(b, j) for b, j in waits if j >= len(ends[b])]
            if missing:
                b, j = missing[0]
                if b in on:         # a cycle of waits: the graph is live, so never
                    raise AssertionError(f"'{graph.name}': firings wait for each other")
                stack.append((b, j))
                on.add(b)
                continue
            start = max([starts[a][-1]] if k else [0])
            start = max([start] + [ends[b][j] for b, j in waits])
            for ch in inputs[a]:
                read[ch.name] += firing_rate(init[a], "cons", ch, k)
            starts[a].append(start)
            ends[a].append(max([start + time(a, k)] + ends[a][-1:]))
    return {a: list(zip(starts[a], ends[a]))[:m[a] + q[a]] for a in graph.actors}


def after_initial_phases(graph):
    """The bound ``graph`` as it stands once its initialisation phases have fired: the
    same actors and channels without initialisation phases, each actor's periodic
    phases rotated by the periodic firings it made meanwhile (none where the
    initialisation needs none), each channel's delay its tokens then (``M'`` of the
    module docstring where no periodic firing was needed).  Its throughput is the
    graph's; a graph without initialisation phases is returned as it is.  Raises
    :class:`~moc.errors.InconsistentGraphError` first where the periodic phases are
    inconsistent, so that an inconsistent graph is refused as such whether or not its
    initialisation phases can complete (as ``check`` does)."""
    if not has_initial_phases(graph):
        return graph
    repetition_vector(graph)
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
