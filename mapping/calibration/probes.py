"""Stand-in models on a bound architecture.

No rule of the model is written in the calibration code: the columns of a linear fit's
design matrix (:func:`coefficients`) and the question whether a free parameter can
change the evaluated metric at all (:mod:`mapping.calibration.checks`) come from the
core's :func:`~mapping.semantics.metrics.element_metric` and
:func:`~mapping.evaluation.activity.combine`, applied to stand-in models
(:class:`Probe`).  :func:`rebuilt` binds the touched models again under new arguments.
"""
from __future__ import annotations

import copy
from dataclasses import replace
from types import MappingProxyType
from typing import Mapping as MappingT, Sequence
from moa import Architecture, CostModel, make_model
from moa.cost_models import Parameters
from mapping.evaluation.activity import combine
from mapping.calibration.free import FreeParameter


class Probe(CostModel):
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


ZERO = Probe(lambda token: 0.0)


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


def rebuilt(arch: Architecture, overrides: MappingT[str, MappingT[str, dict]],
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



def probes(arch: Architecture, fp: FreeParameter, metric: str) -> Architecture:
    """The bound ``arch`` whose value of ``metric`` is ``d prediction / d θ`` of ``fp``:
    its models replaced by their linear terms in ``fp`` (:meth:`CostModel.linear_terms`),
    every other element's model by zero."""
    models = {name: {metric: ZERO} for name in arch.elements}
    for name in fp.elements:
        linear = arch.elements[name].costs[fp.metric]
        models[name][metric] = Probe(
            lambda t, m=linear, p=fp.param: m.linear_terms(t).get(p, 0.0))
    return _variant(arch, models)


def coefficients(arch: Architecture, placed: MappingT[str, list],
                 free: Sequence[FreeParameter], metric: str, aggregate: str) -> list[float]:
    """``d prediction / d θ_j`` of one row (tokens ``placed`` on the bound ``arch``) for
    free parameters in which their models are linear: the core's rule and aggregation
    evaluated with each free model replaced by its linear terms in ``θ_j``
    (:meth:`CostModel.linear_terms`) and every other element's model by zero."""
    return [float(combine(probes(arch, fp, metric), placed, metric, aggregate))
            for fp in free]
