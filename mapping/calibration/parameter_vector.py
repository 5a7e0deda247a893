"""A vector of free-parameter values as the arguments of the models it sets.

A fit varies one vector ``θ``, one value per free parameter; a prediction needs, for
each value, the model arguments it replaces (``element → metric → {param: value}``)
and the file parameters it binds (a bare ``param``).  :class:`ParameterVector` is that
map, the one the row model, the solvers and the per-element fits all read.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from moa import Architecture
from moa.cost_models import Bounds

from mapping.calibration.free import FreeParameter, free_bounds, free_start_scales
from mapping.errors import InputError
from mapping.semantics.problem import bind_problem

#: the key of :meth:`ParameterVector.overrides` under which bare parameters go (never an
#: element name)
PARAMS = ("params",)


#: the key of :meth:`ParameterVector.overrides` under which the parameters of one group
#: go, with values
GROUPS = ("groups",)


@dataclass(frozen=True)
class ParameterVector:
    """The free parameters ``free`` as one vector, in their order: their ``names``
    (specs), their ``bounds`` (:func:`~mapping.calibration.free.free_bounds`) and the
    ``scales`` their models declare (:func:`~mapping.calibration.free.free_start_scales`;
    both empty when built without an architecture), the values the files give them (:meth:`current`)
    and the model arguments a vector of values sets (:meth:`overrides`, what
    :meth:`~mapping.calibration.row_model.RowModel.predict` takes)."""

    free: tuple[FreeParameter, ...]
    bounds: tuple[Bounds, ...] = ()
    scales: tuple[float | None, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "free", tuple(self.free))
        object.__setattr__(self, "bounds", tuple(self.bounds))
        object.__setattr__(self, "scales", tuple(self.scales))

    @classmethod
    def of(cls, arch: Architecture, free: Sequence[FreeParameter]) -> "ParameterVector":
        """The vector of ``free`` with the bounds and start scales their models declare
        in ``arch``."""
        return cls(tuple(free), tuple(free_bounds(arch, free)),
                   tuple(free_start_scales(arch, free)))

    def __len__(self) -> int:
        return len(self.free)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(fp.spec for fp in self.free)

    def current(self, model) -> np.ndarray:
        """Each free parameter's value in ``model``'s architecture (a
        :class:`~mapping.calibration.row_model.RowModel`) at its defaults, command-line
        values applied."""
        free = self.free
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

    def overrides(self, theta) -> dict:
        """The model arguments of every parameter at values ``theta``, merged; the
        values of bare parameters under the key :data:`PARAMS`; parameters of one group
        of rows (``PARAM@COLUMN=VALUE``) as ``(parameter, value)`` pairs under
        :data:`GROUPS`, applied by the row model to their rows only."""
        out: dict = {}
        for fp, value in zip(self.free, theta):
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
