"""A vector of free-parameter values as the arguments of the models it sets.

A fit varies one vector ``θ``, one value per free parameter; a prediction needs, for
each value, the model arguments it replaces (``element → metric → {param: value}``)
and the file parameters it binds (a bare ``param``).  :class:`ParameterVector` is that
map, the one the row model, the solvers and the per-element fits all read.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from moa import Architecture
from moa.cost_models import Bounds

from mapping.calibration.free import (FreeParameter, free_bounds, free_start_scales,
                                      ordered_chains)
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

    def start(self, theta, predict=None) -> np.ndarray:
        """The first start of a fit from values ``theta`` (:meth:`current`): each 0 of a
        parameter whose model declares a typical size (``start_scale``) raised to that
        size.  Such a 0 switches its term off (a per-block dispatch cost of 0 inside a
        ``max``): the model is flat in it there and no solver moves it.

        With ``predict`` (values → the training rows' predictions), each parameter still
        without effect there (:func:`without_effect`: no prediction moves when it moves
        by ``STEP`` either way) goes to the edge of that plateau nearest its value: the
        first rung of the ladder ``θ·2^±k`` (``k`` up to :data:`LADDER`, halving first,
        each end of its bounds the last rung on its side) at which some prediction moves,
        brought back towards the plateau by bisection (to :data:`EDGE` of itself).  A term
        another term of a ``max`` hides at the file's value (a DRAM efficiency whose time
        an L2 roof exceeds) binds there on a few rows only, so the start predicts what the
        file does and the solver sees which way the measurements pull it.  Each such
        parameter is placed with the others at their start (the order of the parameters
        does not matter); one without effect on every rung stays where it was."""
        theta = np.array(theta, dtype=float)
        for j, s in enumerate(self.scales):
            if s and theta[j] == 0:
                theta[j] = s
        if predict is None:
            return theta
        base = _predictions(predict, theta)
        if base is None:
            return theta
        moved = theta.copy()
        for j in range(len(theta)):
            if theta[j] != 0 and without_effect(predict, theta, j, base, self._bound(j)):
                moved[j] = self._edge(predict, theta, j, base)
        return moved

    def _edge(self, predict, theta, j: int, base) -> float:
        """The value of parameter ``j`` nearest ``θ_j`` at which some prediction differs
        from ``base`` (the predictions at ``θ``), within :data:`EDGE` of the edge; ``θ_j``
        if none on the ladder does."""
        def binds(value):
            trial = theta.copy()
            trial[j] = value
            out = _predictions(predict, trial)
            return out is not None and not _same(out, base)
        flat = {0.5: theta[j], 2.0: theta[j]}
        for value in self._ladder(j, theta[j]):
            if not self._in_order(j, value, theta):
                break
            side = 0.5 if value < theta[j] else 2.0
            if not binds(value):
                flat[side] = value
                continue
            inner = flat[side]               # bisect in log between plateau and binding
            while abs(math.log(value / inner)) > EDGE:
                mid = math.sqrt(value * inner)
                if binds(mid):
                    value = mid
                else:
                    inner = mid
            return value
        return float(theta[j])

    def _in_order(self, j: int, value: float, theta) -> bool:
        """Whether parameter ``j`` at ``value`` keeps every chain a model declares
        ordered (:func:`~mapping.calibration.free.ordered_chains`) in order at ``θ``."""
        if not all(isinstance(fp, FreeParameter) for fp in self.free):
            return True                      # bare names: no model declares an order
        for run in ordered_chains(self.free):
            if j in run:
                values = [value if i == j else theta[i] for i in run]
                if any(a > b for a, b in zip(values, values[1:])):
                    return False
        return True

    def _bound(self, j: int) -> Bounds | None:
        return self.bounds[j] if self.bounds else None

    def _ladder(self, j: int, value: float) -> list[float]:
        """The rungs ``value·2^±k``, nearest first (halving before doubling), each side
        ending at the end of parameter ``j``'s bounds it would pass."""
        sides = []
        for factor in (0.5, 2.0):
            side = []
            for k in range(1, LADDER + 1):
                v = value * factor ** k
                inside = _inside(v, self._bound(j))
                if inside != v:
                    if inside != value and inside not in side:
                        side.append(inside)
                    break
                side.append(v)
            sides.append(side)
        down, up = sides
        return [v for pair in zip(down + [None] * len(up), up + [None] * len(down))
                for v in pair if v is not None]

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


#: how far (a fraction of its value) a parameter moves either way to see if it has an effect
STEP = 0.01


#: how close (a fraction of its value) the first start places a parameter to the edge of
#: the plateau it starts on
EDGE = 0.01


#: how many halvings and doublings (a factor 2^10 = 1024 each way) the first start tries
#: for a parameter without effect at its start
LADDER = 10


def without_effect(predict, theta, j: int, base=None, bound: Bounds | None = None) -> bool:
    """Whether no prediction (``predict(θ)``) moves when parameter ``j`` moves from
    ``θ_j`` by :data:`STEP` of itself either way (within ``bound``): the model is flat
    in it there, and a solver started there leaves it."""
    base = _predictions(predict, theta) if base is None else base
    for factor in (1 - STEP, 1 + STEP):
        trial = np.array(theta, dtype=float)
        trial[j] = _inside(theta[j] * factor, bound)
        if trial[j] == theta[j]:
            continue
        moved = _predictions(predict, trial)
        if moved is None or not _same(moved, base):
            return False
    return True


def _predictions(predict, theta) -> np.ndarray | None:
    """``predict(theta)``, or ``None`` where the model has no finite value there."""
    try:
        out = np.asarray(predict(theta), dtype=float)
    except (ValueError, InputError):
        return None
    return out if np.all(np.isfinite(out)) else None


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal to round-off (1e-12 of the largest prediction)."""
    return bool(np.max(np.abs(a - b), initial=0.0)
                <= 1e-12 * max(float(np.max(np.abs(b), initial=0.0)), 1e-300))


def _inside(value: float, b: Bounds | None) -> float:
    """``value`` moved within ``b`` (an open end by one ulp)."""
    if b is None:
        return value
    if value <= b.low:
        value = float(np.nextafter(b.low, np.inf)) if b.low_open else b.low
    elif value >= b.high:
        value = float(np.nextafter(b.high, -np.inf)) if b.high_open else b.high
    return value


def add_override(out: dict, fp: FreeParameter, value: float) -> None:
    """Merge what setting ``fp`` to ``value`` changes into the overrides ``out``."""
    if fp.level == "param":
        out.setdefault(PARAMS, {}).update(fp.parameter_values(value))
        return
    for element, by_metric in fp.model_arguments(value).items():
        for metric, args in by_metric.items():
            out.setdefault(element, {}).setdefault(metric, {}).update(args)
