"""Fitting cost-model parameters to measurements (SPEC §8).

A free parameter is written ``TARGET.METRIC.PARAM``: ``TARGET`` is an element (``gpu``,
``big[0]``), an element type (``A15``: one value shared by every element of that type
that takes its ``METRIC`` model from the type) or an array (``big``: one value shared by
its members).  Or it is the bare name of a ``param`` of the ``.sdf`` or ``.moa``
(SPEC §12): each row is then bound again with its value.  ``SPEC@COLUMN`` makes it
group-specific: one value per value of the measurement column ``COLUMN``
(:func:`expand_groups`, ``SPEC@COLUMN=VALUE``), each applied to its group's rows only
(:meth:`RowModel.predict`; in the linear problem a coefficient 0 on the other rows,
:func:`group_columns`), the other free parameters shared by every row.

Every free parameter stays within the bounds of its meaning, declared once on its
model's pydantic ``Parameters`` (``Field(gt=0, le=1)`` for an efficiency;
:func:`moa.cost_models.parameter_bounds`); a bare ``param`` is non-negative and takes
the bounds of any model argument that is that param alone (:func:`free_bounds`).  A
fitted value that ends on a bound is reported (``at_bound``): the data push it past what
it means.  A free parameter may be a pattern (``*.time.efficiency``, ``hide_*``;
:func:`expand_free`).

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
start value times ``10^U(-2, 2)``, log-uniform, within the bounds); the best is kept.

No rule of the model is written here: predictions come from the evaluators, and the
columns of ``A`` and the question whether a free parameter can change the evaluated
metric at all from the core's :func:`~mapping.semantics.metrics.element_metric` and
:func:`~mapping.evaluation.activity.combine`, applied to stand-in models (:class:`_Probe`).
A free parameter that cannot change the metric (``gpu.energy.alpha`` while evaluating
``time``) is an error, as is a metric no element values.  A row that cannot be
evaluated, or evaluates to infinity, is an error at the row and the column whose value
causes it.

Rows are split at random (seeded) into train and test rows; the parameters are fitted
on the train rows and fidelity is reported on the test rows (the GSLA paper splits its
360 samples 288/72).  A design matrix (or Jacobian) without full column rank means that
the measurements cannot tell some parameters apart: the result says which.  On the
non-linear path the Jacobian (estimated by finite differences) has its columns scaled by
the parameter values, and a singular value below ``JACOBIAN_RTOL`` times the largest
counts as zero.
"""
from __future__ import annotations

import copy
import fnmatch
import functools
import math
import warnings
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Callable, Mapping as MappingT, Sequence

import numpy as np
from scipy import optimize

from moa import Architecture, CostModel, CostSpec, make_model
from moa.cost_models import (NON_NEGATIVE, Bounds, Parameters, fittable_parameters,
                             model_class, parameter_bounds)
from moc import TokenGroup
from mapping.evaluation.batch import BatchEvaluator
from mapping.errors import InputError
from mapping.evaluation.activity import (combine, element_tokens,
                                     evaluate_activity)
from mapping.evaluation.reference import evaluate
from mapping.calibration.fidelity import FidelityResult, fidelity
from mapping.calibration.measurements import MeasurementRow
from mapping.semantics.aggregation import aggregator
from mapping.semantics.metrics import (base_metrics, check_metric, element_metric, is_charged,
                             system_metrics)
from mapping.options import FRACTION, NATURAL
from mapping.semantics.problem import bind_problem
from mapping.registry import Registry
from mapping.semantics.routing import place_tokens, validate_mapping
from mapping.evaluation.row_batch import RowBatch, Unsupported


# --------------------------------------------------------------------------- free params

@dataclass(frozen=True)
class FreeParameter:
    """``spec`` = ``TARGET.METRIC.PARAM``; ``level`` is ``element``, ``type`` or
    ``array``; ``elements`` are the elements that share the value; ``model`` the name of
    their cost model for ``metric``.  A bare ``param`` of the files has level ``param``,
    ``target`` = ``param`` = its name, and no elements, metric or model."""

    spec: str
    target: str
    metric: str
    param: str
    level: str
    elements: tuple[str, ...]
    model: str
    #: ``SPEC@COLUMN``: one value per value of the measurement column ``by``; ``label``
    #: is the value this copy holds (``spec`` then reads ``SPEC@COLUMN=LABEL``)
    by: str | None = None
    label: str | None = None

    def __str__(self):
        return self.spec

    @property
    def base(self) -> str:
        """The spec without ``@COLUMN``: the parameter of the model it sets."""
        return self.spec.split(GROUP_MARK, 1)[0]

    def applies_to(self, row) -> bool:
        """Whether this value holds for ``row`` (a parameter of one group: its rows)."""
        return self.label is None or row.cells.get(self.by, "").strip() == self.label

    def model_arguments(self, value: float) -> dict[str, dict[str, dict[str, float]]]:
        """What setting this parameter to ``value`` changes: ``element → metric →
        {param: value}`` of bound models (nothing for a bare ``param``)."""
        return {e: {self.metric: {self.param: float(value)}} for e in self.elements}

    def parameter_values(self, value: float) -> dict[str, float]:
        """The file parameters each row is bound with that setting this one to ``value``
        changes: ``{name: value}`` for a bare ``param`` (level ``param``), else nothing."""
        return {self.target: float(value)} if self.level == "param" else {}


#: the wildcards of a free-parameter pattern (:func:`fnmatch.fnmatchcase`; a ``[`` is
#: itself, as in the names of array members, so ``big[*]`` is every member of ``big``)
PATTERN_CHARACTERS = "*?"


def free_names(arch: Architecture, app=None) -> list[str]:
    """What a ``--fit`` pattern is matched against: every ``ELEMENT.METRIC.PARAM`` of a
    fittable number of an element's model (:func:`moa.cost_models.fittable_parameters`)
    and the bare name of every ``param`` of ``app`` and ``arch``."""
    names = [] if app is None else list(app.params)
    names += [p for p in arch.params if p not in names]
    for e in arch.elements.values():
        for metric, spec in e.costs.items():
            names += [f"{e.name}.{metric}.{p}" for p in
                      fittable_parameters(model_class(_model_name(spec)).Parameters)]
    return names


def _model_name(spec) -> str:
    return getattr(spec, "model", None) or spec.name


def expand_free(arch: Architecture, items: Sequence[str], app=None) -> list[str]:
    """``items`` with each pattern (wildcards ``*`` and ``?``, e.g.
    ``*.time.efficiency``, ``hide_*``, ``big[*].time.alpha``) replaced by the names it
    matches (:func:`free_names`, in their order).  A pattern that matches nothing is an
    error."""
    names = None
    out: list[str] = []
    for item in items:
        if not any(c in item for c in PATTERN_CHARACTERS):
            out.append(item)
            continue
        pattern, mark, by = item.partition(GROUP_MARK)      # 'hide_*@gpu': one per gpu
        names = free_names(arch, app) if names is None else names
        literal = pattern.strip().replace("[", "[[]")
        matched = [n + mark + by for n in names if fnmatch.fnmatchcase(n, literal)]
        if not matched:
            shown = ", ".join(names[:12]) + (f", ... ({len(names)} in all)"
                                             if len(names) > 12 else "")
            raise InputError(f"free parameter pattern '{item}' matches nothing (it is "
                             "matched against ELEMENT.METRIC.PARAM of every element's "
                             f"model and the bare names of params: {shown or 'none'})")
        out += [n for n in matched if n not in out]
    return out


def parse_free(arch: Architecture, specs: str | Sequence[str], app=None
               ) -> list[FreeParameter]:
    """Resolve ``ELEMENT.METRIC.PARAM`` / ``TYPE.METRIC.PARAM`` / ``ARRAY.METRIC.PARAM``
    or the bare name of a ``param`` of the ``.moa`` or of the application ``app`` (a
    comma-separated string or a list; patterns expanded by :func:`expand_free`) against
    the unbound architecture ``arch``."""
    items = specs.split(",") if isinstance(specs, str) else list(specs)
    items = [s.strip() for s in items if s and s.strip()]
    if not items:
        raise InputError("no free parameter given (expected ELEMENT.METRIC.PARAM,...)")
    items = expand_free(arch, items, app)
    out, seen = [], {}
    declared = list(app.params) if app is not None else []
    declared += [p for p in arch.params if p not in declared]
    for item in items:
        spec, mark, by = (part.strip() for part in item.partition(GROUP_MARK))
        if mark and (not by or not spec):
            raise InputError(f"free parameter '{item}': expected PARAM{GROUP_MARK}COLUMN, "
                             f"e.g. A15.energy.alpha{GROUP_MARK}config (one value per value "
                             "of the column)")
        got = _parse_one(arch, spec, declared, seen)
        out.append(replace(got, spec=item.replace(" ", ""), by=by) if mark else got)
    return out


#: ``SPEC@COLUMN``: a free parameter with one value per value of a column
GROUP_MARK = "@"


def _parse_one(arch, spec, declared, seen) -> FreeParameter:
    """One free parameter without ``@COLUMN`` (``seen``: what the earlier ones set)."""
    if "." not in spec:
        if spec not in declared:
            raise InputError(f"free parameter '{spec}' is neither a declared parameter "
                             "nor ELEMENT.METRIC.PARAM (declared parameters: "
                             f"{', '.join(declared) or 'none'})")
        if spec in seen:
            raise InputError(f"free parameter '{spec}' is given twice")
        seen[spec] = spec
        return FreeParameter(spec, spec, "", spec, "param", (), "")
    parts = spec.rsplit(".", 2)
    if len(parts) != 3 or not all(parts):
        raise InputError(f"free parameter '{spec}': expected ELEMENT.METRIC.PARAM, "
                         "TYPE.METRIC.PARAM or a declared parameter's name, e.g. "
                         "gpu.time.alpha")
    target, metric, param = parts
    level, elements = _target_elements(arch, target, metric, spec)
    models = {_spec_of(arch, e, metric).model for e in elements}
    if level == "type":
        models = {arch.types[target].costs[metric].model}
    if len(models) != 1:
        raise InputError(f"free parameter '{spec}': the elements of '{target}' use "
                         f"different models for {metric} ({', '.join(sorted(models))})")
    model = models.pop()
    parameters = model_class(model).Parameters
    known = tuple(parameters.model_fields)
    if param not in known:
        raise InputError(f"free parameter '{spec}': model '{model}' has no parameter "
                         f"'{param}' (its parameters: {', '.join(known)})")
    if parameter_bounds(parameters, param) is None:
        raise InputError(f"free parameter '{spec}': '{param}' of model '{model}' is "
                         "not a quantity a fit can vary (a choice, an integer or a "
                         "key; fittable: "
                         f"{', '.join(fittable_parameters(parameters)) or 'none'})")
    for e in elements:
        key = (e, metric, param)
        if key in seen:
            raise InputError(f"free parameter '{spec}' overlaps '{seen[key]}' "
                             f"(both set {e}.{metric}.{param})")
        seen[key] = spec
    return FreeParameter(spec, target, metric, param, level, tuple(elements), model)


def expand_groups(free: Sequence[FreeParameter], rows: Sequence[MeasurementRow]
                  ) -> list[FreeParameter]:
    """Each ``SPEC@COLUMN`` parameter as one parameter per value of ``COLUMN`` among
    ``rows`` (in order of first appearance), ``SPEC@COLUMN=VALUE``; the others as
    they are.  A row without a value in the column is an error at its cell."""
    out = []
    for fp in free:
        if fp.by is None or fp.label is not None:
            out.append(fp)
            continue
        labels = dict.fromkeys(group_label(row, fp.by, fp.spec) for row in rows)
        out += [replace(fp, spec=f"{fp.spec}={label}", label=label) for label in labels]
    return out


def group_parameters(free: Sequence[FreeParameter], column: str, label: str
                     ) -> list[tuple[FreeParameter, str]]:
    """The parameters that hold for the rows whose ``column`` is ``label``: the shared
    ones and that group's own, each as its plain parameter (``spec`` without
    ``@COLUMN=VALUE``) with the spec of its value in the fit; parameters of groups of
    another column are left out."""
    return [(replace(fp, spec=fp.base, by=None, label=None), fp.spec) for fp in free
            if fp.label is None or (fp.by == column and fp.label == label)]


def group_values(values: MappingT[str, float], free: Sequence[FreeParameter],
                 column: str, label: str) -> dict[str, float]:
    """The fitted ``values`` that hold for the rows whose ``column`` is ``label``, each
    under its parameter's name (:func:`group_parameters`)."""
    return {plain.spec: values[spec] for plain, spec in group_parameters(free, column, label)}


def group_label(row: MeasurementRow, column: str, what: str) -> str:
    """``row``'s value of ``column``, which groups rows for ``what`` (an option or a
    parameter): an error naming the row and column where there is none."""
    if column not in row.cells:
        raise row.error(f"no column '{column}' for {what} (columns: {', '.join(row.cells)})")
    label = row.cells[column].strip()
    if not label:
        raise row.error(f"missing cell ({what} needs every row's group)", column)
    return label




def free_bounds(arch: Architecture, free: Sequence[FreeParameter]) -> list[Bounds]:
    """The bounds of each free parameter, read from its model's declaration
    (:func:`moa.cost_models.parameter_bounds`).  A bare ``param`` is non-negative, and
    within the bounds of every model argument that is that param alone
    (``compute_efficiency = ceff``: ``ceff`` is in (0, 1])."""
    out = []
    for fp in free:
        if fp.level != "param":
            out.append(parameter_bounds(model_class(fp.model).Parameters, fp.param)
                       or NON_NEGATIVE)         # a FreeParameter built by hand
            continue
        b = NON_NEGATIVE
        specs = [s for e in arch.elements.values() for s in e.costs.values()]
        specs += [s for t in arch.types.values() for s in t.costs.values()]
        for spec in specs:
            for arg, value in getattr(spec, "args", {}).items():
                if getattr(value, "name", None) == fp.target and \
                        getattr(value, "names", None) == {fp.target}:
                    declared = parameter_bounds(model_class(spec.model).Parameters, arg)
                    b = b.intersect(declared) if declared else b
        out.append(b)
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
    (a fitted argument written as an expression becomes a number); a parameter of one
    group of rows (``SPEC@COLUMN=VALUE``) keeps the file's value there: one
    architecture cannot hold a value per group (:func:`group_values` lists them)."""
    free, values = zip(*[(fp, v) for fp, v in zip(free, values) if fp.label is None]) \
        if any(fp.label is None for fp in free) else ((), ())
    new = Architecture(arch.name, dict(arch.params), arch.lambda_, arch.aggregate, arch.origin)
    new.system_metrics = dict(arch.system_metrics)
    new.units = dict(arch.units)
    types = dict(arch.types)
    elements = dict(arch.elements)
    # Types first, then elements and arrays: an element's own value overrides its type's.
    order = sorted(zip(free, values), key=lambda fv: fv[0].level != "type")
    for fp, value in order:
        value = float(value)
        if fp.level == "param":
            if fp.target in new.params:      # a parameter of the .sdf is not the .moa's
                new.params[fp.target] = value
            continue
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


# --------------------------------------------------------------------------- core probes

class _Probe(CostModel):
    """A per-token stand-in whose token cost is ``cost(token)``.  Put in place of an
    element's model, it lets the core's own metric rule (:func:`element_metric`) and
    aggregation (:func:`combine`) compute derivatives and dependences, so that no rule
    is written out again here."""

    name = "probe"

    def __init__(self, cost):
        super().__init__(Parameters())
        self._cost = cost

    def token_cost(self, token):
        return self._cost(token)


_ZERO = _Probe(lambda token: 0.0)


def _variant(arch: Architecture, models: MappingT[str, MappingT[str, CostModel]]
             ) -> Architecture:
    """A shallow copy of the *bound* ``arch`` with some models replaced
    (``models[element][metric]``).  The links are the same, so the copy shares the
    original's graph and route cache: nothing is routed twice."""
    new = copy.copy(arch)
    new.elements = dict(arch.elements)
    for name, by_metric in models.items():
        e = new.elements[name]
        new.elements[name] = replace(e, costs=MappingProxyType({**e.costs, **by_metric}))
    return new


def _rebuilt(arch: Architecture, overrides: MappingT[str, MappingT[str, dict]],
             made: dict | None = None) -> Architecture:
    """``arch`` (bound) with the arguments ``overrides[element][metric] = {param: value}``
    of the touched models only; ``made`` keeps models already built (parameter sets
    often bind a model to the same arguments)."""
    made = {} if made is None else made
    models = {}
    for name, by_metric in overrides.items():
        e = arch.elements[name]
        models[name] = {}
        for metric, args in by_metric.items():
            model = e.costs[metric]
            full = {**model.params.model_dump(), **args}
            key = (name, metric, model.name, tuple(sorted(full.items(), key=str)))
            if key not in made:
                made[key] = make_model(model.name, full, f"element '{name}', metric '{metric}': ")
            models[name][metric] = made[key]
    return _variant(arch, models)


def depends_on(element, model_metric: str, metric: str) -> bool:
    """Whether the core's value of ``metric`` on ``element`` reads its ``model_metric``
    model: every model replaced by a probe, the ``model_metric`` one by two different
    ones, on two unlike tokens (the power mean's weights, the energy fallback)."""
    if model_metric == metric:
        return True
    tokens = [TokenGroup("probe", 1, 1.0), TokenGroup("probe", 1, 2.0)]
    other = _Probe(lambda t: 1.0 + t.quanta ** 2)
    base = {m: other for m in element.costs}
    values = []
    for probe in (_Probe(lambda t: 1.0), _Probe(lambda t: t.quanta)):
        costs = MappingProxyType({**base, model_metric: probe})
        values.append(element_metric(replace(element, costs=costs), tokens, metric))
    return values[0] != values[1]


def check_free(arch: Architecture, free: Sequence[FreeParameter], metric: str) -> None:
    """An error naming every free parameter that cannot change the value of ``metric``
    (on the bound ``arch``): fitting it would silently do nothing."""
    for fp in free:
        if fp.level == "param":
            continue                         # checked on the rows (assess)
        if not any(depends_on(arch.elements[e], fp.metric, m)
                   for e in fp.elements for m in base_metrics(arch, metric)):
            raise InputError(f"free parameter '{fp.spec}' cannot affect the evaluated metric "
                             f"'{metric}': the {metric} of {', '.join(fp.elements)} does not "
                             f"depend on its {fp.metric} model (evaluate --metric "
                             f"{fp.metric} to fit it)")


# --------------------------------------------------------------------------- row values

#: models and architectures built under free values that a RowModel keeps at most
_KEEP = 512

#: a parameter set with at least this many distinct mappings goes to the batch evaluator
#: (compiling it costs as much as 5 to 16 reference evaluations on the examples)
BATCH_MIN = 16


class RowModel:
    """Predicts the measured value of each row: its parameters bound into the
    application and architecture, its mapping (or per-element activity) evaluated for
    ``metric`` with ``aggregate``.

    Each parameter set is bound once (:func:`bind_problem`, routes included) and rows
    with the same parameters and mapping are evaluated once.  Predictions under other
    values of free parameters (``overrides``) rebuild only the touched models, on copies
    of the bound architectures that share their routes; a parameter set with many
    mappings goes to the batch evaluator."""

    def __init__(self, arch: Architecture, rows: Sequence[MeasurementRow],
                 metric: str = "time", aggregate: str | None = None, app=None,
                 params: MappingT[str, Any] | None = None, source: str | None = None,
                 element: str | None = None):
        self.arch, self.rows, self.metric, self.app = arch, list(rows), metric, app
        #: predict only this element's part of the system value (its own tokens, every
        #: other element idle): the per-element fit of the GSLA paper
        self.element = element
        self.aggregate = aggregate or arch.aggregate
        self._requested = aggregate         # None: each metric's own (a system metric's terms)
        self.params = dict(params or {})     # command-line overrides under the rows' own
        self.source = source
        self._bound: dict[tuple, Any] = {}
        self._placed: dict[tuple, dict] = {}
        self._checked = False
        self._combines: bool | None = None
        self._batches: dict = {}
        #: bound applications and architectures shared by rows (:func:`bind_problem`)
        self._bindings: dict = {}
        self._transient: dict = {}
        #: models and architectures bound under free values, kept across predictions
        self._made: dict = {}
        self._param_archs: dict = {}
        self._arch_parts: dict[int, tuple] = {}
        #: applications bound under free values of their parameters (batched rows)
        self._app_bindings: dict = {}
        self._identities: dict[int, tuple] = {}
        for row in self.rows:
            if row.activity is None and (app is None or row.mapping is None):
                raise InputError(f"{row.where}: no mapping for this row (give a .map file, "
                                 "--mapping-column, --actor-column or --quanta-column)")
        try:
            at_defaults = arch.bind(self.params)
        except ValueError:
            pass                             # the rows' own parameters may fix it
        else:
            check_metric(at_defaults, metric)
            self._checked = True

    def share_rows(self, other: "RowModel") -> None:
        """Reuse what ``other`` (the same rows, application and metric; another
        architecture of the same elements, e.g. the fitted one) gathered: the bound
        applications and, where the application is bound alike, the rows' tokens
        (:class:`~mapping.evaluation.row_batch.RowBatch`, which refuses tokens that depend on
        cost models)."""
        if other.app is not self.app:
            return
        self._bindings.update({k: v for k, v in other._bindings.items() if k[0] != "arch"})
        names = set(self.app.params) if self.app is not None else set()
        alike = (len(self.rows) == len(other.rows)
                 and all(a is b for a, b in zip(self.rows, other.rows))
                 and (self.metric, self.element, self._requested)
                 == (other.metric, other.element, other._requested)
                 and {k: v for k, v in self.params.items() if k in names}
                 == {k: v for k, v in other.params.items() if k in names}
                 and list(self.arch.elements) == list(other.arch.elements))
        batch = other._batches.get(None)
        if alike and batch:
            self._batches = {None: batch.rebound(self)}

    def _key(self, row, drop: str | None = None):
        values = {**self.params, **{k: v for k, v in row.params.items() if k != drop}}
        return tuple(sorted(values.items()))

    def _identity(self, i: int) -> tuple:
        """Rows with equal identities have equal predictions."""
        got = self._identities.get(i)
        if got is None:
            row = self.rows[i]
            what = id(row.mapping) if row.activity is None \
                else tuple(sorted(row.activity.items()))
            got = self._identities[i] = (self._key(row), what)
        return got

    def _error(self, i: int, message: str | Exception, good=math.isfinite) -> InputError:
        """An error about row ``i``, at the column whose value causes it if one does;
        ``message`` may be the exception that says what went wrong (one already about
        row ``i`` is returned as it is)."""
        if isinstance(message, InputError) and getattr(message, "row", None) == i:
            return message
        row = self.rows[i]
        exc = row.error(str(message), self._culprit(i, good))
        if exc.origin is None and self.source:
            exc.origin = (self.source, row.line, 1)
        exc.row = i
        return exc

    def _culprit(self, i: int, good=math.isfinite) -> str | None:
        """The first parameter column of row ``i`` without which the row evaluates to a
        ``good`` (by default finite) value, the file's value standing in for the cell."""
        row = self.rows[i]
        for name in sorted(row.params, key=lambda n: row.positions.get(n, (0, 0))):
            try:
                value = self._evaluate(i, self._bind(row, self._key(row, drop=name)))
            except (ValueError, ArithmeticError, KeyError):
                continue
            if good(value):
                return name
        return None

    def _bind(self, row, key, keep: bool = True):
        values = dict(key)
        if row.activity is None:
            if keep:
                return bind_problem(self.app, self.arch, values, cache=self._bindings)
            # the architectures and repetition vectors are kept, not each application
            problem = bind_problem(self.app, self.arch, values, cache=self._transient)
            for k in [k for k in self._transient if k[0] == "app"]:
                del self._transient[k]
            return problem
        arch = self._bindings.get(("arch", key))
        if arch is None:
            arch = self._bindings[("arch", key)] = self.arch.bind(values)
        return arch

    def bound(self, i: int, keep: bool = True):
        """The problem (application rows) or bound architecture (activity rows) of row
        i; ``keep=False``: not kept unless it already was (rows gathered once)."""
        row = self.rows[i]
        key = self._key(row)
        got = self._bound.get(key)
        if got is None:
            try:
                got = self._bind(row, key, keep)
            except ValueError as exc:
                raise self._error(i, exc) from None
            if not self._checked:
                check_metric(got if isinstance(got, Architecture) else got.arch, self.metric)
                self._checked = True
            if keep:
                self._bound[key] = got
        return got

    def bound_arch(self, i: int) -> Architecture:
        b = self.bound(i)
        return b if isinstance(b, Architecture) else b.arch

    def placed(self, i: int) -> dict[str, list]:
        """Element → the token groups of row ``i`` (independent of cost parameters)."""
        return self.placed_for(i, self.metric)

    def placed_for(self, i: int, metric: str, keep: bool = True) -> dict[str, list]:
        """:meth:`placed` for ``metric`` (a term of a system metric places its own);
        ``keep=False``: not kept for later calls (rows gathered once, by the million)."""
        key = (self._identity(i), metric) if keep else None
        got = self._placed.get(key) if keep else None
        if got is None:
            b = self.bound(i, keep)
            try:
                got = self._place(i, b, metric)
            except (ValueError, KeyError) as exc:
                raise self._error(i, exc) from None
            if keep:
                self._placed[key] = got
        return got

    def _place(self, i: int, b, metric: str) -> dict[str, list]:
        """Row ``i``'s tokens on the bound problem (or architecture) ``b``: every
        element's, or with :attr:`element` that element's alone."""
        row = self.rows[i]
        if row.activity is None:
            validate_mapping(b.app, b.arch, row.mapping)
            got = place_tokens(b.app, b.arch, row.mapping, b.activity, metric,
                               charge=is_charged(metric))
        else:
            got = element_tokens(b if isinstance(b, Architecture) else b.arch, row.activity)
        if self.element is not None:
            got = {name: (tokens if name == self.element else [])
                   for name, tokens in got.items()}
        return got

    def _direct(self, arch: Architecture) -> bool:
        """Whether the evaluator's value of a mapping is :func:`combine` of its placed
        tokens: no system metric, no timed aggregation, no per-PE shares of the CNs."""
        if self._combines is None:
            agg = aggregator(self.aggregate)
            self._combines = not (agg.timed or agg.needs_shares
                                  or self.metric in system_metrics(arch))
        return self._combines

    def _evaluate(self, i: int, bound, again: bool = False) -> float:
        """Row ``i``'s value on ``bound``; ``again``: its tokens are those of
        :meth:`placed` and its value is their :func:`combine` (:meth:`_direct`)."""
        row = self.rows[i]
        if self.element is not None or again:
            arch = bound if isinstance(bound, Architecture) else bound.arch
            # one element's part: the tokens of this binding (another row's values, free
            # values of the application), never a failing binding of the row's own
            placed = self.placed(i) if again else self._place(i, bound, self.metric)
            return combine(arch, placed, self.metric, self._requested,
                           arch.params if bound is arch else bound.params)
        if row.activity is not None:
            return evaluate_activity(bound, row.activity, self.metric, self._requested)
        return evaluate(bound.app, bound.arch, row.mapping, metric=self.metric,
                        aggregate=self._requested, problem=bound).value

    def _variant(self, i: int, overrides, cache, arch_only: bool = False) -> Any:
        """Row ``i``'s bound problem (or architecture; only that with ``arch_only``)
        under ``overrides``.

        The architecture binds only its own parameters, so rows whose values of those
        agree share one bound, rebuilt architecture per call (``cache``): each row keeps
        its bound application, and a set of free values costs one binding, not one per
        row.  A free parameter of the application rebinds the row's whole problem."""
        b = self.bound(i)
        if not overrides:
            return b.arch if arch_only and not isinstance(b, Architecture) else b
        row = self.rows[i]
        params = overrides.get(_PARAMS) or {}
        rebind = self._rebinds_app(overrides)
        if rebind:
            values = {**self.params, **params, **row.params}   # the row's own cells win
            key = ("problem", tuple(sorted(values.items())))
        else:
            key = ("arch", tuple(sorted(params.items())), self._arch_part(i))
        cache = {} if cache is None else cache
        got = cache.get(key)
        if got is None:
            models = {k: v for k, v in overrides.items() if k != _PARAMS}
            if len(self._made) > _KEEP:
                self._made.clear()
            if len(self._param_archs) > _KEEP:
                self._param_archs.clear()
            try:
                if rebind:
                    values = dict(key[1])
                    got = bind_problem(self.app, self.arch, values,
                                       cache=cache.setdefault("bindings", {})) \
                        if row.activity is None else self.arch.bind(values)
                elif params:
                    # kept across calls: the steps of a finite-difference Jacobian in
                    # the other parameters bind the architecture with the same values
                    got = self._param_archs.get(key)
                    if got is None:
                        got = self._param_archs[key] = self.arch.bind(
                            {**self.params, **params, **row.params})
                else:
                    got = self.bound_arch(i)
                arch = got if isinstance(got, Architecture) else got.arch
                arch = _rebuilt(arch, models, self._made)
            except (ValueError, ArithmeticError) as exc:
                raise self._error(i, exc) from None
            got = arch if isinstance(got, Architecture) else replace(got, arch=arch)
            cache[key] = got
        if rebind:
            return got.arch if arch_only and not isinstance(got, Architecture) else got
        if arch_only or isinstance(b, Architecture):
            return got
        if params:                           # the row's problem with the new architecture
            return replace(b, arch=got, params={**b.params, **got.params})
        return replace(b, arch=got)

    def _arch_part(self, i: int) -> tuple:
        """The values of row ``i``'s parameters that its architecture declares."""
        got = self._arch_parts.get(i)
        if got is None:
            values = {**self.params, **self.rows[i].params}
            got = self._arch_parts[i] = tuple(sorted(
                (k, v) for k, v in values.items() if k in self.arch.params))
        return got

    def _app_part(self, i: int) -> tuple:
        """Row ``i``'s own values of the application's parameters."""
        names = self.app.params if self.app is not None else {}
        return tuple(sorted((k, v) for k, v in self.rows[i].params.items() if k in names))

    def _rebinds_app(self, overrides) -> bool:
        """Whether ``overrides`` set a parameter of the application (its tokens change)."""
        params = (overrides or {}).get(_PARAMS) or {}
        return self.app is not None and any(k in self.app.params for k in params)

    def value(self, i: int, overrides=None, cache=None) -> float:
        """Row ``i`` predicted; ``overrides`` replace model arguments of the bound
        architecture (``element → metric → {param: value}``)."""
        # Under overrides that leave the application alone the row's tokens are those
        # placed once (:meth:`placed`): only the element values are computed anew.
        again = bool(overrides) and self.rows[i].activity is None \
            and not self._rebinds_app(overrides) and self._direct(self.bound_arch(i))
        bound = self._variant(i, overrides, cache, arch_only=again)
        try:
            with np.errstate(all="ignore"):
                value = float(self._evaluate(i, bound, again))
        except (ValueError, ArithmeticError) as exc:
            raise self._error(i, exc) from None
        if not math.isfinite(value):
            raise self._error(i, f"the predicted {self.metric} is {value}, not a finite number")
        return value

    def _reference_value(self, i: int) -> float:
        """Row ``i`` by the reference evaluator, at the files' values."""
        with np.errstate(all="ignore"):
            return float(self._evaluate(i, self.bound(i)))

    def row_batch(self, indices) -> RowBatch | None:
        """The :class:`~mapping.evaluation.row_batch.RowBatch` of rows ``indices`` (``None``: they
        are evaluated one at a time).  Built once for every row, sliced for subsets."""
        indices = np.asarray(indices, dtype=np.intp)
        key = indices.tobytes()
        if key in self._batches:
            return self._batches[key]
        every = self._batches.get(None, False)
        if every is False:
            try:
                every = RowBatch(self, range(len(self.rows)))
            except (Unsupported, ValueError, KeyError, TypeError, ArithmeticError):
                every = None                 # the reference path reports any bad row
            self._batches[None] = every
        got = None
        if every is not None:
            got = every if len(indices) == len(self.rows) and \
                np.array_equal(indices, np.arange(len(self.rows))) else every.subset(indices)
        if len(self._batches) > 16:
            self._batches = {None: every}
        self._batches[key] = got
        return got

    def _predict_batch(self, indices, overrides, cache) -> np.ndarray | None:
        """All rows at once (:mod:`mapping.evaluation.row_batch`), or ``None`` where they must go
        one at a time: unsupported, or a row that fails (the reference explains it)."""
        if not indices:
            return None
        batch = self.row_batch(indices)
        if batch is None:
            return None
        problem_of: Callable[[int], Any] | None = None
        if self._rebinds_app(overrides):
            if not batch.rebinds:
                return None
            if len(self._app_bindings) > _KEEP:
                self._app_bindings.clear()
            cache.setdefault("bindings", self._app_bindings)
            problem_of = functools.partial(self._variant, overrides=overrides, cache=cache)

            def arch_of(i):
                return problem_of(i).arch
        elif overrides:
            def arch_of(i):
                return self._variant(i, overrides, cache, arch_only=True)
        else:
            arch_of = self.bound_arch
        try:
            with np.errstate(all="ignore"):
                out = batch.values(arch_of, problem_of)
                if problem_of is not None and not batch.rebinding_checked:
                    self._check_rebinding(batch, out, overrides, cache)
        except (Unsupported, ValueError, ArithmeticError, KeyError, TypeError, InputError):
            return None
        return out if np.all(np.isfinite(out)) else None

    def _check_rebinding(self, batch: RowBatch, out: np.ndarray, overrides, cache) -> None:
        """The first rows of a batch under new values of the application's parameters
        against the reference evaluator, once: a difference sends every such
        evaluation of the batch the reference way."""
        try:
            batch.check_against(out, lambda i: self.value(i, overrides, cache))
        except Unsupported:
            batch.rebinds = False
            raise
        batch.rebinding_checked = True

    def predict(self, indices=None, overrides=None) -> np.ndarray:
        indices = list(range(len(self.rows)) if indices is None else indices)
        if overrides and _GROUPS in overrides:
            return self._predict_groups(indices, overrides)
        cache: dict = {}
        fast = self._predict_batch(indices, overrides, cache)
        if fast is not None:
            return fast
        memo: dict[tuple, float] = {}
        self._batch(indices, overrides, cache, memo)
        out = np.empty(len(indices))
        for r, i in enumerate(indices):
            ident = self._identity(i)
            if ident not in memo:
                memo[ident] = self.value(i, overrides, cache)
            out[r] = memo[ident]
        return out

    def _predict_groups(self, indices, overrides) -> np.ndarray:
        """:meth:`predict` where some values hold for one group of rows each: the rows
        under the same such values predicted together, with the shared ones."""
        grouped = overrides[_GROUPS]
        shared = {k: v for k, v in overrides.items() if k != _GROUPS}
        parts: dict[tuple, list[int]] = {}
        for r, i in enumerate(indices):
            key = tuple(j for j, (fp, _) in enumerate(grouped) if fp.applies_to(self.rows[i]))
            parts.setdefault(key, []).append(r)
        out = np.empty(len(indices))
        for key, at in parts.items():
            merged = copy.deepcopy(shared)
            for j in key:
                _add_override(merged, *grouped[j])
            out[at] = self.predict([indices[r] for r in at], merged)
        return out

    def _batch(self, indices, overrides, cache, memo) -> None:
        """Mapping rows the row batch leaves (timed aggregations, memory traffic): a
        parameter set with many distinct mappings (without fixed routes) through the
        search's batch evaluator, into ``memo``; a failure leaves them to :meth:`value`."""
        groups: dict[tuple, dict[tuple, int]] = {}
        if self.element is not None:
            return                           # one element's part: the reference path
        for i in indices:
            row = self.rows[i]
            if row.activity is None and not row.mapping.routes:
                key, what = self._identity(i)
                groups.setdefault(key, {}).setdefault((key, what), i)
        for members in groups.values():
            if len(members) < BATCH_MIN:
                continue
            for i in members.values():
                self.placed(i)               # checks the mapping as the reference does, once
            first = next(iter(members.values()))
            try:
                evaluator = BatchEvaluator(self._variant(first, overrides, cache), self.metric,
                                           self._requested)
                X = np.array([evaluator.encode(self.rows[i].mapping) for i in members.values()])
                with np.errstate(all="ignore"):
                    values = evaluator.evaluate(X)
            except (ValueError, KeyError, ArithmeticError):
                continue
            for ident, v in zip(members, values):
                if math.isfinite(v):
                    memo[ident] = float(v)


# --------------------------------------------------------------------------- residuals

@dataclass(frozen=True)
class Residual:
    """What the non-linear fit minimises the squares of: ``rule(predicted, measured)``
    per row, divided by ``unit(measured)`` so that its tolerances mean the same whatever
    the measurements' unit."""

    name: str
    rule: Callable[[np.ndarray, np.ndarray], np.ndarray]
    unit: Callable[[np.ndarray], float]
    #: whether every measured value must be positive
    positive: bool = False
    #: whether the residual is the plain difference predicted - measured, so that a
    #: model linear in its free parameters fits by non-negative least squares
    linear: bool = False
    #: scipy's name of the loss on the residuals: ``linear`` (their squares), or a
    #: robust one (``soft_l1``), minimised after the least-squares fit from its values,
    #: with the scale of the residuals it left (:func:`_robust_refit`)
    loss: str = "linear"


def _rms(y: np.ndarray) -> float:
    """Root mean square of ``y``, without overflow (1 for all zeros)."""
    top = float(np.max(np.abs(y))) if len(y) else 0.0
    return float(np.sqrt(np.mean((y / top) ** 2))) * top if top > 0 else 1.0


def _log_ratio(predicted: np.ndarray, measured: np.ndarray) -> np.ndarray:
    # A prediction of 0 or below is as far from the measurement as floating point goes.
    return np.log(np.maximum(predicted, np.finfo(float).tiny) / measured)


#: the residuals ``--residuals NAME`` selects (absolute: the default)
RESIDUALS: Registry[Residual] = Registry("residuals")
RESIDUALS.add("absolute", Residual("absolute", lambda p, y: p - y, _rms,
                                    linear=True),
              "predicted - measured: the rows with the largest values decide the fit")
RESIDUALS.add("relative", Residual("relative", _log_ratio, lambda y: 1.0, positive=True),
              "log(predicted / measured): every row weighs alike, whatever its size "
              "(measurements spanning decades, e.g. microseconds to seconds)")
RESIDUALS.add("robust", Residual("robust", lambda p, y: p - y, _rms, linear=True,
                                 loss="soft_l1"),
              "as absolute, then a soft-L1 loss scaled by the residuals' median absolute "
              "deviation: rows far off the rest (a warm-up run, a glitch) pull the fit "
              "less")
RESIDUALS.add("robust-relative", Residual("robust-relative", _log_ratio, lambda y: 1.0,
                                          positive=True, loss="soft_l1"),
              "as relative, then the soft-L1 loss of robust")

#: a robust loss's scale: this many median absolute deviations of the least-squares
#: residuals (1.4826 MAD estimates a normal standard deviation)
ROBUST_MADS = 1.4826
#: robust fits, each with the scale of the residuals the one before left
ROBUST_PASSES = 2


def residual_rule(name: str) -> Residual:
    """The :class:`Residual` registered as ``name`` (an error naming the known ones)."""
    return RESIDUALS.get(name)


# --------------------------------------------------------------------------- the fit

@dataclass(frozen=True)
class FitResult:
    """Fitted ``values`` (``spec`` → value), the ``method`` used (``nnls`` or
    ``least_squares``), the fitted unbound ``architecture``, the row indices of the
    ``train`` and ``test`` split, the ``rank`` of the design matrix (or Jacobian) against
    the number of parameters, the groups of parameters that the training rows ``cannot
    tell apart``, ``warnings`` in words, and for a non-linear fit the number of
    ``starts`` (the file's values and the random ones) and which won (``best_start``, 0
    for the file's values; both 0 for NNLS)."""

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


def split_rows(n: int, test_fraction: float = 0.2, seed: int = 0
               ) -> tuple[np.ndarray, np.ndarray]:
    """Seeded random split of ``range(n)`` into sorted (train, test) indices; the test
    set has ``round(n·test_fraction)`` rows."""
    FRACTION.check(test_fraction, "--test-fraction")
    n_test = int(round(n * test_fraction))
    if n - n_test < 1:
        raise InputError(f"{n} rows leave none to fit on with --test-fraction {test_fraction}")
    order = np.random.default_rng(seed).permutation(n)
    return np.sort(order[n_test:]), np.sort(order[:n_test])


def predict_fitted(model: RowModel, fit: FitResult, indices=None) -> np.ndarray:
    """Predictions of rows ``indices`` (default all) under the values ``fit`` found --
    the path the fit itself evaluates, so held-out rows are predicted as trained ones."""
    theta = [fit.values[fp.spec] for fp in fit.free]
    return model.predict(indices, _overrides(fit.free, theta))


def _current_values(model: RowModel, free: Sequence[FreeParameter]) -> np.ndarray:
    """Each free parameter's value in the architecture at its defaults (command-line
    values applied)."""
    try:
        arch = model.arch.bind(model.params)
        values = dict(arch.params)
        if model.app is not None and any(fp.level == "param" for fp in free):
            values = dict(bind_problem(model.app, model.arch, model.params).params)
    except ValueError as exc:
        raise InputError(str(exc), getattr(exc, "origin", None)) from None
    out = []
    for fp in free:
        if fp.level == "param":
            try:
                out.append(float(values[fp.target]))
            except (TypeError, ValueError):
                raise InputError(f"free parameter '{fp.spec}' is not a number "
                                 f"({values[fp.target]!r})") from None
            continue
        cm = arch.elements[fp.elements[0]].costs[fp.metric]
        out.append(float(getattr(cm.params, fp.param)))
    return np.array(out, dtype=float)


#: the key of :func:`_overrides` under which bare parameters go (never an element name)
_PARAMS = ("params",)


#: the key of :func:`_overrides` under which the parameters of one group go, with values
_GROUPS = ("groups",)


def _overrides(free: Sequence[FreeParameter], theta) -> dict:
    """The model arguments of all ``free`` parameters at values ``theta``, merged; the
    values of bare parameters under the key ``_PARAMS``; parameters of one group of rows
    (``SPEC@COLUMN=VALUE``) as ``(parameter, value)`` pairs under ``_GROUPS``, applied by
    :meth:`RowModel.predict` to their rows only."""
    out: dict = {}
    for fp, value in zip(free, theta):
        if fp.label is not None:
            out.setdefault(_GROUPS, []).append((fp, float(value)))
        else:
            _add_override(out, fp, value)
    return out


def _add_override(out: dict, fp: FreeParameter, value: float) -> None:
    """Merge what setting ``fp`` to ``value`` changes into the overrides ``out``."""
    if fp.level == "param":
        out.setdefault(_PARAMS, {}).update(fp.parameter_values(value))
        return
    for element, by_metric in fp.model_arguments(value).items():
        for metric, args in by_metric.items():
            out.setdefault(element, {}).setdefault(metric, {}).update(args)


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


def _probes(arch: Architecture, fp: FreeParameter, metric: str) -> Architecture:
    """The bound ``arch`` whose value of ``metric`` is ``d prediction / d θ`` of ``fp``:
    its models replaced by their linear terms in ``fp`` (:meth:`CostModel.linear_terms`),
    every other element's model by zero."""
    models = {name: {metric: _ZERO} for name in arch.elements}
    for name in fp.elements:
        linear = arch.elements[name].costs[fp.metric]
        models[name][metric] = _Probe(
            lambda t, m=linear, p=fp.param: m.linear_terms(t).get(p, 0.0))
    return _variant(arch, models)


def coefficients(arch: Architecture, placed: MappingT[str, list],
                 free: Sequence[FreeParameter], metric: str, aggregate: str) -> list[float]:
    """``d prediction / d θ_j`` of one row (tokens ``placed`` on the bound ``arch``) for
    free parameters in which their models are linear: the core's rule and aggregation
    evaluated with each free model replaced by its linear terms in ``θ_j``
    (:meth:`CostModel.linear_terms`) and every other element's model by zero."""
    return [float(combine(_probes(arch, fp, metric), placed, metric, aggregate))
            for fp in free]


def _design_batch(model: RowModel, free: Sequence[FreeParameter], rows: Sequence[int]
                  ) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`design_matrix` with every row at once (:mod:`mapping.evaluation.row_batch`), or
    ``None`` where the rows go one at a time."""
    batch = model.row_batch(rows) if len(rows) else None
    if batch is None:
        return None
    A = np.zeros((len(rows), len(free)))
    probed: dict[tuple, Architecture] = {}

    def arch_of(i, fp):
        key = (id(model.bound_arch(i)), fp.spec)
        if key not in probed:
            probed[key] = _probes(model.bound_arch(i), fp, model.metric)
        return probed[key]
    try:
        for j, fp in enumerate(free):
            A[:, j] = batch.values(lambda i, fp=fp: arch_of(i, fp))
    except (Unsupported, ValueError, ArithmeticError, KeyError, TypeError):
        return None
    predicted = model._predict_batch(list(rows), None, {})
    if predicted is None or not np.all(np.isfinite(A)):
        return None
    return A, predicted - A @ _current_values(model, free)


def design_matrix(model: RowModel, free: Sequence[FreeParameter], rows: Sequence[int]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``(A, c)`` with prediction ``= c + A @ θ`` on ``rows`` (a linear problem only)."""
    fast = _design_batch(model, free, rows)
    if fast is not None:
        return fast
    A = np.zeros((len(rows), len(free)))
    c = np.zeros(len(rows))
    theta0 = _current_values(model, free)
    done: dict[tuple, int] = {}              # rows alike in parameters and mapping
    for r, i in enumerate(rows):
        same = done.setdefault(model._identity(i), r)
        if same != r:
            A[r], c[r] = A[same], c[same]
            continue
        try:
            with np.errstate(all="ignore"):
                A[r] = coefficients(model.bound_arch(i), model.placed(i), free, model.metric,
                                    model.aggregate)
        except (ValueError, ArithmeticError) as exc:
            raise model._error(i, exc) from None
        if not np.all(np.isfinite(A[r])):
            raise model._error(i, "the prediction's coefficient of a free parameter is not "
                               "a finite number")
        c[r] = model.value(i) - float(A[r] @ theta0)
    return A, c


def group_columns(model: RowModel, free: Sequence[FreeParameter], rows: Sequence[int],
                  A: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(A, c)`` of :func:`design_matrix` where a parameter of one group of rows
    (``SPEC@COLUMN=VALUE``) has coefficient 0 on the other groups' rows, whose
    prediction keeps the file's value of it (moved into ``c``)."""
    keep = np.array([[fp.applies_to(model.rows[i]) for fp in free] for i in rows],
                    dtype=bool).reshape(len(rows), len(free))
    if keep.all():
        return A, c
    theta0 = _current_values(model, free)
    dropped = np.where(keep, 0.0, A)
    return A - dropped, c + dropped @ theta0


def _column_norms(A: np.ndarray) -> np.ndarray:
    """Euclidean norms of the columns of ``A``, without overflow for huge entries."""
    big = np.max(np.abs(A), axis=0) if A.size else np.zeros(A.shape[1])
    safe = np.where(big > 0, big, 1.0)
    return big * np.linalg.norm(A / safe, axis=0)


#: singular values below this fraction of the largest count as zero in a Jacobian
#: estimated by finite differences (their relative error is about sqrt(eps) ~ 1.5e-8)
JACOBIAN_RTOL = 1e-6


def _rank_and_groups(J: np.ndarray, names: Sequence[str], rtol: float | None = None):
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
                raise model._error(i, f"--residuals {rule.name} needs a positive measured "
                                   f"value, got "
                                   f"{model.rows[i].measured!r}", lambda v: False)
    names = [fp.spec for fp in free]
    theta0 = _current_values(model, free)
    bounds = free_bounds(model.arch, free)
    warnings_: list[str] = []
    method, solver = None, "nnls"
    theta = theta0.copy()
    rank, groups, residual = len(free), [], math.nan
    best, n_starts = 0, 0

    if rule.linear and _is_linear(model, free):
        A, c = group_columns(model, free, train, *design_matrix(model, free, train))
        norms = _column_norms(A)
        active = norms > 0
        for j in np.flatnonzero(~active):
            warnings_.append(f"{names[j]} has no effect on the training rows (no token "
                             f"reaches its element); left at {theta0[j]:g}")
        if active.any():
            As = A[:, active] / norms[active]
            b = y - c - A[:, ~active] @ theta0[~active]
            unit = float(np.linalg.norm(b / np.max(np.abs(b)))) * float(np.max(np.abs(b))) \
                if np.any(b) else 1.0                        # NNLS tolerances are absolute
            within = [bounds[j] for j in np.flatnonzero(active)]
            if all(bd == NON_NEGATIVE for bd in within):
                x, residual = optimize.nnls(As, b / unit, maxiter=max(100, 50 * As.shape[1]))
            else:                            # bounds other than >= 0: BVLS (Stark & Parker)
                x = optimize.lsq_linear(As, b / unit, _solver_bounds(
                    within, unit / norms[active]), method="bvls").x
                solver = "lsq_linear"
            theta[active] = x * unit / norms[active]
            theta = np.array([_clip(v, bd) for v, bd in zip(theta, bounds)])
            rank, groups = _rank_and_groups(As, [n for n, a in zip(names, active) if a])
        if not np.all(np.isfinite(theta)):
            raise InputError("the fit failed: the measurements and the model differ by "
                             "more than floating point can hold")
        # The linear model must agree with the evaluator; otherwise fall back.
        check = model.predict(train, _overrides(free, theta))
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
        theta, rank, groups, residual, best = _fit_nonlinear(model, free, train, y, theta0,
                                                             starts, seed, progress, rule,
                                                             bounds)
        method, n_starts = "least_squares", 1 + starts
    if rule.loss != "linear":
        robust = _robust_refit(model, free, train, y, theta, rule, bounds)
        if robust is not None:
            theta, rank, groups, residual, _ = robust
            method = f"{method}, then {rule.loss}"
    theta = np.array([_clip(v, bd) for v, bd in zip(theta, bounds)])
    warnings_ += [_indistinguishable(g, free, separating_columns(model, free, train, theta,
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


def _clip(value: float, b: Bounds) -> float:
    """``value`` within ``b`` (a solver's round-off past an end; an open end excluded)."""
    value = float(min(max(value, b.low), b.high))
    if value == b.low and b.low_open:
        value = float(np.nextafter(value, math.inf))
    if value == b.high and b.high_open:
        value = float(np.nextafter(value, -math.inf))
    return value


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


def _indistinguishable(group: Sequence[str], free: Sequence[FreeParameter],
                       columns: tuple[list[str], list[str]] = ([], [])) -> str:
    """A warning naming parameters the rows cannot determine, with what would fix it;
    ``columns``: the measured columns that, varied, would tell them apart, and those
    tried (:func:`separating_columns`)."""
    separating, tried = columns
    effect = "make it matter" if len(group) == 1 else "tell them apart"
    if separating:
        rows = f"add rows that vary {' or '.join(separating)} (other values there {effect})"
    elif tried:
        rows = (f"add rows of other mappings or workloads (other values of "
                f"{', '.join(tried)} alone would not {effect})")
    else:
        rows = f"add rows of other mappings or workloads that {effect}"
    if len(group) == 1:
        return (f"{group[0]} has no effect on the training rows at the fitted values: the "
                f"fit cannot determine it (to fix: leave it out of --fit; or {rows})")
    by = {fp.spec: fp for fp in free}
    members = [by[g] for g in group if g in by]
    same_param = len({(fp.metric, fp.param) for fp in members}) == 1 and \
        all(fp.level != "param" for fp in members)
    hints = [f"fix all but one (leave e.g. {', '.join(group[1:])} out of --fit)"]
    if same_param:
        shared = ", ".join(e for fp in members for e in fp.elements)
        hints.append(f"share one value across {shared} (a type's {members[0].metric} "
                     "model, or a param both use)")
    hints.append(rows)
    return (f"the training rows cannot tell apart {', '.join(group)}: only a combination "
            "of them is determined (the fit chose one of many equally good values); to "
            "fix: " + "; or ".join(hints))


#: at most this many measured columns and training rows are varied to find the columns
#: that would tell indistinguishable parameters apart (:func:`separating_columns`)
SEPARATING_COLUMNS, SEPARATING_ROWS = 12, 4


def separating_columns(model: RowModel, free: Sequence[FreeParameter], train: Sequence[int],
                       theta, bounds: Sequence[Bounds], group: Sequence[str]
                       ) -> tuple[list[str], list[str]]:
    """``(separating, tried)``: the numeric columns of the training rows (parameters they
    set, at most :data:`SEPARATING_COLUMNS`) that, varied, tell ``group`` apart (or make
    a lone parameter matter), and every column whose varied rows could be evaluated.
    A few training rows that load the group's elements are copied with the column
    halved and doubled; the sensitivities of their predictions to a relative change of
    each parameter of ``group`` at the fitted ``theta`` (one-sided differences of 1e-6,
    inside the bounds) get full column rank with the rows' own."""
    names = [fp.spec for fp in free]
    index = [names.index(g) for g in group]
    elements = set().union(*(_elements_of(model.arch, free[j]) for j in index))
    candidates = [i for i in train if any(model.placed(i).get(e) for e in elements)] \
        or list(train)
    picks = [candidates[int(k)] for k in np.unique(np.linspace(
        0, len(candidates) - 1, min(SEPARATING_ROWS, len(candidates))).round().astype(int))]
    columns: list[str] = []
    for i in picks:
        columns += [c for c, v in model.rows[i].params.items()
                    if c not in columns and isinstance(v, (int, float)) and v != 0]
    base = [model.rows[i] for i in picks]
    separating, tried = [], []
    for column in columns[:SEPARATING_COLUMNS]:
        rows = base + [replace(r, params={**r.params, column: r.params[column] * f})
                       for r in base if column in r.params for f in (0.5, 2.0)]
        varied = RowModel(model.arch, rows, model.metric, model._requested, model.app,
                          model.params, model.source, element=model.element)
        try:
            J = _relative_sensitivities(varied, free, theta, bounds, index)
        except (InputError, ValueError, ArithmeticError):
            continue                         # a varied row the model cannot evaluate
        tried.append(column)
        norms = np.linalg.norm(J, axis=0)
        if np.all(norms > 0):
            sv = np.linalg.svd(J / norms, compute_uv=False)
            if sv[-1] > 1e-4 * sv[0]:
                separating.append(column)
    return separating, tried


def _elements_of(arch: Architecture, fp: FreeParameter) -> set[str]:
    """The elements whose models a free parameter sets: its own, or for a bare param
    those with a model argument that uses it."""
    if fp.level != "param":
        return set(fp.elements)
    return {e.name for e in arch.elements.values() for spec in e.costs.values()
            if any(fp.target in getattr(v, "names", ()) for v in
                   getattr(spec, "args", {}).values())}


def _relative_sensitivities(model: RowModel, free, theta, bounds, index) -> np.ndarray:
    """d log(prediction) / d log(theta_j) of every row of ``model`` for j in ``index``
    (one-sided differences of 1e-6, stepping inwards at a bound)."""
    theta = np.asarray(theta, dtype=float)
    with np.errstate(all="ignore"):
        base = model.predict(None, _overrides(free, theta))
        scale = np.where(base != 0, np.abs(base), 1.0)
        out = []
        for j in index:
            h = 1e-6 * (abs(theta[j]) if theta[j] != 0 else 1.0)
            step = h if theta[j] + h in bounds[j] else -h
            moved = theta.copy()
            moved[j] += step
            out.append((model.predict(None, _overrides(free, moved)) - base) / scale
                       * (theta[j] if theta[j] != 0 else 1.0) / step)
    return np.column_stack(out)


#: random starts are drawn log-uniformly within this many decades of the start values
START_DECADES = 2.0


def random_starts(u0: np.ndarray, lower: np.ndarray, starts: int, seed: int = 0,
                  upper: np.ndarray | None = None) -> list[np.ndarray]:
    """``starts`` seeded random starting points around ``u0``: each positive coordinate
    ``u0_j · 10^U(-START_DECADES, START_DECADES)``, within its ``lower`` and ``upper``
    bounds; a coordinate starting at 0 (no scale to draw around) stays at its start."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(max(0, int(starts))):
        factor = 10.0 ** rng.uniform(-START_DECADES, START_DECADES, size=len(u0))
        out.append(np.clip(np.where(u0 > 0, u0 * factor, u0), lower,
                           np.inf if upper is None else upper))
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
        r = rule.rule(model.predict(train, _overrides(free, theta)), y) / rule.unit(y)
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
    squares."""
    scale = np.where(theta0 > 0, theta0, 1.0)
    bounds = free_bounds(model.arch, free) if bounds is None else bounds
    lower, upper = _solver_bounds(bounds, scale)
    u0 = np.clip(theta0 / scale, lower, upper)

    # Residuals in units of the measurements' size: the same minimum, but tolerances
    # (gtol in particular) that mean something whether times are in seconds or cycles.
    unit = rule.unit(y)

    def residuals(u):
        return rule.rule(model.predict(train, _overrides(free, u * scale)), y) / unit

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

    res, best = solve(u0), 0
    for k, start in enumerate(random_starts(u0, lower, starts, seed, upper), start=1):
        other = solve(start)
        if other is not None and (res is None or other.cost < res.cost):
            res, best = other, k
    if res is None:
        worst = int(np.argmax(np.abs(residuals(u0))))
        limit = math.sqrt(np.finfo(float).max) / len(train)
        raise model._error(train[worst], "the fit failed: the squared difference between "
                           "this row's prediction and its measurement overflows floating "
                           "point", lambda v: abs(rule.rule(np.array([v]), y[worst:worst + 1])[0])
                           / unit < limit) from None
    theta = res.x * scale
    # Each column scaled by its parameter's value (d residual / d log theta: a relative
    # change of every parameter alike), singular values compared with the largest.
    J = res.jac * np.where(res.x > 0, res.x, 1.0)
    rank, groups = _rank_and_groups(J, [fp.spec for fp in free], JACOBIAN_RTOL)
    return theta, rank, groups, float(np.linalg.norm(res.fun) * unit), best


def _check_bare(model: RowModel, free: Sequence[FreeParameter], predicted) -> None:
    """An error naming a bare parameter that changes no row's prediction, like
    :func:`check_free` for model parameters: neither doubled plus one nor moved to the
    ends of the random starts' range (``10^±START_DECADES`` times its value; a
    parameter behind a ``max`` may matter in one direction only)."""
    theta0 = _current_values(model, free)
    for j, fp in enumerate(free):
        if fp.level != "param":
            continue
        moves = [2 * theta0[j] + 1]
        if theta0[j] > 0:
            moves += [theta0[j] * 10.0 ** START_DECADES, theta0[j] / 10.0 ** START_DECADES]
        for value in moves:
            try:
                moved = model.predict(None, {_PARAMS: fp.parameter_values(value)})
            except InputError:
                break                        # it changes them enough to break a row
            if not np.array_equal(moved, predicted):
                break
        else:
            raise InputError(f"free parameter '{fp.spec}' cannot affect the evaluated metric "
                             f"'{model.metric}': no row's prediction depends on it (is it "
                             "set by a column of every row, or used by another metric?)")


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
    #: the per-element fits (:func:`assess_elements`), empty otherwise
    elements: tuple["ElementFit", ...] = ()

    @property
    def test(self) -> np.ndarray:
        return np.array(self.fit.test if self.fit else range(len(self.measured)), dtype=int)

    @property
    def train(self) -> np.ndarray:
        return np.array(self.fit.train if self.fit else (), dtype=int)

    @property
    def scored(self) -> np.ndarray:
        """The rows the figures are over (:func:`scored_rows`)."""
        return scored_rows(self.train, self.test)


def scored_rows(train, test):
    """The test rows, or the training rows when every row trained (``--test-fraction
    0``): the rows every figure of an assessment is computed over."""
    return test if len(test) else train


def assess(arch: Architecture, rows: Sequence[MeasurementRow], *, app=None,
           metric: str = "time", aggregate: str | None = None,
           free: Sequence[str] | str | None = None, test_fraction: float = 0.2,
           seed: int = 0, params: MappingT[str, Any] | None = None,
           source: str | None = None, starts: int = STARTS,
           progress: Callable[[int], None] | None = None,
           residuals: str = "absolute") -> Assessment:
    """Predict every row, fit ``free`` parameters on a seeded train split if any, and
    compare predictions with measurements on the test rows (``progress`` and
    ``residuals``: those of :func:`fit_parameters`).  A ``SPEC@COLUMN`` parameter has
    one value per value of the column (:func:`expand_groups`)."""
    model = RowModel(arch, rows, metric, aggregate, app, params, source)
    measured = np.array([r.measured for r in rows], dtype=float)
    free_params = expand_groups(parse_free(arch, free, app), rows) if free else None
    if free_params and rows:
        check_free(model.bound_arch(0), free_params, model.metric)
    predicted = model.predict()          # a row that cannot be evaluated stops here
    if free_params:
        _check_bare(model, free_params, predicted)
    if not free_params:
        return Assessment(fidelity(predicted, measured), None, predicted, measured, model)
    train, test = split_rows(len(rows), test_fraction, seed)
    fit = fit_parameters(model, free_params, train, starts, seed, progress, residuals,
                         explain=True)
    fit = replace(fit, test=tuple(int(i) for i in test))
    if any(fp.label is not None for fp in fit.free):
        final = model                    # no one architecture holds a value per group
        predicted = predict_fitted(model, fit)
    else:
        bare = {fp.target: fit.values[fp.spec] for fp in fit.free if fp.level == "param"}
        final = RowModel(fit.architecture, rows, metric, aggregate, app,
                         {**(params or {}), **bare}, source)
        final.share_rows(model)
        predicted = final.predict()
    on = scored_rows(train, test)
    result = fidelity(predicted[on], measured[on], n=len(rows), n_train=len(train),
                      fitted=fit.values)
    return Assessment(result, fit, predicted, measured, final)


# --------------------------------------------------------------------------- per element

#: the column of an element given as ``ELEMENT=-``: the measured total minus the other
#: elements' columns (GSLA: t_c = t_w - t_1 - t_k)
REST = "-"


@dataclass(frozen=True)
class ElementFit:
    """One element fitted on its own column: the ``column`` (``-``: the rest), its
    parameters' ``fit`` and the ``result`` of its own values against that column on the
    test rows (the training rows with ``--test-fraction 0``)."""

    element: str
    column: str
    fit: FitResult | None
    result: FidelityResult

    def to_dict(self) -> dict:
        return {"element": self.element, "column": self.column,
                **(self.fit.to_dict() if self.fit else {"fitted": {}}),
                "fidelity": self.result.to_dict()}


def parse_element_columns(text: str | Sequence[str]) -> dict[str, str]:
    """``host=t1,gpu=tk,pcie=-`` → ``{element: column}`` (``-``: :data:`REST`)."""
    items = text.split(",") if isinstance(text, str) else [i for t in text for i in t.split(",")]
    out: dict[str, str] = {}
    for item in (i.strip() for i in items):
        if not item:
            continue
        element, eq, column = (part.strip() for part in item.partition("="))
        if not eq or not element or not column:
            raise InputError(f"--measured-element '{item}': expected ELEMENT=COLUMN "
                             f"(or ELEMENT={REST} for the measured total minus the others)")
        if element in out:
            raise InputError(f"--measured-element: element '{element}' is given twice")
        out[element] = column
    if not out:
        raise InputError("--measured-element: no ELEMENT=COLUMN given")
    if list(out.values()).count(REST) > 1:
        raise InputError(f"--measured-element: only one element can take the rest ({REST})")
    return out


def _element_measured(rows: Sequence[MeasurementRow], columns: MappingT[str, str]
                      ) -> dict[str, np.ndarray]:
    """Each element's measured values, read from its column of every row (the rest:
    the measured total minus the other columns)."""
    from mapping.calibration.measurements import parse_cell_number

    out = {}
    for element, column in columns.items():
        if column == REST:
            continue
        values = []
        for row in rows:
            if column not in row.cells:
                raise row.error(f"no column '{column}' (--measured-element {element}="
                                f"{column}; columns: {', '.join(row.cells)})")
            value = parse_cell_number(row.cells[column])
            if value is None:
                raise row.error(f"expected a number for element '{element}', got "
                                f"'{row.cells[column]}'", column)
            values.append(float(value))
        out[element] = np.array(values)
    for element, column in columns.items():
        if column == REST:
            total = np.array([r.measured for r in rows], dtype=float)
            out[element] = total - sum(out.values(), np.zeros(len(rows)))
    return {e: out[e] for e in columns}


@dataclass(frozen=True)
class ElementModel:
    """One element of a per-element fit: its measured ``column`` (``-``: the rest), the
    ``model`` of its own part of every row (rows measured by that column) and the free
    parameters it ``owns``."""

    element: str
    column: str
    model: RowModel
    owns: tuple[FreeParameter, ...]


def element_models(arch: Architecture, rows: Sequence[MeasurementRow],
                   columns: MappingT[str, str], *, app=None, metric: str = "time",
                   aggregate: str | None = None,
                   free: Sequence[str] | str | None = None,
                   params: MappingT[str, Any] | None = None,
                   source: str | None = None) -> list[ElementModel]:
    """The :class:`ElementModel` of each element of ``columns`` (element → measured
    column); every free parameter must belong to the elements of one column."""
    free_params = parse_free(arch, free, app) if free else []
    for fp in free_params:
        if fp.by is not None:
            raise InputError(f"free parameter '{fp.spec}': a per-element fit "
                             "(--measured-element) does not take group-specific parameters")
    for element in columns:
        if element not in arch.elements:
            raise InputError(f"--measured-element: '{element}' is not an element of "
                             f"'{arch.name}' (elements: {', '.join(arch.elements)})")
    owner: dict[str, list[FreeParameter]] = {e: [] for e in columns}
    for fp in free_params:
        holders = {e for e in fp.elements if e in columns}
        if fp.level == "param" or len(holders) != 1 or set(fp.elements) - holders:
            raise InputError(f"free parameter '{fp.spec}' does not belong to exactly one "
                             "element of --measured-element: a per-element fit fits each "
                             "element's own parameters on its own column")
        owner[holders.pop()].append(fp)
    measured_by = _element_measured(rows, columns)
    out = []
    for element, column in columns.items():
        own = [replace(r, measured=float(v)) for r, v in zip(rows, measured_by[element])]
        model = RowModel(arch, own, metric, aggregate, app, params, source, element=element)
        if owner[element]:
            check_free(model.bound_arch(0), owner[element], model.metric)
        out.append(ElementModel(element, column, model, tuple(owner[element])))
    return out


def fit_elements(elements: Sequence[ElementModel], arch: Architecture, train, test=(),
                 starts: int = STARTS, seed: int = 0, progress=None,
                 residuals: str = "absolute", explain: bool = False
                 ) -> tuple[list[FitResult | None], FitResult | None]:
    """Each element's own parameters fitted on its own column over the ``train`` rows
    (``None`` for an element that owns none), and all of them as one fit (``None``
    when nothing is free)."""
    fits: list[FitResult | None] = []
    for e in elements:
        fit = None
        if e.owns:
            fit = replace(fit_parameters(e.model, e.owns, train, starts, seed, progress,
                                         residuals, explain=explain),
                          test=tuple(int(i) for i in test))
        fits.append(fit)
    done = [f for f in fits if f is not None]
    return fits, (_merged_fit(arch, done, train, test) if done else None)


def assess_elements(arch: Architecture, rows: Sequence[MeasurementRow],
                    columns: MappingT[str, str], *, app=None, metric: str = "time",
                    aggregate: str | None = None,
                    free: Sequence[str] | str | None = None, test_fraction: float = 0.2,
                    seed: int = 0, params: MappingT[str, Any] | None = None,
                    source: str | None = None, starts: int = STARTS, progress=None,
                    residuals: str = "absolute",
                    elements: Sequence[ElementModel] | None = None) -> Assessment:
    """The GSLA paper's procedure: each element of ``columns`` (element → measured
    column) fitted on its own column -- its prediction being its own part of the
    system value, the evaluator's per-element value (:class:`RowModel` with
    ``element``) -- on one seeded train split; then the whole model, with every fitted
    value, compared with the measured total on the test rows.  Every free parameter
    must belong to the elements of one column.  ``elements``: those
    :func:`element_models` gives, already built (the folds share them)."""
    if elements is None:
        elements = element_models(arch, rows, columns, app=app, metric=metric,
                                  aggregate=aggregate, free=free, params=params,
                                  source=source)
    train, test = split_rows(len(rows), test_fraction, seed)
    on = scored_rows(train, test)
    fits, merged = fit_elements(elements, arch, train, test, starts, seed, progress,
                                residuals, explain=True)
    per = []
    for e, fit in zip(elements, fits):
        predicted = predict_fitted(e.model, fit) if fit else e.model.predict()
        y = np.array([r.measured for r in e.model.rows], dtype=float)
        per.append(ElementFit(e.element, e.column, fit, fidelity(
            predicted[on], y[on], n=len(rows), n_train=len(train) if fit else 0,
            fitted=fit.values if fit else None)))
    final = RowModel(merged.architecture if merged else arch, rows, metric, aggregate, app,
                     params, source)
    predicted = final.predict()
    measured = np.array([r.measured for r in rows], dtype=float)
    result = fidelity(predicted[on], measured[on], n=len(rows),
                      n_train=len(train) if merged else 0,
                      fitted=merged.values if merged else None)
    return Assessment(result, merged, predicted, measured, final, tuple(per))


def _merged_fit(arch: Architecture, fits: Sequence[FitResult], train, test) -> FitResult:
    """The per-element fits as one: every value, the architecture holding them all."""
    free = tuple(fp for f in fits for fp in f.free)
    theta = [f.values[fp.spec] for f in fits for fp in f.free]
    methods = sorted({f.method for f in fits})
    return FitResult(free, {fp.spec: float(v) for fp, v in zip(free, theta)},
                     "per element: " + ", ".join(methods), fitted_architecture(arch, free, theta),
                     tuple(int(i) for i in train), tuple(int(i) for i in test),
                     sum(f.rank for f in fits),
                     tuple(g for f in fits for g in f.indistinguishable),
                     tuple(w for f in fits for w in f.warnings),
                     float(math.sqrt(sum(f.residual_norm ** 2 for f in fits))),
                     sum(f.starts for f in fits), 0, fits[0].residuals,
                     tuple(b for f in fits for b in f.bounds),
                     tuple(a for f in fits for a in f.at_bound))
