"""Exact search: a mixed-integer linear program solved by HiGHS (``scipy.optimize.milp``).

Binary ``x[a, p]`` puts actor ``a`` on PE ``p`` (``Σ_p x[a, p] = 1``).  A channel ``c``
from ``a`` to ``b`` gets continuous ``y[c, s, d]`` for the pair of PEs of its ends,
linearizing ``x[a, s]·x[b, d]`` with the transport constraints
``Σ_d y[c, s, d] = x[a, s]`` and ``Σ_s y[c, s, d] = x[b, d]`` (exact once ``x`` is
integral, and tighter than the usual three inequalities).  Costs are the batch
evaluator's compiled :class:`~mapping.batch.CostTables`, and the objective follows the
properties the aggregation declares (:mod:`mapping.aggregation`):

- a *separable* aggregation (``sum``): minimize the sum of the contributions
  ``Σ proc[a, p]·x[a, p] + λ·Σ pair[c, s, d]·y[c, s, d]``;
- a *bottleneck* aggregation (``max``): minimize ``z`` with ``z ≥`` every contribution,
  each PE's load and ``λ·`` each CN's load (an epigraph variable).

Communication charged to the cores (``charge = ends | both``, SPEC §12) adds
``λ·charged[c, s, d]`` to the load of PE ``s`` and of PE ``d`` (twice to one PE for a
channel on it), so it enters the sum twice and each end PE's load once.

Only linear tables (additive rules, no memory traffic) with such aggregations are
linear programs; anything else is refused.  The result says whether HiGHS proved
optimality (status 0) or stopped at the time limit with the best mapping found so far
(``limited``, and ``message`` says so in words).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_matrix

from mapping.search.common import SearchError

STATUS = {0: "optimal", 1: "time or iteration limit", 2: "infeasible", 3: "unbounded",
          4: "solver error"}


@dataclass(frozen=True)
class ExactResult:
    """``limited``: HiGHS stopped at the time (or iteration) limit, so ``row`` is the
    best mapping found, not proven optimal; ``message`` says what happened in words."""

    value: float
    row: np.ndarray | None
    optimal: bool
    status: str
    objective: float | None
    limited: bool = False
    message: str = ""


def solve(setup, time_limit: float | None = None, gap: float = 1e-9) -> ExactResult:
    ev = setup.objectives.evaluators[0]
    agg = ev.aggregation
    t = ev.tables
    if agg is not None and agg.timed:
        raise SearchError(f"strategy 'exact' does not cover '{ev.aggregate}': a list-scheduled "
                          "timing is no linear program of the mapping — use exhaustive or a "
                          "heuristic")
    if not t.linear or not (agg.separable or agg.bottleneck):
        raise SearchError(f"strategy 'exact' needs per-token cost models aggregated by sum or "
                          f"max; '{ev.metric}' with '{ev.aggregate}' is not linear here — use "
                          "exhaustive or a heuristic")
    allowed = setup.space.allowed
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
        loop_pe[src[c]] += 2 * lam * charged[c, diag]
        if unroutable[diag].any():
            proc[src[c], unroutable[diag]] = np.inf
    nx_ = A * P
    ny = len(pairs) * P * P
    is_max = agg.bottleneck
    nvar = nx_ + ny + (1 if is_max else 0)
    # scale costs to O(1) so that HiGHS tolerances are relative to the problem
    finite = np.concatenate([proc[np.isfinite(proc)].ravel(), (comm @ route.T).ravel() * lam,
                             charged.ravel() * lam, [1e-300]])
    scale = float(np.max(np.abs(finite))) or 1.0
    rows, cols, vals = [], [], []
    lb, ub = [], []
    r = 0
    # one PE per actor
    for a in range(A):
        rows += [r] * P
        cols += list(a * P + np.arange(P))
        vals += [1.0] * P
        lb.append(1.0)
        ub.append(1.0)
        r += 1
    # transport constraints
    for j, c in enumerate(pairs):
        base = nx_ + j * P * P
        a_src, a_dst = int(src[c]), int(dst[c])
        for s in range(P):
            rows += [r] * (P + 1)
            cols += list(base + s * P + np.arange(P)) + [a_src * P + s]
            vals += [1.0] * P + [-1.0]
            lb.append(0.0)
            ub.append(0.0)
            r += 1
        for d in range(P):
            rows += [r] * (P + 1)
            cols += list(base + np.arange(P) * P + d) + [a_dst * P + d]
            vals += [1.0] * P + [-1.0]
            lb.append(0.0)
            ub.append(0.0)
            r += 1
    x_ub = allowed.astype(float).ravel()
    bad_proc = ~np.isfinite(proc).ravel()
    x_ub[bad_proc] = 0.0
    y_ub = np.tile(np.where(unroutable, 0.0, 1.0), len(pairs))
    cost = np.zeros(nvar)
    proc_s = np.where(np.isfinite(proc), proc, 0.0) / scale
    if not is_max:
        cost[:nx_] = proc_s.ravel() + (lam * loop_cn.sum(axis=2).ravel()
                                       + loop_pe.ravel()) / scale
        pair_cost = lam * (comm[pairs] @ route.T + 2 * charged[pairs]) / scale   # (Ch', P²)
        cost[nx_:nx_ + ny] = pair_cost.ravel()
    else:
        z = nvar - 1
        cost[z] = 1.0
        # PE loads, with the communication charged to them at either end
        ends = np.arange(P * P)
        for p in range(P):
            at_p = (ends // P == p).astype(float) + (ends % P == p)      # 0, 1 or 2 ends
            coef_y = lam * charged[pairs] * at_p[None, :] / scale         # (Ch', P²)
            nz = np.flatnonzero(coef_y.ravel())
            rows += [r] * (A + len(nz) + 1)
            cols += list(np.arange(A) * P + p) + list(nx_ + nz) + [z]
            vals += list(proc_s[:, p] + loop_pe[:, p] / scale) + list(coef_y.ravel()[nz]) \
                + [-1.0]
            lb.append(-np.inf)
            ub.append(0.0)
            r += 1
        # CN loads
        for k in range(C):
            coef_y = lam * (comm[pairs, k][:, None] * route[None, :, k]) / scale   # (Ch', P²)
            nz = np.flatnonzero(coef_y.ravel())
            coef_x = lam * loop_cn[:, :, k].ravel() / scale
            nzx = np.flatnonzero(coef_x)
            rows += [r] * (len(nz) + len(nzx) + 1)
            cols += list(nx_ + nz) + list(nzx) + [z]
            vals += list(coef_y.ravel()[nz]) + list(coef_x[nzx]) + [-1.0]
            lb.append(-np.inf)
            ub.append(0.0)
            r += 1
    A_mat = coo_matrix((vals, (rows, cols)), shape=(r, nvar)).tocsr()
    integrality = np.zeros(nvar)
    integrality[:nx_] = 1
    upper = np.concatenate([x_ub, y_ub, [np.inf] if is_max else []])
    options = {"disp": False, "mip_rel_gap": gap}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    res = milp(cost, integrality=integrality, bounds=Bounds(np.zeros(nvar), upper),
               constraints=LinearConstraint(A_mat, lb, ub), options=options)
    status = STATUS.get(res.status, str(res.status))
    if res.x is None:
        if res.status == 2:
            raise SearchError("no mapping satisfies the constraints with a route for every "
                              "channel")
        raise SearchError(f"the MILP solver stopped without a mapping ({status}: {res.message})")
    x = res.x[:nx_].reshape(A, P)
    row = np.argmax(x, axis=1).astype(np.intp)
    value = float(ev.evaluate(row[None, :])[0])
    limited = res.status == 1
    message = ""
    if limited:
        limit = f" of {time_limit:g} s" if time_limit is not None else ""
        message = (f"the MILP solver stopped at its time limit{limit} before proving "
                   "optimality; the mapping is the best found so far")
    return ExactResult(value, row, res.status == 0, status,
                       None if res.fun is None else float(res.fun) * scale, limited, message)
