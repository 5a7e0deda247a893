"""The solvers of a fit.

Where the prediction is linear in the free parameters -- every free parameter is one of
its model's ``linear_parameters`` (LSLA alpha/beta, GSLA alpha/beta, GSLA power a/b/c),
the model values per token, and the aggregation is ``sum`` -- the fit is a non-negative
linear least-squares problem: each row's prediction is ``c + Σ_j A[j]·θ_j``, with ``A``
built from the tokens placed on the elements (:meth:`CostModel.linear_terms`), solved by
:func:`scipy.optimize.nnls` on unit-norm columns (the parameters span many decades),
or, where a bound is other than ``>= 0``, by bounded-variable least squares
(:func:`scipy.optimize.lsq_linear`, ``bvls``).
Otherwise (``max``, ``exclusive``, ``charge``, LogCA, bare parameters, ...) it is a
bounded non-linear least-squares problem (:func:`scipy.optimize.least_squares`) started
from the values in the files and from ``--starts N`` seeded random points (each positive
start value times ``10^U(-2, 2)``, log-uniform, within the bounds; a start value of 0
kept); the best is kept.  A file's 0 for a parameter whose model declares a typical size
(``start_scale``) starts at that size: such a 0 switches its term off, where the model
is flat in it.

A fitted value that ends on a bound is reported (``at_bound``): the data push it past
what it means.  A design matrix (or Jacobian) without full column rank means that the
measurements cannot tell some parameters apart: the result says which
(:mod:`mapping.calibration.identifiability`).  On the non-linear path the Jacobian
(estimated by finite differences) has its columns scaled by the parameter values, and a
singular value below ``JACOBIAN_RTOL`` times the largest counts as zero.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable, Mapping as MappingT, Sequence
import numpy as np
from scipy import optimize
from moa import Architecture
from moa.cost_models import NON_NEGATIVE, Bounds, model_class
from mapping.errors import InputError
from mapping.semantics.aggregation import aggregator
from mapping.options import NATURAL
from mapping.calibration.free import FreeParameter, fitted_architecture, ordered_chains
from mapping.calibration.identifiability import indistinguishable_hint, separating_columns
from mapping.calibration.parameter_vector import ParameterVector
from mapping.calibration.starts import first_at_optimum, first_start, random_starts
from mapping.calibration.probes import coefficients, probes
from mapping.calibration.residuals import (RESIDUALS, ROBUST_MADS, ROBUST_PASSES, Residual,
                                          column_norms, residual_rule)
from mapping.calibration.row_model import RowModel


@dataclass(frozen=True)
class FitResult:
    """Fitted ``values`` (``spec`` → value), the ``method`` used (``nnls`` or
    ``least_squares``), the fitted unbound ``architecture``, the row indices of the
    ``train`` and ``test`` split, the ``rank`` of the design matrix (or Jacobian) against
    the number of parameters, the groups of parameters that the training rows ``cannot
    tell apart``, ``warnings`` in words, and for a non-linear fit the number of
    ``starts`` (the file's values and the random ones) and which won (``best_start``, 0
    for the file's values; both 0 for NNLS): the first that reached the least cost
    found, to the solver's tolerance (:func:`~mapping.calibration.starts.first_at_optimum`)."""

    free: tuple[FreeParameter, ...]
    values: MappingT[str, float]
    method: str
    architecture: Architecture
    train: tuple[int, ...]
    test: tuple[int, ...]
    rank: int
    indistinguishable: tuple[tuple[str, ...], ...]
    warnings: tuple[str, ...]
    residual_norm: float
    starts: int = 0
    best_start: int = 0
    #: the :data:`RESIDUALS` rule the fit minimised
    residuals: str = "absolute"
    #: each free parameter's bounds (:func:`free_bounds`), in the order of ``free``
    bounds: tuple[Bounds, ...] = ()
    #: ``(spec, "lower" | "upper")`` of each fitted value that sits on its bound
    at_bound: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict:
        return {"fitted": dict(self.values), "method": self.method, "rank": self.rank,
                "residuals": self.residuals,
                "bounds": {fp.spec: str(b) for fp, b in zip(self.free, self.bounds)},
                "at_bound": dict(self.at_bound),
                "starts": self.starts, "best_start": self.best_start,
                "parameters": len(self.free),
                "indistinguishable": [list(g) for g in self.indistinguishable],
                "warnings": list(self.warnings), "residual_norm": self.residual_norm}



def predict_fitted(model: RowModel, fit: FitResult, indices=None) -> np.ndarray:
    """Predictions of rows ``indices`` (default all) under the values ``fit`` found --
    the path the fit itself evaluates, so held-out rows are predicted as trained ones."""
    theta = [fit.values[fp.spec] for fp in fit.free]
    return model.predict(indices, ParameterVector(fit.free).overrides(theta))


def _is_linear(model: RowModel, free: Sequence[FreeParameter]) -> bool:
    if not aggregator(model.aggregate).separable:
        return False
    for fp in free:
        if fp.level == "param":
            return False                     # bare parameters: always non-linear
        cls = model_class(fp.model)
        if fp.metric != model.metric or not cls.per_token \
                or fp.param not in cls.linear_parameters:
            return False
    return True


def _design_batch(model: RowModel, free: Sequence[FreeParameter], rows: Sequence[int]
                  ) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`design_matrix` with every row at once (:mod:`mapping.evaluation.row_batch`), or
    ``None`` where the rows go one at a time: timed rows and rules the array core does
    not know (no batch, decided when it is built), and rows the core finds without a
    finite coefficient, which the row-by-row path names."""
    batch = model.row_batch(rows) if len(rows) else None
    if batch is None:
        return None
    A = np.zeros((len(rows), len(free)))
    probed: dict[tuple, Architecture] = {}

    def arch_of(i, fp):
        key = (id(model.bound_arch(i)), fp.spec)
        if key not in probed:
            probed[key] = probes(model.bound_arch(i), fp, model.metric)
        return probed[key]
    try:
        for j, fp in enumerate(free):
            A[:, j] = batch.values(lambda i, fp=fp: arch_of(i, fp))
    except (ValueError, ArithmeticError):
        # a row without a value under a probe (BadRows, a token its rule refuses): the
        # errors design_matrix's own loop turns into the error about that row
        return None
    predicted = model.predict_batch(list(rows), None, {})
    if predicted is None or not np.all(np.isfinite(A)):
        return None
    return A, predicted - A @ ParameterVector(free).current(model)


def design_matrix(model: RowModel, free: Sequence[FreeParameter], rows: Sequence[int]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``(A, c)`` with prediction ``= c + A @ θ`` on ``rows`` (a linear problem only)."""
    fast = _design_batch(model, free, rows)
    if fast is not None:
        return fast
    A = np.zeros((len(rows), len(free)))
    c = np.zeros(len(rows))
    theta0 = ParameterVector(free).current(model)
    done: dict[tuple, int] = {}              # rows alike in parameters and mapping
    for r, i in enumerate(rows):
        same = done.setdefault(model.row_identity(i), r)
        if same != r:
            A[r], c[r] = A[same], c[same]
            continue
        try:
            with np.errstate(all="ignore"):
                A[r] = coefficients(model.bound_arch(i), model.placed(i), free, model.metric,
                                    model.aggregate)
        except (ValueError, ArithmeticError) as exc:
            raise model.row_error(i, exc) from None
        if not np.all(np.isfinite(A[r])):
            raise model.row_error(i, "the prediction's coefficient of a free parameter is not "
                               "a finite number")
        c[r] = model.value(i) - float(A[r] @ theta0)
    return A, c


def group_columns(model: RowModel, free: Sequence[FreeParameter], rows: Sequence[int],
                  A: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(A, c)`` of :func:`design_matrix` where a parameter of one group of rows
    (``PARAM@COLUMN=VALUE``) has coefficient 0 on the other groups' rows, whose
    prediction keeps the file's value of it (moved into ``c``)."""
    keep = np.array([[fp.applies_to(model.rows[i]) for fp in free] for i in rows],
                    dtype=bool).reshape(len(rows), len(free))
    if keep.all():
        return A, c
    theta0 = ParameterVector(free).current(model)
    dropped = np.where(keep, 0.0, A)
    return A - dropped, c + dropped @ theta0


#: singular values below this fraction of the largest count as zero in a Jacobian
#: estimated by finite differences (their relative error is about sqrt(eps) ~ 1.5e-8)
JACOBIAN_RTOL = 1e-6


def rank_and_groups(J: np.ndarray, names: Sequence[str], rtol: float | None = None):
    """Rank of ``J`` (columns already scaled) and the groups of columns in its null space;
    a singular value counts as zero below ``rtol`` times the largest (default: the
    round-off of an exactly computed matrix)."""
    if J.size == 0:
        return 0, []
    if rtol is None:
        rtol = max(J.shape) * np.finfo(float).eps * 10
    if J.shape[0] > J.shape[1]:
        # the triangle of a thin QR has J's singular values and right vectors: never an
        # n x n matrix for n rows
        J = np.linalg.qr(J, mode="r")
    s, vt = np.linalg.svd(J, full_matrices=True)[1:]
    tol = (s[0] if s.size else 0.0) * rtol
    rank = int(np.sum(s > tol))
    null = vt[rank:]                       # rows spanning the null space
    groups: list[set[int]] = []
    for v in null:
        members = {j for j in range(len(names)) if abs(v[j]) > 1e-8}
        merged = [g for g in groups if g & members]
        for g in merged:
            groups.remove(g)
            members |= g
        if members:
            groups.append(members)
    return rank, [tuple(names[j] for j in sorted(g)) for g in groups]


#: random starts of a non-linear fit besides the file's values (``--starts``)
STARTS = 8


def fit_parameters(model: RowModel, free: Sequence[FreeParameter],
                   train: Sequence[int], starts: int = STARTS, seed: int = 0,
                   progress: Callable[[int], None] | None = None,
                   residuals: str = "absolute", explain: bool = False) -> FitResult:
    """Fit ``free`` to the measured values of rows ``train`` (see the module doc); a
    non-linear fit starts from the file's values and from ``starts`` random points
    (:func:`random_starts`, ``seed``) and keeps the best.  ``progress(n)``: n more of
    the ``1 + starts`` starts done (a linear fit: all at once).  ``residuals`` names
    the :data:`RESIDUALS` rule minimised; a rule that is not ``linear`` fits by
    non-linear least squares (NNLS minimises plain differences only).  ``explain``:
    the warning about parameters that cannot be told apart names the measured columns
    that would (:func:`separating_columns`; a few more predictions)."""
    NATURAL.check(starts, "--starts")
    rule = residual_rule(residuals)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")      # numpy/scipy chatter; results are checked
        return _fit(model, tuple(free), [int(i) for i in train], starts, seed, progress,
                    rule, explain)


def _fit(model: RowModel, free: tuple[FreeParameter, ...], train: list[int],
         starts: int = STARTS, seed: int = 0, progress=None,
         rule: Residual = RESIDUALS.get("absolute"), explain: bool = False) -> FitResult:
    y = np.array([model.rows[i].measured for i in train], dtype=float)
    if rule.positive:
        for i in train:
            if not model.rows[i].measured > 0:
                raise model.row_error(i, f"--residuals {rule.name} needs a positive measured "
                                   f"value, got "
                                   f"{model.rows[i].measured!r}", lambda v: False)
    names = [fp.spec for fp in free]
    vector = ParameterVector.of(model.arch, free)
    theta0 = vector.current(model)
    bounds = list(vector.bounds)
    warnings_: list[str] = []
    method, solver = None, "nnls"
    theta = theta0.copy()
    rank, groups, residual = len(free), [], math.nan
    best, n_starts = 0, 0

    if rule.linear and _is_linear(model, free):
        A, c = group_columns(model, free, train, *design_matrix(model, free, train))
        norms = column_norms(A)
        active = norms > 0
        for j in np.flatnonzero(~active):
            warnings_.append(f"{names[j]} has no effect on the training rows (no token "
                             f"reaches its element); left at {theta0[j]:g}")
        if active.any():
            As = A[:, active] / norms[active]
            b = y - c - A[:, ~active] @ theta0[~active]
            # NNLS tolerances are absolute
            unit = float(column_norms(b[:, None])[0]) if np.any(b) else 1.0
            within = [bounds[j] for j in np.flatnonzero(active)]
            if all(bd == NON_NEGATIVE for bd in within):
                x, residual = optimize.nnls(As, b / unit, maxiter=max(100, 50 * As.shape[1]))
            else:                            # bounds other than >= 0: BVLS (Stark & Parker)
                x = optimize.lsq_linear(As, b / unit, _solver_bounds(
                    within, unit / norms[active]), method="bvls").x
                solver = "lsq_linear"
            theta[active] = x * unit / norms[active]
            theta = np.array([bd.clip(v) for v, bd in zip(theta, bounds)])
            rank, groups = rank_and_groups(As, [n for n, a in zip(names, active) if a])
        if not np.all(np.isfinite(theta)):
            raise InputError("the fit failed: the measurements and the model differ by "
                             "more than floating point can hold")
        # The linear model must agree with the evaluator; otherwise fall back.
        check = model.predict(train, vector.overrides(theta))
        linear = c + A @ theta
        scale = max(float(np.max(np.abs(check))), 1e-300)
        if np.max(np.abs(check - linear)) <= 1e-7 * scale:
            method = solver
            residual = float(np.linalg.norm(check - y))
            if progress is not None:
                progress(1 + starts)
        else:
            warnings_.append("the prediction is not linear in the free parameters as their "
                             "models declare; fitted by non-linear least squares instead")
            theta = theta0.copy()
            groups = []
    if method is None:
        first = first_start(vector, theta0, lambda t: model.predict(train, vector.overrides(t)))
        theta, rank, groups, residual, best = _fit_nonlinear(model, free, train, y, first,
                                                             starts, seed, progress, rule,
                                                             bounds)
        method, n_starts = "least_squares", 1 + starts
    if rule.loss != "linear":
        robust = _robust_refit(model, free, train, y, theta, rule, bounds)
        if robust is not None:
            theta, rank, groups, residual, _ = robust
            method = f"{method}, then {rule.loss}"
    theta = np.array([bd.clip(v) for v, bd in zip(theta, bounds)])
    warnings_ += [indistinguishable_hint(g, free, separating_columns(model, free, train, theta,
                                                                 bounds, g)
                                     if explain else ([], []))
                  for g in groups]
    if method == "least_squares" and rank < len(free) and not groups:
        warnings_.append(f"the fit is rank deficient (rank {rank} for {len(free)} parameters)")
    at = _at_bounds(theta, bounds, np.where(theta0 != 0, np.abs(theta0), 1.0), names)
    for spec, side, bd in at:               # a closed end the solver only approached
        if not (bd.low_open if side == "lower" else bd.high_open):
            theta[names.index(spec)] = bd.low if side == "lower" else bd.high
    warnings_ += [f"{spec} = {theta[names.index(spec)]:.6g} sits on its {side} bound "
                  f"(it means a value in {bd}): the measurements push it beyond what it "
                  "means, so the model lacks something they show (or the parameter does "
                  "not matter there)" for spec, side, bd in at]
    values = {fp.spec: float(v) for fp, v in zip(free, theta)}
    fitted = fitted_architecture(model.arch, free, theta)
    return FitResult(free, values, method, fitted, tuple(train), (), rank,
                     tuple(tuple(g) for g in groups), tuple(warnings_), float(residual),
                     n_starts, best, rule.name, tuple(bounds),
                     tuple((spec, side) for spec, side, _ in at))


def _solver_bounds(bounds: Sequence[Bounds], scale) -> tuple[np.ndarray, np.ndarray]:
    """Closed ``(lower, upper)`` for a solver whose unknowns are ``value / scale``; an
    open end is moved inside by 1e-12 of the scale (or of itself, if larger)."""
    scale = np.broadcast_to(np.asarray(scale, dtype=float), (len(bounds),))
    lower, upper = np.empty(len(bounds)), np.empty(len(bounds))
    for j, (b, s) in enumerate(zip(bounds, scale)):
        lo, hi = b.low / s, b.high / s
        lower[j] = lo + 1e-12 * max(1.0, abs(lo)) if b.low_open and math.isfinite(lo) else lo
        upper[j] = hi - 1e-12 * max(1.0, abs(hi)) if b.high_open and math.isfinite(hi) else hi
    return lower, upper


#: a fitted value within this fraction of its scale from an end of its bounds sits on it
AT_BOUND_RTOL = 1e-6


def _at_bounds(theta, bounds: Sequence[Bounds], scale, names) -> list[tuple[str, str, Bounds]]:
    """``(spec, "lower" | "upper", bounds)`` of each value that sits on an end of its
    bounds (within :data:`AT_BOUND_RTOL` of its ``scale``, the start value)."""
    out = []
    for name, v, b, s in zip(names, theta, bounds, scale):
        near = AT_BOUND_RTOL * max(float(s), abs(b.low) if math.isfinite(b.low) else 0.0)
        if math.isfinite(b.low) and v - b.low <= near:
            out.append((name, "lower", b))
        elif math.isfinite(b.high) and b.high - v <= AT_BOUND_RTOL * max(float(s), abs(b.high)):
            out.append((name, "upper", b))
    return out



def _robust_refit(model, free, train, y, theta, rule: Residual, bounds):
    """The fit from ``theta`` (the least-squares values) again, minimising ``rule``'s
    robust loss of the residuals with the scale ``ROBUST_MADS`` median absolute
    deviations of those at ``theta``, and once more (``ROBUST_PASSES``) with the scale
    of the residuals that fit left: rows far off the rest weigh less (an M-estimate,
    Huber's idea in scipy's smooth ``soft_l1`` form).  ``None`` when the residuals
    leave no scale (a perfect fit, or fewer than half the rows off it)."""
    got = None
    for _ in range(ROBUST_PASSES):
        r = rule.rule(model.predict(train, ParameterVector(free).overrides(theta)), y) \
            / rule.unit(y)
        mad = float(np.median(np.abs(r - np.median(r)))) if len(r) else 0.0
        if not (mad > 0 and math.isfinite(mad)):
            break
        got = _fit_nonlinear(model, free, train, y, theta, 0, 0, None, rule, bounds,
                             f_scale=ROBUST_MADS * mad)
        theta = got[0]
    return got


def _fit_nonlinear(model, free, train, y, theta0, starts=0, seed=0, progress=None,
                   rule: Residual = RESIDUALS.get("absolute"), bounds=None,
                   f_scale: float | None = None):
    """Bounded non-linear least squares of ``rule`` from ``theta0`` and ``starts``
    random points; ``f_scale``: minimise ``rule.loss`` with that scale instead of the
    squares.  A parameter starting at 0 is measured in the size its model declares
    (:func:`~mapping.calibration.free.free_start_scales`, else 1); a fit's first start
    has such a 0 raised to that size already (:func:`~mapping.calibration.starts.first_start`), so the
    random starts draw around it.  Parameters a model declares ordered
    (:func:`~mapping.calibration.free.ordered_chains`: cache capacities rising with the
    level) are each fitted as a ratio >= 1 to the one before: in order at every step."""
    declared = ParameterVector.of(model.arch, free)
    vector = declared if bounds is None else ParameterVector(free, bounds)
    typical = np.array([s if s else 1.0 for s in declared.scales], dtype=float)
    scale = np.where(theta0 > 0, theta0, typical)
    bounds = list(vector.bounds)
    lower, upper = _solver_bounds(bounds, scale)
    chains = ordered_chains(free)
    after = [(a, b) for run in chains for a, b in zip(run, run[1:])]
    for _, b in after:                      # a ratio to the one before, at least 1
        scale[b], lower[b], upper[b] = 1.0, 1.0, np.inf

    def values(u):
        """The parameter values of the solver's unknowns ``u``."""
        theta = u * scale
        for a, b in after:
            theta[b] = theta[a] * u[b]
        return theta

    u0 = theta0 / scale
    for a, b in after:
        u0[b] = theta0[b] / theta0[a] if theta0[a] > 0 else 1.0
    u0 = np.clip(u0, lower, upper)

    # Residuals in units of the measurements' size: the same minimum, but tolerances
    # (gtol in particular) that mean something whether times are in seconds or cycles.
    unit = rule.unit(y)

    def residuals(u):
        return rule.rule(model.predict(train, vector.overrides(values(u))), y) / unit

    def solve(start):
        try:
            robust = {} if f_scale is None else {"loss": rule.loss, "f_scale": f_scale}
            res = optimize.least_squares(residuals, start, bounds=(lower, upper),
                                         x_scale="jac", method="trf", **robust)
        except (ValueError, InputError):     # scipy refuses infinities; a bad region
            return None
        finally:
            if progress is not None:
                progress(1)
        ok = np.all(np.isfinite(res.x)) and np.all(np.isfinite(res.jac)) \
            and math.isfinite(res.cost)
        return res if ok else None

    res = solve(u0)
    costs = [None if res is None else res.cost]
    # a start with a parameter on its bound of 0 (a robust refit's, from the fit
    # before; a first start has such zeros raised already) is tried at its size too:
    # trf, started on a bound, may stay on it or leave it on a rounding (seen with
    # OpenBLAS's kernels for two CPUs)
    lifted = np.where((u0 == 0) & (lower == 0), 1.0, u0)
    tried = [lifted] if (lifted != u0).any() else []
    for start in [*tried, *random_starts(u0, lower, starts, seed, upper)]:
        other = solve(start)
        costs.append(None if other is None else other.cost)
        if other is not None and (res is None or other.cost < res.cost):
            res = other
    if res is None:
        worst = int(np.argmax(np.abs(residuals(u0))))
        limit = math.sqrt(np.finfo(float).max) / len(train)
        raise model.row_error(train[worst], "the fit failed: the squared difference between "
                           "this row's prediction and its measurement overflows floating "
                           "point", lambda v: abs(rule.rule(np.array([v]), y[worst:worst + 1])[0])
                           / unit < limit) from None
    # trf ends a parameter left on its bound of 0 a rounding inside it (3e-14 of its
    # start): it sits on the bound (as :func:`_at_bounds` reports), and a fit from it
    # measures it in its declared size, not in that rounding
    theta = values(np.where((lower == 0) & (res.x <= AT_BOUND_RTOL), 0.0, res.x))
    # Each column scaled by its parameter's value (d residual / d log theta: a relative
    # change of every parameter alike), singular values compared with the largest.
    J = res.jac * np.where(res.x > 0, res.x, 1.0)
    rank, groups = rank_and_groups(J, [fp.spec for fp in free], JACOBIAN_RTOL)
    return theta, rank, groups, float(np.linalg.norm(res.fun) * unit), \
        first_at_optimum(costs)
