"""Timing of the self-timed execution of an SDF graph alone: throughput,
period, critical cycle, latency, buffer occupancy and the schedule of one iteration.

Actor attribute ``exec_attr`` is the time of one firing; resources are unlimited, so an
actor's firings overlap unless a self-loop limits them (SDF3's ``throughput`` analysis,
whose results are the reference).  Throughput is graph iterations per time unit and
``period = 1/throughput``; integer or fractional times give exact fractions.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from fractions import Fraction
from types import MappingProxyType

from moc import limits
from moc.deadlock import strongly_connected_components
from moc.errors import ExpansionTooLargeError, LimitError, SDFError
from moc.exact_times import as_float, exact_text, exact_time, throughput_of
from moc.graph import SDFGraph
from moc.csdf_kperiodic import ORDERS, check_order, phased_kperiodic_throughput
from moc.liveness import check_live  # noqa: F401  (re-exported)
from moc.hsdf import check_expansion_size
from moc.initial_phases import RUN_ONCE, STARTS_ORDER, after_initial_phases, \
    first_firings, has_initial_phases, initial_times, refuse_initial_phases
from moc.kperiodic import KPeriodicThroughput, kperiodic_throughput
from moc.phases import Phases, cyclo_static, phase_value
from moc.record import record, replace
from moc.repetition import repetition_vector

KPERIODIC = "K-periodic scheduling (Bodin et al., DAC 2016)"
STATE_SPACE = "self-timed state space (Ghamarian et al., ACSD 2006)"
PHASED = "cyclo-static K-periodic scheduling (Bodin et al., DAC 2016)"
#: why the buffers of a cyclo-static graph are not explored under Kiter's order
UNORDERED_ENDS = "buffers not explored: the state space ends an actor's firings in order"
#: the firings (about a second's work) that a firing waiting for many iterations back
#: may make the first computed iterations before the state space is tried first
FAR = 400_000
#: an SDF graph's first iteration block by block (``moc.self_timed``) where its blocks
#: hold this many firings on average; else by the occupancy program
#: (``moc.occupancy``), about a microsecond a firing where a block costs tens
FIRINGS_PER_BLOCK = 32
PRECEDENCES = "self-timed execution from its firings' precedences until it repeats " \
    "(max-plus cyclicity, Baccelli et al. 1992)"
#: how ``method`` begins to say that the schedule is left out (past the limit schedule)
LEFT_OUT = "schedule left out: "
#: why the schedule is missing where the execution was not simulated
NOT_SIMULATED = "not simulated (--no-simulate)"
BOUND = "not proven optimal: a larger K would pass the limit firings; the throughput is " \
    "that of {}, a lower bound"
#: the schedules that bound it: where it is the better, no critical cycle is named
BEST_KPERIODIC = "the best K-periodic schedule found"
ONE_AT_A_TIME = "one iteration's firings run one at a time (a period of their total " \
    "time, less than any K-periodic schedule found)"
#: the lower bound of a period not proven optimal, where an actor's self-loop gives one
FLOOR = "; the period is at least {} (the busiest actor's firings of one iteration, as " \
    "many at a time as its self-loop lets run)"
#: where the K-periodic schedules found are not proven optimal but the state space
#: repeats within the limit states
RECURRED = "a larger K would pass the limit firings; the period is the self-timed " \
    "state space's, which repeated after {} instants (Ghamarian et al., ACSD 2006), exact"

__all__ = ["Firing", "Firings", "ThroughputResult", "TimingAnalysis", "analyse",
           "check_live", "execution_times", "has_floats", "latency_left_out", "prepared",
           "schedule_left_out", "self_timed_period", "throughput"]


def __getattr__(name: str):
    # the simulation's modules load with the first schedule or buffers asked for, so that
    # the throughput alone (``analyse --no-simulate``) does without them
    if name in ("Firing", "Firings"):
        import moc.self_timed
        return getattr(moc.self_timed, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@record
class ThroughputResult:
    """``throughput`` (iterations per time unit, ``math.inf`` when no cycle bounds it),
    ``period`` (its inverse, 0 then), ``critical_cycle`` (actors), ``method``."""

    throughput: Fraction | float
    period: Fraction | float
    critical_cycle: tuple
    method: str


@record
class TimingAnalysis:
    """The timing analysis of a graph alone.  ``latency``: the end of the last firing
    of the first iteration (from time 0); ``buffers``: per channel, the most tokens it
    holds (``math.inf`` where tokens pile up without bound, None where not explored);
    ``schedule``: per actor, its :class:`Firing` s of the first iteration (a
    :class:`~moc.self_timed.Firings`, which makes them as they are read).  The last
    three are None when the execution was not simulated; ``schedule`` alone is None past
    ``moc.limits.MAX_SCHEDULE`` firings (``method`` says so, after :data:`LEFT_OUT`),
    and the latency too past ``moc.limits.MAX_LATENCY`` firings computed one by one
    (:func:`latency_left_out`).  ``schedule_missing``: why ``schedule`` is None (as
    ``method`` ends with it, or :data:`NOT_SIMULATED`), None where it is given.  A
    graph with initialisation phases (:mod:`moc.initial_phases`): the first iteration
    is each actor's initialisation firings (``a#0`` ...) and ``q(a)`` periodic ones
    after them."""

    throughput: Fraction | float
    period: Fraction | float
    critical_cycle: tuple
    latency: Fraction | float | None
    buffers: Mapping[str, object] | None
    schedule: Mapping[str, tuple] | None
    method: str
    schedule_missing: str | None = None

    def to_dict(self) -> dict:
        """JSON-ready values with the keys of ``mapeval analyse --json``: fractions as floats, an unbounded
        value as ``math.inf`` (the caller writes it as the project does)."""
        return {
            "throughput": as_float(self.throughput),
            "period": as_float(self.period),
            "critical_cycle": list(self.critical_cycle),
            "latency": as_float(self.latency),
            "buffers": None if self.buffers is None else
            {name: as_float(n) for name, n in self.buffers.items()},
            "schedule": None if self.schedule is None else
            {actor: _rows(firings) for actor, firings in self.schedule.items()},
            "method": self.method,
            "schedule_missing": self.schedule_missing,
        }

    def __str__(self) -> str:
        lines = [f"throughput     {exact_text(self.throughput)} iterations per time unit",
                 f"period         {exact_text(self.period)}",
                 f"critical cycle {' -> '.join(self.critical_cycle) or '(none)'}"]
        if self.latency is not None:
            lines.append(f"latency        {exact_text(self.latency)}")
        if self.buffers:
            width = max(map(len, self.buffers))
            lines.append("buffers (most tokens held)")
            lines += [f"  {name:<{width}}  {exact_text(n)}" for name, n in self.buffers.items()]
        if self.schedule:
            lines.append("first iteration (firing: start - end)")
            for actor, firings in self.schedule.items():
                lines.append(f"  {actor}: " + ", ".join(
                    f"{f.name} {exact_text(f.start)}-{exact_text(f.end)}" for f in firings))
        lines.append(f"method         {self.method}")
        return "\n".join(lines)


def execution_times(graph: SDFGraph, exec_attr: str = "exec") -> dict[str, object]:
    """Actor attribute ``exec_attr`` of every actor: finite, non-negative numbers, or an
    :class:`SDFError` naming every actor without one."""
    def good(v):
        return isinstance(v, numbers.Real) and not isinstance(v, bool) and \
            math.isfinite(v) and v >= 0

    def exact(v):
        return v if isinstance(v, (int, float)) else Fraction(v)

    times, bad = {}, []
    for actor in graph.actors.values():
        value = actor.attrs.get(exec_attr)
        if isinstance(value, tuple) and value and all(map(good, value)):   # per phase
            times[actor.name] = Phases(map(exact, value))
        elif good(value):
            times[actor.name] = exact(value)
        else:
            bad.append(actor)
    if bad:
        shown = ", ".join(f"'{a.name}'" + ("" if a.attrs.get(exec_attr) is None
                                           else f" ({a.attrs[exec_attr]})") for a in bad)
        raise SDFError(f"actors {shown} need a finite non-negative '{exec_attr}' "
                       f"(the time of one firing) for a timing analysis", bad[0].origin)
    return times


def throughput(graph: SDFGraph, exec_attr: str = "exec", order: str = "ends"
               ) -> ThroughputResult:
    """Throughput and critical cycle of the self-timed execution by K-periodic
    scheduling (:mod:`moc.kperiodic`); errors as ``check`` for inconsistent or
    deadlocked graphs.  ``order``: of a cyclo-static actor's own firings
    (:data:`moc.csdf_kperiodic.ORDERS`)."""
    if has_initial_phases(graph):
        found = _initialised(graph, exec_attr, False, order)
        return ThroughputResult(found.throughput, found.period, found.critical_cycle,
                                found.method)
    graph, durations, q, floats = prepared(graph, exec_attr)
    return _floats(_throughput(graph, durations, q, order)[0], floats)


def analyse(graph: SDFGraph, exec_attr: str = "exec", simulate: bool = True,
            progress=None, order: str = "ends") -> TimingAnalysis:
    """Throughput (K-periodic), and with ``simulate`` the latency, buffer maxima and
    schedule of the first iteration of the self-timed execution.

    The schedule comes from the precedences (:func:`moc.self_timed.first_iteration`);
    the buffers from the state-space exploration (:func:`moc.self_timed.simulate`), in
    which a channel whose producer outpaces its consumer holds unboundedly many tokens
    (``math.inf``); each group of actors of one pace must repeat its period there as
    the K-periodic analysis found it.  The exploration needs every actor to fire at a
    finite pace; where one fires without bound (no cycle limits it, or one that takes
    no time), or where it would pass ``moc.limits.MAX_STATES`` instants (``method``
    says so), channels to other components hold ``math.inf`` where their producer is
    faster, a self-loop its initial tokens, and the others are not explored (None).
    ``progress(n)``: n more firings computed or instants explored.  ``order``: of a cyclo-static actor's
    own firings (:data:`moc.csdf_kperiodic.ORDERS`); the exploration of the buffers
    follows ``"ends"`` only (under ``"starts"`` they are None, and ``method`` says so).
    Past ``moc.limits.MAX_SCHEDULE`` firings an iteration the schedule is None (its
    rows would take seconds to make and print), the latency computed all the same,
    unless its firings must be computed one by one apart from the buffers and pass
    ``moc.limits.MAX_LATENCY`` too (:func:`latency_left_out`): the latency is then None.
    A graph with initialisation phases (:mod:`moc.initial_phases`) gets the throughput
    of its periodic phases after them, and the latency, buffers and schedule of the
    execution that fires them first (:func:`_initialised`; under ``order="starts"``
    none, ``method`` says so).
    """
    if has_initial_phases(graph):
        return _initialised(graph, exec_attr, simulate, order, progress)
    graph, durations, q, floats = prepared(graph, exec_attr)
    result, pace = _throughput(graph, durations, q, order)
    if not simulate:
        return _floats(_unsimulated(result), floats)
    try:
        check_expansion_size(graph, q)
    except ExpansionTooLargeError as exc:
        return _floats(_unsimulated(result, f"schedule not computed: {exc}"), floats)
    if cyclo_static(graph):
        return _floats(_phased(graph, durations, q, result, pace, progress, order), floats)
    from moc.self_timed import first_iteration
    # past the schedule's limit its rows are not made: the ends give the latency
    rows = schedule_left_out(graph, q) is None
    schedule = first_iteration(graph, durations, q, FIRINGS_PER_BLOCK, rows)
    # the buffers' occupancy run gives the first iteration as the program below would
    buffers, method, times = _buffers(graph, durations, q, pace, progress, result.method)
    if schedule is not None:
        times, schedule = (None, schedule) if rows else (schedule, None)
    elif times is None:
        left_out = latency_left_out(graph, q)
        if left_out is not None:
            return _floats(_without_latency(graph, q, result, buffers, method, left_out),
                           floats)
        from moc.occupancy import first_iteration as quick_first
        times = quick_first(graph, durations, q)
        if times is None:
            schedule = first_iteration(graph, durations, q, rows=rows)
            times, schedule = (None, schedule) if rows else (schedule, None)
    return _floats(_with_schedule(graph, q, result, buffers, method, schedule, times),
                   floats)


def _initialised(graph, exec_attr, simulate, order, progress=None):
    """The analysis of a graph with initialisation phases: the throughput of its
    periodic phases after them (:func:`moc.initial_phases.after_initial_phases`); with
    ``simulate`` the latency, buffers and schedule of the self-timed execution that
    fires the initialisation phases first (:func:`moc.self_timed.simulate`): the first
    iteration is each actor's ``m`` initialisation firings and ``q(a)`` periodic ones,
    the latency the end of the last of them, a buffer's maximum over the whole
    execution, transient included."""
    bound = graph.bind()
    after, durations, q, floats = prepared(after_initial_phases(bound), exec_attr)
    times = initial_times(bound, exec_attr)
    floats = floats or has_floats(times.values())
    result, pace = _throughput(after, durations, q, order)
    result = replace(result, method=f"{result.method}; {RUN_ONCE}")
    if not simulate or order != "ends":
        return _floats(_unsimulated(result, STARTS_ORDER if simulate else None), floats)
    durations = {a: exact_time(t) for a, t in execution_times(bound, exec_attr).items()}
    times = {a: tuple(map(exact_time, ts)) for a, ts in times.items()}
    if any(pace[a] <= 0 for a in bound.actors):
        # no state recurs: the first iteration from its firings' precedences, the
        # buffers as where no initialisation phase is (:func:`_unexplored`)
        firsts = {a: (actor.initial_phases.count if actor.initial_phases else 0) + q[a]
                  for a, actor in bound.actors.items()}
        left_out = latency_left_out(bound, firsts)
        if left_out is not None:
            return _floats(_unsimulated(result, left_out), floats)
        return _floats(_with_schedule(bound, firsts, result, _unexplored(bound, pace),
                                      result.method, None,
                                      first_firings(bound, durations, times, q)), floats)
    try:
        run = _state_space(bound, durations, q, pace, _growing(bound, pace), progress,
                           True, times)
    except LimitError as exc:
        if exc.limit != "states":
            raise
        return _floats(_unsimulated(
            result, f"latency, buffers and schedule not computed: {exc}"), floats)
    schedule = dict(run.schedule)
    firsts = {a: len(fs) for a, fs in schedule.items()}
    return _floats(_with_schedule(bound, firsts, result, run.buffers,
                                  f"{result.method}; {STATE_SPACE}", schedule, None), floats)


def _unsimulated(result, why=None):
    """The analysis of ``result`` without latency, buffers or schedule: ``why`` (the
    end of ``method``, and ``schedule_missing``), or not simulated where None."""
    return TimingAnalysis(result.throughput, result.period, result.critical_cycle, None,
                          None, None, result.method if why is None else
                          f"{result.method}; {why}", why or NOT_SIMULATED)


def schedule_left_out(graph: SDFGraph, q: Mapping[str, int]) -> str | None:
    """Why :func:`analyse` leaves the schedule of ``graph`` (repetition vector ``q``)
    out: its first iteration has more than ``moc.limits.MAX_SCHEDULE`` firings; None
    where it gives it."""
    total = sum(q.values())
    if total <= limits.MAX_SCHEDULE:
        return None
    return limits.exceeded(f"{LEFT_OUT}the first iteration of '{graph.name}' has {total} "
                           f"firings", "schedule", limits.MAX_SCHEDULE)


def latency_left_out(graph: SDFGraph, q: Mapping[str, int]) -> str | None:
    """Why :func:`analyse` leaves the latency of ``graph`` (repetition vector ``q``)
    out where the buffers' method did not give the first iteration's firings and an
    actor's firings are not computed a block at a time: the iteration has more than
    ``moc.limits.MAX_LATENCY`` firings (and more than ``moc.limits.MAX_SCHEDULE``: a
    schedule asked for computes them all the same); None where it gives it."""
    total = sum(q.values())
    if total <= max(limits.MAX_LATENCY, limits.MAX_SCHEDULE):
        return None
    return limits.exceeded(f"latency left out: the first iteration of '{graph.name}' has "
                           f"{total} firings to compute one by one", "latency",
                           limits.MAX_LATENCY)


def _without_latency(graph, q, result, buffers, method, left_out):
    """The analysis without the first iteration's firings: no latency, no schedule."""
    schedule_missing = schedule_left_out(graph, q)
    return TimingAnalysis(result.throughput, result.period, result.critical_cycle, None,
                          buffers, None, f"{method}; {schedule_missing}; {left_out}",
                          schedule_missing)


def _buffers(graph, durations, q, pace, progress, method):
    """The buffer maxima of the self-timed execution (see :func:`analyse`), the method
    extended by how they were found, and the ``(start, end)`` of the first iteration's
    firings where that came with them (else None).  The firings' times computed until
    the execution repeats (:mod:`moc.occupancy`) first, unless a firing waits for so
    many iterations back that more than ``FAR`` firings come before the repetition can
    be seen; then the state space, and past its limit those times again."""
    from moc.occupancy import self_timed_occupancy
    buffers = None
    if all(pace[a] > 0 for a in graph.actors):
        growing = _growing(graph, pace)
        # the state space first where a firing waits for many iterations back
        found = self_timed_occupancy(graph, durations, q, pace, growing,
                                     progress=progress, far=FAR)
        if found is not None:
            return MappingProxyType(found.buffers), f"{method}; {PRECEDENCES}", found.first
        try:
            run = _state_space(graph, durations, q, pace, growing, progress)
        except LimitError as exc:
            if exc.limit != "states":
                raise
            found = self_timed_occupancy(graph, durations, q, pace, growing,
                                         progress=progress)
            if found is not None:
                return MappingProxyType(found.buffers), f"{method}; {PRECEDENCES}", \
                    found.first
            method = f"{method}; buffers not explored: {exc}"
        else:
            buffers = run.buffers
            method = f"{method}; {STATE_SPACE}"
    if buffers is None:
        buffers = _unexplored(graph, pace)
    return buffers, method, None


def _growing(graph, pace):
    """The channels whose producer is faster than their consumer (a smaller period)."""
    return {ch.name for ch in graph.channels.values() if pace[ch.src] < pace[ch.dst]}


def _state_space(graph, durations, q, pace, growing, progress, record=False,
                 initial_times=None):
    """:func:`moc.self_timed.simulate`, whose periods must be the K-periodic ``pace``."""
    from moc.self_timed import simulate as explore
    run = explore(graph, durations, q, growing, progress, record, initial_times)
    wrong = [a for a in graph.actors if run.periods[a] != pace[a]]
    if wrong:
        raise AssertionError(f"state space period {run.periods[wrong[0]]} != "
                             f"K-periodic {pace[wrong[0]]} of '{wrong[0]}' in "
                             f"'{graph.name}'")
    return run


def _phased(graph, durations, q, result, pace=None, progress=None, order="ends"):
    """The simulated analysis of a cyclo-static graph: the first iteration's schedule
    and latency from the precedences of its firings (:mod:`moc.csdf`); its buffers from
    the self-timed execution, firing by firing in phase order (:func:`_buffers`)."""
    if order == "ends":
        buffers, method, times = _buffers(graph, durations, q, pace, progress,
                                          result.method)
    else:
        buffers, method, times = None, f"{result.method}; {UNORDERED_ENDS}", None
    left_out = None if times else latency_left_out(graph, q)
    if left_out is not None:
        return _without_latency(graph, q, result, buffers, method, left_out)
    from moc.occupancy import first_iteration as quick_first
    times = times or quick_first(graph, durations, q, order)
    if not times:
        from moc.csdf import first_iteration as phased_first
        times = phased_first(graph, durations, q, order)
    return _with_schedule(graph, q, result, buffers, method, None, times)


def _with_schedule(graph, q, result, buffers, method, schedule, times):
    """The analysis with the first iteration's firings, given as ``schedule`` (per
    actor its :class:`~moc.self_timed.Firings`) or as ``times`` (per actor the ``(start,
    end)`` of its firings): its latency, and the schedule unless it is left out
    (:func:`schedule_left_out`; the latency is then read off the times without making
    the firings)."""
    left_out = schedule_left_out(graph, q)
    if left_out is not None:
        latency = _latency(schedule) if schedule is not None else _last_end(times)
        return TimingAnalysis(result.throughput, result.period, result.critical_cycle,
                              latency, buffers, None, f"{method}; {left_out}", left_out)
    if schedule is None:
        from moc.self_timed import Firings
        schedule = {a: Firings(a, [s for s, _ in fs], [e for _, e in fs])
                    for a, fs in times.items()}
    return TimingAnalysis(result.throughput, result.period, result.critical_cycle,
                          _latency(schedule), buffers, MappingProxyType(schedule), method)


def prepared(graph: SDFGraph, exec_attr: str = "exec", what: str = "this analysis"):
    """The bound graph, its firing times as exact numbers (a float as the decimal it
    prints as: :func:`moc.exact_times.exact_time`), its repetition vector and whether
    a time was a float (the results are then given as floats)."""
    graph = graph.bind()
    refuse_initial_phases(graph, what)
    q = repetition_vector(graph)
    durations = execution_times(graph, exec_attr)
    return graph, {a: exact_time(t) for a, t in durations.items()}, q, \
        has_floats(durations.values())


def has_floats(times) -> bool:
    """Whether any of ``times`` (each a time or a tuple of per-phase times) is a float:
    the results are then given as floats."""
    return any(isinstance(x, float) for v in times
               for x in (v if isinstance(v, tuple) else (v,)))


def self_timed_period(graph: SDFGraph, durations: Mapping[str, object],
                      q: Mapping[str, int], order: str = "ends") -> KPeriodicThroughput:
    """The period of the self-timed execution of the bound, consistent ``graph`` by
    K-periodic scheduling: the one place that tells SDF
    (:func:`moc.kperiodic.kperiodic_throughput`) from cyclo-static
    (:func:`moc.csdf_kperiodic.phased_kperiodic_throughput`, its firings in ``order``:
    :data:`moc.csdf_kperiodic.ORDERS`; an SDF actor's firings all take one time, so
    they end in the order they start).  A deadlock raises :class:`DeadlockError` naming
    the starving channels."""
    check_order(order)
    if not cyclo_static(graph):
        return kperiodic_throughput(graph, durations, q)
    return phased_kperiodic_throughput(graph, durations, q, order)


def _throughput(graph, durations, q, order="ends"):
    found = self_timed_period(graph, durations, q, order)
    period = found.period
    if period == 0:
        value = ThroughputResult(throughput_of(period), 0, (), KPERIODIC)
    else:
        method = f"{PHASED}, {ORDERS[order]}" if cyclo_static(graph) else KPERIODIC
        if cyclo_static(graph):
            method += f" (K sums to {sum(found.periodicity.values())} phase cycles " \
                      f"for {sum(q.values())} firings)"
        run = None if found.optimal or order != "ends" else \
            _recurring(graph, durations, q, found)
        cycle, paces = found.critical_cycle, found.actor_periods
        if run is not None:
            method += "; " + RECURRED.format(run.states)
            period, cycle, paces = run.period, (), run.periods
        elif not found.optimal:
            method += "; " + BOUND.format(
                BEST_KPERIODIC if found.critical_cycle else ONE_AT_A_TIME)
            if found.floor:
                method += FLOOR.format(exact_text(found.floor))
        return ThroughputResult(throughput_of(period), Fraction(period), cycle,
                                method), paces
    return value, found.actor_periods


def _recurring(graph, durations, q, found):
    """The self-timed state space (:func:`moc.self_timed.simulate`, firings ending in
    order) where the K-periodic schedules ``found`` are not proven optimal: its period
    is exact once its state repeats, within the limit states (None past it, or where an
    actor fires without bound).  Channels whose producer's bound is the smaller are
    left out of the state as growing: where the bounds misplace one, the state only
    fails to repeat (its repetition test asks those channels to hold no firing back and
    to hold no fewer tokens).  The period lies between the bound's floor and the
    bound."""
    from moc.self_timed import simulate
    pace = found.actor_periods
    if any(pace[a] <= 0 for a in graph.actors):
        return None
    try:
        run = simulate(graph, durations, q, _growing(graph, pace), record=False)
    except LimitError as exc:
        if exc.limit != "states":
            raise
        return None
    if not found.floor <= run.period <= found.period:
        raise AssertionError(f"state space period {run.period} outside the K-periodic "
                             f"bounds {found.floor} .. {found.period} of '{graph.name}'")
    return run


def _floats(result, floats):
    """``result`` with its times and rates as floats when the firing times were."""
    if not floats:
        return result
    changes = {"throughput": float(result.throughput), "period": float(result.period)}
    if getattr(result, "latency", None) is not None:
        from moc.self_timed import Firings
        changes["latency"] = float(result.latency)
        if result.schedule is not None:
            changes["schedule"] = MappingProxyType({
                actor: Firings(actor, map(float, fs.starts), map(float, fs.ends))
                for actor, fs in result.schedule.items()})
    return replace(result, **changes)


def _unexplored(graph, pace):
    """Per channel the most tokens it holds without a simulation: a self-loop whose
    every phase (initialisation phases included) writes what it read holds its initial
    tokens at most (a firing gives back at its end what it took at its start), another
    self-loop may hold more (a phase that writes 2 and reads 0 before one that reads 2)
    and is unknown; a producer outside the consumer's strongly connected component that
    fires faster (or without bound, at pace 0) piles tokens up for ever; inside a
    component the tokens of its cycles bound it, but the value is unknown."""
    component = {a: i for i, c in enumerate(strongly_connected_components(graph))
                 for a in c}

    def most(ch):
        if ch.src == ch.dst:
            n = max(len(r) if isinstance(r, tuple) else 1 for r in (ch.prod, ch.cons))
            same = all(phase_value(ch.prod, k) == phase_value(ch.cons, k)
                       for k in range(n))
            init = graph.actors[ch.src].initial_phases
            if init is not None:
                same = same and init.rates("prod", ch.name) == init.rates("cons", ch.name)
            return ch.delay if same else None
        if component[ch.src] == component[ch.dst]:
            return None
        return math.inf if pace[ch.src] == 0 or pace[ch.src] < pace[ch.dst] else None

    return MappingProxyType({ch.name: most(ch) for ch in graph.channels.values()})


def _latency(schedule):
    """The end of the last firing of ``schedule`` (per actor its
    :class:`~moc.self_timed.Firings`), 0 without any."""
    return max((max(fs.ends) for fs in schedule.values() if len(fs)), default=0)


def _last_end(times):
    """The end of the last firing of ``times`` (per actor the ``(start, end)`` of its
    firings; :func:`moc.occupancy.first_iteration`'s from its arrays), 0 without any."""
    last = getattr(times, "last_end", None)
    if last is not None:
        return last()
    return max((end for firings in times.values() for _, end in firings), default=0)


def _rows(firings):
    """The ``{"firing", "start", "end"}`` of each of ``firings``, times as
    :func:`~moc.exact_times.as_float` makes them (from a :class:`~moc.self_timed.Firings`' lists without
    making its :class:`Firing` s)."""
    from moc.self_timed import Firings           # loaded with the schedule it reads
    if not isinstance(firings, Firings):
        return [{"firing": f.name, "start": as_float(f.start), "end": as_float(f.end)}
                for f in firings]
    starts, ends = firings.starts, firings.ends
    if not set(map(type, starts)).union(map(type, ends)) <= {int, float}:
        starts, ends = list(map(as_float, starts)), list(map(as_float, ends))
    return [{"firing": name, "start": s, "end": e}
            for name, s, e in zip(firings.names(), starts, ends)]
