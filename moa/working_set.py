"""A bandwidth-against-working-set curve fitted with the working-set term.

The Empirical Roofline Toolkit sweeps a kernel over working sets from bytes to beyond
the last cache and records the bandwidth at each (Lo et al., "Roofline Model Toolkit",
PMBS 2014): plateaus at each level's bandwidth, joined where the working set outgrows
the level.  :func:`fit_working_set` fits that curve with the term the cost models use
(:func:`moa.cost_models.caches.seconds_per_byte`): bandwidth ``1/τ(ws)``, each level's
capacity, bandwidth and sharpness ``s`` free, by least squares on
``log bandwidth``.  Working sets below the first that reaches 80% of the highest
bandwidth are left out: there the loop's own overhead, not the memory, bounds the
kernel.

The levels stay in order within the fit, not by a sort after it: capacities rise and
bandwidths fall (L1 >= L2 >= ... >= the last) for every value the solver tries
(:func:`ordered`), and each sharpness lies in :data:`SHARPNESS`.

The starts: the curve cut into ``levels + 1`` plateaus, the cut that minimises the sum
of squared deviations of ``log bandwidth`` from each plateau's mean (dynamic programming
over the ordered points), and cut into ``levels + 2`` with each inner cut left out in
turn (a slow transition gets a plateau of its own, then joins either neighbour); each
plateau's mean is a start bandwidth and the geometric mean of the working sets on either
side of a cut a start capacity; the sharpness starts at each of :data:`START_SHARPNESS`
in turn and the best fit is kept.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from moa.cost_models.caches import seconds_per_byte

__all__ = ["WorkingSetFit", "fit_working_set", "plateaus"]

#: the share of the highest bandwidth from which the curve is fitted
RAMP = 0.8
#: the sharpness every level starts from, one least-squares run each (the best is kept)
START_SHARPNESS = (1.0, 4.0, 16.0)
#: the sharpness a fit may give a level: at least 1 (a level holds no more than its share
#: ``c / ws`` of a working set whose bytes are all used alike, as ERT's sweep uses them),
#: at most 64 (a step to the eye on a log axis)
SHARPNESS = (1.0, 64.0)


@dataclass(frozen=True)
class WorkingSetFit:
    """Fitted levels ``((capacity bytes, bandwidth), ...)`` fastest first, the last
    level's ``bandwidth`` (DRAM; no capacity), each level's ``sharpness``, the fitted
    points and the rms of ``log`` residuals; bandwidths in the curve's unit."""

    levels: tuple[tuple[float, float], ...]
    bandwidth: float
    sharpness: tuple[float, ...]
    ws: tuple[float, ...]
    measured: tuple[float, ...]
    rms_log: float

    def predict(self, ws):
        """The bandwidth the fit gives at working sets ``ws``."""
        return 1.0 / seconds_per_byte(ws, self.levels, self.bandwidth, self.sharpness)

    def to_dict(self) -> dict:
        return {"levels": [{"capacity": c, "bandwidth": b, "sharpness": s}
                           for (c, b), s in zip(self.levels, self.sharpness)],
                "bandwidth": self.bandwidth,
                "points": len(self.ws), "rms_log_residual": self.rms_log}

    def __str__(self):
        rows = [f"working-set fit of {len(self.ws)} points (ws {min(self.ws):g} .. "
                f"{max(self.ws):g} B), rms log residual {self.rms_log:.3g}",
                f"{'level':<8}{'capacity (B)':<16}{'bandwidth':<14}sharpness"]
        for i, ((c, b), s) in enumerate(zip(self.levels, self.sharpness)):
            rows.append(f"{'L' + str(i + 1):<8}{c:<16.6g}{b:<14.6g}{s:.3g}")
        rows.append(f"{'last':<8}{'-':<16}{self.bandwidth:.6g}")
        return "\n".join(rows)


def plateaus(y, k: int) -> list[int]:
    """The ``k - 1`` cut indices splitting ``y`` (in order) into ``k`` runs with the
    least total squared deviation from each run's mean (dynamic programming)."""
    n = len(y)
    if not 1 <= k <= n:
        raise ValueError(f"cannot cut {n} points into {k} plateaus")
    c1 = np.concatenate([[0.0], np.cumsum(y)])
    c2 = np.concatenate([[0.0], np.cumsum(np.square(y))])

    def cost(i, j):                      # points i..j-1
        s, m = c1[j] - c1[i], j - i
        return c2[j] - c2[i] - s * s / m

    best = np.full((k + 1, n + 1), math.inf)
    back = np.zeros((k + 1, n + 1), dtype=int)
    best[0, 0] = 0.0
    for p in range(1, k + 1):
        for j in range(p, n + 1):
            for i in range(p - 1, j):
                v = best[p - 1, i] + cost(i, j)
                if v < best[p, j]:
                    best[p, j], back[p, j] = v, i
    cuts, j = [], n
    for p in range(k, 0, -1):
        j = back[p, j]
        cuts.append(j)
    return sorted(cuts)[1:]


def _starts(ws, y, levels: int):
    """Start capacities and bandwidths: the cut of the curve into ``levels + 1``
    plateaus, and each cut into ``levels + 2`` with one inner cut left out (a slow
    transition then has a plateau of its own, merged into either neighbour)."""
    out = []
    cut_sets = [plateaus(y, levels + 1)]
    if y.size >= levels + 2:
        more = plateaus(y, levels + 2)
        cut_sets += [more[:j] + more[j + 1:] for j in range(len(more))]
    for cuts in cut_sets:
        edges = [0, *cuts, y.size]
        means = [float(np.exp(y[a:b].mean())) for a, b in zip(edges, edges[1:])]
        caps = [math.sqrt(ws[c - 1] * ws[c]) for c in cuts]
        if (caps, means) not in out:
            out.append((caps, means))
    return out


def ordered(x, levels: int, span):
    """The levels ``((c_i, b_i), ...)``, last bandwidth and sharpnesses of the fit's
    unknowns ``x``.  Capacities: ``u_i`` in [0, 1] place ``t_i = t_{i-1} + (1 - t_{i-1})
    u_i`` (``t_0 = 0``) and ``log c_i = log a + t_i log(b / a)`` within the swept
    ``span = (a, b)``; bandwidths: ``log b_1``, then ``log(b_i / b_{i+1}) >= 0`` down to
    the last level; then ``log s_i``.  Capacities rise and bandwidths fall with the level
    for every ``x`` within its bounds."""
    x = np.asarray(x, dtype=float)
    t, ts = 0.0, []
    for u in x[:levels]:
        t = t + (1.0 - t) * u
        ts.append(t)
    lo, hi = math.log(span[0]), math.log(span[1])
    caps = np.exp(lo + np.asarray(ts) * (hi - lo))
    bws = np.exp(x[levels] - np.concatenate([[0.0], np.cumsum(x[levels + 1:2 * levels + 1])]))
    return (tuple(zip(caps.tolist(), bws[:levels].tolist())), float(bws[levels]),
            tuple(np.exp(x[2 * levels + 1:]).tolist()))


def unknowns(caps, means, sharpness, span) -> np.ndarray:
    """The ``x`` of :func:`ordered` for capacities ``caps`` (increasing, within
    ``span``), bandwidths ``means`` (the last level's last) and sharpnesses, each step
    clipped to its bound."""
    lo, hi = math.log(span[0]), math.log(span[1])
    ts = np.clip((np.log(caps) - lo) / (hi - lo), 0.0, 1.0)
    us, before = [], 0.0
    for t in ts:
        us.append(0.0 if before >= 1.0 else min(max((t - before) / (1.0 - before), 0.0), 1.0))
        before = max(before, t)
    lb = np.log(means)
    return np.concatenate([us, [lb[0]], np.maximum(-np.diff(lb), 0.0), np.log(sharpness)])


def fit_working_set(ws, bandwidth, levels: int = 3) -> WorkingSetFit:
    """Fit ``levels`` cache levels and a last level to a bandwidth-against-working-set
    curve (see the module); a ValueError for too few points or bad values."""
    from scipy.optimize import least_squares

    ws, bw = np.asarray(ws, dtype=float), np.asarray(bandwidth, dtype=float)
    if ws.shape != bw.shape or ws.ndim != 1:
        raise ValueError("working sets and bandwidths must be two columns of one length")
    if not (np.all(np.isfinite(ws) & (ws > 0)) and np.all(np.isfinite(bw) & (bw > 0))):
        raise ValueError("every working set and bandwidth must be a finite number > 0")
    order = np.argsort(ws)
    ws, bw = ws[order], bw[order]
    start = int(np.argmax(bw >= RAMP * bw.max()))
    ws, bw = ws[start:], bw[start:]
    n_par = 3 * levels + 1
    if ws.size < n_par + 2:
        raise ValueError(f"{ws.size} points past the ramp cannot fit {levels} levels "
                         f"({n_par} parameters)")
    y = np.log(bw)

    def residuals(x):
        lv, last, s = ordered(x, levels, span)
        return np.log(1.0 / seconds_per_byte(ws, lv, last, s)) - y

    lower = np.full(n_par, -np.inf)
    upper = np.full(n_par, np.inf)
    span = (float(ws[0]), float(ws[-1]))
    lower[:levels], upper[:levels] = 0.0, 1.0                       # capacities in order
    lower[levels + 1:2 * levels + 1] = 0.0                          # bandwidths in order
    lower[2 * levels + 1:] = math.log(SHARPNESS[0])
    upper[2 * levels + 1:] = math.log(SHARPNESS[1])
    got = None
    for caps, means in _starts(ws, y, levels):
        for sharp in START_SHARPNESS:
            x0 = np.clip(unknowns(caps, means, [sharp] * levels, span), lower, upper)
            run = least_squares(residuals, x0, bounds=(lower, upper), x_scale="jac")
            if got is None or run.cost < got.cost:
                got = run
    lv, last, s = ordered(got.x, levels, span)
    r = got.fun
    return WorkingSetFit(lv, last, s, tuple(ws.tolist()), tuple(bw.tolist()),
                         float(math.sqrt(np.mean(r * r))))
