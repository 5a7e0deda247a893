"""LogCA analysis of one accelerator (Altaf & Wood, "LogCA: A High-Level Performance Model
for Hardware Accelerators", ISCA 2017): speedup against granularity, break-even ``g1``,
``g_{A/2}``, the asymptotic limit, compute- or latency-bound, and optimization regions.

Notation of the paper: ``L`` latency (cycles, or cycles/byte when granularity dependent),
``o`` overhead (cycles), ``C`` computational index (host cycles per byte), ``A`` peak
acceleration, ``g`` granularity (bytes), ``beta`` the complexity exponent
(host time ``C·g^beta``). Speedup is ``T0(g)/T1(g)`` (LogCA eq. 1)::

    independent latency (eq. 2):  S(g) = C·g^beta / (o + L   + C·g^beta / A)
    dependent latency   (eq. 8):  S(g) = C·g^beta / (o + L·g + C·g^beta / A)

Every exact quantity here is computed on ``log(1/S)`` as a function of ``x = log g``::

    1/S = o/C·g^-beta + L/C·g^(1-beta) + 1/A          (dependent)
    1/S = (o+L)/C·g^-beta + 1/A                         (independent)

a sum of exponentials of ``x``, so ``log(1/S)`` is a log-sum-exp of affine functions of
``x``: convex, evaluated without overflow at any granularity. Hence the granularities where
``S >= s`` form one interval (possibly empty or unbounded) whose ends are found by
:func:`scipy.optimize.brentq` on brackets derived from that shape — never a guess. The
paper's closed forms (eqs. 5, 6, 11, 12) are reported beside the exact values: eqs. 5-6
(granularity-independent latency) are exact for every beta, eqs. 11-12 (dependent
latency) are one Newton step from g = 1 and exact only for beta = 1.

**A fixed host cost** (an extension, not in the paper): a host whose time is
``T0(g) = o0 + C·g^beta`` (a library call's fixed cost) has ``1/S = T1/(C·g^beta) /
(1 + o0/C·g^-beta)``: the log of a ratio of two sums of exponentials, no longer convex,
so with ``o0 > 0`` the crossings are found by scanning ``x`` on a dense grid that spans
every place where the dominant term changes, each sign change refined by brentq. With
``o0 = 0`` (the paper's form) every result is computed exactly as before.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Literal

import numpy as np

from moa.errors import CostModelError
from moa.units import binary_size

Latency = Literal["dependent", "independent"]
LATENCIES = ("dependent", "independent")
PARAMETERS = ("L", "o", "C", "A")
#: the paper's granularity range of study, 16 B to 32 MB (§4)
GMIN = 16.0
GMAX = float(2 ** 25)

_XTOL = 1e-13          # on x = log g: a relative error of 1e-13 on g


class LogCAError(CostModelError):
    """Bad LogCA parameters (negative latency, A <= 0, ...): bad input, exit status 2."""


# --------------------------------------------------------------------------- validation

def _check(L, o, C, A, beta, latency, o0=0.0):
    values = {"L": L, "o": o, "C": C, "A": A, "beta": beta, "o0": o0}
    for name, value in values.items():
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise LogCAError(f"LogCA parameter {name} = {value!r} is not a number") from None
        if not math.isfinite(value):
            raise LogCAError(f"LogCA parameter {name} = {value} must be finite")
        values[name] = value
    for name in ("L", "o", "o0"):
        if values[name] < 0:
            raise LogCAError(f"LogCA parameter {name} = {values[name]:g} must be >= 0")
    for name in ("C", "A", "beta"):
        if values[name] <= 0:
            raise LogCAError(f"LogCA parameter {name} = {values[name]:g} must be > 0")
    if latency not in LATENCIES:
        raise LogCAError(f"LogCA latency = {latency!r} must be one of: {', '.join(LATENCIES)}")
    return values["L"], values["o"], values["C"], values["A"], values["beta"], latency


def _check_host(o0, args):
    """``args`` (L, o, C, A, beta, latency) checked, with the host's fixed cost ``o0``
    appended (a float, 0 for the paper's host)."""
    L, o, C, A, beta, latency = _check(*args, o0=o0)
    return L, o, C, A, beta, latency, float(o0)


def _check_range(gmin, gmax):
    gmin, gmax = float(gmin), float(gmax)
    if not (math.isfinite(gmin) and math.isfinite(gmax) and 0 < gmin < gmax):
        raise LogCAError(f"granularity range [{gmin:g}, {gmax:g}] must satisfy 0 < gmin < gmax")
    return gmin, gmax


# --------------------------------------------------------------------------- the curve

def _terms(L, o, C, A, beta, latency):
    """``1/S(e^x) = Σ exp(c + s·x)`` as a list of (c, s): intercepts and slopes."""
    terms = [(-math.log(A), 0.0)]                     # C1/C0 = 1/A
    if latency == "independent":
        if o + L > 0:
            terms.append((math.log((o + L) / C), -beta))   # (o+L) / (C·g^beta)
    else:
        if o > 0:
            terms.append((math.log(o / C), -beta))         # o / (C·g^beta)
        if L > 0:
            terms.append((math.log(L / C), 1.0 - beta))    # L·g / (C·g^beta)
    return terms


def _host_terms(o0, C, beta):
    """``T0(g)/(C·g^beta) = 1 + o0/C·g^-beta`` as (c, s) terms; none for the paper's host
    (``o0 = 0``)."""
    return [(0.0, 0.0), (math.log(o0 / C), -beta)] if o0 > 0 else []


def _lse(x, terms):
    """log Σ exp(c + s·x) over ``terms`` at x (vectorized)."""
    out = None
    with np.errstate(invalid="ignore", over="ignore"):
        for c, s in terms:
            t = np.full_like(x, c) if s == 0 else c + s * x
            out = t if out is None else np.logaddexp(out, t)
    return out


def _log_inv_speedup(x, terms, host=()):
    """log(1/S) at x = log g (vectorized); x = -inf is g = 0; ``host``: the terms of a
    fixed host cost (:func:`_host_terms`)."""
    x = np.asarray(x, dtype=float)
    out = _lse(x, terms)
    if host:
        with np.errstate(invalid="ignore"):
            out = out - _lse(x, host)
    return out


def speedup(g, L, o, C, A, beta=1.0, latency: Latency = "dependent", o0=0.0):
    """Speedup T0(g)/T1(g) at granularity ``g`` (bytes; scalar or array).

    LogCA eq. 2 (latency independent) / eq. 8 (dependent):
    ``C·g^beta / (o + L1(g) + C·g^beta/A)``, computed as exp(-log(1/S)) so that no
    granularity overflows; at g = 0 it is the limit (0, or A when o = 0 and beta < 1).
    ``o0``: the host's fixed cost, ``T0 = o0 + C·g^beta`` (an extension; 0: the paper's).
    """
    L, o, C, A, beta, latency, o0 = _check_host(o0, (L, o, C, A, beta, latency))
    garr = np.asarray(g, dtype=float)
    if np.any(garr < 0) or np.any(np.isnan(garr)):
        raise LogCAError("granularity must be >= 0")
    with np.errstate(divide="ignore"):
        x = np.log(garr)
    s = np.exp(-_log_inv_speedup(x, _terms(L, o, C, A, beta, latency), _host_terms(o0, C, beta)))
    if o0 > 0:                                # g = 0: both fixed costs, S = o0 / T1(0)
        t1 = o + (L if latency == "independent" else 0.0)
        s = np.where(garr == 0, o0 / t1 if t1 > 0 else math.inf, s)
    return float(s) if np.ndim(g) == 0 else s


def _limit(terms, side):
    """lim log(1/S) as x -> +inf (side=+1) or -inf (side=-1)."""
    if any(s * side > 0 for _, s in terms):
        return math.inf
    flat = [c for c, s in terms if s == 0]
    return float(np.logaddexp.reduce(flat))


def _argmin(terms):
    """x minimizing log(1/S): +inf / -inf when monotone, None when constant."""
    neg = [(c, s) for c, s in terms if s < 0]
    pos = [(c, s) for c, s in terms if s > 0]
    if neg and pos:
        # d/dx [a·e^{s1·x} + b·e^{s2·x}] = 0 (one term of each sign at most)
        (c1, s1), (c2, s2) = neg[0], pos[0]
        return (math.log(-s1) + c1 - math.log(s2) - c2) / (s2 - s1)
    if neg:
        return math.inf
    if pos:
        return -math.inf
    return None


def _peak(terms):
    """(x of the peak speedup, log(1/S) there): the minimum of the convex log(1/S)."""
    x = _argmin(terms)
    if x is None:
        return None, _limit(terms, +1)
    if math.isinf(x):
        return x, _limit(terms, 1 if x > 0 else -1)
    return x, float(_log_inv_speedup(x, terms))


def _walk(h, x0, direction, want_positive):
    """From x0, step by doubling steps in ``direction`` until sign(h) is as wanted."""
    step, x = 1.0, x0
    for _ in range(2000):
        x = x + direction * step
        v = h(x)
        if (v > 0) == want_positive and v != 0:
            return x
        step *= 2.0
    raise LogCAError("LogCA: could not bracket a root (parameters out of numeric range)")


def _tails(terms):
    """The (c, s) term of ``terms`` that dominates as x -> -inf and as x -> +inf."""
    left = min(terms, key=lambda t: (t[1], -t[0]))
    right = max(terms, key=lambda t: (t[1], t[0]))
    return left, right


def _grid(terms, host, levels=()):
    """x = log g on a 0.005-spaced grid wide enough that beyond it log(1/S) is the affine
    function of its dominant terms: it spans every point where two terms of ``terms`` or
    of ``host`` are equal, and every point where a tail meets a ``level``, with margin."""
    every = list(terms) + list(host)
    points = [(c1 - c2) / (s2 - s1) for i, (c1, s1) in enumerate(every)
              for c2, s2 in every[i + 1:] if s1 != s2]
    for side in (0, 1):
        (cn, sn), (ch, sh) = _tails(terms)[side], _tails(host)[side]
        for level in levels:
            if sn != sh:
                points.append((level - (cn - ch)) / (sn - sh))
    lo, hi = (min(points), max(points)) if points else (0.0, 0.0)
    return np.arange(lo - 40.0, hi + 40.0, 0.005)


def _scan_crossings(level, terms, host):
    """The first interval of x where log(1/S) <= ``level`` as (g_lo, g_hi), by a dense
    scan and brentq (the non-convex case of a fixed host cost); None if there is none."""
    from scipy.optimize import brentq

    def h(x):
        return float(_log_inv_speedup(x, terms, host)) - level

    xs = _grid(terms, host, (level,))
    inside = _log_inv_speedup(xs, terms, host) - level <= 0
    if not inside.any():
        return None
    i = int(np.argmax(inside))
    lo = 0.0 if i == 0 else math.exp(brentq(h, xs[i - 1], xs[i], xtol=_XTOL))
    out = np.flatnonzero(~inside[i:])
    if not out.size:
        return lo, None
    j = i + int(out[0])
    return lo, math.exp(brentq(h, xs[j - 1], xs[j], xtol=_XTOL))


def _scan_peak(terms, host):
    """(x of the peak speedup, log(1/S) there) with a fixed host cost: the grid's
    minimum refined by a bounded scalar minimisation (±inf: approached at that end)."""
    from scipy.optimize import minimize_scalar

    xs = _grid(terms, host)
    values = _log_inv_speedup(xs, terms, host)
    k = int(np.argmin(values))
    for side, end in ((1, -1), (-1, 0)):
        slope = _tails(terms)[side > 0][1] - _tails(host)[side > 0][1]
        if slope * side <= 0 and values[end] <= values[k] + 1e-12 * max(1.0, abs(values[k])):
            # still falling (or flat) towards that end: the peak is approached there
            return side * math.inf, (_limit(terms, 1) if side > 0 else float(values[end]))
    lo, hi = xs[max(k - 1, 0)], xs[min(k + 1, xs.size - 1)]
    best = minimize_scalar(lambda x: float(_log_inv_speedup(x, terms, host)),
                           bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    return float(best.x), float(best.fun)


def crossings(s_target, L, o, C, A, beta=1.0, latency: Latency = "dependent", o0=0.0):
    """The interval ``(g_lo, g_hi)`` of granularities with speedup >= ``s_target``.

    ``None`` when the speedup never reaches ``s_target``; ``g_lo = 0`` when it holds down
    to g -> 0; ``g_hi = None`` when it holds for every larger g (always, except with
    granularity-dependent latency and beta < 1, where speedup falls again, implication 4).
    With a fixed host cost ``o0 > 0`` (an extension), the first such interval.
    """
    L, o, C, A, beta, latency, o0 = _check_host(o0, (L, o, C, A, beta, latency))
    if not s_target > 0:
        raise LogCAError(f"target speedup {s_target!r} must be > 0")
    terms = _terms(L, o, C, A, beta, latency)
    level = -math.log(s_target)          # S >= s  <=>  log(1/S) <= level
    if o0 > 0:
        return _scan_crossings(level, terms, _host_terms(o0, C, beta))

    def h(x):
        return float(_log_inv_speedup(x, terms)) - level

    x_star, h_min = _peak(terms)
    h_min -= level
    if h_min > 0:
        return None
    if x_star is None:                   # constant speedup, at or above the target
        return 0.0, None
    if math.isinf(x_star) and h_min == 0:  # approached, never reached
        return None

    def end(direction):
        """The root on the side ``direction`` of the peak, or None for no root there."""
        if _limit(terms, direction) - level <= 0:
            return None                  # S >= target all the way to g -> 0 or infinity
        inside = x_star if math.isfinite(x_star) else _walk(h, 0.0, -direction, False)
        if h(inside) > 0:                # the peak lies beyond: walk towards it
            inside = _walk(h, inside, -direction, False)
        outside = _walk(h, inside, direction, True)
        a, b = sorted((inside, outside))
        from scipy.optimize import brentq  # scipy costs a second at start-up: load on use
        return math.exp(brentq(h, a, b, xtol=_XTOL, rtol=4 * np.finfo(float).eps))

    lo = end(-1)
    hi = end(+1)
    return (0.0 if lo is None else lo), hi


def break_even(L, o, C, A, beta=1.0, latency: Latency = "dependent", o0=0.0):
    """Exact ``g1``: the smallest granularity with speedup 1 (LogCA §2.2), by root finding;
    ``0.0`` if the accelerator wins at every granularity, ``None`` if it never breaks even."""
    interval = crossings(1.0, L, o, C, A, beta, latency, o0)
    return None if interval is None else interval[0]


def g_half(L, o, C, A, beta=1.0, latency: Latency = "dependent", o0=0.0):
    """Exact ``g_{A/2}``: the smallest granularity with speedup A/2 (LogCA §2.2)."""
    L, o, C, A, beta, latency = _check(L, o, C, A, beta, latency)
    interval = crossings(A / 2.0, L, o, C, A, beta, latency, o0)
    return None if interval is None else interval[0]


# --------------------------------------------------------------------------- closed forms

def break_even_closed_form(L, o, C, A, beta=1.0, latency: Latency = "dependent", o0=0.0):
    """The paper's g1: eq. 5 (latency independent, exact) or eq. 11 (dependent; one Newton
    step from g = 1, exact for beta = 1). ``None`` where the paper says it does not exist.
    With a fixed host cost ``o0 > 0``: eq. 5 with o + L - o0 for o + L (solving
    o0 + C·g^beta = o + L + C·g^beta/A; 0 where the host's fixed cost alone loses), none
    for eq. 11."""
    L, o, C, A, beta, latency, o0 = _check_host(o0, (L, o, C, A, beta, latency))
    if o0 > 0:
        if latency != "independent" or A <= 1:
            return None
        return (A / (A - 1) * max(o + L - o0, 0.0) / C) ** (1 / beta)
    if latency == "independent":
        if A <= 1:
            return None
        return (A / (A - 1) * (o + L) / C) ** (1 / beta)            # LogCA eq. 5
    num = C * (beta - 1) * (A - 1) + A * o                           # LogCA eq. 11
    den = C * beta * (A - 1) - A * L
    if den <= 0 or num / den < 0:
        return None
    return num / den


def g_half_closed_form(L, o, C, A, beta=1.0, latency: Latency = "dependent", o0=0.0):
    """The paper's g_{A/2}: eq. 6 (latency independent, exact) or eq. 12 (= eq. 13 for g_A;
    dependent, one Newton step from g = 1, exact for beta = 1).  With a fixed host cost
    ``o0 > 0``: ``((A·(o + L) - 2·o0)/C)^(1/beta)`` (eq. 6 solved with T0 = o0 +
    C·g^beta), none for eq. 12."""
    L, o, C, A, beta, latency, o0 = _check_host(o0, (L, o, C, A, beta, latency))
    if o0 > 0:
        if latency != "independent":
            return None
        return (max(A * (o + L) - 2 * o0, 0.0) / C) ** (1 / beta)
    if latency == "independent":
        return (A * (o + L) / C) ** (1 / beta)                       # LogCA eq. 6
    num = C * (beta - 1) + A * o                                     # LogCA eq. 12
    den = C * beta - A * L
    if den <= 0 or num / den < 0:
        return None
    return num / den


def speedup_limit(L, o, C, A, beta=1.0, latency: Latency = "dependent"):
    """lim_{g->inf} speedup: A (eq. 3; and eq. 8 when beta > 1 or L = 0); with
    granularity-dependent latency, ``A·C/(A·L + C)`` for beta = 1 (eq. 9 with beta = 1,
    below the paper's bound C/L) and 0 for beta < 1 (implication 4)."""
    L, o, C, A, beta, latency = _check(L, o, C, A, beta, latency)
    if latency == "independent" or L == 0 or beta > 1:
        return A                                         # LogCA eq. 3 (and eq. 8, beta > 1)
    if beta == 1:
        return A * C / (A * L + C)                       # LogCA eq. 9 with beta = 1: < C/L
    return 0.0                                           # LogCA eq. 9, beta < 1: implication 4


def bound(L, o, C, A, beta=1.0, latency: Latency = "dependent"):
    """LogCA §3.1: ``"latency"``-bound with granularity-dependent latency and beta <= 1
    (speedup bounded by C/L·g^(beta-1), eq. 9), else ``"compute"``-bound (by A, eq. 3)."""
    L, o, C, A, beta, latency = _check(L, o, C, A, beta, latency)
    return "latency" if latency == "dependent" and L > 0 and beta <= 1 else "compute"


# --------------------------------------------------------------------------- regions

def improved(parameter, L, o, C, A, factor=10.0):
    """The parameters with one of them improved ``factor`` times (L/10, o/10, C·10, A·10):
    lower latency and overhead, more work per byte, more acceleration (LogCA §3.2)."""
    p = {"L": L, "o": o, "C": C, "A": A}
    if parameter in ("L", "o"):
        p[parameter] = p[parameter] / factor
    elif parameter in ("C", "A"):
        p[parameter] = p[parameter] * factor
    else:
        raise LogCAError(f"unknown LogCA parameter {parameter!r} (known: {', '.join(PARAMETERS)})")
    return p


def gain(parameter, g, L, o, C, A, beta=1.0, latency: Latency = "dependent", factor=10.0,
         o0=0.0):
    """Relative speedup gain at ``g`` from improving ``parameter`` ``factor`` times."""
    base = speedup(g, L, o, C, A, beta, latency, o0)
    better = speedup(g, **improved(parameter, L, o, C, A, factor), beta=beta, latency=latency,
                     o0=o0)
    return better / base - 1.0


@dataclass(frozen=True)
class Region:
    """Granularities ``[start, end]`` where improving ``parameter`` pays (LogCA §3.2)."""

    parameter: str
    start: float
    end: float

    def to_dict(self):
        return {"parameter": self.parameter, "from": self.start, "to": self.end}


def optimization_regions(L, o, C, A, beta=1.0, latency: Latency = "dependent", gmin=GMIN,
                         gmax=GMAX, factor=10.0, gain=0.2, points_per_decade=200, o0=0.0):
    """For each of L, o, C, A, the intervals of [gmin, gmax] where improving it alone
    ``factor`` times raises speedup by at least ``gain`` (LogCA §3.2: 10x, 20%).

    The sign of ``log(S'/S) - log(1 + gain)`` is sampled on a dense log grid
    (``points_per_decade``); each sign change is refined by brentq, so interval ends are
    exact; a region narrower than one grid step (1.2% of g at 200/decade) could be missed.
    ``o0``: the host's fixed cost (an extension; it is the host's, so never improved).
    """
    from scipy.optimize import brentq

    L, o, C, A, beta, latency, o0 = _check_host(o0, (L, o, C, A, beta, latency))
    gmin, gmax = _check_range(gmin, gmax)
    if not factor > 1 or not gain > 0:
        raise LogCAError("improvement factor must be > 1 and gain > 0")
    xs = np.linspace(math.log(gmin), math.log(gmax),
                     # decades as a difference: gmax / gmin overflows for 1e-300 .. 1e300
                     max(64, int(math.ceil(points_per_decade
                                           * (math.log10(gmax) - math.log10(gmin))))) + 1)
    base_terms = _terms(L, o, C, A, beta, latency)
    base_host = _host_terms(o0, C, beta)
    threshold = math.log1p(gain)
    regions = []
    for parameter in PARAMETERS:
        p = improved(parameter, L, o, C, A, factor)
        terms = _terms(p["L"], p["o"], p["C"], p["A"], beta, latency)
        host = _host_terms(o0, p["C"], beta)

        def d(x, terms=terms, host=host):
            # log(S'/S) - log(1 + gain) = log(1/S) - log(1/S') - log(1 + gain)
            return (_log_inv_speedup(x, base_terms, base_host)
                    - _log_inv_speedup(x, terms, host) - threshold)

        values = d(xs)
        inside = values >= 0
        start = gmin if inside[0] else None
        for i in np.flatnonzero(inside[1:] != inside[:-1]):
            root = math.exp(brentq(lambda x: float(d(x)), xs[i], xs[i + 1], xtol=_XTOL))
            root = min(max(root, gmin), gmax)
            if inside[i + 1]:
                start = root
            else:
                regions.append(Region(parameter, start, root))
                start = None
        if start is not None:
            regions.append(Region(parameter, start, gmax))
    return tuple(regions)


# --------------------------------------------------------------------------- the result

def _fmt(value, unit=""):
    if value is None:
        return "none"
    return f"{value:.6g}{unit}"


def _bytes(value):
    """Bytes, with the binary size beside them from 1 KiB (:func:`moa.units.binary_size`:
    the paper's KB is 1024 B)."""
    if value is None:
        return "none"
    text = f"{value:.0f} B" if value == round(value) and value < 1e12 else f"{value:.6g} B"
    return f"{text} ({binary_size(value)})" if value >= 2 ** 10 else text


@dataclass(frozen=True)
class LogCAAnalysis:
    """Everything :func:`analyse` finds out about one accelerator; ``None`` = does not exist.

    ``to_dict()`` gives the JSON document of ``mapeval logca --json``. Beyond it:
    ``g1_upper`` / ``g_half_upper`` (where speedup falls back below 1 or A/2, only for
    granularity-dependent latency with beta < 1), ``peak_speedup`` and ``g_peak``.
    """

    L: float
    o: float
    C: float
    A: float
    beta: float
    latency: str
    gmin: float
    gmax: float
    g1: float | None
    g1_closed_form: float | None
    g_half: float | None
    g_half_closed_form: float | None
    speedup_limit: float
    bound: str
    speedup_at: tuple[tuple[float, float], ...] = ()
    regions: tuple[Region, ...] = ()
    g1_upper: float | None = None
    g_half_upper: float | None = None
    peak_speedup: float = field(default=math.nan)
    g_peak: float | None = None
    #: the host's fixed cost (T0 = o0 + C·g^beta; an extension, 0 in the paper)
    o0: float = 0.0

    def to_dict(self) -> dict:
        host = {"o0": self.o0} if self.o0 else {}
        return {**host,
            "g1": self.g1,
            "g1_closed_form": self.g1_closed_form,
            "g_half": self.g_half,
            "g_half_closed_form": self.g_half_closed_form,
            "speedup_limit": self.speedup_limit,
            "bound": self.bound,
            "speedup_at": [{"g": g, "speedup": s} for g, s in self.speedup_at],
            "regions": [r.to_dict() for r in self.regions],
        }

    def speedup(self, g):
        return speedup(g, self.L, self.o, self.C, self.A, self.beta, self.latency, self.o0)

    def __str__(self):
        closed = ("eqs. 5-6 with o0, exact" if self.o0 and self.latency == "independent" else
                  "none with o0 and L·g" if self.o0 else
                  "eqs. 5-6, exact" if self.latency == "independent" else
                  "eqs. 11-12, exact" if self.beta == 1 else
                  "eqs. 11-12, one Newton step: approximate")
        rows = [
            f"LogCA  L = {self.L:g}  o = {self.o:g}  C = {self.C:g}  A = {self.A:g}  "
            f"beta = {self.beta:g}  latency = {self.latency}",
            *([f"host fixed cost o0 = {self.o0:g} (T0 = o0 + C·g^beta: an extension of "
               "LogCA, whose host is C·g^beta)"] if self.o0 else []),
            "",
            f"{'quantity':<22}{'exact':<30}closed form ({closed})",
            f"{'g1 (speedup 1)':<22}{_bytes(self.g1):<30}{_bytes(self.g1_closed_form)}",
            f"{'g_A/2 (speedup A/2)':<22}{_bytes(self.g_half):<30}{_bytes(self.g_half_closed_form)}",
        ]
        if self.g1_upper is not None or self.g_half_upper is not None:
            rows.append(f"{'falls below 1 at':<22}{_bytes(self.g1_upper)}")
            rows.append(f"{'falls below A/2 at':<22}{_bytes(self.g_half_upper)}")
        where = (f" at {_bytes(self.g_peak)}" if self.g_peak is not None else
                 " (approached as g -> inf)" if self.peak_speedup == self.speedup_limit else
                 " (approached as g -> 0)")
        rows.append(f"{'peak speedup':<22}{_fmt(self.peak_speedup)}{where}")
        rows.append(f"{'limit (g -> inf)':<22}{_fmt(self.speedup_limit)}  ({self.bound}-bound)")
        if self.speedup_at:
            rows += ["", f"{'granularity':<30}speedup"]
            rows += [f"{_bytes(g):<30}{_fmt(s)}" for g, s in self.speedup_at]
        rows += ["", f"optimization regions in [{_bytes(self.gmin)}, {_bytes(self.gmax)}] "
                 "(10x better parameter -> >= 20% more speedup):"]
        if not self.regions:
            rows.append("  none")
        for r in self.regions:
            rows.append(f"  {r.parameter:<3}{_bytes(r.start):<28} .. {_bytes(r.end)}")
        return "\n".join(rows)


def analyse(L, o, C, A, beta=1.0, latency: Latency = "dependent", gmin=GMIN, gmax=GMAX,
            at: Iterable[float] = (), factor=10.0, gain=0.2, o0=0.0) -> LogCAAnalysis:
    """The complete LogCA analysis of one accelerator (the ``mapeval logca`` command);
    ``o0``: the host's fixed cost (an extension; 0, the paper's host, by default)."""
    L, o, C, A, beta, latency, o0 = _check_host(o0, (L, o, C, A, beta, latency))
    gmin, gmax = _check_range(gmin, gmax)
    at = tuple(float(g) for g in at)
    if any(not (g >= 0 and math.isfinite(g)) for g in at):
        raise LogCAError("granularities given to --at must be finite and >= 0")
    args = (L, o, C, A, beta, latency)
    one = crossings(1.0, *args, o0=o0)
    half = crossings(A / 2.0, *args, o0=o0)
    if o0 > 0:
        x_peak, log_inv = _scan_peak(_terms(*args), _host_terms(o0, C, beta))
    else:
        x_peak, log_inv = _peak(_terms(*args))
    g_peak = math.exp(x_peak) if x_peak is not None and math.isfinite(x_peak) else None
    return LogCAAnalysis(
        L=L, o=o, C=C, A=A, beta=beta, latency=latency, gmin=gmin, gmax=gmax,
        g1=None if one is None else one[0],
        g1_closed_form=break_even_closed_form(*args, o0=o0),
        g_half=None if half is None else half[0],
        g_half_closed_form=g_half_closed_form(*args, o0=o0),
        speedup_limit=speedup_limit(*args),
        bound=bound(*args),
        speedup_at=tuple((g, speedup(g, *args, o0=o0)) for g in at),
        regions=optimization_regions(*args, gmin=gmin, gmax=gmax, factor=factor, gain=gain,
                                     o0=o0),
        g1_upper=None if one is None else one[1],
        g_half_upper=None if half is None else half[1],
        peak_speedup=(speedup_limit(*args) if x_peak == math.inf or x_peak is None
                      else math.exp(-log_inv)),
        g_peak=g_peak,
        o0=o0,
    )


__all__ = ["LogCAAnalysis", "LogCAError", "Region", "analyse", "bound", "break_even",
           "break_even_closed_form", "crossings", "g_half", "g_half_closed_form", "gain",
           "improved", "optimization_regions", "speedup", "speedup_limit"]
