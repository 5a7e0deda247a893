"""The host's side of a LogCA fit (Altaf & Wood, ISCA 2017, §4): the paper's
``T0 = C·g^beta``, the extension with a fixed cost ``o0 + C·g^beta``, the runs test
that says a form leaves systematic residuals, and a host with cache regimes (a
continuous piecewise power law in log-log, chosen by BIC) whose rows past the last
break are where the paper's form holds."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mapping.calibration.residuals import log_ratio
from moa.cost_models.logca import host_time

#: a runs test below this p-value (too few runs) flags systematic residuals
RUNS_P = 0.01
#: the most breaks (cache regimes below the paper's form) ``auto`` looks for
MAX_BREAKS = 2
#: the fewest distinct granularities ``range`` fits on
RANGE_MIN_ROWS = 6

HOST_WORDS = {"fit": "o0 + C·g^beta (a fixed cost: an extension of LogCA)",
               "regimes": "C·g^beta (the paper) past the host's cache regimes",
               "none": "C·g^beta (the paper)",
               "range": "C·g^beta (the paper) where it holds"}


@dataclass(frozen=True)
class RunsTest:
    """The Wald-Wolfowitz runs test of a sequence of residual signs: ``runs`` observed
    against ``expected`` = 2·n₊·n₋/n + 1, and ``p``, the one-sided (normal) probability
    of so few runs by chance; ``p`` is None when there are too few of a sign to test."""

    runs: int
    expected: float
    p: float | None

    @property
    def systematic(self) -> bool:
        return self.p is not None and self.p < RUNS_P

    def to_dict(self):
        return {"runs": self.runs, "expected": self.expected, "p": self.p,
                "systematic": self.systematic}

    def __str__(self):
        # fidelity imports scipy.stats: only a text of a fit needs it
        from mapping.calibration.fidelity import figure_text
        return (f"{self.runs} sign runs (expected {self.expected:.3g}, "
                f"p = {figure_text(self.p, '.2g')})")


def runs_test(residuals) -> RunsTest:
    """Wald-Wolfowitz runs test on the signs of ``residuals`` (in their order; zeros
    dropped): mean ``2·n₊·n₋/n + 1``, variance
    ``2·n₊·n₋·(2·n₊·n₋ - n)/(n²·(n - 1))``;
    ``p = Φ(z)`` with a continuity correction of 1/2 (one-sided: too few runs)."""
    from scipy.stats import norm

    signs = np.sign(np.asarray(residuals, dtype=float))
    signs = signs[signs != 0]
    n, pos = signs.size, int(np.sum(signs > 0))
    neg = n - pos
    runs = int(1 + np.sum(signs[1:] != signs[:-1])) if n else 0
    if pos < 2 or neg < 2:
        return RunsTest(runs, float(runs), None)
    mean = 2.0 * pos * neg / n + 1.0
    var = 2.0 * pos * neg * (2.0 * pos * neg - n) / (n * n * (n - 1.0))
    z = (runs - mean + 0.5) / math.sqrt(var)
    return RunsTest(runs, mean, float(norm.cdf(z)))


def fit_host(g, t0):
    """C and beta of ``T0 = C·g^beta`` by regression of log T0 on log g (LogCA §4)."""
    beta, log_c = np.polyfit(np.log(g), np.log(t0), 1)
    return math.exp(log_c), float(beta)


def fit_host_fixed(g, t0):
    """o0, C and beta of ``T0 = o0 + C·g^beta`` (the host with a fixed cost, an
    extension): for each beta on a grid, o0 and C by non-negative least squares on
    relative residuals; the best beta refined by a bounded scalar minimisation."""
    from scipy.optimize import minimize_scalar, nnls

    def solve(beta):
        X = np.column_stack([np.ones_like(g), g ** beta]) / t0[:, None]
        x, r = nnls(X, np.ones_like(g))
        return x, r

    betas = np.linspace(0.02, 4.0, 200)
    k = int(np.argmin([solve(b)[1] for b in betas]))
    lo, hi = betas[max(k - 1, 0)], betas[min(k + 1, betas.size - 1)]
    beta = float(minimize_scalar(lambda b: solve(b)[1], bounds=(lo, hi), method="bounded",
                                 options={"xatol": 1e-10}).x)
    (o0, C), _ = solve(beta)
    return float(o0), float(C), beta


def hinge_basis(x, knots):
    return np.column_stack([np.ones_like(x), x] + [np.maximum(x - k, 0.0) for k in knots])


def hinge_fit(x, y, knots):
    """The residual sum of squares of the continuous piecewise line through
    ``(x, y)`` bending at ``knots`` (basis 1, x, (x - k)+ per knot), its slopes and
    its coefficients."""
    X = hinge_basis(x, knots)
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    r = y - X @ coef
    return float(r @ r), np.cumsum(coef[1:]), coef


def regimes_of_hinge(knots, coef) -> tuple[tuple[float, float], ...]:
    """The regimes ``((cache_j, beta_j), ...)`` of the ``logca`` model
    (:func:`moa.cost_models.logca.host_time`) that a piecewise line of
    :func:`hinge_fit` gives: each break ``exp(k_j)`` and the slope below it (a slope
    below 0, from noise, as 0: the model's bound, a larger input never takes less time)."""
    slopes = np.cumsum(np.asarray(coef, dtype=float)[1:])
    return tuple((math.exp(k), float(max(s, 0.0))) for k, s in zip(knots, slopes))


def host_regimes(g, t0, form="none"):
    """The host's cache regimes, or None: when ``form``'s host fit (the paper's
    ``C·g^beta``, or ``o0 + C·g^beta`` for ``"fit"``) leaves systematic residuals
    (runs test) and a continuous piecewise power law with 1 to :data:`MAX_BREAKS`
    breaks at measured granularities has a lower BIC (``n·ln(RSS/n) + p·ln n`` in
    ``log g``, ``log T0``; p = 2 + 2·breaks; the single forms count 2 and 3), the rows
    past the last break (at least :data:`RANGE_MIN_ROWS` granularities) and why."""
    from itertools import combinations

    if form == "fit":
        o0, C, beta = fit_host_fixed(g, t0)
        model, p0 = o0 + host_time(g, C, beta), 3
    else:
        C, beta = fit_host(g, t0)
        model, p0 = host_time(g, C, beta), 2
    order = np.argsort(g)
    r0 = log_ratio(model, t0)
    if not runs_test(r0[order]).systematic:
        return None
    x, y, n = np.log(g), np.log(t0), g.size
    rss0 = float(r0 @ r0)
    if rss0 <= 0:
        return None
    best = (n * math.log(rss0 / n) + p0 * math.log(n), (), None, None)
    knots = np.unique(x)[1:-1]
    for k in range(1, MAX_BREAKS + 1):
        for ks in combinations(knots, k):
            rss, slopes, coef = hinge_fit(x, y, ks)
            bic = n * math.log(max(rss, 1e-300) / n) + (2 + 2 * k) * math.log(n)
            if bic < best[0]:
                best = (bic, ks, slopes, coef)
    _, ks, slopes, coef = best
    if not ks:
        return None
    start = math.exp(ks[-1])
    tail = g >= start * (1 - 1e-12)
    if np.unique(g[tail]).size < RANGE_MIN_ROWS:
        return None
    breaks = ", ".join(f"{math.exp(k):.6g}" for k in ks)
    shape = ", ".join(f"{s:.3g}" for s in slopes)
    return tail, ks, tuple(coef.tolist()), (f"the host's times bend at g = {breaks} B (log-log slopes {shape}; "
                  f"the {HOST_WORDS[form] if form == 'fit' else 'paper' + chr(39) + 's form'} "
                  f"leaves systematic residuals and a lower BIC goes to the regimes): "
                  f"C·g^beta fitted on the {int(tail.sum())} host rows from g = "
                  f"{start:.6g} B, the accelerator on every row")
