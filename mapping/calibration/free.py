"""The free-parameter language of a fit.

A free parameter is written ``TARGET.METRIC.PARAM``: ``TARGET`` is an element (``gpu``,
``big[0]``), an element type (``A15``: one value shared by every element of that type
that takes its ``METRIC`` model from the type) or an array (``big``: one value shared by
its members).  Or it is the bare name of a ``param`` of the ``.sdf`` or ``.moa``:
each row is then bound again with its value.  ``PARAM@COLUMN`` makes it
group-specific: one value per value of the measurement column ``COLUMN``
(:func:`expand_groups`, ``PARAM@COLUMN=VALUE``), each applied to its group's rows only,
the other free parameters shared by every row.

Every free parameter stays within the bounds of its meaning, declared once on its
model's pydantic ``Parameters`` (``Field(gt=0, le=1)`` for an efficiency;
:func:`moa.cost_models.parameter_bounds`); a bare ``param`` is non-negative and takes
the bounds of any model argument that is that param alone (:func:`free_bounds`).  A
free parameter may be a pattern (``*.time.efficiency``, ``hide_*``; :func:`expand_free`).
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Mapping as MappingT, Sequence
from moa import Architecture, CostSpec
from moa.cost_models import (NON_NEGATIVE, Bounds, fittable_parameters, model_class,
                             parameter_bounds, parameter_start_scale)
from mapping.errors import InputError
from mapping.calibration.measurements import MeasurementRow


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
    #: ``PARAM@COLUMN``: one value per value of the measurement column ``by``; ``label``
    #: is the value this copy holds (``spec`` then reads ``PARAM@COLUMN=LABEL``)
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


def free_names(arch: Architecture, app=None) -> dict[str, tuple[str, ...]]:
    """What a ``--fit`` pattern is matched against: every name the option accepts, each
    with the ``ELEMENT.METRIC.PARAM`` names it sets.  In order: the bare name of every
    ``param`` of ``app`` and ``arch`` (setting nothing of an element), every
    ``ELEMENT.METRIC.PARAM`` of a fittable number of an element's model
    (:func:`moa.cost_models.fittable_parameters`), then ``TYPE.METRIC.PARAM`` and
    ``ARRAY.METRIC.PARAM`` where the type's or array's members share that model."""
    names: dict[str, tuple[str, ...]] = {p: () for p in (app.params if app else ())}
    names.update({p: () for p in arch.params if p not in names})

    def fittable(spec) -> list[str]:
        return fittable_parameters(model_class(_model_name(spec)).Parameters)

    for e in arch.elements.values():
        for metric, spec in e.costs.items():
            names.update({f"{e.name}.{metric}.{p}": (f"{e.name}.{metric}.{p}",)
                          for p in fittable(spec)})
    for t in arch.types.values():
        for metric, spec in t.costs.items():
            members = [e.name for e in arch.elements.values()
                       if e.type_name == t.name and metric not in e.own_costs]
            names.update({f"{t.name}.{metric}.{p}": tuple(f"{m}.{metric}.{p}" for m in members)
                          for p in fittable(spec) if members})
    for base, members in arch.arrays().items():
        specs = [arch.elements[m].costs for m in members]
        for metric in specs[0]:
            if len({_model_name(s[metric]) if metric in s else None for s in specs}) == 1:
                names.update({f"{base}.{metric}.{p}": tuple(f"{m}.{metric}.{p}" for m in members)
                              for p in fittable(specs[0][metric])})
    return names


def _model_name(spec) -> str:
    return getattr(spec, "model", None) or spec.name


def expand_free(arch: Architecture, items: Sequence[str], app=None) -> list[str]:
    """``items`` with each pattern (wildcards ``*`` and ``?``, e.g.
    ``*.time.efficiency``, ``hide_*``, ``A15.*``, ``big[*].time.alpha``) replaced by the
    names it matches (:func:`free_names`, in their order).  A type's or array's name is
    taken only where the pattern matches none of the element names it sets, so that
    ``*.time.alpha`` gives each element its own value and ``A15.*`` the type's shared
    ones.  A pattern that matches nothing is an error."""
    names = None
    out: list[str] = []
    for item in items:
        if not any(c in item for c in PATTERN_CHARACTERS):
            out.append(item)
            continue
        pattern, mark, by = item.partition(GROUP_MARK)      # 'hide_*@gpu': one per gpu
        names = free_names(arch, app) if names is None else names
        literal = pattern.strip().replace("[", "[[]")
        hits = [n for n in names if fnmatch.fnmatchcase(n, literal)]
        own = {n for n in hits if names[n] == (n,)}
        matched = [n + mark + by for n in hits
                   if names[n] in ((), (n,)) or not own.intersection(names[n])]
        if not matched:
            shown = ", ".join(list(names)[:12]) + (f", ... ({len(names)} in all)"
                                                   if len(names) > 12 else "")
            raise InputError(f"free parameter pattern '{item}' matches nothing (it is "
                             "matched against the bare names of params and "
                             "ELEMENT.METRIC.PARAM, TYPE.METRIC.PARAM and ARRAY.METRIC.PARAM "
                             f"of every model: {shown or 'none'})")
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


#: ``PARAM@COLUMN``: a free parameter with one value per value of a column
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
    """Each ``PARAM@COLUMN`` parameter as one parameter per value of ``COLUMN`` among
    ``rows`` (in order of first appearance), ``PARAM@COLUMN=VALUE``; the others as
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
        for declared in _alone(arch, fp, parameter_bounds):
            b = b.intersect(declared)
        out.append(b)
    return out


def free_start_scales(arch: Architecture, free: Sequence[FreeParameter]
                      ) -> list[float | None]:
    """The typical size each free parameter's model declares
    (:func:`moa.cost_models.parameter_start_scale`; for a bare ``param``, that of the
    first model argument that is that param alone), or None: what random starts draw
    a parameter starting at 0 around."""
    out = []
    for fp in free:
        if fp.level != "param":
            out.append(parameter_start_scale(model_class(fp.model).Parameters, fp.param))
            continue
        out.append(next(iter(_alone(arch, fp, parameter_start_scale)), None))
    return out


def ordered_chains(free: Sequence[FreeParameter]) -> list[list[int]]:
    """Indices into ``free`` of parameters whose values must not decrease in that order:
    for every chain a model declares (:attr:`moa.CostModel.ordered`), its members that
    are free parameters of the same elements and metric, in the chain's order (two or
    more).  A fit keeps each such run in order; bare ``param`` are not in any."""
    out = []
    groups: dict = {}
    for j, fp in enumerate(free):
        if fp.level != "param" and fp.label is None:
            groups.setdefault((fp.elements, fp.metric, fp.model), {})[fp.param] = j
    for (_, _, model), by_param in groups.items():
        for chain in getattr(model_class(model), "ordered", ()):
            run = [by_param[p] for p in chain if p in by_param]
            if len(run) > 1:
                out.append(run)
    return out


def _alone(arch: Architecture, fp: FreeParameter, read) -> list:
    """``read(Parameters, argument)`` of every model argument that is the bare param
    ``fp`` alone (``dispatch = dispatch_kepler``), where it is not None."""
    specs = [s for e in arch.elements.values() for s in e.costs.values()]
    specs += [s for t in arch.types.values() for s in t.costs.values()]
    out = []
    for spec in specs:
        for arg, value in getattr(spec, "args", {}).items():
            if getattr(value, "name", None) == fp.target and \
                    getattr(value, "names", None) == {fp.target}:
                declared = read(model_class(spec.model).Parameters, arg)
                if declared is not None:
                    out.append(declared)
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
    group of rows (``PARAM@COLUMN=VALUE``) keeps the file's value there: one
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
