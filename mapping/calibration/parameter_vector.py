"""A vector of free-parameter values as the arguments of the models it sets."""
from __future__ import annotations

from typing import Sequence
import numpy as np
from mapping.errors import InputError
from mapping.semantics.problem import bind_problem
from mapping.calibration.free import FreeParameter


def current_values(model, free: Sequence[FreeParameter]) -> np.ndarray:
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


#: the key of :func:`overrides_for` under which bare parameters go (never an element name)
PARAMS = ("params",)


#: the key of :func:`overrides_for` under which the parameters of one group go, with values
GROUPS = ("groups",)


def overrides_for(free: Sequence[FreeParameter], theta) -> dict:
    """The model arguments of all ``free`` parameters at values ``theta``, merged; the
    values of bare parameters under the key ``PARAMS``; parameters of one group of rows
    (``SPEC@COLUMN=VALUE``) as ``(parameter, value)`` pairs under ``GROUPS``, applied by
    :meth:`RowModel.predict` to their rows only."""
    out: dict = {}
    for fp, value in zip(free, theta):
        if fp.label is not None:
            out.setdefault(GROUPS, []).append((fp, float(value)))
        else:
            add_override(out, fp, value)
    return out


def add_override(out: dict, fp: FreeParameter, value: float) -> None:
    """Merge what setting ``fp`` to ``value`` changes into the overrides ``out``."""
    if fp.level == "param":
        out.setdefault(PARAMS, {}).update(fp.parameter_values(value))
        return
    for element, by_metric in fp.model_arguments(value).items():
        for metric, args in by_metric.items():
            out.setdefault(element, {}).setdefault(metric, {}).update(args)
