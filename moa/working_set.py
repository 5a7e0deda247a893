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

The start: the curve cut into ``levels + 1`` plateaus, the cut that minimises the sum of
squared deviations of ``log bandwidth`` from each plateau's mean (dynamic programming
over the ordered points); each plateau's mean is a start bandwidth and the geometric
mean of the working sets on either side of a cut a start capacity; the sharpness
starts at each of :data:`START_SHARPNESS` in turn and the best fit is kept.
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
    cuts = plateaus(y, levels + 1)
    edges = [0, *cuts, y.size]
    means = [float(np.exp(y[a:b].mean())) for a, b in zip(edges, edges[1:])]
    caps = [math.sqrt(ws[c - 1] * ws[c]) for c in cuts]

    def unpack(x):
        v = np.exp(x)
        return (tuple(zip(v[:levels], v[levels:2 * levels])), v[2 * levels],
                v[2 * levels + 1:])

    def residuals(x):
        lv, last, s = unpack(x)
        return np.log(1.0 / seconds_per_byte(ws, lv, last, s)) - y

    lower = np.full(3 * levels + 1, -np.inf)
    upper = np.full(3 * levels + 1, np.inf)
    lower[2 * levels + 1:], upper[2 * levels + 1:] = 0.0, math.log(64.0)  # sharpness 1..64
    got = None
    for sharp in START_SHARPNESS:
        x0 = np.log([*caps, *means, *[sharp] * levels])
        run = least_squares(residuals, x0, bounds=(lower, upper), x_scale="jac")
        if got is None or run.cost < got.cost:
            got = run
    lv, last, s = unpack(got.x)
    keep = np.argsort([c for c, _ in lv])
    lv = tuple((float(lv[i][0]), float(lv[i][1])) for i in keep)
    s = tuple(float(s[i]) for i in keep)
    r = got.fun
    return WorkingSetFit(lv, float(last), s, tuple(ws.tolist()), tuple(bw.tolist()),
                         float(math.sqrt(np.mean(r * r))))
