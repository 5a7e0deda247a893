"""Exact search under ``max`` by constraint programming: OR-Tools CP-SAT (issue 43).

CP-SAT is an optional extra (``pip install 'mapeval[cpsat]'``); :func:`available` says
whether it is installed.  The model is that of :mod:`mapping.search.exact` in integers:

- one Boolean ``x[a, p]`` per allowed actor-PE pair, exactly one per actor (pairs whose
  own cost alone exceeds the starting mapping's value are left out: no better mapping
  uses them);
- the load of every element is a linear sum: a PE's ``proc[a, p]·x[a, p]`` (with the
  communication charged to it), a CN's ``λ·comm`` of the channels that cross it;
- a channel's cost on one element depends on the pair of PEs ``(s, d)`` of its ends:
  a table ``W[s, d] ≥ 0``.  For each distinct positive level ``v`` of ``W`` a Boolean
  ``u_v`` is forced on by ``u_v ≥ x[a, s] + Σ_{d: W[s, d] ≥ v} x[b, d] − 1`` (for every
  ``s``, and the same with the ends' roles swapped), and the element is charged
  ``Σ_v (v − v_prev)·u_v``: exactly ``W[s, d]`` once both ends are placed (the loads
  only ever need lower bounds, since the objective pushes them down);
- ``z ≥`` every load; minimize ``z``.  Interchangeable PEs
  (:mod:`mapping.search.symmetry`) are used in canonical order, as in the MILP.

Costs are floats; CP-SAT needs integers.  One unit is :data:`PRECISION` times a
reference load (the starting mapping's value) and every cost is rounded *down* to
whole units, so the integer load of every mapping is at most its true load over the
unit: the integer model's proven bound, times the unit, is a valid lower bound in the
original units (reported so, conservatively).  Rounding down loses less than one unit
per term, so a mapping optimal in integers is within ``terms·PRECISION`` (relative) of
the true optimum; ``optimal`` is claimed when the true gap is at most
:data:`TOLERANCE`.  Values are always those of the evaluator, never the integer model's.

The heuristics' best mapping (relabelled into canonical order, which keeps its value)
is the solver's hint (``AddHint``) and its value a cutoff on ``z``; a floor proven
elsewhere (the cluster relaxation, :mod:`mapping.search.bounds`) enters as ``z ≥``.
Every improvement is recorded in ``trace``: ``(seconds, value, bound, gap)``.
"""
from __future__ import annotations

import math
import time

import numpy as np

from mapping.search.bounds import element_tables, pair_bound
from mapping.search.common import (SearchError, proves_optimal, relative_gap, remaining,
                                   stopped, trace_step)

#: one integer unit of cost, relative to a reference load (here the starting value; the
#: trial load ``T`` in :mod:`mapping.search.partition_bound.split`)
PRECISION = 1e-9
#: the true relative gap under which a proof in integers is reported as optimal
TOLERANCE = 1e-6
#: where a bisection on the bottleneck (the packing's, the split bound's) tries first,
#: relative below the best value known: infeasible there proves that value optimal
#: within :data:`TOLERANCE`, with room for the rounding to whole units
FIRST_TRIAL = TOLERANCE / 2
#: CP-SAT's parallel workers (the machines this runs on have few cores)
WORKERS = 2
#: the full-problem search of those workers: with two, CP-SAT runs one (the other
#: interleaves its first-solution and neighbourhood searches).  ``default_lp`` (CDCL
#: branching with the linear relaxation) proves ``tests/perf/bench_exact_max.py``'s
#: 30 x 8 instances (seeds 0 and 2) in 8-18 deterministic seconds, where
#: ``lb_tree_search`` (a best-bound tree) raised its bound early but closed 169 nodes
#: in 55 deterministic seconds and proved nothing; on the instances ``both`` runs in
#: order (45 to 80 actors) neither raised the bound above the partition bound's floor
#: and their mappings differed by the neighbourhood searches' luck (the research notes)
SUBSOLVERS = ("default_lp",)
#: how to get the engine
INSTALL = "pip install 'mapeval[cpsat]' (OR-Tools CP-SAT)"


def available() -> bool:
    """Whether OR-Tools CP-SAT can be imported."""
    try:
        from ortools.sat.python import cp_model  # noqa: F401
    except ImportError:
        return False
    return True


def require() -> None:
    """Refuse (:class:`SearchError`) when CP-SAT is not installed, saying how to get it."""
    if not available():
        raise SearchError(f"the CP-SAT engine needs OR-Tools: {INSTALL}; the MILP engine "
                          "(--engine milp) needs nothing more")


def canonical_row(row, classes) -> np.ndarray:
    """``row`` with the PEs of each interchangeable class relabelled in order of first
    use (the same value: the class's members are interchangeable)."""
    row = np.asarray(row, dtype=np.intp).copy()
    for members in classes:
        order = {}
        for a, p in enumerate(row):
            if p in members and p not in order:
                order[p] = members[len(order)]
        row = np.array([order.get(p, p) for p in row], dtype=np.intp)
    return row


class Model:
    """CP-SAT's model of one instance (:func:`build`): ``model``, the Booleans ``x[a][p]``
    (None where the pair is not usable), ``z`` the bottleneck, ``loads`` each element's
    terms ``(weight, Boolean)``, ``levels`` the channels' level Booleans ``(u, a, b,
    reach)`` (``u`` is on where ``reach[row[a], row[b]]``), ``unit`` the cost of one
    integer, ``cutoff`` and ``incumbent`` the starting mapping's value and row, ``floor``
    the floor entered, ``pair`` the pair bound.  The methods below read a mapping's
    Booleans and loads off arrays indexed once (a search that asks many times, such as
    :mod:`mapping.search.lns`, holds the interpreter little)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)
        xs = [(a, p, v.index) for a, row in enumerate(self.x) for p, v in enumerate(row)
              if v is not None]
        self.xa, self.xp, self.xi = (np.array(c, dtype=np.intp) for c in zip(*xs))
        self.la = np.array([a for _, a, _, _ in self.levels], dtype=np.intp)
        self.lb = np.array([b for _, _, b, _ in self.levels], dtype=np.intp)
        self.li = np.array([u.index for u, _, _, _ in self.levels], dtype=np.intp)
        P = len(self.x[0])
        self.reach = np.array([r for _, _, _, r in self.levels], dtype=bool).reshape(-1, P, P)
        where = {int(i): k for k, i in enumerate(self.xi)}
        where.update((int(i), len(self.xi) + k) for k, i in enumerate(self.li))
        terms = [(e, w, where[v.index]) for e, t in enumerate(self.loads) for w, v in t]
        self.te, self.tw, self.tv = (np.array(c, dtype=np.int64) for c in zip(*terms)) \
            if terms else (np.zeros(0, dtype=np.int64),) * 3

    def values(self, row) -> np.ndarray:
        """The value of every Boolean in the mapping ``row`` (canonical order): the
        ``x`` in the order of ``xi``, then the levels in the order of ``li``."""
        row = np.asarray(row, dtype=np.intp)
        on_x = row[self.xa] == self.xp
        on_u = self.reach[np.arange(len(self.li)), row[self.la], row[self.lb]]
        return np.concatenate([on_x, on_u]).astype(np.int64)

    def element_loads(self, row, values=None) -> np.ndarray:
        """Every element's load in integer units in the mapping ``row``."""
        on = self.values(row) if values is None else values
        out = np.zeros(len(self.loads), dtype=np.int64)
        np.add.at(out, self.te, self.tw * on[self.tv])
        return out

    def carriers(self, row, element) -> set:
        """The actors with a cost on ``element`` in the mapping ``row``."""
        on = self.values(row)
        mine = self.tv[(self.te == element) & (on[self.tv] == 1)]
        nx = len(self.xi)
        lv = mine[mine >= nx] - nx
        return set(self.xa[mine[mine < nx]].tolist()) | set(self.la[lv].tolist()) | \
            set(self.lb[lv].tolist())

    def row(self, solution) -> np.ndarray:
        """The mapping of a CP-SAT ``solution`` (its values by variable index)."""
        on = np.asarray(solution)[self.xi] == 1
        out = np.zeros(len(self.x), dtype=np.intp)
        out[self.xa[on]] = self.xp[on]
        return out

    def hint(self, model, row) -> None:
        """Hint ``model`` (this one or a clone) with ``row`` and its bottleneck."""
        on = self.values(row)
        model.clear_hints()
        hint = model.proto.solution_hint
        hint.vars.extend(np.concatenate([self.xi, self.li, [self.z.index]]).tolist())
        hint.values.extend(on.tolist() + [int(self.element_loads(row, on).max(initial=0))])


def build(setup, incumbent=None, floor: float | None = None, deadline: float | None = None):
    """CP-SAT's :class:`Model` of ``setup``'s single ``max`` objective (see the module),
    hinted with ``incumbent`` (default ``setup.info["incumbent"]``; its value is the
    cutoff) and ``z ≥ floor``; None when ``deadline`` (``time.time()``) passes while the
    channels are being charged and there is an incumbent to fall back on."""
    from mapping.search.exact import check, symmetry_classes, mapping_value
    require()
    from ortools.sat.python import cp_model
    ev = setup.objectives.evaluators[0]
    check(ev)
    if not ev.aggregation.bottleneck:
        raise SearchError("the CP-SAT engine models bottleneck aggregations (max); sum is "
                          "the MILP's")
    if incumbent is None:
        incumbent = setup.info.get("incumbent")
    allowed = setup.space.allowed
    A, P = allowed.shape
    own, own_cn, pairs = element_tables(ev)
    pair = pair_bound(own, own_cn, pairs, allowed)
    floor = max(floor or 0.0, pair) or None
    cutoff = None
    if incumbent is not None:
        incumbent = np.asarray(incumbent, dtype=np.intp)
        cutoff = mapping_value(ev, incumbent)
        if not math.isfinite(cutoff):
            cutoff = incumbent = None
    usable = allowed & np.isfinite(own)
    if cutoff is not None:
        usable &= own <= cutoff * (1 + 1e-9)
        usable[np.arange(A), incumbent] = True
    if not usable.any(axis=1).all():
        raise SearchError("no mapping satisfies the constraints with a route for every "
                          "channel")
    finite = [own[usable]] + [W[np.isfinite(W)] for W in pairs.values()] + [own_cn.ravel()]
    reference = cutoff if cutoff else float(sum(np.max(f, initial=0.0) for f in finite)) \
        or 1.0
    unit = reference * PRECISION
    model = cp_model.CpModel()
    x = placements(model, usable)
    loads = own_loads(x, own, own_cn, P, unit)
    levels = channels(model, x, pairs, loads, unit, deadline)
    if levels is None:
        if incumbent is None:
            raise SearchError("the time limit ran out while building the CP-SAT model")
        return None
    in_order(model, x, symmetry_classes(setup))
    terms = max((len(t) for t in loads), default=0) + 1
    top = sum(w for t in loads for w, _ in t) if cutoff is None \
        else int(math.floor(cutoff / unit)) + terms
    low = 0 if floor is None else max(0, int(math.floor(floor / unit)) - terms)
    z = model.new_int_var(min(low, top), max(top, 0), "z")
    for t in loads:
        if t:
            model.add(sum(w * v for w, v in t) <= z)
    model.minimize(z)
    built = Model(model=model, x=x, z=z, loads=loads, levels=levels, unit=unit,
                  cutoff=cutoff, incumbent=incumbent, floor=floor, pair=pair, ev=ev,
                  tables=(own, own_cn, pairs, allowed))
    if incumbent is not None:
        built.hint(model, canonical_row(incumbent, symmetry_classes(setup)))
    return built


def solve(setup, time_limit: float | None = None, incumbent=None, floor: float | None = None,
          workers: int = WORKERS, deadline: float | None = None, started=None,
          improved=None):
    """The optimal mapping of ``setup``'s single ``max`` objective by CP-SAT (or, at
    ``time_limit`` seconds, the best found with its proven bound), as an
    :class:`~mapping.search.exact.ExactResult` whose ``trace`` lists the improvements.
    ``incumbent``: a mapping to hint and to beat (default ``setup.info["incumbent"]``);
    ``floor``: a proven lower bound; ``deadline`` (``time.time()``): model building
    stops there too; ``started(solver)`` is called as the search starts (another thread
    may then end it early with ``solver.stop_search()``); ``improved(value, row)`` with
    the value and the mapping of each better one found (in the solver's thread)."""
    from mapping.search.exact import ExactResult
    from ortools.sat.python import cp_model
    began = time.time()
    if deadline is None and time_limit is not None:
        deadline = began + time_limit
    built = build(setup, incumbent, floor, deadline)
    if built is None:
        start = np.asarray(setup.info.get("incumbent") if incumbent is None else incumbent,
                           dtype=np.intp)
        return _unsolved(setup, start, floor, time_limit, began)
    ev, x, unit, cutoff, floor, pair = (built.ev, built.x, built.unit, built.cutoff,
                                        built.floor, built.pair)
    incumbent = built.incumbent
    A, P = setup.space.allowed.shape
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = max(1, int(workers))
    solver.parameters.subsolvers.extend(SUBSOLVERS)
    if deadline is not None:
        solver.parameters.max_time_in_seconds = remaining(deadline)
    trace = _Trace(ev, x, A, P, unit, began)
    trace.improved = improved
    if started is not None:
        started(solver)
    status = solver.solve(built.model, trace)
    name = solver.status_name(status)
    row, value = trace.row, trace.value
    if incumbent is not None and (row is None or cutoff <= value):
        row, value = incumbent.copy(), cutoff
    if row is None:
        if status == cp_model.INFEASIBLE:
            raise SearchError("no mapping satisfies the constraints with a route for every "
                              "channel")
        raise SearchError(f"CP-SAT stopped without a mapping ({name})")
    if status == cp_model.OPTIMAL:
        bound = solver.objective_value * unit
    elif status == cp_model.INFEASIBLE:     # nothing beats the cutoff
        bound = value
    else:
        bound = solver.best_objective_bound * unit
    bound *= 1 - 1e-12                      # the products above round either way
    if floor is not None:
        bound = max(bound, floor)
    bound = max(min(bound, value), 0.0)
    gap = relative_gap(value, bound)
    optimal = proves_optimal(value, bound, TOLERANCE)
    limited = not optimal and status not in (cp_model.OPTIMAL, cp_model.INFEASIBLE)
    message = ""
    if limited:
        message = (f"CP-SAT stopped at its time limit of {time_limit or 0:g} s before "
                   f"proving optimality; the mapping is the best found so far (gap "
                   f"{gap:.2%} to the proven bound {bound:.6g})")
    steps = trace.steps + [(time.time(), value, bound)]
    return ExactResult(value, row, optimal, name.lower(), value, limited, message, bound,
                       gap, cutoff, None, engine="cpsat", trace=_gaps(steps), pair_bound=pair)


def _unsolved(setup, incumbent, floor, time_limit, began):
    """The starting mapping, when the time ran out before the solver started."""
    from mapping.search.exact import ExactResult, mapping_value
    ev = setup.objectives.evaluators[0]
    pair = pair_bound(*element_tables(ev), setup.space.allowed)
    value = mapping_value(ev, incumbent)
    bound = min(max(pair, floor or 0.0), value)
    gap = relative_gap(value, bound)
    message = (f"the time limit of {time_limit or 0:g} s ran out while building the "
               f"CP-SAT model; the mapping is the starting one (gap {gap:.2%} to the "
               f"bound {bound:.6g})")
    return ExactResult(value, incumbent.copy(), gap == 0.0, "model not solved", value, True,
                       message, bound, gap, value, None, engine="cpsat",
                       trace=_gaps([(time.time(), value, bound)]), pair_bound=pair)


def _gaps(steps) -> tuple:
    """``(time, value, bound)`` steps as ``{seconds, value, bound, gap}`` records
    (``seconds``: ``time.time()`` until the caller counts from its start), the bound
    never decreasing (each is proven for the whole run)."""
    out, best = [], 0.0
    for seconds, value, bound in steps:
        best = max(best, bound or 0.0)
        out.append(trace_step(seconds, value, min(best, value)))
    return tuple(out)


def whole(v, unit: float) -> np.ndarray:
    """The costs ``v`` in whole ``unit``s, rounded down (see the module: an integer load
    is then at most the true one over the unit)."""
    return np.floor(np.asarray(v, dtype=float) / unit).astype(np.int64)


def placements(model, usable, names: bool = True) -> list:
    """One Boolean ``x[a][p]`` of ``model`` per ``usable`` pair of an actor and a place
    (None elsewhere; named ``x{a}_{p}`` with ``names``), exactly one on per actor."""
    A, P = usable.shape
    x = [[model.new_bool_var(f"x{a}_{p}" if names else "") if usable[a, p] else None
          for p in range(P)] for a in range(A)]
    for a in range(A):
        model.add_exactly_one([v for v in x[a] if v is not None])
    return x


def own_loads(x, own, own_cn, pes: int, unit: float) -> list:
    """The loads of the first ``pes`` places of ``x`` (the PEs) and of the CNs, as terms
    ``(weight, Boolean)``: each actor's own cost ``own[a, p]`` where it sits (none on a
    place past ``pes``) and ``own_cn[a, p, k]`` on each CN ``k``, in whole units."""
    placed = np.array([[v is not None for v in row] for row in x], dtype=bool)
    placed = placed.reshape(own.shape)
    own_i, own_cn_i = whole(np.where(placed, own, 0.0), unit), whole(own_cn, unit)
    loads: list[list[tuple[int, object]]] = [[] for _ in range(pes + own_cn.shape[2])]
    for a, row in enumerate(x):
        for p, v in enumerate(row):
            if v is None:
                continue
            if p < pes and own_i[a, p]:
                loads[p].append((int(own_i[a, p]), v))
            for k in np.flatnonzero(own_cn_i[a, p]):
                loads[pes + k].append((int(own_cn_i[a, p, k]), v))
    return loads


def channels(model, x, pairs, loads, unit: float, deadline: float | None = None):
    """Charge every element's ``loads`` the channels between each pair of actors
    ``(a, b)`` of ``pairs``, ``W[s, d, e]`` on element ``e`` with ``a`` on place ``s``
    and ``b`` on ``d``, in whole units, level by level (:func:`charge`), and rule out
    the pairs of places with no route (``W[s, d, 0]`` infinite): the levels'
    ``(u, a, b, reach)``, or None where ``deadline`` (``time.time()``) passes first."""
    levels: list = []
    for (a, b), W in pairs.items():
        if stopped(deadline):
            return None
        xa, xb = x[a], x[b]
        for s in range(len(xa)):
            for d in range(len(xb)):
                if xa[s] is not None and xb[d] is not None and not np.isfinite(W[s, d, 0]):
                    model.add_bool_or([xa[s].Not(), xb[d].Not()])
        Wi = whole(np.where(np.isfinite(W), W, 0.0), unit)
        for e in range(len(loads)):
            charge(model, xa, xb, Wi[:, :, e], loads[e], levels, a, b)
    return levels


def in_order(model, x, classes) -> None:
    """Interchangeable PEs used in order: within each class (PE numbers, in order), actor
    ``a`` may sit on a PE only if some actor before it sits on the PE before (``x[a][p]``
    the placement literals, None where not allowed)."""
    for members in classes:
        for prev, cur in zip(members[:-1], members[1:]):
            for a in range(len(x)):
                if x[a][cur] is None:
                    continue
                before = [x[b][prev] for b in range(a) if x[b][prev] is not None]
                model.add(x[a][cur] <= sum(before)) if before else model.add(x[a][cur] == 0)


def charge(model, xa, xb, W, load, levels, a, b) -> None:
    """Charge ``load`` the cost ``W[s, d]`` of actors ``a``, ``b`` on PEs ``s``, ``d``,
    level by level (see the module); each level's Boolean goes to ``levels``."""
    ok = np.array([v is not None for v in xa]), np.array([v is not None for v in xb])
    W = np.where(ok[0][:, None] & ok[1][None, :], W, 0)
    previous = 0
    for level in np.unique(W[W > 0]):
        reach = W >= level
        u = model.new_bool_var("")
        for group, far in _groups(reach, ok[0]):
            model.add(u >= sum(xa[s] for s in group) + sum(xb[d] for d in far) - 1)
        for group, far in _groups(reach.T, ok[1]):
            model.add(u >= sum(xb[d] for d in group) + sum(xa[s] for s in far) - 1)
        load.append((int(level - previous), u))
        levels.append((u, a, b, reach))
        previous = level


def _groups(reach, ok):
    """The rows of ``reach`` (usable ``ok``) grouped by equal pattern: ``(rows, columns
    reached)``.  One end on any row of a group and the other on a reached column
    charge the level; the rows of a group exclude each other (one PE per actor), so
    their sum stands for them all — the cut inequality of graph partitioning, tighter
    in the linear relaxation than one row at a time."""
    out: dict[bytes, list[int]] = {}
    for s in np.flatnonzero(reach.any(axis=1) & ok):
        out.setdefault(reach[s].tobytes(), []).append(int(s))
    return [(rows, np.flatnonzero(reach[rows[0]])) for rows in out.values()]


def _trace_class():
    from ortools.sat.python import cp_model

    class Trace(cp_model.CpSolverSolutionCallback):
        """Each solution CP-SAT finds: its true value and the bound proven then."""

        def __init__(self, ev, x, A, P, unit, began):
            super().__init__()
            self.ev, self.x, self.A, self.P, self.unit, self.began = ev, x, A, P, unit, began
            self.row, self.value, self.steps = None, math.inf, []
            self.improved = None

        def on_solution_callback(self):
            from mapping.search.exact import mapping_value
            row = np.array([next(p for p, v in enumerate(xs) if v is not None
                                 and self.boolean_value(v)) for xs in self.x], dtype=np.intp)
            value = mapping_value(self.ev, row)
            if value < self.value:
                self.row, self.value = row, value
                self.steps.append((time.time(), value,
                                   self.best_objective_bound * self.unit * (1 - 1e-12)))
                if self.improved is not None:
                    self.improved(value, row)

    return Trace


def _Trace(*args):
    return _trace_class()(*args)
