"""Exact search: a mixed-integer linear program solved by HiGHS (``scipy.optimize.milp``).

Binary ``x[a, p]`` puts actor ``a`` on PE ``p`` (``Σ_p x[a, p] = 1``).  A channel ``c``
from ``a`` to ``b`` gets continuous ``y[c, s, d]`` for the pair of PEs of its ends,
linearizing ``x[a, s]·x[b, d]`` with the transport constraints
``Σ_d y[c, s, d] = x[a, s]`` and ``Σ_s y[c, s, d] = x[b, d]`` (exact once ``x`` is
integral, and tighter than the usual three inequalities).  Costs are the batch
evaluator's compiled :class:`~mapping.evaluation.batch.CostTables`, and the objective follows the
properties the aggregation declares (:mod:`mapping.semantics.aggregation`):

- a *separable* aggregation (``sum``): minimize the sum of the contributions
  ``Σ proc[a, p]·x[a, p] + λ·Σ pair[c, s, d]·y[c, s, d]``;
- a *bottleneck* aggregation (``max``): minimize ``z`` with ``z ≥`` every contribution,
  each PE's load and ``λ·`` each CN's load (an epigraph variable).

Communication charged to the cores (``charge = ends | both``) adds
``λ·charged[c, s, d]`` to the load of PE ``s`` and of PE ``d`` (twice to one PE for a
channel on it), so it enters the sum twice and each end PE's load once.

Both formulations break the symmetry of interchangeable PEs
(:mod:`mapping.search.symmetry`): within a class ``m_0, m_1, …`` an actor may use
``m_r`` only if an earlier actor uses ``m_(r-1)`` (the canonical mappings of the
exhaustive search, so one mapping per orbit stays feasible).  ``max`` adds valid
inequalities — ``z ≥`` the cost of each actor on its PE, which the LP relaxation
otherwise spreads over PEs — and, given the best mapping of a heuristic (``incumbent``),
the cutoff ``z ≤`` its value (``milp`` takes no starting solution; the cutoff prunes as
one would).

Under ``max`` the cluster relaxation (:mod:`mapping.search.relaxation`: alike PEs merged
into one of averaged load) is solved first; its proven bound is a floor under ``z``
(``z ≥ floor``), which the LP relaxation alone, where fractional actors make
communication nearly free, is far below.

Only linear tables (additive rules, no memory traffic) with such aggregations are
linear programs; anything else is refused.  The result says whether HiGHS proved
optimality, the best lower bound it proved and the relative gap
``(value − bound) / value``, and whether it stopped at the time limit (``limited``,
with ``message`` in words).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import Bounds, LinearConstraint
from scipy.sparse import coo_matrix

from mapping.search.bounds import communication_bound
from mapping.search.common import SearchError, proves_optimal, relative_gap, solver_seconds
from mapping.search.highs import milp
from mapping.search.relaxation import relax
from mapping.semantics.traffic import CHARGED_ENDS, channel_cost, charged_paid, end_counts

STATUS = {0: "optimal", 1: "time or iteration limit", 2: "infeasible", 3: "unbounded",
          4: "solver error"}
#: the cutoff sits this far (relative) above the incumbent, so that the incumbent itself
#: stays feasible through HiGHS's tolerances
CUTOFF_SLACK = 1e-7
#: the fewest seconds given to the LP relaxation, for a bound, when HiGHS stopped
#: without a mapping
LP_SECONDS = 0.1
#: the share of a time limit kept for that LP
LP_SHARE = 0.1
#: the share of the time limit that the cluster relaxation may take (``max``)
RELAXATION_SHARE = 0.25


@dataclass(frozen=True)
class ExactResult:
    """``limited``: HiGHS stopped at the time (or iteration) limit, so ``row`` is the
    best mapping found, not proven optimal; ``message`` says what happened in words.
    ``bound`` is the proven lower bound on the optimum (``bound ≤ value``) and ``gap``
    ``(value − bound) / value`` (0 when proven optimal); ``incumbent`` the value of the
    starting mapping, if one was given; ``relaxation_bound`` the bound proven on the
    cluster relaxation (:mod:`mapping.search.relaxation`), if one applied;
    ``partition_bound`` the set-partitioning bound (:mod:`mapping.search.partition_bound`),
    ``packing_bound`` the packing bound (:mod:`mapping.search.packing`) and
    ``split_bound`` the split bound (:mod:`mapping.search.partition_bound.split`), each
    if one was proven; ``engine``
    the engine that ran (``milp``, ``cpsat``, ``both``), ``trace`` its improvements
    (``{seconds, value, bound, gap}``) and, for ``both``, ``parts`` each engine's and
    ``schedule`` their order (:func:`mapping.search.both.schedule`)."""

    value: float
    row: np.ndarray | None
    optimal: bool
    status: str
    objective: float | None
    limited: bool = False
    message: str = ""
    bound: float | None = None
    gap: float | None = None
    incumbent: float | None = None
    relaxation_bound: float | None = None
    engine: str = "milp"
    trace: tuple = ()
    parts: dict | None = None
    pair_bound: float | None = None
    partition_bound: float | None = None
    schedule: str | None = None
    packing_bound: float | None = None
    split_bound: float | None = None


class _Rows:
    """A sparse constraint matrix built block by block."""

    def __init__(self):
        self.rows, self.cols, self.vals, self.lb, self.ub = [], [], [], [], []
        self.n = 0

    def add(self, cols, vals, lb=-np.inf, ub=0.0) -> None:
        cols = np.asarray(cols, dtype=np.intp)
        self.rows.append(np.full(len(cols), self.n, dtype=np.intp))
        self.cols.append(cols)
        self.vals.append(np.broadcast_to(np.asarray(vals, dtype=float), cols.shape))
        self.lb.append(lb)
        self.ub.append(ub)
        self.n += 1

    def block(self, rows, cols, vals, lb, ub) -> None:
        """Rows ``0..k-1`` of a block (``rows`` local), appended below."""
        k = len(lb)
        self.rows.append(np.asarray(rows, dtype=np.intp) + self.n)
        self.cols.append(np.asarray(cols, dtype=np.intp))
        self.vals.append(np.asarray(vals, dtype=float))
        self.lb.extend(lb)
        self.ub.extend(ub)
        self.n += k

    def constraint(self, nvar: int) -> LinearConstraint:
        cat = (lambda parts, dt: np.concatenate(parts).astype(dt) if parts
               else np.zeros(0, dtype=dt))
        m = coo_matrix((cat(self.vals, float), (cat(self.rows, np.intp),
                                                cat(self.cols, np.intp))),
                       shape=(self.n, nvar)).tocsr()
        return LinearConstraint(m, np.array(self.lb, dtype=float),
                                np.array(self.ub, dtype=float))


def symmetry_classes(setup) -> list[list[int]]:
    """Classes of interchangeable PEs (two members or more) of the search ``setup``."""
    from mapping.search.exhaustive import canonical
    return [c for c in canonical(setup).classes if len(c) > 1]


def check(ev) -> None:
    """Refuse (:class:`SearchError`) what no linear program models."""
    agg = ev.aggregation
    if agg is not None and agg.timed:
        raise SearchError(f"strategy 'exact' does not cover '{ev.aggregate}': a list-scheduled "
                          "timing is not a linear program of the mapping; use exhaustive or "
                          "a heuristic")
    if not ev.tables.linear or not (agg.separable or agg.bottleneck):
        raise SearchError(f"strategy 'exact' needs per-token cost models aggregated by sum or "
                          f"max; '{ev.metric}' with '{ev.aggregate}' is not linear here — use "
                          "exhaustive or a heuristic")


def pair_variables(ev) -> int:
    """How many ``y`` variables the program has: channels between two actors × PEs²."""
    t = ev.tables
    return int(np.count_nonzero(t.src != t.dst)) * ev.n_pes ** 2


def solve(setup, time_limit: float | None = None, gap: float = 1e-9,
          incumbent: np.ndarray | None = None, node_limit: int | None = None,
          relaxed: float | None = None, solve_relaxation: bool = True) -> ExactResult:
    """The optimal mapping of ``setup``'s single objective (or, at ``time_limit``
    seconds of wall clock or ``node_limit`` branch-and-bound nodes, the best found with
    the bound proven so far).  ``incumbent`` (default ``setup.info["incumbent"]``): a
    mapping, a row of PE indices, the answer need not beat; for ``max`` its value is a
    cutoff on ``z``.  Under ``max``, where PEs are alike, the cluster relaxation
    (:func:`cluster_floor`) is solved first, with :data:`RELAXATION_SHARE` of the time
    limit: its proven bound is a floor under ``z``; with ``solve_relaxation`` false it is not
    solved again and ``relaxed`` is the bound proven on it before (or None)."""
    ev = setup.objectives.evaluators[0]
    check(ev)
    if incumbent is None:
        incumbent = setup.info.get("incumbent")
    allowed = setup.space.allowed
    pair = communication_bound(ev, allowed) if ev.aggregation.bottleneck else None
    stated_limit = time_limit
    if solve_relaxation:
        began = time.monotonic()
        relaxed = cluster_floor(setup, time_limit, gap, incumbent, node_limit)
        if time_limit is not None:
            time_limit = max(time_limit - (time.monotonic() - began),
                             time_limit * (1 - RELAXATION_SHARE) / 10)
    floor = max(relaxed or 0.0, pair or 0.0) or None
    if floor is not None and incumbent is not None:
        value = mapping_value(ev, incumbent)
        if proves_optimal(value, floor, gap):
            # the starting mapping meets the bound: nothing is left to prove
            return ExactResult(value, np.asarray(incumbent, dtype=np.intp).copy(), True,
                               "optimal", value, bound=min(floor, value), gap=0.0,
                               incumbent=value, relaxation_bound=relaxed, pair_bound=pair)
    res = _program(ev, allowed, symmetry_classes(setup), time_limit, gap, incumbent,
                   node_limit, floor, stated_limit)
    return replace(res, relaxation_bound=relaxed, pair_bound=pair)


def cluster_floor(setup, time_limit: float | None = None, gap: float = 1e-9,
                  incumbent=None, node_limit: int | None = None, stop=None,
                  share: float = RELAXATION_SHARE, found: list | None = None
                  ) -> float | None:
    """The bound proven on the cluster relaxation of ``setup``'s ``max`` objective
    (:mod:`mapping.search.relaxation`) within ``share`` (:data:`RELAXATION_SHARE`) of
    ``time_limit``, or None where the relaxation does not apply or proved nothing.
    ``stop()`` (another thread's request) interrupts the program where highspy is
    installed (:mod:`mapping.search.highs`): the bound is then HiGHS's dual bound at
    that moment.  ``found``, if given, receives the program's best mapping spread over
    the PEs of each class (:func:`~mapping.search.cut_starts.spread`)."""
    ev = setup.objectives.evaluators[0]
    merged = relax(ev, setup.space.allowed)
    if merged is None:
        return None
    share = None if time_limit is None else time_limit * share
    start = None if incumbent is None else merged.project(incumbent)
    try:
        res = _program(merged.evaluator, merged.allowed, [], share, gap, start,
                       node_limit, stop=stop)
    except SearchError:             # stopped without a mapping: no floor
        return None
    if found is not None and res.row is not None:
        from mapping.search.cut_starts import group_costs, spread
        found.append(spread(res.row, merged.classes, ev.tables,
                            group_costs(ev.tables, merged.classes)))
    return res.bound


def _program(ev, allowed, classes, time_limit, gap, incumbent, node_limit, floor=None,
             stated_limit=None, stop=None) -> ExactResult:
    """The program of the compiled objective ``ev`` over the mask ``allowed``, with the
    interchangeable PE ``classes`` broken and, under ``max``, ``z ≥ floor``; a stop at
    the time limit names ``stated_limit`` (the user's, default ``time_limit``);
    ``stop()`` interrupts HiGHS (:func:`mapping.search.highs.milp`)."""
    began = time.monotonic()
    agg = ev.aggregation
    t = ev.tables
    A, P = allowed.shape
    C = len(ev.cns)
    lam = t.lambda_
    proc = t.proc.copy()
    comm, route, src, dst, unroutable = t.comm, t.route, t.src, t.dst, t.unroutable
    charged = t.charged if t.charged is not None else np.zeros((len(src), P * P))
    # self-loops (an actor talking to itself) only depend on the actor's PE
    loops = np.flatnonzero(src == dst)
    pairs = np.flatnonzero(src != dst)
    diag = np.arange(P) * (P + 1)
    loop_cn = np.zeros((A, P, C))                                    # (a, s, k) CN load
    loop_pe = np.zeros((A, P))                       # (a, s): charged to PE s, both ends
    for c in loops:
        loop_cn[src[c]] += comm[c][None, :] * route[diag]
        loop_pe[src[c]] += CHARGED_ENDS * charged_paid(lam, charged[c, diag])
        if unroutable[diag].any():
            proc[src[c], unroutable[diag]] = np.inf
    nx_ = A * P
    npair = len(pairs)
    ny = npair * P * P
    is_max = agg.bottleneck
    nvar = nx_ + ny + (1 if is_max else 0)
    # scale costs to O(1) so that HiGHS tolerances are relative to the problem
    finite = np.concatenate([proc[np.isfinite(proc)].ravel(), (comm @ route.T).ravel() * lam,
                             charged.ravel() * lam, [1e-300]])
    scale = float(np.max(np.abs(finite))) or 1.0
    M = _Rows()
    # one PE per actor
    M.block(np.repeat(np.arange(A), P), np.arange(nx_), np.ones(nx_), [1.0] * A, [1.0] * A)
    # transport constraints: row (j, s) sums y[j, s, :], row (j, d) sums y[j, :, d]
    if npair:
        j, s, d = np.meshgrid(np.arange(npair), np.arange(P), np.arange(P), indexing="ij")
        ycol = nx_ + (j * P * P + s * P + d).ravel()
        j, s, d = j.ravel(), s.ravel(), d.ravel()
        out_row, in_row = j * 2 * P + s, j * 2 * P + P + d
        jj, pp = np.divmod(np.arange(npair * P), P)
        xs = src[pairs][jj] * P + pp
        xd = dst[pairs][jj] * P + pp
        M.block(np.concatenate([out_row, in_row, jj * 2 * P + pp, jj * 2 * P + P + pp]),
                np.concatenate([ycol, ycol, xs, xd]),
                np.concatenate([np.ones(2 * ycol.size), -np.ones(2 * npair * P)]),
                [0.0] * (2 * npair * P), [0.0] * (2 * npair * P))
    # canonical use of interchangeable PEs: x[a, m_r] ≤ Σ_{b<a} x[b, m_(r-1)]
    for members in classes:
        for prev, cur in zip(members[:-1], members[1:]):
            for a in range(A):
                before = np.arange(a) * P + prev
                M.add(np.concatenate([[a * P + cur], before]),
                      np.concatenate([[1.0], -np.ones(a)]))
    x_ub = allowed.astype(float).ravel()
    bad_proc = ~np.isfinite(proc).ravel()
    x_ub[bad_proc] = 0.0
    y_ub = np.tile(np.where(unroutable, 0.0, 1.0), npair)
    cost = np.zeros(nvar)
    proc_s = np.where(np.isfinite(proc), proc, 0.0) / scale
    cutoff = None
    if incumbent is not None:
        cutoff = mapping_value(ev, incumbent)
        if not math.isfinite(cutoff):
            cutoff = None
    if not is_max:
        cost[:nx_] = proc_s.ravel() + (lam * loop_cn.sum(axis=2).ravel()
                                       + loop_pe.ravel()) / scale
        pair_cost = channel_cost(lam, comm[pairs] @ route.T, charged[pairs]) / scale
        cost[nx_:nx_ + ny] = pair_cost.ravel()
    else:
        z = nvar - 1
        cost[z] = 1.0
        # PE loads, with the communication charged to them at either end
        ends = end_counts(P)
        for p in range(P):
            at_p = ends[:, p]                                           # 0, 1 or 2 ends
            coef_y = charged_paid(lam, charged[pairs]) * at_p[None, :] / scale
            nz = np.flatnonzero(coef_y.ravel())
            M.add(np.concatenate([np.arange(A) * P + p, nx_ + nz, [z]]),
                  np.concatenate([proc_s[:, p] + loop_pe[:, p] / scale,
                                  coef_y.ravel()[nz], [-1.0]]))
        # CN loads
        for k in range(C):
            coef_y = lam * (comm[pairs, k][:, None] * route[None, :, k]) / scale   # (Ch', P²)
            nz = np.flatnonzero(coef_y.ravel())
            coef_x = lam * loop_cn[:, :, k].ravel() / scale
            nzx = np.flatnonzero(coef_x)
            M.add(np.concatenate([nx_ + nz, nzx, [z]]),
                  np.concatenate([coef_y.ravel()[nz], coef_x[nzx], [-1.0]]))
        # valid: the bottleneck is at least each actor's own cost where it is placed
        own = proc_s + loop_pe / scale
        M.block(np.repeat(np.arange(A), P + 1),
                np.column_stack([np.arange(nx_).reshape(A, P), np.full(A, z)]).ravel(),
                np.column_stack([own, -np.ones(A)]).ravel(), [-np.inf] * A, [0.0] * A)
    upper = np.concatenate([x_ub, y_ub, [np.inf] if is_max else []])
    lower = np.zeros(nvar)
    if is_max and cutoff is not None:
        upper[-1] = cutoff / scale * (1 + CUTOFF_SLACK)
    if is_max and floor is not None:
        lower[-1] = min(floor / scale * (1 - CUTOFF_SLACK), upper[-1])
    integrality = np.zeros(nvar)
    integrality[:nx_] = 1
    options = {"disp": False, "mip_rel_gap": gap}
    bounds, constraints = Bounds(lower, upper), M.constraint(nvar)
    if time_limit is not None:
        # the limit counts the model's building; HiGHS may stop without a mapping (none
        # beats the cutoff): keep some time for the LP relaxation's bound
        built = time.monotonic() - began
        options["time_limit"] = solver_seconds((float(time_limit) - built) * (1 - LP_SHARE))
    if node_limit is not None:
        options["node_limit"] = int(node_limit)
    res = milp(cost, integrality=integrality, bounds=bounds, constraints=constraints,
               options=options, stop=stop)
    relaxed = None
    left = None if time_limit is None else time_limit - (time.monotonic() - began)
    if res.x is None and res.status in (1, 4) and res.mip_dual_bound is None \
            and not res.stopped:
        # scipy reports no bound without a solution: the LP relaxation's is still valid
        # (solved only in the time left, so that the limit holds)
        lp = milp(cost, bounds=bounds, constraints=constraints,
                  options={k: (max(left, LP_SECONDS) if k == "time_limit" else v)
                           for k, v in options.items()
                           if k != "mip_rel_gap"})
        relaxed = None if lp.status != 0 or lp.fun is None else float(lp.fun)
    return _result(ev, res, scale, incumbent, cutoff,
                   time_limit if stated_limit is None else stated_limit, relaxed, floor, gap)


def mapping_value(ev, row) -> float:
    """The value of one mapping (a row of PE indices) under ``ev``."""
    return float(ev.evaluate(np.asarray(row, dtype=np.intp)[None, :])[0])


def _result(ev, res, scale, incumbent, cutoff, time_limit, relaxed=None, floor=None,
            gap=1e-9) -> ExactResult:
    status = STATUS.get(res.status, str(res.status))
    # HiGHS's node limit reaches scipy as an unrecognized status (4) naming the limit
    nodes = res.status == 4 and "limit" in str(res.message)
    limited = res.status == 1 or nodes
    stopped = bool(getattr(res, "stopped", False))
    if nodes:
        status = "node limit"
    elif stopped:
        status = "stopped"
    row = value = None
    if res.x is not None:
        A, P = ev.n_actors, ev.n_pes
        row = np.argmax(res.x[:A * P].reshape(A, P), axis=1).astype(np.intp)
        value = mapping_value(ev, row)
    if cutoff is not None and (value is None or cutoff < value):
        # nothing better than the starting mapping within the cutoff (or the time)
        row, value = np.asarray(incumbent, dtype=np.intp).copy(), cutoff
    if row is None:
        if res.status == 2:
            raise SearchError("no mapping satisfies the constraints with a route for every "
                              "channel")
        raise SearchError(f"the MILP solver stopped without a mapping ({status}: {res.message})")
    bound = getattr(res, "mip_dual_bound", None)
    if bound is None:
        bound = relaxed
    optimal = res.status == 0
    if optimal and (bound is None or not math.isfinite(bound)):
        bound = value
    elif bound is not None and math.isfinite(bound):
        bound = float(bound) * scale
    else:
        bound = None
    if floor is not None:
        bound = floor if bound is None else max(bound, floor)
        optimal = optimal or proves_optimal(value, bound, gap)
    if bound is not None:
        bound = min(bound, value)            # solver tolerances: never above the value
        bound = max(bound, 0.0) if value >= 0 else bound
    gap_ = relative_gap(value, bound)
    message = ""
    if limited:
        limit = " node limit" if nodes else " time limit" + (
            f" of {time_limit:g} s" if time_limit is not None else "")
        proven = f" (gap {gap_:.2%} to the proven bound {bound:.6g})" if gap_ is not None \
            else " (no bound proven)"
        why = "was stopped on request" if stopped else f"stopped at its{limit}"
        message = (f"the MILP solver {why} before proving optimality; "
                   f"the mapping is the best found so far{proven}")
    return ExactResult(value, row, optimal, status,
                       None if res.fun is None else float(res.fun) * scale, limited, message,
                       bound, gap_, cutoff, floor)
