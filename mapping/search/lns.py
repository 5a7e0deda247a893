"""A large-neighbourhood search under ``max`` by CP-SAT (issue 43).

From a mapping, each step frees the actors of the busiest elements (every element at
the bottleneck load, a PE or a CN: the actors it carries a cost of) and of other PEs
drawn at random (the less loaded, the likelier) until :data:`FREED` actors are free,
fixes every other actor where it is, and lets CP-SAT place the freed ones exactly
(with the current mapping as its hint and the bottleneck as the ceiling of ``z``) for
at most :data:`STEP_SECONDS`.  A step's mapping is the best when the evaluator values
it below the best so far, so the result is never worse than the start; it replaces
the current mapping when it is at most :data:`SIDEWAYS` worse (a plateau move).  The
model is CP-SAT's own (:func:`mapping.search.cpsat.build`, built once); a step clones
it and fixes the actors.  The neighbourhood grows by :data:`GROW` actors after
:data:`STALL` steps without an improvement and shrinks by one after a step not solved
to optimality, never below :data:`FEWEST`: small neighbourhoods solved exactly beat
large ones cut by the step's time (the research notes).

``auto`` (:func:`mapping.search.engine.solve_both`) runs it with one worker in a thread
on the core the bounds and the MILP leave idle (CP-SAT releases the interpreter while
it solves), paused during CP-SAT's full search: it hands its mapping to that search
as the hint and cutoff, goes on from CP-SAT's where better (:meth:`Beside.offer`) and
its best counts as the engines'.  On small instances it runs once the bounds have
ended, beside CP-SAT's proof.  In order (large instances) it starts earlier, from the
starting portfolio's first mapping (:class:`Early`): the portfolio runs in the caller's
thread on one core, the search on the other, handed each better mapping the later runs
find.
"""
from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from mapping.search.common import remaining, trace_step

#: the seconds of one step's solve
STEP_SECONDS = 1.0
#: the actors freed at first
FREED = 12
#: the fewest actors freed
FEWEST = 4
#: a step's mapping replaces the current one (not the best) when it is at most this
#: much worse (relative): integer rounding may show it lower in the model, and moving
#: on a plateau of the bottleneck changes the next neighbourhoods
SIDEWAYS = 1e-9
#: how many more actors are freed after :data:`STALL` steps without an improvement
GROW = 2
#: the steps without an improvement after which the neighbourhood grows
STALL = 20
#: the seconds without a better mapping (the search's own or one offered) after which
#: the search hands its best mapping to its escape (:meth:`Beside.escape_by`)
ESCAPE_AFTER = 10.0
#: the seconds the escape may take
ESCAPE_SECONDS = 20.0
#: how much lower the thread beside the bounds runs in the scheduler's priority (nice):
#: it takes a core the bounds leave idle, not one they would use
NICE = 10


@dataclass
class Outcome:
    """The best mapping found (``row``, its ``value``), the ``start``'s value, the steps
    run, the steps that improved, the seconds the search took (model building
    included) and the improvements ``(time.time(), value)``."""

    row: np.ndarray
    value: float
    start: float
    steps: int = 0
    improved: int = 0
    seconds: float = 0.0
    trace: list = field(default_factory=list)


def improve(setup, row, deadline: float, stop=None, seed: int = 0, started=None,
            offered=None, seen=None, hold=None, escape=None) -> Outcome:
    """The large-neighbourhood search from the mapping ``row`` until ``deadline``
    (``time.time()``) or until ``stop()`` is true; ``started(solver)`` is called with
    each step's solver (so that another thread may end it).  Before each step
    ``offered()`` may give a mapping found elsewhere (or None): when it is better, the
    search goes on from it (it is the best, not an improvement of the search's own);
    ``seen(row, value)`` is called with every better mapping, and ``hold()`` before
    each step (it may wait).  After :data:`ESCAPE_AFTER` seconds without a better
    mapping, ``escape(row, until)`` is handed the best one and may return a better one
    by ``until`` (or None): another search that leaves the basin the neighbourhoods
    are stuck in.  Never worse than ``row``."""
    from ortools.sat.python import cp_model
    from mapping.search import cpsat
    from mapping.search.exact import mapping_value, symmetry_classes
    began = time.time()
    stop = stop or (lambda: False)
    ev = setup.objectives.evaluators[0]
    row = np.asarray(row, dtype=np.intp)
    best = Outcome(row.copy(), mapping_value(ev, row), mapping_value(ev, row))
    built = cpsat.build(setup, row, deadline=deadline)
    if built is None:
        best.seconds = time.time() - began
        return best
    cur, now = cpsat.canonical_row(row, symmetry_classes(setup)), best.value
    A, P = setup.space.allowed.shape
    rng = np.random.default_rng(seed)
    size, stalled, last = min(FREED, A), 0, time.time()
    while not stop() and time.time() < deadline - 0.05:
        if hold is not None:
            hold()
            if stop():
                break
        other = None if offered is None else offered()
        escaped = other is None and escape is not None and time.time() - last > ESCAPE_AFTER
        if escaped:
            other = escape(best.row, min(deadline, time.time() + ESCAPE_SECONDS))
            last = time.time()
        if other is not None and mapping_value(ev, other) < best.value:
            best.row, best.value = np.asarray(other, dtype=np.intp).copy(), \
                mapping_value(ev, other)
            cur, now = cpsat.canonical_row(best.row, symmetry_classes(setup)), best.value
            built.hint(built.model, cur)
            last = time.time()
            if escaped:             # the escape's search runs in this thread: its own
                best.improved += 1
                best.trace.append((last, best.value))
            if seen is not None:
                seen(best.row, best.value)
        loads = built.element_loads(cur)
        top = int(loads.max(initial=0))
        free = _carriers(built, cur, np.flatnonzero(loads >= top), rng, size)
        others = [p for p in range(P) if loads[p] < top]
        slack = np.array([top - loads[p] for p in others], dtype=float) + 1.0
        order = rng.choice(len(others), len(others), replace=False, p=slack / slack.sum()) \
            if others else []
        for i in order:
            if len(free) >= size:
                break
            free.update(np.flatnonzero(cur == others[i]).tolist())
        sub = built.model.clone()
        for a in range(A):
            if a not in free:
                sub.add(built.x[a][cur[a]] == 1)
        sub.add(built.z <= top)
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = best.steps
        solver.parameters.max_time_in_seconds = min(STEP_SECONDS, remaining(deadline))
        if started is not None:
            started(solver)
        status = solver.solve(sub)
        best.steps += 1
        stalled += 1
        if status != cp_model.OPTIMAL:
            size = max(FEWEST, size - 1)
        elif stalled >= STALL:
            size, stalled = min(A, size + GROW), 0
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            continue
        new = built.row(solver.response_proto.solution)
        value = mapping_value(ev, new)
        if value < best.value:
            best.row, best.value = new.copy(), value
            best.improved += 1
            stalled, last = 0, time.time()
            best.trace.append((time.time(), value))
            if seen is not None:
                seen(best.row, best.value)
        if value <= now * (1 + SIDEWAYS) and (new != cur).any():
            cur, now = new, value
            built.hint(built.model, cur)
    best.seconds = time.time() - began
    return best


def _carriers(built, row, elements, rng, size) -> set:
    """The actors that carry a cost on any of ``elements`` in the mapping ``row``: all
    the actors on a PE, and of the others (the ends of channels charged to an element,
    an actor's own cost on a CN) at most ``size`` drawn at random."""
    P = len(built.x[0])
    out, more = set(), set()
    for e in elements:
        if e < P:
            out.update(np.flatnonzero(row == e).tolist())
        more |= built.carriers(row, e)
    more = sorted(more - out)
    if len(more) > size:
        more = rng.choice(more, size, replace=False).tolist()
    return out | set(more)


def _lower_priority() -> None:
    """Lower the calling thread's scheduling priority by :data:`NICE` (Linux: a
    thread's nice value is its own, and the threads it starts inherit it)."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid,
                       min(19, os.getpriority(os.PRIO_PROCESS, tid) + NICE))
    except (AttributeError, OSError):
        pass


class Beside:
    """:func:`improve` in a thread from ``row`` until ``deadline`` or :meth:`finish`;
    :meth:`best` reads its best mapping meanwhile, :meth:`offer` hands it one found
    elsewhere, and :meth:`pause` holds it (after its step under way) until
    :meth:`resume`; :meth:`escape_by` gives it a way out of a basin."""

    def __init__(self, setup, row, deadline: float, seed: int = 0):
        self._stop = threading.Event()
        self._solver = None
        self._box: dict = {}
        self._best = None               # (row, value): one assignment, read whole
        self._offer = None
        self._escape = None
        self._go = threading.Event()
        self._go.set()
        self.began = time.time()

        def seen(row, value):
            self._best = (row.copy(), value)

        def offered():
            other, self._offer = self._offer, None
            return other

        def run():
            try:
                _lower_priority()
                self._box["outcome"] = improve(setup, row, deadline, self._stop.is_set,
                                               seed, self._started, offered, seen,
                                               self._go.wait, self._escaped)
            except BaseException as err:    # re-raised by finish, in the caller's thread
                self._box["error"] = err

        self._thread = threading.Thread(target=run, name="lns", daemon=True)
        self._thread.start()

    def _started(self, solver) -> None:
        self._solver = solver
        if self._held():
            solver.stop_search()

    def escape_by(self, escape) -> None:
        """Where the search stalls, ``escape(row, until, stop)`` is handed its best
        mapping (:func:`improve`), ``stop()`` true once it is paused or finished."""
        self._escape = escape

    def _escaped(self, row, until):
        escape = self._escape
        if escape is None:
            return None
        return escape(row, until, self._held)

    def _held(self) -> bool:
        """Whether the search is paused or finished."""
        return self._stop.is_set() or not self._go.is_set()

    def best(self):
        """The best mapping found so far, ``(row, value)``, or None if none beat the
        start (the search goes on)."""
        return self._best

    def pause(self) -> None:
        """Hold the search after its step under way (which is ended now)."""
        self._go.clear()
        if self._solver is not None:
            self._solver.stop_search()

    def resume(self) -> None:
        self._go.set()

    def offer(self, row) -> None:
        """Hand the search a mapping found elsewhere: it goes on from it if better."""
        self._offer = np.asarray(row, dtype=np.intp).copy()

    def finish(self) -> Outcome:
        """Stop the search and return its outcome."""
        self._stop.set()
        self._go.set()
        if self._solver is not None:
            self._solver.stop_search()
        self._thread.join()
        if "error" in self._box:
            raise self._box["error"]
        return self._box["outcome"]


class Early:
    """The search during the starting portfolio's runs: called with each better mapping
    they find, it starts a :class:`Beside` from the first (until ``deadline``) and
    offers it the later ones; ``beside`` is that search (None before a mapping)."""

    def __init__(self, setup, deadline: float):
        self.setup, self.deadline, self.beside = setup, deadline, None

    def __call__(self, row) -> None:
        if self.beside is None:
            self.beside = Beside(self.setup, row, self.deadline, self.setup.seed)
        else:
            self.beside.offer(row)

    def cancel(self) -> None:
        """Stop the search (where the run failed before handing it on)."""
        if self.beside is not None:
            self.beside.finish()


def part(found: Outcome) -> dict:
    """The search's entry in ``parts`` of :func:`mapping.search.engine.solve_both`."""
    return {"value": found.value, "bound": None, "gap": None, "optimal": False,
            "steps": found.steps, "improved": found.improved,
            "seconds": round(found.seconds, 3)}


def merged(steps) -> tuple:
    """Two searches' trace steps in time order, each with the best value and bound so
    far (a step that improves neither is left out)."""
    out, value, bound = [], math.inf, None
    for s in sorted(steps, key=lambda s: s["seconds"]):
        v = min(value, s["value"])
        b = bound if s["bound"] is None else max(bound or 0.0, s["bound"])
        if v == value and b == bound:
            continue
        value, bound = v, b
        out.append(trace_step(s["seconds"], v, None if b is None else min(b, v)))
    return tuple(out)


def steps(improvements, bounds) -> list:
    """The search's improvements ``(time.time(), value)`` as trace steps, each with the
    highest of the ``bounds`` ``(time.time() it ended, bound or None)`` ended by then
    (none before the first)."""
    out = []
    for at, value in improvements:
        bound = max([b for t, b in bounds if t <= at and b is not None], default=None)
        out.append(trace_step(at, value, None if bound is None else min(bound, value)))
    return out
