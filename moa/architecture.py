"""The Model of Architecture: processing elements (PEs) and communication nodes (CNs)
joined by links, each element carrying one cost model per metric (Pelcat et al., 2018).

Cost-model arguments, ``lambda`` and attributes may be parametric expressions (objects
with ``evaluate(env)``); :meth:`Architecture.bind` evaluates them and instantiates the
cost models through the registry.
"""
from __future__ import annotations

import numbers
import string
import sys
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

import networkx as nx

from moa.cost_models import CostModel, check_arguments, make_model, model_class
from moa.errors import ArchitectureError, CostModelError
from moa.names import member_name, split_term, term_name  # noqa: F401  (re-exported)
from moa.routing import ROUTE_COST, route_to_cn, shortest_cn_path
from moa.units import default_unit

#: who pays for a CN's communication tokens: the CN itself (LSLA), the PEs at
#: both ends of the channel, or both
CHARGES = ("self", "ends", "both")
#: an architecture's ``lambda`` and ``aggregate`` where it names none (a file writes
#: them only where they differ)
DEFAULT_LAMBDA = 1.0
DEFAULT_AGGREGATE = "sum"


def resolve(value, env):
    """A number for ``value``: itself, or the evaluation of an expression in ``env``."""
    evaluate = getattr(value, "evaluate", None)
    return evaluate(env) if evaluate is not None else value


#: the element's names a template argument of a cost model may use (``lookup``'s key)
PLACEHOLDERS = ("type", "element", "array")
#: sets of route preferences whose routes an architecture keeps for its bound copies
_ROUTINGS_KEPT = 64


#: the value of each placeholder for an element: its type's name (its own without a
#: type), its name, its array's base name (its own outside an array)
_NAMES = {"type": lambda e: e.type_name or e.name, "element": lambda e: e.name,
          "array": lambda e: e.array[0] if e.array else e.name}


def element_names(element: "Element") -> dict[str, str]:
    """The values of :data:`PLACEHOLDERS` for ``element``."""
    return {p: _NAMES[p](element) for p in PLACEHOLDERS}


def _templates(spec) -> dict[str, str]:
    """Template parameter → its text (given, or the model's default) of a cost spec."""
    try:
        cls = model_class(spec.model)
    except CostModelError:
        return {}                       # make_model reports the unknown model
    out = {}
    for name in getattr(cls, "templates", ()):
        field_ = cls.Parameters.model_fields.get(name)
        text = spec.args.get(name, field_.default if field_ is not None else None)
        if isinstance(text, str):
            out[name] = text
    return out


def _placeholders(costs: Mapping) -> tuple[str, ...] | None:
    """The placeholders the templates of ``costs`` use (all of them where a template
    is malformed or names an unknown one: filling it reports the error); None without
    any template."""
    used, templated = set(), False
    for spec in costs.values():
        if isinstance(spec, CostModel):
            continue
        for text in _templates(spec).values():
            templated = True
            try:
                fields = {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
            except ValueError:
                fields = {"?"}
            used |= fields if fields <= set(PLACEHOLDERS) else set(PLACEHOLDERS)
    return tuple(p for p in PLACEHOLDERS if p in used) if templated else None


def _fill_templates(spec, element: "Element", metric: str) -> dict[str, str]:
    """The template parameters of ``spec`` with ``{type}``, ``{element}`` and
    ``{array}`` replaced by ``element``'s names; an unknown placeholder is an error
    naming element, metric, model and parameter."""
    names = element_names(element)
    out = {}
    for param, text in _templates(spec).items():
        where = (f"element '{element.name}', metric '{metric}': model '{spec.model}': "
                 f"parameter '{param}' = {text!r}: ")
        try:
            fields = list(string.Formatter().parse(text))
        except ValueError as exc:
            raise CostModelError(f"{where}{exc} (write {{{{ and }}}} for literal braces)",
                                 spec.origin or element.origin) from None
        for _, field_name, spec_, conversion in fields:
            if field_name is None:
                continue
            if field_name not in PLACEHOLDERS or spec_ or conversion:
                shown = "{" + field_name + (f"!{conversion}" if conversion else "") \
                    + (f":{spec_}" if spec_ else "") + "}"
                raise CostModelError(f"{where}unknown placeholder '{shown}' (known: "
                                     + ", ".join("{" + p + "}" for p in PLACEHOLDERS) + ")",
                                     spec.origin or element.origin)
        out[param] = text.format_map(names)
    return out


@dataclass(frozen=True)
class CostSpec:
    """An unbound cost-model call ``model(args)`` as written in a ``.moa`` file."""

    model: str
    args: Mapping[str, Any] = field(default_factory=dict)
    origin: tuple | None = field(default=None, compare=False, repr=False)


def cost_text(cost) -> str:
    """``model(arg=value, ...)`` of a :class:`CostSpec` or a bound :class:`CostModel`."""
    if isinstance(cost, CostModel):
        args = cost.params.model_dump()
    else:
        args = getattr(cost, "args", {})
    name = getattr(cost, "model", None) or getattr(cost, "name", "?")
    return f"{name}(" + ", ".join(f"{k}={_plain(v)}" for k, v in args.items()) + ")"


def _plain(value):
    """``value`` as GraphML and JSON hold it: numbers and strings as they are, anything
    else (an expression, a tuple) as its text."""
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, numbers.Real):
        return float(value)
    return str(value)


@dataclass(frozen=True)
class ElementType:
    name: str
    costs: Mapping[str, CostSpec] = field(default_factory=dict)
    attrs: Mapping[str, Any] = field(default_factory=dict)
    local: str | None = None
    origin: tuple | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Element:
    """A PE or CN.  ``costs`` maps a metric to a :class:`CostSpec` (unbound) or a
    :class:`CostModel` (bound).  ``own_costs``/``own_attrs`` are those written on the
    element itself, on top of its ``type``; ``array`` is ``(base, index)`` for members
    of ``pe NAME[i..j]``."""

    name: str
    kind: str
    costs: Mapping[str, Any] = field(default_factory=dict)
    attrs: Mapping[str, Any] = field(default_factory=dict)
    local: str | None = None
    type_name: str | None = None
    own_costs: Mapping[str, Any] = field(default_factory=dict)
    own_attrs: Mapping[str, Any] = field(default_factory=dict)
    own_local: str | None = None
    array: tuple[str, int] | None = None
    origin: tuple | None = field(default=None, compare=False, repr=False)

    @property
    def is_pe(self):
        return self.kind == "pe"

    def model(self, metric: str) -> CostModel | None:
        return self.costs.get(metric)

    @property
    def charge(self) -> str:
        """Who pays for this CN's communication tokens: ``self``, ``ends`` or ``both``."""
        return self.attrs.get("charge", "self")

    @property
    def keeps_tokens(self) -> bool:
        """This CN carries the communication tokens of its channels itself (``charge``
        ``self`` or ``both``)."""
        return self.charge != "ends"

    @property
    def charges_ends(self) -> bool:
        """This CN charges copies of its channels' tokens to the PEs at their ends
        (``charge`` ``ends`` or ``both``)."""
        return self.charge != "self"


def _known(value) -> bool:
    """Whether ``value`` is known now (no expression that waits for parameters)."""
    return getattr(value, "evaluate", None) is None


def _check_name(name, kind, origin) -> None:
    if not isinstance(name, str) or not name:
        raise ArchitectureError(f"{kind} name must be a non-empty string, got {name!r}", origin)


def check_lambda(value, origin=None, where: str = "") -> None:
    """``lambda`` is a finite non-negative number (``where`` says how it was computed)."""
    # chained comparisons: false for NaN, exact for integers beyond the float range
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not 0 <= value <= sys.float_info.max:
        raise ArchitectureError(f"lambda must be a finite non-negative number, got "
                                f"{value}{where}", origin, "lambda")


def _check_own(what: str, costs: Mapping, attrs: Mapping, local, origin) -> None:
    """The values an element or a type is declared with, where they are known: each
    cost model's arguments in range (:func:`~moa.cost_models.check_arguments`), no
    attribute NaN, ``local`` the name of a CN."""
    for metric, spec in costs.items():
        if isinstance(spec, CostSpec):
            check_arguments(spec.model, spec.args, f"{what}, metric '{metric}': ",
                            spec.origin or origin)
        elif not isinstance(spec, CostModel):
            raise ArchitectureError(f"{what}, metric '{metric}': a cost model must be a "
                                    f"CostSpec or a CostModel, got {spec!r}", origin, metric)
    for key, value in attrs.items():
        if isinstance(value, float) and value != value:
            raise ArchitectureError(f"{what}: {key} is not a number (nan)", origin, key)
    if local is not None and not isinstance(local, str):
        raise ArchitectureError(f"{what}: local must name a communication node, got "
                                f"'{local}'", origin, "local")


@dataclass(frozen=True)
class SystemMetric:
    """``metric NAME = EXPR``: a metric computed from the system values of
    other metrics.  In ``expr``, a name ``M[AGG]`` is metric ``M`` aggregated by ``AGG``,
    a bare name is a parameter or another system metric."""

    name: str
    expr: Any
    origin: Any = field(default=None, compare=False)

    @property
    def terms(self) -> tuple[tuple[str, str], ...]:
        """The distinct ``(metric, aggregate)`` terms, in order of appearance."""
        names = getattr(self.expr, "names", frozenset())
        found = (split_term(n) for n in sorted(names))
        return tuple(t for t in found if t is not None)

    @property
    def references(self) -> tuple[str, ...]:
        """The bare names of the expression (parameters and system metrics)."""
        names = getattr(self.expr, "names", frozenset())
        return tuple(sorted(n for n in names if split_term(n) is None))

    def __str__(self):
        return f"metric {self.name} = {self.expr}"


class Architecture:
    """A named MoA: ordered parameters, element types, elements and undirected links.

    Built by :func:`dsl.loads_moa` from text, or in Python (a cost model is a
    :class:`CostSpec` per metric, bound to a :class:`~moa.cost_models.CostModel` by
    :meth:`bind`)::

        a = Architecture("duo", aggregate="sum")
        a.add_pe("cpu", costs={"time": CostSpec("lsla", {"alpha": 1})})
        a.add_pe("dsp", costs={"time": CostSpec("lsla", {"alpha": 0.5})})
        a.add_cn("bus", costs={"time": CostSpec("lsla", {"alpha": 2})})
        a.add_link("cpu", "bus")
        a.add_link("dsp", "bus")

    ``lambda_`` scales the CNs' values (LSLA's lambda); ``aggregate`` is the name of the
    default aggregation: any name here, checked against the registry of aggregations
    (:data:`mapping.semantics.aggregation.AGGREGATIONS`) where a mapping is valued, and where a
    file is read for a command; ``aggregate_origin`` is where a file names it."""

    def __init__(self, name: str = "arch", params: Mapping[str, Any] | None = None,
                 lambda_: Any = DEFAULT_LAMBDA, aggregate: str = DEFAULT_AGGREGATE,
                 origin=None, aggregate_origin=None):
        if not isinstance(name, str) or not name:
            raise ArchitectureError(f"architecture name must be a non-empty string, got "
                                    f"{name!r}", origin)
        self.name = name
        self.params: dict[str, Any] = dict(params or {})
        if _known(lambda_):
            check_lambda(lambda_, origin)
        self.lambda_ = lambda_
        if not isinstance(aggregate, str) or not aggregate.isidentifier():
            raise ArchitectureError(f"aggregate must be the name of an aggregation, got "
                                    f"{aggregate!r}", aggregate_origin or origin, "aggregate")
        self.aggregate = aggregate
        self.aggregate_origin = aggregate_origin
        self.types: dict[str, ElementType] = {}
        self.elements: dict[str, Element] = {}
        self.links: list[tuple[str, str]] = []
        #: system metrics by name (``metric NAME = EXPR``), in declaration order
        self.system_metrics: dict[str, SystemMetric] = {}
        #: declared units of metrics and parameters (``[unit = "s"]``), by name
        self.units: dict[str, str] = {}
        self.origin = origin
        self._graph: nx.Graph | None = None
        self._routes: dict[tuple[str, str], tuple[str, ...]] = {}
        self._charging: bool | None = None
        #: the routing graph and routes of bound copies, by their route preferences
        self._bound_routing: dict[tuple, tuple[nx.Graph, dict]] = {}

    def __repr__(self):
        return f"Architecture({self.name!r}, pes={len(self.pes)}, cns={len(self.cns)})"

    @property
    def pes(self) -> list[str]:
        return [e.name for e in self.elements.values() if e.kind == "pe"]

    @property
    def cns(self) -> list[str]:
        return [e.name for e in self.elements.values() if e.kind == "cn"]

    def add_type(self, name, costs=None, attrs=None, local=None, origin=None) -> ElementType:
        """Declare element type ``name``: ``costs`` (metric → :class:`CostSpec`),
        ``attrs`` and ``local`` that elements declared with ``type_name=name`` inherit."""
        _check_name(name, "type", origin)
        if name in self.types:
            raise ArchitectureError(f"duplicate type '{name}'", origin)
        what = f"type '{name}'"
        _check_own(what, costs or {}, attrs or {}, local, origin)
        t = ElementType(name, MappingProxyType(dict(costs or {})),
                        MappingProxyType(dict(attrs or {})), local, origin)
        self.types[name] = t
        return t

    def add_metric(self, name: str, expr, origin=None) -> SystemMetric:
        """Declare the system metric ``name = expr`` (checked when evaluated)."""
        if name in self.system_metrics:
            first = self.system_metrics[name].origin
            where = f" (first declared on line {first[1]})" if first else ""
            raise ArchitectureError(f"duplicate metric '{name}'{where}", origin)
        if name in self.params:
            raise ArchitectureError(f"metric '{name}' has the name of a parameter", origin)
        m = self.system_metrics[name] = SystemMetric(name, expr, origin)
        return m

    def unit(self, name: str) -> str | None:
        """The unit of metric or parameter ``name``: declared, else (a metric) the unit
        of its cost models' paper (their ``units``), else None."""
        declared = self.units.get(name)
        return declared if declared is not None else default_unit(name, self.elements.values())

    def add_element(self, name: str, kind: str, costs=None, attrs=None, local=None,
                    type_name=None, array=None, origin=None) -> Element:
        """Declare PE or CN ``name`` (``kind`` ``"pe"`` or ``"cn"``); its own ``costs``
        (metric → :class:`CostSpec`), ``attrs`` and ``local`` override its type's."""
        fields = self._element_fields(kind, costs, attrs, local, type_name, name, origin)
        if name in self.elements:
            raise ArchitectureError(f"duplicate element '{name}' in architecture '{self.name}'",
                                    origin)
        element = Element(name, kind, *fields, array, origin)
        self.elements[name] = element
        self._invalidate()
        return element

    def add_array(self, base: str, lo: int, hi: int, kind: str, costs=None, attrs=None,
                  local=None, type_name=None, origin=None) -> list[Element]:
        """Declare the members ``base[lo]`` .. ``base[hi]`` of an array of PEs or CNs, as
        :meth:`add_element` would one by one; the members share their (immutable)
        costs and attributes, so that a large array costs one object per member."""
        for bound in (lo, hi):
            if isinstance(bound, bool) or not isinstance(bound, int) or bound < 0:
                raise ArchitectureError(f"{kind} '{base}[{lo}..{hi}]': an index must be a "
                                        f"non-negative integer, got {bound!r}", origin, "range")
        if hi < lo:
            raise ArchitectureError(f"{kind} '{base}[{lo}..{hi}]': empty range", origin, "range")
        fields = self._element_fields(kind, costs, attrs, local, type_name, base, origin)
        elements = self.elements
        members = []
        for i in range(lo, hi + 1):
            name = member_name(base, i)
            if name in elements:
                raise ArchitectureError(f"duplicate element '{name}' in architecture "
                                        f"'{self.name}'", origin)
            element = Element(name, kind, *fields, (base, i), origin)
            elements[name] = element
            members.append(element)
        self._invalidate()
        return members

    def _element_fields(self, kind, costs, attrs, local, type_name, name, origin):
        """``(costs, attrs, local, type_name, own_costs, own_attrs, own_local)`` of an
        element declared with these own values on top of its type."""
        if kind not in ("pe", "cn"):
            raise ArchitectureError(f"element kind must be 'pe' or 'cn', got '{kind}'", origin)
        _check_name(name, kind, origin)
        own_costs, own_attrs = dict(costs or {}), dict(attrs or {})
        _check_own(f"element '{name}'", own_costs, own_attrs, local, origin)
        eff_costs, eff_attrs, eff_local = {}, {}, local
        if type_name is not None:
            t = self.types.get(type_name)
            if t is None:
                raise ArchitectureError(f"{kind} '{name}' has unknown type '{type_name}' "
                                        f"(known: {', '.join(self.types) or 'none'})", origin,
                                        "type")
            eff_costs.update(t.costs)
            eff_attrs.update(t.attrs)
            eff_local = local if local is not None else t.local
        eff_costs.update(own_costs)
        eff_attrs.update(own_attrs)
        if "charge" in eff_attrs:
            charge = eff_attrs["charge"]
            if kind == "pe":
                raise ArchitectureError(f"pe '{name}': 'charge' is an attribute of "
                                        "communication nodes (who pays for their tokens)",
                                        origin, "charge")
            if not isinstance(charge, str) or charge not in CHARGES:
                raise ArchitectureError(f"cn '{name}': charge must be one of "
                                        f"{', '.join(CHARGES)}, got '{charge}'", origin,
                                        "charge")
        target = self.elements.get(eff_local) if eff_local is not None else None
        if target is not None and target.is_pe:
            raise ArchitectureError(f"{kind} '{name}': local '{eff_local}' is a PE; it must "
                                    "name a CN", origin, "local")
        return (MappingProxyType(eff_costs), MappingProxyType(eff_attrs), eff_local, type_name,
                MappingProxyType(own_costs), MappingProxyType(own_attrs), local)

    def add_pe(self, name, **kwargs) -> Element:
        """Declare processing element ``name`` (keywords as :meth:`add_element`:
        ``costs``, ``attrs``, ``local`` — the CN that carries channels between two
        actors on this PE —, ``type_name``)."""
        return self.add_element(name, "pe", **kwargs)

    def add_cn(self, name, **kwargs) -> Element:
        """Declare communication node ``name`` (keywords as :meth:`add_element`; the
        attribute ``charge`` says who pays for its tokens: ``self``, ``ends``, ``both``)."""
        return self.add_element(name, "cn", **kwargs)

    def add_link(self, a: str, b: str, origin=None) -> None:
        """Join elements ``a`` and ``b`` (a PE and a CN, or two CNs) by an undirected
        link; routes between PEs follow links through CNs only."""
        for end in (a, b):
            if end not in self.elements:
                raise ArchitectureError(f"link {a} -- {b} uses unknown element '{end}'", origin)
        if a == b:
            raise ArchitectureError(f"link {a} -- {b} joins an element to itself", origin)
        if self.elements[a].is_pe and self.elements[b].is_pe:
            raise ArchitectureError(f"link {a} -- {b} joins two PEs; PEs communicate "
                                    "through communication nodes", origin)
        self.links.append((a, b))
        self._invalidate()

    def check_locals(self) -> None:
        """Every ``local`` names a declared CN (an element may name one declared after
        it, so this waits until all are: :meth:`bind` checks it, as the parser does at
        the end of a block)."""
        for e in self.elements.values():
            if e.local is None:
                continue
            target = self.elements.get(e.local)
            if target is None or target.is_pe:
                what = "is a PE" if target is not None else "is not declared"
                raise ArchitectureError(f"{e.kind} '{e.name}': local '{e.local}' {what}; "
                                        "it must name a CN", e.origin, "local")

    def arrays(self) -> dict[str, list[str]]:
        """Array base name → member element names, in index order."""
        out: dict[str, list[str]] = {}
        for e in self.elements.values():
            if e.array is not None:
                out.setdefault(e.array[0], []).append(e.name)
        return out

    def environment(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        env = dict(self.params)
        for key, value in (overrides or {}).items():
            if key in env:
                env[key] = value
        return env

    def bind(self, overrides: Mapping[str, Any] | None = None,
             env: Mapping[str, Any] | None = None) -> "Architecture":
        """A copy whose elements hold instantiated, validated cost models."""
        env = dict(env) if env is not None else self.environment(overrides)
        for name in [n for n in self.params if n in env]:  # in place: each evaluated once
            env[name] = resolve(env[name], env)
        self.check_locals()
        lam = resolve(self.lambda_, env)
        names = sorted(n for n in getattr(self.lambda_, "names", ()) if n in env)
        where = f" (lambda = {self.lambda_} with " + ", ".join(
            f"{n} = {env[n]}" for n in names) + ")" if names else ""
        check_lambda(lam, self.origin, where)
        bound = Architecture(self.name, {k: resolve(v, env) for k, v in env.items()
                                         if k in self.params},
                             lam, self.aggregate, self.origin, self.aggregate_origin)
        bound.types = dict(self.types)
        bound.links = list(self.links)
        bound.system_metrics = dict(self.system_metrics)
        bound.units = dict(self.units)
        bound_costs: dict[tuple, Mapping] = {}
        bound_attrs: dict[int, Mapping] = {}
        placeholders: dict[int, tuple[str, ...] | None] = {}
        for e in self.elements.values():
            # members of an array share their mappings: bind each distinct one once
            # (per distinct value of the placeholders its templates use)
            if id(e.costs) not in placeholders:
                placeholders[id(e.costs)] = _placeholders(e.costs)
            used = placeholders[id(e.costs)]
            key = (id(e.costs), *(_NAMES[p](e) for p in used or ()))
            costs = bound_costs.get(key)
            if costs is None:
                filled = {metric: _fill_templates(spec, e, metric)
                          for metric, spec in e.costs.items()
                          if used is not None and not isinstance(spec, CostModel)}
                costs = {}
                for metric, spec in e.costs.items():
                    if isinstance(spec, CostModel):
                        costs[metric] = spec
                        continue
                    args = {k: resolve(v, env) for k, v in spec.args.items()}
                    args.update(filled.get(metric, {}))
                    where = f"element '{e.name}', metric '{metric}': "
                    costs[metric] = make_model(spec.model, args, where, spec.origin or e.origin)
                costs = bound_costs[key] = MappingProxyType(costs)
            attrs = bound_attrs.get(id(e.attrs))
            if attrs is None:
                attrs = bound_attrs[id(e.attrs)] = MappingProxyType(
                    {k: resolve(v, env) for k, v in e.attrs.items()})
            bound.elements[e.name] = Element(e.name, e.kind, costs, attrs, e.local, e.type_name,
                                             e.own_costs, e.own_attrs, e.own_local, e.array,
                                             e.origin)
        self._share_routing(bound)
        return bound

    def _share_routing(self, bound: "Architecture") -> None:
        """Copies bound with other values share their routes: the elements and links
        are this architecture's, so only the route preferences can differ (a sweep or a
        fit binds thousands of copies, each routing the same channels)."""
        routing = self._bound_routing
        key = tuple((name, e.attrs[ROUTE_COST]) for name, e in bound.elements.items()
                    if ROUTE_COST in e.attrs)
        shared = routing.get(key)
        if shared is None:
            if len(routing) >= _ROUTINGS_KEPT:
                routing.clear()
            shared = routing[key] = (bound.graph(), bound._routes)
        bound._graph, bound._routes = shared

    def graph(self) -> nx.Graph:
        """Elements as nodes (data: ``kind``), links as edges: the graph routes are
        found on (cached).  :meth:`to_networkx` has the elements' data too."""
        if self._graph is None:
            g = nx.Graph(name=self.name)
            # the route preference is the one attribute routing reads (moa.routing)
            g.add_nodes_from((e.name, {"kind": e.kind, **({ROUTE_COST: e.attrs[ROUTE_COST]}
                                                          if ROUTE_COST in e.attrs else {})})
                             for e in self.elements.values())
            g.add_edges_from(self.links)
            self._graph = g
        return self._graph

    def to_networkx(self) -> nx.Graph:
        """Elements as nodes, links as edges, with plain data so that
        ``nx.write_graphml`` and node-link JSON work: ``kind`` (``pe``/``cn``), ``type``
        and ``local`` where set, each attribute, and ``model.METRIC`` the text of each
        cost model (``lsla(alpha=1)``).  Node ``n``'s :class:`Element` is
        ``self.elements[n]``."""
        g = nx.Graph(name=self.name)
        costs: dict[int, dict] = {}             # array members share their mappings
        for e in self.elements.values():
            if id(e.costs) not in costs:
                costs[id(e.costs)] = {f"model.{m}": cost_text(c) for m, c in e.costs.items()}
            data = {"kind": e.kind, **{k: _plain(v) for k, v in e.attrs.items()},
                    **costs[id(e.costs)]}
            if e.type_name is not None:
                data["type"] = e.type_name
            if e.local is not None:
                data["local"] = e.local
            g.add_node(e.name, **data)
        g.add_edges_from(self.links)
        return g

    def route(self, src_pe: str, dst_pe: str) -> tuple[str, ...]:
        """The CNs between two PEs: fewest hops, never through another PE, ties broken by
        the names of the CNs along the path (lexicographically).  Raises
        :class:`~moa.errors.NoRouteError` when there is none."""
        key = (src_pe, dst_pe)
        if key not in self._routes:
            self._routes[key] = shortest_cn_path(self.graph(), src_pe, dst_pe)
        return self._routes[key]

    def route_to_cn(self, src_pe: str, cn: str) -> tuple[str, ...]:
        """The CNs from PE ``src_pe`` to CN ``cn``, ending with ``cn`` (fewest hops, as
        :meth:`route`); used for the memory traffic of ``roofline`` elements."""
        key = (src_pe, "->cn", cn)
        if key not in self._routes:
            self._routes[key] = route_to_cn(self.graph(), src_pe, cn)
        return self._routes[key]

    @property
    def charging(self) -> bool:
        """Some CN charges its communication to the end PEs
        (:attr:`Element.charges_ends`); cached, as evaluators ask once per mapping."""
        if self._charging is None:
            self._charging = any(e.charges_ends for e in self.elements.values()
                                 if not e.is_pe)
        return self._charging

    def _invalidate(self):
        self._graph = None
        self._routes = {}
        self._charging = None
        self._bound_routing = {}
