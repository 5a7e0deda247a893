"""LogCA parameters from measurements (Altaf & Wood, ISCA 2017, §4).

Data: per granularity ``g``, the host time ``T0(g) = C·g^beta`` and the accelerator time
``T1(g) = o + L1(g) + C·g^beta/A`` (LogCA eq. 1; ``L1 = L`` independent of ``g``, or
``L·g``). The paper reads C and beta off a regression of T0 on g, ``o`` off the small-g
limit of T1 and ``A`` off the large-g speedup (eq. 3). Here the same information is used
in one weighted least-squares fit, so that every row counts:

1. ``log T0 = log C + beta·log g`` (ordinary regression in log-log: relative errors);
2. with C and beta, ``T1`` is linear in ``(o, L, 1/A)`` (or ``(o + L, 1/A)``): a
   non-negative least-squares solve on the rows divided by T1 (relative residuals, so the
   large granularities do not drown the small ones, where o shows);
3. a joint :func:`scipy.optimize.least_squares` on the relative residuals of both columns
   from there; the covariance ``s²·(JᵀJ)⁻¹`` of its Jacobian gives the confidence
   intervals (Student t, ``2n - p`` degrees of freedom).

What the columns identify: with granularity-independent latency only ``o + L`` (T1 holds
the sum, nothing else): the split needs L from elsewhere (a micro-benchmark in the paper,
``L = 1/bandwidth`` for its GPUs). With ``L·g`` the three columns give all five.

**A host with a fixed cost** (an extension, reported as such): a library call costs a
fixed ``o0`` however small its input, so real host times are flat at small g and the
paper's ``T0 = C·g^beta`` bends beta and A (a matrix product flat below 64 KB and
``g^1.5`` above gave beta = 1.08 and A = 6.8 against a measured speedup of 25).  Here
``T0 = o0 + C·g^beta`` (``--host-overhead fit``; the paper's form when o0 = 0), with
``auto`` (the default) keeping o0 only when an F-test on the host column says so (1%);
step 1 then profiles beta (for each beta, o0 and C by non-negative least squares).  The
granularities where the paper's form holds (o0 below 5% of T0) are reported.

**A host with cache regimes** (issue 44, an extension): a host whose working set fits a
cache runs faster per byte than past the last cache, so measured host times bend twice
or more (flat, then a cache slope, then the paper's ``C·g^beta`` once the data live in
DRAM).  Neither ``C·g^beta`` nor ``o0 + C·g^beta`` has that shape, and both misread
beta and A.  With ``auto``, when the chosen form leaves the host's residuals systematic
(the runs test below), a continuous piecewise power law (a line in ``log g``,
``log T0`` with one or two breaks at measured granularities, each break tried) is
compared by the Bayesian information criterion ``n·ln(RSS/n) + p·ln n`` (p = 2 + 2
per break); when it wins, the host column is fitted as the paper's ``C·g^beta`` on the
rows past the last break (the regime where the paper's assumptions hold) and the
accelerator column on every row (``host_form = "regimes"``).

**Checks** on every fit: a runs test (Wald-Wolfowitz) on the signs of each column's
residuals in granularity order warns when they are systematic (too few runs: the shape
is wrong, however small the residuals); and since ``T1 >= C·g^beta/A`` by LogCA's eq. 1,
no speedup can exceed ``A·T0/(C·g^beta)`` (A itself for the paper's host): a measured
speedup above it, beyond the noise, is a warning.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from mapping.calibration.logca_host import (HOST_WORDS, RANGE_MIN_ROWS, RunsTest, fit_host,
                                          fit_host_fixed, host_regimes, regimes_of_hinge,
                                          runs_test)
from mapping.errors import InputError
from moa.cost_models.logca import accelerator_time, host_time
from moa.logca_analysis import LogCAAnalysis, analyse

LATENCY_CHOICES = ("auto", "independent", "dependent")
#: the host's form: ``none`` (the paper's C·g^beta), ``fit`` (o0 + C·g^beta), ``auto``
#: (o0 if significant), ``range`` (the paper's form on the rows where it holds)
HOST_CHOICES = ("auto", "none", "fit", "range")
#: the paper's form holds where the host's fixed cost is below this share of T0
PAPER_FORM_SHARE = 0.05
#: relative RMS residual under which a fit is exact to rounding
_EXACT = 1e-10


@dataclass(frozen=True)
class Estimate:
    """One parameter: its value and confidence interval; ``source`` says where it came
    from (``fit``, ``given``, or ``fit - given`` for o = (o + L) - L)."""

    name: str
    value: float
    low: float
    high: float
    source: str = "fit"

    def to_dict(self):
        return {"value": self.value, "low": self.low, "high": self.high, "source": self.source}


@dataclass(frozen=True)
class LogCAFit:
    """The fitted parameters (``estimates``: C, beta, A, o_plus_L and, when identified or
    given, o and L), the latency form and why, and the data (for plots)."""

    latency: str
    latency_reason: str
    separable: bool
    estimates: tuple[Estimate, ...]
    confidence: float
    g: tuple[float, ...]
    host: tuple[float, ...]
    accelerator: tuple[float, ...]
    rms_relative: float
    paper_readings: tuple[tuple[str, float], ...] = ()
    notes: tuple[str, ...] = ()
    #: ``fit`` when the host's fixed cost o0 is modelled (an extension), else ``none``
    host_form: str = "none"
    host_reason: str = ""
    #: per column (``host``, ``accelerator``): the runs test of its residuals' signs
    runs: tuple[tuple[str, "RunsTest"], ...] = ()
    #: what the fit should make a user doubt (systematic residuals, A below a speedup)
    warnings: tuple[str, ...] = ()
    #: the smallest granularity where o0 is below 5% of T0 (the paper's form holds)
    paper_form_from: float | None = None
    #: with cache regimes: ``((cache_j bytes, beta_j), ...)``, each break of the host's
    #: piecewise power law (:func:`host_regimes`) and the slope below it, as the
    #: ``logca`` model declares them (``cache1``, ``beta1``, ...)
    host_regimes: tuple[tuple[float, float], ...] = ()

    def host_time(self, g):
        """The host time the fit stands for at ``g``: ``C·g^beta`` (``+ o0``), below the
        last break the cache regimes (:func:`moa.cost_models.logca.host_time`, the
        model's own formula)."""
        g = np.asarray(g, dtype=float)
        v = self.parameters()
        return v["o0"] + host_time(g, v["C"], v["beta"], self.host_regimes)

    def host_arguments(self) -> dict[str, float]:
        """The host's ``logca(...)`` arguments besides C and beta (token attributes):
        ``cache1``, ``beta1``, ... of its regimes (none without)."""
        out = {}
        for j, (c, b) in enumerate(self.host_regimes, start=1):
            out[f"cache{j}"], out[f"beta{j}"] = c, b
        return out

    def __getitem__(self, name) -> Estimate:
        for e in self.estimates:
            if e.name == name:
                return e
        raise KeyError(name)

    def has(self, name) -> bool:
        return any(e.name == name for e in self.estimates)

    def parameters(self) -> dict:
        """L, o, C, A, beta for the analysis: without a split, o := o + L and L := 0
        (speedup, g1 and g_A/2 depend on the sum alone)."""
        if self.has("L"):
            L, o = self["L"].value, self["o"].value
        else:
            L, o = 0.0, self["o_plus_L"].value
        return {"L": L, "o": o, "C": self["C"].value, "A": self["A"].value,
                "beta": self["beta"].value, "latency": self.latency,
                "o0": self["o0"].value if self.has("o0") else 0.0}

    def observed_speedup(self):
        return np.asarray(self.host) / np.asarray(self.accelerator)

    def to_dict(self) -> dict:
        return {"latency": self.latency, "latency_reason": self.latency_reason,
                "separable": self.separable, "confidence": self.confidence,
                "rows": len(self.g), "rms_relative_residual": self.rms_relative,
                "parameters": {e.name: e.to_dict() for e in self.estimates},
                "paper_readings": dict(self.paper_readings), "notes": list(self.notes),
                "host_form": self.host_form, "host_reason": self.host_reason,
                "paper_form_from": self.paper_form_from,
                "host_breaks": [c for c, _ in self.host_regimes],
                "host_regimes": self.host_arguments(),
                "runs_test": {k: r.to_dict() for k, r in self.runs},
                "warnings": list(self.warnings)}

    def __str__(self):
        pct = f"{100 * self.confidence:g}%"
        rows = [f"LogCA fit of {len(self.g)} rows, g = {min(self.g):g} .. {max(self.g):g} B "
                f"(weighted least squares on relative residuals; {pct} confidence intervals "
                "from the Jacobian)",
                f"latency: {self.latency} — {self.latency_reason}",
                f"host: {HOST_WORDS[self.host_form]}"
                f" — {self.host_reason}", "",
                f"{'parameter':<12}{'value':<14}{pct + ' interval':<30}source"]
        for e in self.estimates:
            interval = ("(fixed)" if e.source == "given" else f"[{e.low:.6g}, {e.high:.6g}]")
            rows.append(f"{e.name:<12}{e.value:<14.6g}{interval:<30}{e.source}")
        if not self.separable:
            rows += ["", "o and L are not separable: with granularity-independent latency the "
                     "columns determine only o + L. Give L (--interface-latency, or "
                     "--bandwidth for L = 1/BW) to split them; the analysis below uses "
                     "o = o + L, L = 0 (g1, g_A/2 and the speedup depend on the sum alone; "
                     "the o region is that of o + L)."]
        rows += ["", *self.notes] if self.notes else []
        if self.paper_form_from is not None:
            why = ("past the host's last cache regime" if self.host_regimes else
                   f"o0 below {100 * PAPER_FORM_SHARE:g}% of T0")
            rows.append(f"the paper's host form C·g^beta holds ({why}) from "
                        f"g = {self.paper_form_from:.6g} B")
        if self.host_regimes:
            rows.append("the host as a .moa element: logca(" + ", ".join(
                f"{k} = {v:.6g}" for k, v in self.host_arguments().items())
                + "), C and beta the tokens'")
        rows.append(f"rms relative residual {self.rms_relative:.3g}" + "".join(
            f"; {k} residuals: {r}" for k, r in self.runs))
        rows += [f"warning: {w}" for w in self.warnings]
        if self.paper_readings:
            rows.append("the paper's direct readings (§4), for comparison: " + ", ".join(
                f"{k} = {v:.6g}" for k, v in self.paper_readings))
        return "\n".join(rows)




def _check_data(g, host, accelerator):
    g, t0, t1 = (np.asarray(v, dtype=float) for v in (g, host, accelerator))
    if not (g.ndim == t0.ndim == t1.ndim == 1 and g.size == t0.size == t1.size):
        raise InputError("LogCA fit: granularity, host and accelerator columns must have "
                         "one value per row")
    for name, v in (("granularity", g), ("host time", t0), ("accelerator time", t1)):
        if not np.all(np.isfinite(v) & (v > 0)):
            raise InputError(f"LogCA fit: every {name} must be a finite number > 0")
    if np.unique(g).size < 3:
        raise InputError("LogCA fit: needs at least three distinct granularities")
    return g, t0, t1


def _model(p, names, g, fixed):
    v = dict(fixed)
    v.update(zip(names, p))
    work = host_time(g, v["C"], v["beta"])
    if "K" in v:                          # independent: o + L as one parameter
        t1 = accelerator_time(g, work, v["A"], v["K"], 0.0, "independent")
    else:
        t1 = accelerator_time(g, work, v["A"], v["o"], v["L"], "dependent")
    return work + v.get("o0", 0.0), t1, work


def _start(g, t0, t1, latency, fixed, host="none", host_rows=None):
    """Steps 1 and 2: C, beta by log-log regression on the ``host_rows`` (all by
    default; and o0 with ``host = "fit"``: :func:`fit_host_fixed`), then the linear
    parameters of T1 by non-negative least squares on relative residuals."""
    from scipy.optimize import nnls
    rows = slice(None) if host_rows is None else host_rows
    if host == "fit":
        o0, C, beta = fit_host_fixed(g[rows], t0[rows])
        v = {"C": C, "beta": beta, "o0": o0}
    else:
        C, beta = fit_host(g[rows], t0[rows])
        v = {"C": C, "beta": beta}
    h = host_time(g, C, beta)
    rhs = t1.copy()
    cols, names = [], []
    if latency == "independent":
        cols.append(np.ones_like(g)), names.append("K")
    else:
        cols.append(np.ones_like(g)), names.append("o")
        if "L" in fixed:
            rhs = rhs - fixed["L"] * g
        else:
            cols.append(g), names.append("L")
    if "A" in fixed:
        rhs = rhs - h / fixed["A"]
    else:
        cols.append(h), names.append("inv_A")
    X = np.column_stack(cols) / t1[:, None]
    x, _ = nnls(X, rhs / t1)
    if "L" in names and "inv_A" in names and x[-1] <= 0:
        # L·g took all the work: start from L = 0 and let the joint fit decide
        x, _ = nnls(X[:, [0, 2]], rhs / t1)
        x = np.array([x[0], 0.0, x[1]])
    for name, value in zip(names, x):
        if name == "inv_A":
            if value <= 0:
                raise InputError("LogCA fit: the accelerator time does not grow with the "
                                 "work: no acceleration A can be fitted (give --peak-ratio)")
            v["A"] = 1.0 / value
        else:
            v[name] = float(value)
    return v


def _fit_form(g, t0, t1, latency, fixed, confidence, host="none", host_rows=None):
    """The joint fit of one latency and host form: (values, standard errors, t quantile,
    rss, residuals); the host column on ``host_rows`` only when given (a mask)."""
    from scipy.optimize import least_squares
    from scipy.stats import t as student

    rows = np.ones(g.size, dtype=bool) if host_rows is None else host_rows
    start = _start(g, t0, t1, latency, fixed, host, host_rows)
    names = [n for n in ("C", "beta", "o0", "K", "o", "L", "A")
             if n in start and n not in fixed]

    def residuals(p):
        host_time, model, _ = _model(p, names, g, fixed)
        return np.concatenate([host_time[rows] / t0[rows] - 1.0, model / t1 - 1.0])

    x0 = np.array([start[n] for n in names])
    lower = np.array([0.0 if n in ("K", "o", "L", "o0") else -np.inf if n == "beta" else 0.0
                      for n in names])
    x0 = np.maximum(x0, lower)
    r0 = residuals(x0)
    if math.sqrt(np.mean(r0 ** 2)) < _EXACT:
        x = x0                            # exact already: do not let the solver wander
    else:
        x = least_squares(residuals, x0, bounds=(lower, np.inf), x_scale="jac",
                          jac=lambda p: _jacobian(names, p, g, t0, t1, fixed, rows),
                          ftol=1e-15, xtol=1e-15, gtol=1e-15, max_nfev=2000).x
    r = residuals(x)
    rss = float(r @ r)
    dof = max(r.size - len(names), 1)
    se = _standard_errors(_jacobian(names, x, g, t0, t1, fixed, rows), rss / dof)
    q = float(student.ppf(0.5 + confidence / 2, dof))
    return dict(zip(names, x)), dict(zip(names, se)), q, rss, r


def _standard_errors(J, s2):
    """sqrt(diag(s²·(JᵀJ)⁻¹)); parameters along a direction the data do not see (a
    singular value of the column-scaled J below 1e-9 of the largest) get infinity."""
    norms = np.linalg.norm(J, axis=0)
    norms[norms == 0] = 1.0
    Js = J / norms
    _, sv, vt = np.linalg.svd(Js, full_matrices=False)
    blind = sv < 1e-9 * sv[0]
    keep = ~blind
    cov = (vt[keep].T / sv[keep] ** 2) @ vt[keep] * s2
    se = np.sqrt(np.clip(np.diag(cov), 0, None)) / norms
    for v in vt[blind]:
        se[np.abs(v) > 1e-3] = np.inf
    return se


def _jacobian(names, x, g, t0, t1, fixed, rows=None):
    """d(relative residuals)/d(parameters), host rows (those of the mask ``rows``, all
    by default) above accelerator rows."""
    rows = slice(None) if rows is None else rows
    v = dict(fixed)
    v.update(zip(names, x))
    gb = g ** v["beta"]
    zero = np.zeros_like(g)
    d = {"C": (gb / t0, gb / (v["A"] * t1)),
         "beta": (v["C"] * gb * np.log(g) / t0, v["C"] * gb * np.log(g) / (v["A"] * t1)),
         "K": (zero, 1 / t1), "o": (zero, 1 / t1), "L": (zero, g / t1), "o0": (1 / t0, zero),
         "A": (zero, -v["C"] * gb / (v["A"] ** 2 * t1))}
    return np.column_stack([np.concatenate((d[n][0][rows], d[n][1])) for n in names])


def _f_test(rss_small, rss_big, extra, dof):
    """(F, p) of ``extra`` more parameters lowering the residual sum of squares from
    ``rss_small`` to ``rss_big`` with ``dof`` residual degrees of freedom left."""
    from scipy.stats import f as fisher
    F = math.inf if rss_big == 0 else max(rss_small - rss_big, 0.0) / extra / (rss_big / dof)
    return F, 0.0 if math.isinf(F) else float(fisher.sf(F, extra, dof))


def _choose_host(g, t0):
    """``fit`` when a fixed host cost o0 is significant (F-test at 1% on the host column,
    relative residuals: C·g^beta against o0 + C·g^beta), else ``none``; and why."""
    from scipy.optimize import least_squares

    C, beta = fit_host(g, t0)
    paper = least_squares(lambda p: host_time(g, p[0], p[1]) / t0 - 1.0, [C, beta],
                          x_scale="jac", bounds=([0.0, -np.inf], np.inf))
    rss_p = float(paper.fun @ paper.fun)
    if math.sqrt(rss_p / g.size) < _EXACT:
        return "none", "the paper's C·g^beta fits the host times exactly"
    o0, C, beta = fit_host_fixed(g, t0)
    fixed = least_squares(lambda p: (p[0] + host_time(g, p[1], p[2])) / t0 - 1.0,
                          [o0, C, beta], x_scale="jac",
                          bounds=([0.0, 0.0, -np.inf], np.inf))
    rss_f = float(fixed.fun @ fixed.fun)
    dof = g.size - 3
    if dof <= 0:
        return "none", "too few rows to test a fixed host cost"
    F, p = _f_test(rss_p, rss_f, 1, dof)
    words = (f"host sum of squared relative residuals {rss_p:.3g} -> {rss_f:.3g} with o0, "
             f"F = {F:.3g}, p = {p:.2g}")
    if p < 0.01:
        return "fit", f"a fixed host cost o0 is significant ({words} < 0.01)"
    return "none", f"a fixed host cost o0 is not significant ({words})"


def _choose(g, t0, t1, fixed, host="none", host_rows=None):
    """The latency form the data support, and why: independent unless an L·g term is
    significant (F-test at 1%; independent is the dependent form with L = 0). Both forms
    are fitted with L free, whatever L is given: its meaning depends on the form."""
    free = _independent_fixed(fixed)
    ind = _fit_form(g, t0, t1, "independent", free, 0.95, host, host_rows)
    m = ind[4].size
    rss_i = ind[3]
    if math.sqrt(rss_i / m) < _EXACT:
        return "independent", (f"the granularity-independent form fits exactly "
                               f"(rms relative residual {math.sqrt(rss_i / m):.1e})")
    dep = _fit_form(g, t0, t1, "dependent", free, 0.95, host, host_rows)
    rss_d = dep[3]
    extra = len(dep[0]) - len(ind[0])
    dof = m - len(dep[0])
    if dof <= 0:
        return "independent", "too few rows to test an L·g term"
    F, p = _f_test(rss_i, rss_d, extra, dof)
    if p < 0.01:
        return "dependent", (f"an L·g term lowers the sum of squared relative residuals "
                             f"from {rss_i:.3g} to {rss_d:.3g} (F = {F:.3g}, p = {p:.2g} < 0.01)")
    return "independent", (f"an L·g term is not significant (sum of squared relative "
                           f"residuals {rss_i:.3g} -> {rss_d:.3g}, F = {F:.3g}, p = {p:.2g})")


def _independent_fixed(fixed):
    # in the independent form L only splits o + L after the fit
    return {k: v for k, v in fixed.items() if k != "L"}


def fit_logca(g, host, accelerator, latency="auto", L=None, A=None, confidence=0.95,
              host_overhead="auto"):
    """Fit LogCA's C, beta, A and o + L (and o, L when identified or L is given) to
    measured host and accelerator times per granularity (LogCA §4; see the module);
    ``host_overhead``: the host's fixed cost o0 (:data:`HOST_CHOICES`, an extension)."""
    g, t0, t1 = _check_data(g, host, accelerator)
    if latency not in LATENCY_CHOICES:
        raise InputError(f"LogCA fit: latency must be one of {', '.join(LATENCY_CHOICES)}")
    if host_overhead not in HOST_CHOICES:
        raise InputError(f"LogCA fit: the host overhead must be one of "
                         f"{', '.join(HOST_CHOICES)}")
    if not 0 < confidence < 1:
        raise InputError(f"LogCA fit: confidence {confidence} must lie in (0, 1)")
    fixed = {}
    if L is not None:
        if not (math.isfinite(L) and L >= 0):
            raise InputError(f"LogCA fit: the given latency L = {L} must be >= 0")
        fixed["L"] = float(L)
    if A is not None:
        if not (math.isfinite(A) and A > 0):
            raise InputError(f"LogCA fit: the given acceleration A = {A} must be > 0")
        fixed["A"] = float(A)
    try:
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            if host_overhead == "range":
                return _fit_range(g, t0, t1, latency, L, A, confidence)
            host_rows, knots, coef = None, (), ()
            if host_overhead == "auto":
                host_form, host_reason = _choose_host(g, t0)
                regimes = host_regimes(g, t0, host_form)
                if regimes is not None:
                    host_form = "regimes"
                    host_rows, knots, coef, host_reason = regimes
            else:
                host_form = host_overhead
                host_reason = "chosen with --host-overhead"
            form = "none" if host_form == "regimes" else host_form
            if latency == "auto":
                latency, reason = _choose(g, t0, t1, fixed, form, host_rows)
            else:
                reason = "chosen with --latency"
            values, se, q, rss, res = _fit_form(g, t0, t1, latency, _independent_fixed(
                fixed) if latency == "independent" else fixed, confidence, form, host_rows)
    except InputError:
        raise
    except ValueError as exc:
        # scipy refuses residuals that overflowed: a time of 1e-320 divides to inf
        raise InputError(f"LogCA fit: the times span more than floating point holds "
                         f"(from {min(t0.min(), t1.min()):g} to "
                         f"{max(t0.max(), t1.max()):g}): {exc}") from None

    def est(name, key=None, source="fit"):
        key = key or name
        if key in values:
            v, d = values[key], q * se[key]
            return Estimate(name, v, v - d, v + d, source)
        return Estimate(name, fixed[key], fixed[key], fixed[key], "given")

    estimates = [est("C"), est("beta"), est("A")]
    if host_form == "fit":
        estimates.append(est("o0"))
    if latency == "independent":
        k = est("o_plus_L", "K")
        estimates.append(k)
        separable = "L" in fixed
        if separable:
            Lg = fixed["L"]
            if Lg > k.value:
                raise InputError(f"LogCA fit: the given L = {Lg:g} exceeds the fitted "
                                 f"o + L = {k.value:.6g}: o would be negative")
            estimates += [Estimate("o", k.value - Lg, k.low - Lg, k.high - Lg, "fit - given"),
                          Estimate("L", Lg, Lg, Lg, "given")]
    else:
        estimates += [est("o"), est("L")]
        separable = True
    notes = []
    b = estimates[1]
    if b.low <= 1 <= b.high or abs(b.value - 1) < 1e-9:
        if latency == "dependent" and "L" not in fixed and "A" not in fixed:
            c = values["C"]
            notes.append(f"with beta = 1, L·g and C·g/A have the same shape: only L + C/A = "
                         f"{values['L'] + c / values['A']:.6g} is identified, not L and A "
                         "apart (give A with --peak-ratio or L with --bandwidth).")
        elif latency == "independent" and "A" not in fixed:
            notes.append("with beta = 1 a granularity-dependent latency L·g would look like a "
                         "lower acceleration (1/A_fit = 1/A + L/C): if the latency does grow "
                         "with g, use --latency dependent with --peak-ratio or --bandwidth.")
    readings = (("o ~ T1(g_min)", float(t1[np.argmin(g)])),
                ("A ~ S(g_max)", float(t0[np.argmax(g)] / t1[np.argmax(g)])))
    rms = math.sqrt(rss / res.size)
    order = np.argsort(g)
    n_host = res.size - g.size
    host_res = np.full(g.size, np.nan)       # rows of the cache regimes: not fitted
    host_res[np.ones(g.size, dtype=bool) if host_rows is None else host_rows] = res[:n_host]
    host_order = order if host_rows is None else order[host_rows[order]]
    res = np.concatenate([host_res, res[n_host:]])
    runs = (("host", runs_test(res[:g.size][host_order])),
            ("accelerator", runs_test(res[g.size:][order])))
    warnings = []
    if rms > _NOISELESS:
        for column, r in runs:
            if r.systematic:
                warnings.append(
                    f"the {column} residuals are systematic ({r}): the model's shape "
                    "misses something the measurements show, however small the residuals "
                    "(a fixed host cost: --host-overhead fit; a latency that grows with g: "
                    "--latency dependent; or a range of g where another effect rules, "
                    "such as caches)")
    warnings += _speedup_above_bound(g, t0, t1, {**fixed, **values}, _noise(res, order),
                                     host_rows)
    o0 = values.get("o0", 0.0)
    paper_from = None
    if host_rows is not None:
        paper_from = float(g[host_rows].min())
    elif o0 > 0:
        C, beta = values["C"], values["beta"]
        paper_from = float(((1 - PAPER_FORM_SHARE) / PAPER_FORM_SHARE * o0 / C)
                           ** (1 / beta)) if beta > 0 else None
    return LogCAFit(latency, reason, separable, tuple(estimates), confidence,
                    tuple(g.tolist()), tuple(t0.tolist()), tuple(t1.tolist()),
                    rms, readings, tuple(notes), host_form, host_reason, runs,
                    tuple(warnings), paper_from, regimes_of_hinge(knots, coef))


def _fit_range(g, t0, t1, latency, L, A, confidence) -> "LogCAFit":
    """The paper's form fitted on the granularities where it holds, chosen by the data:
    those from which the host's fixed cost, fitted on every row (``o0 + C·g^beta``), is
    below :data:`PAPER_FORM_SHARE` of T0."""
    full = fit_logca(g, t0, t1, latency, L, A, confidence, host_overhead="fit")
    start = full.paper_form_from
    keep = g >= start if start is not None else np.ones(g.size, dtype=bool)
    if np.unique(g[keep]).size < RANGE_MIN_ROWS:
        raise InputError(f"LogCA fit: the paper's host form holds (a fixed cost below "
                         f"{100 * PAPER_FORM_SHARE:g}% of T0) only from g = {start:.6g} B, "
                         f"on {np.unique(g[keep]).size} granularities; --host-overhead "
                         f"range needs {RANGE_MIN_ROWS} (measure larger g, or use "
                         "--host-overhead fit)")
    fit = fit_logca(g[keep], t0[keep], t1[keep], latency, L, A, confidence,
                    host_overhead="none")
    o0 = full["o0"].value
    why = (f"the paper's C·g^beta on the {int(keep.sum())} rows from g = {start:.6g} B, "
           f"where the host's fixed cost (o0 = {o0:.6g}, fitted on all {g.size} rows) is "
           f"below {100 * PAPER_FORM_SHARE:g}% of T0" if start is not None else
           "the paper's C·g^beta on every row (no fixed host cost was found)")
    return replace(fit, host_form="range", host_reason=why, paper_form_from=start)


#: a fit with an rms relative residual below this is exact to the solver's tolerance:
#: the signs of its residuals are round-off, not a shape
_NOISELESS = 1e-6


def _noise(res, order) -> float:
    """The rows' relative noise, whatever the fit: from the differences of successive
    relative residuals in granularity order (a misfit's smooth trend cancels there),
    ``median |Δr| / (0.6745·√2)`` over both columns."""
    n = order.size
    host, acc = res[:n][order], res[n:][order]
    diffs = np.concatenate([np.diff(host[~np.isnan(host)]), np.diff(acc)])
    return float(np.median(np.abs(diffs))) / (0.6745 * math.sqrt(2)) if diffs.size else 0.0


def _speedup_above_bound(g, t0, t1, values, noise, host_rows=None) -> list[str]:
    """Rows whose measured speedup exceeds what LogCA allows: T1 >= C·g^beta/A (eq. 1),
    so S = T0/T1 <= A·T0/(C·g^beta) -- A itself for the paper's host -- beyond 4 times
    the noise of a ratio of two measurements (:func:`_noise`); ``values``: the fitted
    and given parameters.  With cache regimes (``host_rows``: the rows of the paper's
    form) T0 below them is the measured one."""
    A = values["A"]
    work = host_time(g, values["C"], values["beta"])
    limit = A * (values.get("o0", 0.0) + work) / work
    if host_rows is not None:
        limit = np.where(host_rows, limit, A * np.maximum(t0, work) / work)
    measured = t0 / t1
    over = measured > limit * (1 + 4 * math.sqrt(2) * noise)
    if not over.any():
        return []
    i = int(np.argmax(np.where(over, measured / limit, 0)))
    host = "o0 + C·g^beta" if "o0" in values else "C·g^beta"
    return [f"the measured speedup {measured[i]:.4g} at g = {g[i]:.6g} B exceeds the "
            f"{limit[i]:.4g} LogCA allows with A = {A:.4g} (T1 >= C·g^beta/A, so "
            f"S <= A·T0/(C·g^beta) with T0 = {host}) on {int(over.sum())} row(s): the fit "
            "misreads the data (is the host's fixed cost modelled? --host-overhead fit)"]


@dataclass(frozen=True)
class Curve:
    """One accelerator of a LogCA chart: its label, analysis and, if fitted, the fit
    (whose observed speedups are drawn over the model)."""

    label: str
    analysis: LogCAAnalysis
    fit: LogCAFit | None = None


def analyse_fit(fit: LogCAFit, **options) -> LogCAAnalysis:
    """The LogCA analysis of the fitted parameters (:func:`moa.logca_analysis.analyse`).
    With cache regimes, the break-even g1 is where the accelerator's fitted time meets
    :meth:`LogCAFit.host_time` (the measured regimes below the last break), when it lies
    below that break: there the host is not ``C·g^beta``."""
    result = analyse(**fit.parameters(), **options)
    if not fit.host_regimes:
        return result
    g1 = _regime_break_even(fit)
    return result if g1 is None else replace(result, g1=g1)


def _regime_break_even(fit: LogCAFit) -> float | None:
    """The smallest g (from the smallest measured, below the last break) where the
    host's time reaches the accelerator's: T0(g) >= T1(g), or None."""
    from scipy.optimize import brentq

    v = fit.parameters()

    def gap(x):
        g = np.exp(x)
        t1 = accelerator_time(g, host_time(g, v["C"], v["beta"]), v["A"], v["o"], v["L"],
                              fit.latency)
        return np.log(fit.host_time(g) / t1)

    xs = np.linspace(math.log(min(fit.g)), math.log(fit.host_regimes[-1][0]), 2001)
    d = gap(xs)
    if d[0] >= 0:
        return None
    up = np.flatnonzero(d >= 0)
    if not up.size:
        return None
    i = int(up[0])
    return float(math.exp(brentq(lambda x: float(gap(x)), xs[i - 1], xs[i], xtol=1e-12)))


def synthetic(L, o, C, A, beta=1.0, latency="independent", g=None, noise=0.0, seed=0,
              o0=0.0):
    """(g, T0, T1) generated from LogCA (eq. 1) on the paper's grid 16 B .. 32 MB (powers
    of two), each time times ``1 + noise·N(0, 1)`` (seeded): data for tests and examples.
    ``o0``: a fixed host cost, ``T0 = o0 + C·g^beta`` (an extension)."""
    g = np.asarray(2.0 ** np.arange(4, 26) if g is None else g, dtype=float)
    work = host_time(g, C, beta)
    t0 = o0 + work
    t1 = accelerator_time(g, work, A, o, L, latency)
    if noise:
        rng = np.random.default_rng(seed)
        t0 = t0 * (1 + noise * rng.standard_normal(g.size))
        t1 = t1 * (1 + noise * rng.standard_normal(g.size))
    return g, t0, t1
