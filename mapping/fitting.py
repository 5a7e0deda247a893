"""Fitting cost-model parameters to measurements (SPEC §8).

A free parameter is written ``TARGET.METRIC.PARAM``: ``TARGET`` is an element (``gpu``,
``big[0]``), an element type (``A15``: one value shared by every element of that type
that takes its ``METRIC`` model from the type) or an array (``big``: one value shared by
its members).

Where the prediction is linear in the free parameters -- every free parameter is one of
its model's ``linear_parameters`` (LSLA alpha/beta, GSLA alpha/beta, GSLA power a/b/c),
the model values per token, and the aggregation is ``sum`` -- the fit is a non-negative
linear least-squares problem: each row's prediction is ``c + Σ_j A[j]·θ_j``, with ``A``
built from the tokens placed on the elements (:meth:`CostModel.linear_terms`), solved by
:func:`scipy.optimize.nnls` on unit-norm columns (the parameters span many decades).
Otherwise (``max``, ``exclusive``, LogCA, ...) it is a bounded non-linear least-squares
problem (:func:`scipy.optimize.least_squares`) started from the values in the ``.moa``.

Rows are split at random (seeded) into train and test rows; the parameters are fitted
on the train rows and fidelity is reported on the test rows (the GSLA paper splits its
360 samples 288/72).  A design matrix (or Jacobian) without full column rank means that
the measurements cannot tell some parameters apart: the result says which.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Mapping as MappingT, Sequence

import numpy as np
from scipy import optimize

from moa import Architecture, CostModel, CostSpec, make_model
from moa.cost_models import model_class
from mapping.errors import InputError
from mapping.element_activity import element_tokens, evaluate_activity
from mapping.evaluate import evaluate
from mapping.fidelity import FidelityResult, fidelity
from mapping.measurements import MeasurementRow
from mapping.metrics import INTENSIVE
from mapping.problem import bind_problem
from mapping.routing import place_tokens, validate_mapping


# --------------------------------------------------------------------------- free params

@dataclass(frozen=True)
class FreeParameter:
    """``spec`` = ``TARGET.METRIC.PARAM``; ``level`` is ``element``, ``type`` or
    ``array``; ``elements`` are the elements that share the value; ``model`` the name of
    their cost model for ``metric``."""

    spec: str
    target: str
    metric: str
    param: str
    level: str
    elements: tuple[str, ...]
    model: str

    def __str__(self):
        return self.spec


def parse_free(arch: Architecture, specs: str | Sequence[str]) -> list[FreeParameter]:
    """Resolve ``ELEMENT.METRIC.PARAM`` / ``TYPE.METRIC.PARAM`` / ``ARRAY.METRIC.PARAM``
    (a comma-separated string or a list) against the unbound architecture ``arch``."""
    items = specs.split(",") if isinstance(specs, str) else list(specs)
    items = [s.strip() for s in items if s and s.strip()]
    if not items:
        raise InputError("no free parameter given (expected ELEMENT.METRIC.PARAM,...)")
    out, seen = [], {}
    for spec in items:
        parts = spec.rsplit(".", 2)
        if len(parts) != 3 or not all(parts):
            raise InputError(f"free parameter '{spec}': expected ELEMENT.METRIC.PARAM or "
                             "TYPE.METRIC.PARAM, e.g. gpu.time.alpha")
        target, metric, param = parts
        level, elements = _target_elements(arch, target, metric, spec)
        models = {_spec_of(arch, e, metric).model for e in elements}
        if level == "type":
            models = {arch.types[target].costs[metric].model}
        if len(models) != 1:
            raise InputError(f"free parameter '{spec}': the elements of '{target}' use "
                             f"different models for {metric} ({', '.join(sorted(models))})")
        model = models.pop()
        known = tuple(model_class(model).Parameters.model_fields)
        if param not in known:
            raise InputError(f"free parameter '{spec}': model '{model}' has no parameter "
                             f"'{param}' (its parameters: {', '.join(known)})")
        for e in elements:
            key = (e, metric, param)
            if key in seen:
                raise InputError(f"free parameter '{spec}' overlaps '{seen[key]}' "
                                 f"(both set {e}.{metric}.{param})")
            seen[key] = spec
        out.append(FreeParameter(spec, target, metric, param, level, tuple(elements), model))
    return out


def _spec_of(arch: Architecture, element: str, metric: str):
    return arch.elements[element].costs[metric]


def _target_elements(arch: Architecture, target: str, metric: str, spec: str):
    if target in arch.elements:
        element = arch.elements[target]
        if metric not in element.costs:
            raise InputError(f"free parameter '{spec}': element '{target}' has no model for "
                             f"'{metric}' (it has: {', '.join(element.costs) or 'none'})")
        return "element", [target]
    if target in arch.types:
        t = arch.types[target]
        if metric not in t.costs:
            raise InputError(f"free parameter '{spec}': type '{target}' has no model for "
                             f"'{metric}' (it has: {', '.join(t.costs) or 'none'})")
        members = [e.name for e in arch.elements.values()
                   if e.type_name == target and metric not in e.own_costs]
        if not members:
            raise InputError(f"free parameter '{spec}': no element takes its {metric} "
                             f"model from type '{target}'")
        return "type", members
    arrays = arch.arrays()
    if target in arrays:
        members = arrays[target]
        lacking = [e for e in members if metric not in arch.elements[e].costs]
        if lacking:
            raise InputError(f"free parameter '{spec}': {', '.join(lacking)} has no model "
                             f"for '{metric}'")
        return "array", list(members)
    names = list(arch.elements) + list(arch.types) + list(arrays)
    raise InputError(f"free parameter '{spec}': no element, type or array named '{target}' "
                     f"in architecture '{arch.name}' (known: {', '.join(names)})")


def fitted_architecture(arch: Architecture, free: Sequence[FreeParameter],
                        values: Sequence[float]) -> Architecture:
    """A copy of the unbound ``arch`` whose cost-model arguments hold the fitted values
    (a fitted argument written as an expression becomes a number)."""
    new = Architecture(arch.name, dict(arch.params), arch.lambda_, arch.aggregate, arch.origin)
    types = dict(arch.types)
    elements = dict(arch.elements)
    # Types first, then elements and arrays: an element's own value overrides its type's.
    order = sorted(zip(free, values), key=lambda fv: fv[0].level != "type")
    for fp, value in order:
        value = float(value)
        if fp.level == "type":
            t = types[fp.target]
            old = t.costs[fp.metric]
            spec = CostSpec(old.model, MappingProxyType({**old.args, fp.param: value}), old.origin)
            types[fp.target] = replace(t, costs=MappingProxyType({**t.costs, fp.metric: spec}))
            for name in fp.elements:
                e = elements[name]
                elements[name] = replace(e, costs=MappingProxyType({**e.costs, fp.metric: spec}))
        else:
            for name in fp.elements:
                e = elements[name]
                old = e.costs[fp.metric]
                spec = CostSpec(old.model, MappingProxyType({**old.args, fp.param: value}),
                                old.origin)
                elements[name] = replace(
                    e, costs=MappingProxyType({**e.costs, fp.metric: spec}),
                    own_costs=MappingProxyType({**e.own_costs, fp.metric: spec}))
    new.types = types
    new.elements = elements
    new.links = list(arch.links)
    return new


def _with_costs(bound: Architecture, overrides: MappingT[str, MappingT[str, dict]]
                ) -> Architecture:
    """A copy of the *bound* ``bound`` with some model arguments replaced:
    ``overrides[element][metric] = {param: value}``."""
    new = Architecture(bound.name, dict(bound.params), bound.lambda_, bound.aggregate,
                       bound.origin)
    new.types = dict(bound.types)
    new.links = list(bound.links)
    elements = dict(bound.elements)
    for name, by_metric in overrides.items():
        e = elements[name]
        costs = dict(e.costs)
        for metric, args in by_metric.items():
            model = costs[metric]
            costs[metric] = make_model(model.name, {**model.params.model_dump(), **args},
                                       f"element '{name}', metric '{metric}': ")
        elements[name] = replace(e, costs=MappingProxyType(costs))
    new.elements = elements
    return new


# --------------------------------------------------------------------------- row values

class RowModel:
    """Predicts the measured value of each row: its parameters bound into the
    application and architecture, its mapping (or per-element activity) evaluated for
    ``metric`` with ``aggregate``.  Bound problems are cached per parameter set."""

    def __init__(self, arch: Architecture, rows: Sequence[MeasurementRow],
                 metric: str = "time", aggregate: str | None = None, app=None,
                 params: MappingT[str, Any] | None = None, source: str | None = None):
        self.arch, self.rows, self.metric, self.app = arch, list(rows), metric, app
        self.aggregate = aggregate or arch.aggregate
        self.params = dict(params or {})     # command-line overrides under the rows' own
        self.source = source
        self._bound: dict[tuple, Any] = {}
        self._placed: dict[tuple, dict] = {}
        for row in self.rows:
            if row.activity is None and (app is None or row.mapping is None):
                raise InputError(f"{row.where}: no mapping for this row (give a .map file, "
                                 "--mapping-column, --actor-column or --quanta-column)")

    def _key(self, row):
        return tuple(sorted({**self.params, **row.params}.items()))

    def _fail(self, row, exc):
        origin = (self.source, row.line, 1) if self.source else None
        return InputError(f"{row.where}: {exc}", origin)

    def bound(self, i: int):
        """The problem (application rows) or bound architecture (activity rows) of row i."""
        row = self.rows[i]
        key = self._key(row)
        got = self._bound.get(key)
        if got is None:
            values = dict(key)
            try:
                if row.activity is None:
                    got = bind_problem(self.app, self.arch, values)
                else:
                    got = self.arch.bind(values)
            except ValueError as exc:
                raise self._fail(row, exc) from None
            self._bound[key] = got
        return got

    def bound_arch(self, i: int) -> Architecture:
        b = self.bound(i)
        return b if isinstance(b, Architecture) else b.arch

    def placed(self, i: int) -> dict[str, list]:
        """Element → the token groups of row ``i`` (independent of cost parameters)."""
        row = self.rows[i]
        key = (self._key(row), id(row.mapping) if row.activity is None
               else tuple(sorted(row.activity.items())))
        got = self._placed.get(key)
        if got is None:
            b = self.bound(i)
            try:
                if row.activity is None:
                    validate_mapping(b.app, b.arch, row.mapping)
                    got = place_tokens(b.app, b.arch, row.mapping, b.activity, self.metric)
                else:
                    got = element_tokens(b, row.activity)
            except (ValueError, KeyError) as exc:
                raise self._fail(row, exc) from None
            self._placed[key] = got
        return got

    def value(self, i: int, overrides=None, cache=None) -> float:
        """Row ``i`` predicted; ``overrides`` replace model arguments of the bound
        architecture (``element → metric → {param: value}``)."""
        row = self.rows[i]
        b = self.bound(i)
        arch = b if isinstance(b, Architecture) else b.arch
        if overrides:
            key = self._key(row)
            if cache is not None and key in cache:
                arch = cache[key]
            else:
                arch = _with_costs(arch, overrides)
                if cache is not None:
                    cache[key] = arch
        try:
            if row.activity is not None:
                return evaluate_activity(arch, row.activity, self.metric, self.aggregate)
            problem = replace(b, arch=arch) if overrides else b
            return evaluate(problem.app, arch, row.mapping, metric=self.metric,
                            aggregate=self.aggregate, problem=problem).value
        except (ValueError, ZeroDivisionError) as exc:
            raise self._fail(row, exc) from None

    def predict(self, indices=None, overrides=None) -> np.ndarray:
        indices = range(len(self.rows)) if indices is None else indices
        cache: dict = {}
        return np.array([self.value(i, overrides, cache) for i in indices], dtype=float)


# --------------------------------------------------------------------------- the fit

@dataclass(frozen=True)
class FitResult:
    """Fitted ``values`` (``spec`` → value), the ``method`` used (``nnls`` or
    ``least_squares``), the fitted unbound ``architecture``, the row indices of the
    ``train`` and ``test`` split, the ``rank`` of the design matrix (or Jacobian) against
    the number of parameters, the groups of parameters that the training rows ``cannot
    tell apart``, and ``warnings`` in words."""

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

    def to_dict(self) -> dict:
        return {"fitted": dict(self.values), "method": self.method, "rank": self.rank,
                "parameters": len(self.free),
                "indistinguishable": [list(g) for g in self.indistinguishable],
                "warnings": list(self.warnings), "residual_norm": self.residual_norm}


def split_rows(n: int, test_fraction: float = 0.2, seed: int = 0
               ) -> tuple[np.ndarray, np.ndarray]:
    """Seeded random split of ``range(n)`` into sorted (train, test) indices; the test
    set has ``round(n·test_fraction)`` rows."""
    if not 0 <= test_fraction < 1 or math.isnan(test_fraction):
        raise InputError(f"--test-fraction must be at least 0 and below 1, got {test_fraction}")
    n_test = int(round(n * test_fraction))
    if n - n_test < 1:
        raise InputError(f"{n} rows leave none to fit on with --test-fraction {test_fraction}")
    order = np.random.default_rng(seed).permutation(n)
    return np.sort(order[n_test:]), np.sort(order[:n_test])


def _current_values(model: RowModel, free: Sequence[FreeParameter]) -> np.ndarray:
    """Each free parameter's value in the architecture at its defaults."""
    arch = model.arch.bind()
    out = []
    for fp in free:
        cm = arch.elements[fp.elements[0]].costs[fp.metric]
        out.append(float(getattr(cm.params, fp.param)))
    return np.array(out, dtype=float)


def _overrides(free: Sequence[FreeParameter], theta) -> dict:
    out: dict[str, dict[str, dict]] = {}
    for fp, value in zip(free, theta):
        for e in fp.elements:
            out.setdefault(e, {}).setdefault(fp.metric, {})[fp.param] = float(value)
    return out


def _is_linear(model: RowModel, free: Sequence[FreeParameter]) -> bool:
    if model.aggregate != "sum":
        return False
    for fp in free:
        cls = model_class(fp.model)
        if fp.metric != model.metric or not cls.per_token \
                or fp.param not in cls.linear_parameters:
            return False
    return True


def _token_coefficient(element, tokens, metric: str, param: str) -> float:
    """d(element value)/d(param) for a model linear in ``param``."""
    model: CostModel = element.model(metric)
    if not tokens:
        return 0.0
    if metric in INTENSIVE:          # time-weighted mean of the tokens' power (SPEC §6.5)
        time = element.model("time")
        weights = None
        if time is not None and time.per_token:
            weights = [t.count * time.token_cost(t) for t in tokens]
            if sum(weights) <= 0:
                weights = None
        if weights is None:
            weights = [t.count for t in tokens]
        total = sum(weights)
        if total <= 0:
            return 0.0
        return sum(w * model.linear_terms(t).get(param, 0.0)
                   for w, t in zip(weights, tokens)) / total
    return sum(t.count * model.linear_terms(t).get(param, 0.0) for t in tokens)


def design_matrix(model: RowModel, free: Sequence[FreeParameter], rows: Sequence[int]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``(A, c)`` with prediction ``= c + A @ θ`` on ``rows`` (a linear problem only)."""
    A = np.zeros((len(rows), len(free)))
    c = np.zeros(len(rows))
    for r, i in enumerate(rows):
        arch = model.bound_arch(i)
        placed = model.placed(i)
        lam = float(arch.lambda_)
        offset = 0.0
        for j, fp in enumerate(free):
            for name in fp.elements:
                element = arch.elements[name]
                scale = 1.0 if element.is_pe else lam
                coef = scale * _token_coefficient(element, placed[name], fp.metric, fp.param)
                A[r, j] += coef
                offset += coef * float(getattr(element.model(fp.metric).params, fp.param))
        c[r] = model.value(i) - offset
    return A, c


def _rank_and_groups(J: np.ndarray, names: Sequence[str]):
    """Rank of ``J`` (columns already scaled) and the groups of columns in its null space."""
    if J.size == 0:
        return 0, []
    s, vt = np.linalg.svd(J, full_matrices=True)[1:]
    tol = (s[0] if s.size else 0.0) * max(J.shape) * np.finfo(float).eps * 10
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


def fit_parameters(model: RowModel, free: Sequence[FreeParameter],
                   train: Sequence[int]) -> FitResult:
    """Fit ``free`` to the measured values of rows ``train`` (see the module doc)."""
    free = tuple(free)
    train = [int(i) for i in train]
    y = np.array([model.rows[i].measured for i in train], dtype=float)
    names = [fp.spec for fp in free]
    theta0 = _current_values(model, free)
    warnings: list[str] = []
    method = None
    theta = theta0.copy()
    rank, groups, residual = len(free), [], math.nan

    if _is_linear(model, free):
        A, c = design_matrix(model, free, train)
        norms = np.linalg.norm(A, axis=0)
        active = norms > 0
        for j in np.flatnonzero(~active):
            warnings.append(f"{names[j]} has no effect on the training rows (no token "
                            f"reaches its element); left at {theta0[j]:g}")
        if active.any():
            As = A[:, active] / norms[active]
            b = y - c - A[:, ~active] @ theta0[~active]
            unit = float(np.linalg.norm(b)) or 1.0          # NNLS tolerances are absolute
            x, residual = optimize.nnls(As, b / unit, maxiter=max(100, 50 * As.shape[1]))
            theta[active] = x * unit / norms[active]
            rank, groups = _rank_and_groups(As, [n for n, a in zip(names, active) if a])
        # The linear model must agree with the evaluator; otherwise fall back.
        check = model.predict(train, _overrides(free, theta))
        linear = c + A @ theta
        scale = max(float(np.max(np.abs(check))), 1e-300)
        if np.max(np.abs(check - linear)) <= 1e-7 * scale:
            method = "nnls"
            residual = float(np.linalg.norm(check - y))
        else:
            warnings.append("the prediction is not linear in the free parameters as their "
                            "models declare; fitted by non-linear least squares instead")
            theta = theta0.copy()
            groups = []
    if method is None:
        theta, rank, groups, residual = _fit_nonlinear(model, free, train, y, theta0)
        method = "least_squares"
    for g in groups:
        warnings.append(f"the training rows cannot tell apart {', '.join(g)}: only a "
                        "combination of them is determined (the fit chose one of many "
                        "equally good values)")
    if method == "least_squares" and rank < len(free) and not groups:
        warnings.append(f"the fit is rank deficient (rank {rank} for {len(free)} parameters)")
    values = {fp.spec: float(v) for fp, v in zip(free, theta)}
    fitted = fitted_architecture(model.arch, free, theta)
    return FitResult(free, values, method, fitted, tuple(train), (), rank,
                     tuple(tuple(g) for g in groups), tuple(warnings), float(residual))


def _fit_nonlinear(model, free, train, y, theta0):
    scale = np.where(theta0 > 0, theta0, 1.0)
    lower = np.zeros(len(free))
    for j, fp in enumerate(free):
        cls = model_class(fp.model)
        try:
            bound = model.arch.bind()
            args = bound.elements[fp.elements[0]].costs[fp.metric].params.model_dump()
            cls(cls.Parameters(**{**args, fp.param: 0.0}))
        except Exception:  # noqa: BLE001 - the model refuses 0: stay strictly positive
            lower[j] = 1e-12
    u0 = np.maximum(theta0 / scale, lower)

    # Residuals in units of the measurements' size: the same minimum, but tolerances
    # (gtol in particular) that mean something whether times are in seconds or cycles.
    unit = float(np.sqrt(np.mean(y ** 2))) or 1.0

    def residuals(u):
        return (model.predict(train, _overrides(free, u * scale)) - y) / unit

    res = optimize.least_squares(residuals, u0, bounds=(lower, np.inf), x_scale="jac",
                                 method="trf")
    theta = res.x * scale
    rank, groups = _rank_and_groups(res.jac / np.maximum(np.linalg.norm(res.jac, axis=0),
                                                         1e-300), [fp.spec for fp in free])
    return theta, rank, groups, float(np.linalg.norm(res.fun) * unit)


# --------------------------------------------------------------------------- together

@dataclass(frozen=True)
class Assessment:
    """What ``mapeval fidelity`` / ``fit`` compute: the ``result`` on the test rows,
    the ``fit`` (``None`` without free parameters), every row's ``predicted`` value under
    the (fitted) architecture, and the ``model`` that evaluates rows."""

    result: FidelityResult
    fit: FitResult | None
    predicted: np.ndarray
    measured: np.ndarray
    model: RowModel

    @property
    def test(self) -> np.ndarray:
        return np.array(self.fit.test if self.fit else range(len(self.measured)), dtype=int)

    @property
    def train(self) -> np.ndarray:
        return np.array(self.fit.train if self.fit else (), dtype=int)


def assess(arch: Architecture, rows: Sequence[MeasurementRow], *, app=None,
           metric: str = "time", aggregate: str | None = None,
           free: Sequence[str] | str | None = None, test_fraction: float = 0.2,
           seed: int = 0, params: MappingT[str, Any] | None = None,
           source: str | None = None) -> Assessment:
    """Predict every row, fit ``free`` parameters on a seeded train split if any, and
    compare predictions with measurements on the test rows."""
    model = RowModel(arch, rows, metric, aggregate, app, params, source)
    measured = np.array([r.measured for r in rows], dtype=float)
    if not free:
        predicted = model.predict()
        return Assessment(fidelity(predicted, measured), None, predicted, measured, model)
    free_params = parse_free(arch, free)
    train, test = split_rows(len(rows), test_fraction, seed)
    fit = fit_parameters(model, free_params, train)
    fit = replace(fit, test=tuple(int(i) for i in test))
    final = RowModel(fit.architecture, rows, metric, aggregate, app, params, source)
    predicted = final.predict()
    on = test if len(test) else train
    result = fidelity(predicted[on], measured[on], n=len(rows), n_train=len(train),
                      fitted=fit.values)
    return Assessment(result, fit, predicted, measured, final)
