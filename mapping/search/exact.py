"""Exact search: a mixed-integer linear program solved by HiGHS (``scipy.optimize.milp``).

Binary ``x[a, p]`` puts actor ``a`` on PE ``p`` (``Σ_p x[a, p] = 1``).  A channel ``c``
from ``a`` to ``b`` gets continuous ``y[c, s, d]`` for the pair of PEs of its ends,
linearizing ``x[a, s]·x[b, d]`` with the transport constraints
``Σ_d y[c, s, d] = x[a, s]`` and ``Σ_s y[c, s, d] = x[b, d]`` (exact once ``x`` is
integral, and tighter than the usual three inequalities).  Costs are the batch
evaluator's tables:

- ``sum``: minimize ``Σ proc[a, p]·x[a, p] + λ·Σ pair[c, s, d]·y[c, s, d]``;
- ``max``: minimize ``z`` with ``z ≥`` every PE's load and ``z ≥ λ·`` every CN's load
  (an epigraph variable).

Only per-token costs with ``sum`` or ``max`` are linear; anything else is refused.  The
result says whether HiGHS proved optimality (status 0) or stopped at a time limit with
the best mapping found.
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
    value: float
    row: np.ndarray | None
    optimal: bool
    status: str
    objective: float | None


def solve(setup, time_limit: float | None = None, gap: float = 1e-9) -> ExactResult:
    ev = setup.objectives.evaluators[0]
    if not ev.vectorized or ev.intensive or ev.aggregate not in ("sum", "max"):
        raise SearchError(f"strategy 'exact' needs per-token cost models aggregated by sum or "
                          f"max; '{ev.metric}' with '{ev.aggregate}' is not linear here — use "
                          "exhaustive or a heuristic")
    allowed = setup.space.allowed
    A, P = allowed.shape
    C = ev.n_cns
    lam = ev.lambda_
    proc = ev.proc.copy()
    comm, route = ev.comm, ev.route
    # self-loops (an actor talking to itself) only depend on the actor's PE
    loops = np.flatnonzero(ev.src == ev.dst)
    pairs = np.flatnonzero(ev.src != ev.dst)
    diag = np.arange(P) * (P + 1)
    loop_cn = np.zeros((A, P, C))                                    # (a, s, k) CN load
    for c in loops:
        loop_cn[ev.src[c]] += comm[c][None, :] * route[diag]
        if ev.unroutable[diag].any():
            proc[ev.src[c], ev.unroutable[diag]] = np.inf
    nx_ = A * P
    ny = len(pairs) * P * P
    is_max = ev.aggregate == "max"
    nvar = nx_ + ny + (1 if is_max else 0)
    # scale costs to O(1) so that HiGHS tolerances are relative to the problem
    finite = np.concatenate([proc[np.isfinite(proc)].ravel(), (comm @ route.T).ravel() * lam,
                             [1e-300]])
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
        src, dst = int(ev.src[c]), int(ev.dst[c])
        for s in range(P):
            rows += [r] * (P + 1)
            cols += list(base + s * P + np.arange(P)) + [src * P + s]
            vals += [1.0] * P + [-1.0]
            lb.append(0.0)
            ub.append(0.0)
            r += 1
        for d in range(P):
            rows += [r] * (P + 1)
            cols += list(base + np.arange(P) * P + d) + [dst * P + d]
            vals += [1.0] * P + [-1.0]
            lb.append(0.0)
            ub.append(0.0)
            r += 1
    x_ub = allowed.astype(float).ravel()
    bad_proc = ~np.isfinite(proc).ravel()
    x_ub[bad_proc] = 0.0
    y_ub = np.tile(np.where(ev.unroutable, 0.0, 1.0), len(pairs))
    cost = np.zeros(nvar)
    proc_s = np.where(np.isfinite(proc), proc, 0.0) / scale
    if not is_max:
        cost[:nx_] = proc_s.ravel() + lam * loop_cn.sum(axis=2).ravel() / scale
        pair_cost = lam * (comm[pairs] @ route.T) / scale                # (Ch', P²)
        cost[nx_:nx_ + ny] = pair_cost.ravel()
    else:
        z = nvar - 1
        cost[z] = 1.0
        # PE loads
        for p in range(P):
            rows += [r] * (A + 1)
            cols += list(np.arange(A) * P + p) + [z]
            vals += list(proc_s[:, p]) + [-1.0]
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
    return ExactResult(value, row, res.status == 0, status,
                       None if res.fun is None else float(res.fun) * scale)
