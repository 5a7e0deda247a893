"""The value of one metric on one element, from the tokens it handles.

Every element values a metric by one *rule*, the first of :data:`METRIC_RULES` that
applies to it: ``value = finish(Σ_tokens count·features(token))``.

- ``power`` is intensive: the time-weighted mean of its tokens' power (the plain mean
  without a per-token ``time`` model);
- any metric the element has a model for is extensive: the model's own features and
  finish (:class:`moa.cost_models.CostModel`);
- ``energy``, where an element has per-token ``power`` and ``time`` models but no
  ``energy`` model, is ``Σ power(t)·time(t)``.

The reference evaluator calls :meth:`MetricRule.value` on lists of tokens; the batch
evaluator tabulates :meth:`MetricRule.features` per token group and applies the same
:meth:`MetricRule.finish` to arrays of totals.  A new rule is one class plus one
``METRIC_RULES`` line.
"""
from __future__ import annotations

import functools
from typing import ClassVar, Iterable, Mapping, Sequence

import numpy as np

from dsl.expression import CONSTANTS

from moa import Element
from moa.architecture import term_name
from moa.cost_models.base import sum_features
from moa.cost_models.roofline import token_ops
from mapping.errors import MappingError, on_element
from mapping.registry import Registry


class MetricRule:
    """How ``element`` values ``metric``: ``finish(Σ count·features(token))``."""

    #: the metrics the rule is about (empty: any metric)
    metrics: ClassVar[tuple[str, ...]] = ()
    #: metrics an element gets from this rule without a model of that name
    derived: ClassVar[tuple[str, ...]] = ()
    #: number of features
    width: int = 1
    #: ``finish`` is linear: the value is a sum of per-token values
    additive: bool = True
    #: ``finish`` does not depend on the element (applied to many elements at once)
    uniform: ClassVar[bool] = False

    def __init__(self, element: Element, metric: str):
        self.element, self.metric = element, metric

    @classmethod
    def applies(cls, element: Element, metric: str) -> bool:
        raise NotImplementedError

    @property
    def model(self):
        """The model named in error messages."""
        return self.element.model(self.metric)

    @property
    def vectorizable(self) -> bool:
        return True

    def features(self, token) -> Sequence[float]:
        raise NotImplementedError

    def finish(self, totals):
        return totals[0]

    def value(self, tokens: Iterable) -> float:
        return float(self.finish(sum_features(self.features, self.width, tokens)))

    def traffic_cost(self) -> tuple[float, float] | None:
        """``(slope, intercept)`` of a memory-traffic token of ``D`` bytes, or None."""
        return None



class Intensive(MetricRule):
    """``power``: the time-weighted mean of the tokens' power."""

    metrics = ("power",)
    width = 4
    additive = False
    uniform = True

    @classmethod
    def applies(cls, element, metric):
        return metric in cls.metrics and element.model(metric) is not None

    def __init__(self, element, metric):
        super().__init__(element, metric)
        time = element.model("time")
        self._time = time if time is not None and time.per_token else None

    @property
    def vectorizable(self):
        return self.model.per_token

    def features(self, token):
        return self._features(token, self.model.token_cost(token))

    def _features(self, token, p):
        w = self._time.token_cost(token) if self._time is not None else 0.0
        return w * p, w, p, 1.0


    def finish(self, totals):
        # Σ w·p / Σ w with weights w = time, else Σ p / count, else 0 (no tokens)
        num, den, pc, cnt = (np.asarray(t, dtype=float) for t in totals)
        weighted = num / np.where(den > 0, den, 1.0)
        plain = pc / np.where(cnt > 0, cnt, 1.0)
        return np.where(den > 0, weighted, plain)


class Extensive(MetricRule):
    """A metric the element has a model for: the model's features and finish."""

    @classmethod
    def applies(cls, element, metric):
        return element.model(metric) is not None

    def __init__(self, element, metric):
        self.element, self.metric = element, metric
        self._model = m = element.model(metric)
        self.width, self.additive = len(m.features), m.additive

    @property
    def model(self):
        return self._model

    @property
    def vectorizable(self):
        return self.model.vectorizable

    def features(self, token):
        return self._model.token_features(token)

    def finish(self, totals):
        return self._model.finish(totals)

    def value(self, tokens):
        return float(self._model.element_value(tokens))

    def traffic_cost(self):
        return self._model.traffic_cost()


class EnergyFallback(MetricRule):
    """``energy`` without an energy model: ``Σ power(t)·time(t)``."""

    metrics = derived = ("energy",)

    @classmethod
    def applies(cls, element, metric):
        power, time = element.model("power"), element.model("time")
        return metric in cls.metrics and element.model(metric) is None \
            and power is not None and time is not None and power.per_token and time.per_token

    @property
    def model(self):
        return self.element.model("power")

    def features(self, token):
        return (self.element.model("power").token_cost(token)
                * self.element.model("time").token_cost(token),)


#: the rules, tried in this order; the first that applies values the element
METRIC_RULES: Registry = Registry("metric rule", error=MappingError)
METRIC_RULES.add("intensive", Intensive, "power: time-weighted mean of the tokens' power")
METRIC_RULES.add("extensive", Extensive, "the element's model for the metric")
METRIC_RULES.add("energy", EnergyFallback, "energy without a model: sum of power x time")

#: intensive metrics: an element's value is a mean over its tokens, not a sum
INTENSIVE = frozenset(Intensive.metrics)


def is_charged(metric: str) -> bool:
    """Whether a CN's ``charge = ends|both`` moves its cost of ``metric`` onto the end
    PEs: for costs that add up (time, energy), not for a mean (``power``)."""
    return metric not in INTENSIVE


_rules: tuple[int, tuple[type[MetricRule], ...]] = (0, ())


def _rule_classes() -> tuple[type[MetricRule], ...]:
    global _rules
    if _rules[0] != len(METRIC_RULES):         # the registry only grows
        _rules = (len(METRIC_RULES), tuple(METRIC_RULES.get(n) for n in METRIC_RULES))
    return _rules[1]


def rule(element: Element, metric: str) -> MetricRule | None:
    """The rule by which ``element`` values ``metric``, or None (unmodelled)."""
    for cls in _rule_classes():
        if cls.applies(element, metric):
            return cls(element, metric)
    return None


def element_metric(element: Element, tokens: Iterable, metric: str,
                   r: MetricRule | None = None) -> float | None:
    """The value of ``metric`` on ``element`` for ``tokens`` by its rule ``r`` (default
    :func:`rule`'s), or ``None`` when it has no model for it; a failure worded by
    :func:`mapping.errors.on_element`."""
    r = rule(element, metric) if r is None else r
    return None if r is None else on_element(element, metric, r.model, r.value, tokens)


#: the aggregation a result names for a system metric (its terms name their own)
SYSTEM = "system"


def aggregation_label(arch, metric: str, aggregate: str | None) -> str:
    """The aggregation a result of ``metric`` reports: :data:`SYSTEM` for a system
    metric, else ``aggregate`` or the architecture's default."""
    return SYSTEM if metric in system_metrics(arch) else (aggregate or arch.aggregate)


def system_metrics(arch) -> dict:
    """The architecture's system metrics (``metric NAME = EXPR``) by name."""
    return getattr(arch, "system_metrics", None) or {}


def base_metrics(arch, metric: str) -> set[str]:
    """The element metrics whose values ``metric`` reads: itself, or for a system metric
    the metrics of its ``M[AGG]`` terms and of the system metrics it uses (checked for
    cycles by :func:`check_metric`)."""
    sm = system_metrics(arch)
    if metric not in sm:
        return {metric}
    found: set[str] = set()
    for term_metric, _ in sm[metric].terms:
        found |= base_metrics(arch, term_metric)
    for name in sm[metric].references:
        if name in sm:
            found |= base_metrics(arch, name)
    return found


def aggregations_of(arch, metric: str, aggregate: str | None = None) -> list[str]:
    """The aggregations a value of ``metric`` goes through: ``aggregate`` (default the
    architecture's), or for a system metric those its terms and the system metrics it
    uses name."""
    sm = system_metrics(arch)
    if metric not in sm:
        return [aggregate or arch.aggregate]
    out, seen, todo = [], set(), [metric]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        out += [agg for _, agg in sm[name].terms]
        todo += [r for r in sm[name].references if r in sm]
    return out


def known_metrics(arch) -> list[str]:
    """The metrics some element of ``arch`` can value: those of its models, plus the
    ones a rule derives (``energy`` from ``power`` and ``time``), plus its system
    metrics."""
    names = set(system_metrics(arch))
    for element in arch.elements.values():
        names.update(element.costs)
        for cls in _rule_classes():
            names.update(m for m in cls.derived if cls.applies(element, m))
    return sorted(names)


def check_metric(arch, metric: str) -> None:
    """Raise :class:`MappingError` unless ``metric`` is a metric of ``arch``: one some
    element can value, or a system metric whose terms are all such metrics aggregated
    by registered aggregations, and whose references to other system metrics have no
    cycle."""
    if metric in system_metrics(arch):
        _check_system(arch, metric, [])
        return
    _check_element_metric(arch, metric)


def _check_element_metric(arch, metric: str, where: str = "", origin=None) -> None:
    if any(metric in e.costs for e in arch.elements.values()):
        return
    known = known_metrics(arch)
    if metric not in known:
        raise MappingError(f"{where}unknown metric '{metric}': no element of '{arch.name}' "
                           f"has a model for it (known metrics: {', '.join(known) or 'none'})",
                           origin)


def _check_system(arch, metric: str, path: list[str]) -> None:
    from mapping.semantics.aggregation import AGGREGATIONS
    sm = system_metrics(arch)
    m = sm[metric]
    if metric in path:
        cycle = " -> ".join(path[path.index(metric):] + [metric])
        raise MappingError(f"system metrics depend on each other in a cycle: {cycle}",
                           m.origin)
    where = f"metric '{metric}': "
    if any(metric in e.costs for e in arch.elements.values()):
        raise MappingError(f"{where}a system metric cannot have the name of a metric that "
                           "elements model", m.origin)
    for name, agg in m.terms:
        if name in sm:
            raise MappingError(f"{where}'{term_name(name, agg)}': '{name}' is a system metric; an "
                               f"aggregation does not apply to it (write '{name}')", m.origin)
        _check_element_metric(arch, name, where, m.origin)
        if agg not in AGGREGATIONS:
            raise MappingError(f"{where}unknown aggregation '{agg}' in '{term_name(name, agg)}' "
                               f"(known: {', '.join(AGGREGATIONS)})", m.origin)
    for name in m.references:
        if name in sm:
            _check_system(arch, name, path + [metric])


_ARRAY_OPS = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide,
              "**": np.power}
_ARRAY_FUNCS = {"abs": np.abs, "sqrt": np.sqrt, "log2": np.log2, "exp": np.exp,
                "ceil": np.ceil, "floor": np.floor,
                "min": lambda *a: functools.reduce(np.minimum, a),
                "max": lambda *a: functools.reduce(np.maximum, a),
                "log": lambda x, base=None: np.log(x) if base is None else np.log(x) / np.log(base)}


def system_value(expr, env: Mapping[str, object]) -> np.ndarray:
    """A system metric's ``expr`` on arrays: ``env`` maps each name (a term
    ``M[AGG]``, a parameter, another system metric) to a number or an array of values,
    one per mapping.  Element-wise IEEE arithmetic (a division by zero gives ``inf``),
    without the exact-integer and sum-noise rules of :mod:`dsl.expression`: the
    reference and the batch evaluator both come here, so they agree to the last bit."""
    from dsl.expression import BinOp, Call, Name, Neg, Num, Pos
    stack: list = []
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for node in expr.postorder():
            kind = type(node)
            if kind is Num:
                stack.append(np.float64(node.value))
            elif kind is Name:
                value = env.get(node.name, CONSTANTS.get(node.name))
                if value is None:
                    raise MappingError(f"unknown name '{node.name}' in '{expr}'", node.origin)
                stack.append(np.asarray(value, dtype=float))
            elif kind is Neg:
                stack[-1] = -stack[-1]
            elif kind is Pos:
                pass
            elif kind is BinOp:
                b = stack.pop()
                stack[-1] = _ARRAY_OPS[node.op](stack[-1], b)
            elif kind is Call:
                args = stack[len(stack) - node.arity:]
                del stack[len(stack) - node.arity:]
                stack.append(_ARRAY_FUNCS[node.func](*args))
            else:
                raise MappingError(f"'{expr}': cannot evaluate {kind.__name__} on arrays",
                                   getattr(node, "origin", None))
    return np.asarray(stack[0], dtype=float)


def term_order(system) -> list[tuple[str, str]]:
    """The terms ``(metric, aggregation)`` of a system metric in the order its
    expression prints them."""
    text = str(system.expr)
    return sorted(system.terms, key=lambda t: text.find(term_name(*t)))


def system_parts(arch, metric: str) -> list[tuple[str, str | None]]:
    """What system metric ``metric``'s expression reads besides parameters: its terms
    ``(M, AGG)`` in print order, then the system metrics it uses ``(NAME, None)``."""
    system = system_metrics(arch)[metric]
    systems = system_metrics(arch)
    return term_order(system) + [(name, None) for name in system.references
                                 if name in systems]


def compose_system(arch, metric: str, term, params: Mapping[str, object] | None = None,
                   n: int = 1) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The values ``(n,)`` of system metric ``metric`` and its terms: the
    expression of the values of its terms ``M[AGG]`` (``term(M, AGG)``, each ``(n,)``
    or a number), of the system metrics it uses (``term(NAME, None)``) and of the
    parameters ``params`` (a term shadows a parameter of its name).  Every engine
    composes a system metric here: the reference evaluator, the search's batch
    evaluator and the row batch."""
    return compose(system_metrics(arch)[metric].expr, system_parts(arch, metric), term,
                   params, n)


def compose(expr, parts: Sequence[tuple[str, str | None]], term,
            params: Mapping[str, object] | None = None, n: int = 1
            ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """:func:`compose_system` of a system metric's expression ``expr`` and its
    :func:`system_parts` ``parts``."""
    terms = {name if agg is None else term_name(name, agg): term(name, agg)
             for name, agg in parts}
    value = system_value(expr, {**(params or {}), **terms})
    return np.broadcast_to(value, (n,)).astype(float), terms


def unvalued(busy, modelled):
    """Whether an alternative has no value of a metric: it handles tokens
    (``busy``) and none of the elements that handle them has a model for the metric
    (``modelled``: some element with tokens has one) -- its sum would be a meaningless
    0.  Booleans or arrays of alternatives; the reference evaluator raises for such an
    alternative, the search's batch evaluator gives it ``inf`` (never the best), and the
    row batch leaves it to the reference evaluator, which names the row."""
    if isinstance(busy, bool) and isinstance(modelled, bool):    # one alternative
        return busy and not modelled
    return np.logical_and(busy, np.logical_not(modelled))


def work(activity, graph=None) -> float:
    """``Σ ops`` over the processing tokens of one iteration (``ops`` defaulting to
    ``quanta``, as ``roofline`` reads it): Gables' work ``f``.  A bad ``ops`` (negative,
    not finite) is a :class:`MappingError` at its actor in ``graph`` where given."""
    total = 0.0
    for t in activity.processing.values():
        try:
            total += t.count * token_ops(t)
        except ValueError as exc:
            actor = graph.actors.get(t.source) if graph is not None else None
            raise MappingError(str(exc), getattr(actor, "origin", None)) from None
    return float(total)


def total_ops(activity, graph=None) -> float | None:
    """:func:`work`, or ``None`` when no token carries ``ops`` (then ``performance`` is
    not reported: a count of quanta is no count of operations)."""
    if not any("ops" in t.attrs for t in activity.processing.values()):
        return None
    return work(activity, graph)


def performance(ops: float | None, time: float) -> float | None:
    """Gables eq. 11: ``P_attainable = work / time`` (None without work or time)."""
    if ops is None or not time > 0 or not np.isfinite(time):
        return None
    return ops / time
