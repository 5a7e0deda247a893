"""Whether a free parameter can change the evaluated metric at all.

A free parameter that cannot (``gpu.energy.alpha`` while evaluating ``time``) is an
error: fitting it would silently do nothing.
"""
from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import Sequence
import numpy as np
from moa import Architecture
from moc import TokenGroup
from mapping.errors import InputError
from mapping.semantics.metrics import base_metrics, element_metric
from mapping.calibration.free import FreeParameter
from mapping.calibration.parameter_vector import PARAMS, ParameterVector
from mapping.calibration.probes import Probe
from mapping.calibration.row_model import RowModel
from mapping.calibration.starts import START_DECADES


def depends_on(element, model_metric: str, metric: str) -> bool:
    """Whether the core's value of ``metric`` on ``element`` reads its ``model_metric``
    model: every model replaced by a probe, the ``model_metric`` one by two different
    ones, on two unlike tokens (the power mean's weights, the energy fallback)."""
    if model_metric == metric:
        return True
    tokens = [TokenGroup("probe", 1, 1.0), TokenGroup("probe", 1, 2.0)]
    other = Probe(lambda t: 1.0 + t.quanta ** 2)
    base = {m: other for m in element.costs}
    values = []
    for probe in (Probe(lambda t: 1.0), Probe(lambda t: t.quanta)):
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


def check_bare(model: RowModel, free: Sequence[FreeParameter], predicted) -> None:
    """An error naming a bare parameter that changes no row's prediction, like
    :func:`check_free` for model parameters: neither doubled plus one nor moved to the
    ends of the random starts' range (``10^±START_DECADES`` times its value; a
    parameter behind a ``max`` may matter in one direction only; from 0, the range the
    random starts draw around the size its model declares)."""
    vector = ParameterVector.of(model.arch, free)
    theta0 = vector.current(model)
    for j, fp in enumerate(free):
        if fp.level != "param":
            continue
        moves = [2 * theta0[j] + 1]
        around = theta0[j] if theta0[j] > 0 else vector.scales[j]
        if around:
            moves += [around * 10.0 ** START_DECADES, around / 10.0 ** START_DECADES]
        for value in moves:
            try:
                moved = model.predict(None, {PARAMS: fp.parameter_values(value)})
            except InputError:
                break                        # it changes them enough to break a row
            if not np.array_equal(moved, predicted):
                break
        else:
            raise InputError(f"free parameter '{fp.spec}' cannot affect the evaluated metric "
                             f"'{model.metric}': no row's prediction depends on it (is it "
                             "set by a column of every row, or used by another metric?)")
