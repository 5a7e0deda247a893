"""The reference evaluator: one metric of one mapping.

It places the tokens of one iteration as objects (:class:`MappedTokens`) and values
each element's list by its rule's ``value`` (:class:`TokenList`): the plain reading of
the rules, through the one valuation core (:mod:`mapping.evaluation.core`) that the row
batch drives with arrays.  It is the tests' oracle."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping as MappingT, Sequence

from moa import Architecture
from moc import SDFGraph
from moc.exact_times import throughput_of
import numpy as np

from mapping.semantics.aggregation import aggregator
from dsl.mappings import Mapping
from mapping.errors import MappingError
from mapping.evaluation.core import Parts, Placement, PlacedValue, placed_value
from mapping.semantics.metrics import (SYSTEM, element_metric, is_charged, performance, rule,
                                       total_ops)
from mapping.semantics.problem import Problem, bind_problem
from mapping.semantics.routing import place_tokens, validate_mapping
from mapping.evaluation.timing import timing_tables
from mapping.semantics.traffic import split_charged, tokens_by_pe


@dataclass(frozen=True)
class ElementValue:
    """One element's share: ``tokens`` handled, their total ``quanta``, and its ``value``
    of the metric (before ``lambda``; 0 when unmodelled).  A PE's ``tokens`` and
    ``value`` include the communication charged to it (``lambda`` applied, see
    :func:`mapping.evaluation.core.element_values`)."""

    name: str
    kind: str
    tokens: int
    quanta: float
    value: float


@dataclass(frozen=True)
class Evaluation:
    """The result of evaluating a mapping; ``to_dict()`` gives the JSON of ``mapeval eval``."""

    application: str
    architecture: str
    mapping: str
    metric: str
    aggregate: str
    lambda_: float
    params: MappingT[str, Any]
    repetitions: MappingT[str, int]
    value: float
    throughput: float | None
    performance: float | None
    bottleneck: str | None
    unmodelled: tuple[str, ...]
    elements: tuple[ElementValue, ...]
    #: a system metric's terms (``M[AGG]`` and the system metrics it uses) → their values
    terms: MappingT[str, float] = field(default_factory=dict)
    #: the units of the metric and of time (``arch.unit``): labels, nothing is converted
    unit: str | None = None
    time_unit: str | None = None

    def to_dict(self) -> dict:
        # field by field: dataclasses.asdict deep-copies, seconds for 100,000 elements
        extra = {"terms": dict(self.terms)} if self.terms else {}
        if self.unit is not None:
            extra["unit"] = self.unit
        return {**extra, "application": self.application, "architecture": self.architecture,
                "mapping": self.mapping, "metric": self.metric, "aggregate": self.aggregate,
                "lambda": self.lambda_, "params": dict(self.params),
                "repetitions": dict(self.repetitions), "value": self.value,
                "throughput": self.throughput, "performance": self.performance,
                "bottleneck": self.bottleneck, "unmodelled": list(self.unmodelled),
                "elements": [{"name": e.name, "kind": e.kind, "tokens": e.tokens,
                              "quanta": e.quanta, "value": e.value} for e in self.elements]}

    def __str__(self):
        lines = [f"{self.metric} of mapping '{self.mapping}' of '{self.application}' on "
                 f"'{self.architecture}' ({self.aggregate}, lambda = {self.lambda_:g}): "
                 f"{self.value:.6g}{_unit(self.unit)}"]
        per = self.time_unit or "time unit"
        if self.throughput is not None:
            lines.append(f"throughput: {self.throughput:.6g} iterations per {per}")
        if self.performance is not None:
            lines.append(f"performance: {self.performance:.6g} ops per {per}")
        if self.bottleneck:
            lines.append(f"bottleneck: {self.bottleneck}")
        for term, value in self.terms.items():
            lines.append(f"term {term}: {value:.6g}")
        if self.unmodelled:
            lines.append(f"unmodelled for {self.metric}: {', '.join(self.unmodelled)}")
        width = max([len(e.name) for e in self.elements] + [7])
        value = f"value ({self.unit})" if self.unit else "value"
        lines.append(f"{'element':<{width}}  kind  {'tokens':>8}  {'quanta':>12}  {value:>12}")
        for e in self.elements:
            lines.append(f"{e.name:<{width}}  {e.kind:<4}  {e.tokens:>8}  {e.quanta:>12.6g}  "
                         f"{e.value:>12.6g}")
        return "\n".join(lines)


def _unit(unit: str | None) -> str:
    return f" {unit}" if unit else ""


def evaluate(app: SDFGraph | Problem, arch: Architecture | Mapping, mapping: Mapping | None = None,
             metric: str = "time", aggregate: str | None = None,
             params: MappingT[str, Any] | None = None,
             problem: Problem | None = None) -> Evaluation:
    """Evaluate ``metric`` of ``mapping`` of ``app`` onto ``arch``.

    Tokens of one iteration go to the mapped PEs and to every CN of each channel's route;
    each element values its tokens by its rule for ``metric`` (:mod:`mapping.semantics.metrics`);
    the values combine by ``aggregate`` (the architecture's default when ``None``) with
    CNs scaled by lambda; a timed aggregation (``schedule``, ``period``) schedules the
    firings instead (:mod:`mapping.evaluation.timing`, no bottleneck element).  Pass a ``problem``
    from :func:`~mapping.semantics.problem.bind_problem` to skip re-binding, or call
    ``evaluate(problem, mapping, metric, aggregate)`` with a :class:`Problem` first.
    ``mapping`` may be a plain dict actor → PE.

    A metric that no element can value is an error listing the known metrics; so is a
    mapping whose tokens all sit on elements without a model for the metric (its value
    would be a meaningless 0).
    """
    if isinstance(app, Problem):
        problem = problem or app
        app, arch, mapping, metric, aggregate = _shifted(app, arch, mapping, metric,
                                                         aggregate, params)
    if mapping is None:
        raise MappingError("evaluate: no mapping given")
    if not isinstance(mapping, Mapping):
        mapping = Mapping("mapping", mapping)
    problem = problem or bind_problem(app, arch, params)
    app_b, arch_b = problem.app, problem.arch
    validate_mapping(app_b, arch_b, mapping)
    got = placed_value(arch_b, MappedTokens(problem, mapping), metric, aggregate,
                       problem.params)
    unit = arch_b.unit(metric)     # a walk over the elements' models: once for time
    time_unit = None if got.aggregate == SYSTEM else \
        unit if metric == "time" else arch_b.unit("time")
    throughput = performance_ = None
    if metric == "time":
        throughput = throughput_of(got.value)
        performance_ = performance(total_ops(problem.activity, app_b), got.value)
    return Evaluation(app_b.name, arch_b.name, mapping.name, metric, got.aggregate,
                      float(arch_b.lambda_), dict(problem.params), dict(problem.repetitions),
                      got.value, throughput, performance_, got.bottleneck,
                      tuple(got.unmodelled), elements(arch_b, got), got.terms,
                      unit=unit, time_unit=time_unit)


class TokenList(Parts):
    """The parts of one alternative's ``tokens`` (element → token groups), each part a
    plain list valued by its rule's ``value``: the plain reading of a rule, and the
    core's plain numbers.  ``shares_of(tokens)``: PE → CN → that PE's tokens on that CN
    (:func:`mapping.semantics.traffic.tokens_by_pe`); ``memo``: the rules and idle
    values, shared by the alternatives of a :class:`TokenLists`."""

    def __init__(self, arch: Architecture, tokens: MappingT[str, list], metric: str,
                 shares_of=None, memo: tuple[dict, dict] | None = None):
        self.arch, self.metric, self.tokens, self.placed = arch, metric, tokens, [tokens]
        self._shares_of = shares_of
        self._rules, self._idle = memo or ({}, {})
        split = ({pe: split_charged(tokens.get(pe, [])) for pe in arch.pes}
                 if arch.charging else {})
        #: element → its own tokens (a PE's without the copies CNs charge to it)
        self.own_tokens = {**tokens, **{pe: own for pe, (own, _) in split.items()}} \
            if split else tokens
        self._charged = {pe: by_cn for pe, (_, by_cn) in split.items()}

    def own(self, name):
        return self.own_tokens.get(name, [])

    def charged(self):
        for pe, by_cn in self._charged.items():
            for cn in self.arch.cns:
                if by_cn.get(cn):
                    yield pe, cn, by_cn[cn]

    def shares(self):
        if self._shares_of is None:
            return
        mine = self._shares_of(self.tokens)
        for pe in self.arch.pes:
            for cn in self.arch.cns:
                part = mine.get(pe, {}).get(cn)
                if part:
                    yield cn, pe, part

    def used(self, part):
        return bool(part)

    def value(self, key, element, part):
        r = self.rule(element)
        return None if r is None else self.list_value(element, part, r)

    def rule(self, element):
        """``element``'s rule for the metric (``None``: it has none), looked up once."""
        r = self._rules.get(element.name, False)
        if r is False:
            r = self._rules[element.name] = rule(element, self.metric)
        return r

    def list_value(self, element, tokens: list, r):
        """The value of ``tokens`` on ``element`` by its rule ``r``."""
        if tokens:
            return element_metric(element, tokens, self.metric, r)
        got = self._idle.get(element.name)     # an idle element's value is always the same
        if got is None:
            got = self._idle[element.name] = element_metric(element, [], self.metric, r)
        return got


class TokenLists(Parts):
    """The parts of ``n`` alternatives' tokens (``placed``: one dict element → token
    groups each), a :class:`TokenList` per alternative: a part is the list of their
    parts, its value the ``(n,)`` array of theirs."""

    def __init__(self, arch: Architecture, placed: Sequence[MappingT[str, list]], metric: str,
                 shares_of=None):
        self.arch, self.placed = arch, list(placed)
        memo: tuple[dict, dict] = ({}, {})
        self.rows = [TokenList(arch, tokens, metric, shares_of, memo) for tokens in placed]

    def own(self, name):
        return [row.own_tokens.get(name, []) for row in self.rows]

    def charged(self):
        yield from self._stacked([{(pe, cn): part for pe, cn, part in row.charged()}
                                  for row in self.rows])

    def shares(self):
        for pe, cn, part in self._stacked([{(pe, cn): part for cn, pe, part in row.shares()}
                                           for row in self.rows]):
            yield cn, pe, part

    def _stacked(self, per_row: list[dict]):
        """``(pe, cn, part)`` of the pairs some alternative has, PEs then CNs in order."""
        if not any(per_row):
            return
        for pe in self.arch.pes:
            for cn in self.arch.cns:
                part = [mine.get((pe, cn), []) for mine in per_row]
                if any(part):
                    yield pe, cn, part

    def used(self, part):
        return np.array([bool(tokens) for tokens in part])

    def value(self, key, element, part):
        one = self.rows[0]                     # the rows share their rules and idle values
        r = one.rule(element)
        return None if r is None else np.array([one.list_value(element, tokens, r)
                                                for tokens in part])


class MappedTokens(Placement):
    """The tokens of one iteration of ``problem``'s application under ``mapping``:
    processing tokens on the mapped PEs, communication tokens on every CN of their
    channel's route (charged to the end PEs for a charged metric), the memory traffic
    of the PEs' models on the CNs to their memory."""

    def __init__(self, problem: Problem, mapping: Mapping):
        self.problem, self.mapping = problem, mapping
        self.what, self.origin = f"mapping '{mapping.name}'", mapping.origin
        self._parts: dict[str, TokenList] = {}

    def parts(self, metric):
        got = self._parts.get(metric)
        if got is None:
            p, m = self.problem, self.mapping
            placed = place_tokens(p.app, p.arch, m, p.activity, metric,
                                  charge=is_charged(metric))
            got = self._parts[metric] = TokenList(
                p.arch, placed, metric, lambda t: tokens_by_pe(p.app, p.arch, m, t))
        return got

    def timed(self, metric, aggregate):
        # the batch code with one mapping, routed as placed (its own ``via`` routes)
        timing = timing_tables(self.problem, metric, aggregate)
        inputs = timing.inputs_for(self.problem, self.mapping)
        return aggregator(aggregate).timed_value(timing, None, inputs)


def elements(arch: Architecture, got: PlacedValue) -> tuple[ElementValue, ...]:
    """The listing of one alternative's elements: tokens and quanta placed on each (a
    PE's charged copies included) and its value."""
    return tuple(
        ElementValue(name, arch.elements[name].kind,
                     sum(t.count for t in got.placed.get(name, ())),
                     float(sum(t.count * t.quanta for t in got.placed.get(name, ()))),
                     got.values.get(name, 0.0))
        for name in arch.elements)


def _shifted(problem: Problem, arch_slot, mapping_slot, metric_slot, aggregate_slot, params):
    """``(app, arch, mapping, metric, aggregate)`` of a call
    ``evaluate(problem, mapping, metric, aggregate)``, whose arguments arrive one slot
    early (the metric in ``mapping``'s, the aggregation in ``metric``'s)."""
    if params is not None:
        raise MappingError("evaluate: with a Problem, give the parameters to it: "
                           "Problem(app, arch, params)")
    if mapping_slot is None:                # evaluate(problem, m, metric=..., aggregate=...)
        return problem.app, problem.arch, arch_slot, metric_slot, aggregate_slot
    if metric_slot != "time" and aggregate_slot is not None:
        raise MappingError("evaluate(problem, mapping, metric, aggregate): an argument "
                           "too many")
    aggregate = aggregate_slot if metric_slot == "time" else metric_slot
    return problem.app, problem.arch, arch_slot, mapping_slot, aggregate

