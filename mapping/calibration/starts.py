"""Where a fit starts: the first start (the files' values, moved off where the model is
flat in a parameter) and the seeded random starts of ``--starts N``.
"""
from __future__ import annotations

import math

import numpy as np
from moa.cost_models import Bounds

from mapping.calibration.free import FreeParameter, ordered_chains
from mapping.calibration.parameter_vector import ParameterVector
from mapping.errors import InputError


def first_start(vector: ParameterVector, theta, predict=None) -> np.ndarray:
    """The first start of a fit of ``vector`` from values ``theta``
    (:meth:`~mapping.calibration.parameter_vector.ParameterVector.current`): each 0 of a
    parameter whose model declares a typical size (``start_scale``) raised to that
    size.  Such a 0 switches its term off (a per-block dispatch cost of 0 inside a
    ``max``): the model is flat in it there and no solver moves it.

    With ``predict`` (values → the training rows' predictions), each parameter still
    without effect there (:func:`without_effect`: no prediction moves when it moves
    by ``STEP`` either way) goes to the edge of that plateau nearest its value: the
    first rung of the ladder ``θ·2^±k`` (``k`` up to :data:`LADDER`, halving first,
    each end of its bounds the last rung on its side) at which some prediction moves.
    When that rung is the first on its side (the edge lies within a factor 2 of the
    file's value), bisection brings it back to the edge (to :data:`EDGE` of itself):
    the value moves as little as the file allows.  When a flat rung lies between, the
    start is that binding rung, inside the edge by up to a factor 2: a term binding
    on a few rows only (at the edge) weighs too little for the solver, which then
    leaves it on its plateau (matMul_gpu's DRAM efficiencies from 0.7: started at
    the edge, 0.28, the fit ends where they have no effect; at the rung, 0.175, it
    moves them, as a hand start of 0.2 did).  A term another term of a ``max`` hides
    at the file's value (a DRAM efficiency whose time an L2 roof exceeds) so binds at
    the start on some rows, and the solver sees which way the measurements pull it.
    Each such parameter is placed with the others at their start (the order of the
    parameters does not matter); one without effect on every rung stays where it
    was."""
    theta = np.array(theta, dtype=float)
    for j, s in enumerate(vector.scales):
        if s and theta[j] == 0:
            theta[j] = s
    if predict is None:
        return theta
    base = _predictions(predict, theta)
    if base is None:
        return theta
    moved = theta.copy()
    for j in range(len(theta)):
        if theta[j] != 0 and without_effect(predict, theta, j, base, _bound(vector, j)):
            moved[j] = _edge(vector, predict, theta, j, base)
    return moved

def _edge(vector, predict, theta, j: int, base) -> float:
    """The value of parameter ``j`` near ``θ_j`` at which some prediction differs from
    ``base`` (the predictions at ``θ``): within :data:`EDGE` of the edge when the first
    rung binds, else the first rung that does; ``θ_j`` if none on the ladder does."""
    def binds(value):
        trial = theta.copy()
        trial[j] = value
        out = _predictions(predict, trial)
        return out is not None and not _same(out, base)
    flat = {0.5: theta[j], 2.0: theta[j]}
    for value in _ladder(vector, j, theta[j]):
        if not _in_order(vector, j, value, theta):
            break
        side = 0.5 if value < theta[j] else 2.0
        if not binds(value):
            flat[side] = value
            continue
        inner = flat[side]
        if inner != theta[j]:            # past a flat rung: the rung inside the edge
            return value
        while abs(math.log(value / inner)) > EDGE:
            mid = math.sqrt(value * inner)
            if binds(mid):
                value = mid
            else:
                inner = mid
        return value
    return float(theta[j])

def _in_order(vector, j: int, value: float, theta) -> bool:
    """Whether parameter ``j`` at ``value`` keeps every chain a model declares
    ordered (:func:`~mapping.calibration.free.ordered_chains`) in order at ``θ``."""
    if not all(isinstance(fp, FreeParameter) for fp in vector.free):
        return True                      # bare names: no model declares an order
    for run in ordered_chains(vector.free):
        if j in run:
            values = [value if i == j else theta[i] for i in run]
            if any(a > b for a, b in zip(values, values[1:])):
                return False
    return True

def _bound(vector, j: int) -> Bounds | None:
    return vector.bounds[j] if vector.bounds else None

def _ladder(vector, j: int, value: float) -> list[float]:
    """The rungs ``value·2^±k``, nearest first (halving before doubling), each side
    ending at the end of parameter ``j``'s bounds it would pass."""
    sides = []
    for factor in (0.5, 2.0):
        side = []
        for k in range(1, LADDER + 1):
            v = value * factor ** k
            inside = _inside(v, _bound(vector, j))
            if inside != v:
                if inside != value and inside not in side:
                    side.append(inside)
                break
            side.append(v)
        sides.append(side)
    down, up = sides
    return [v for pair in zip(down + [None] * len(up), up + [None] * len(down))
            for v in pair if v is not None]


#: how far (a fraction of its value) a parameter moves either way to see if it has an effect
STEP = 0.01


#: how close (a fraction of its value) the first start places a parameter to the edge of
#: the plateau it starts on
EDGE = 0.01


#: how many halvings and doublings (a factor 2^2 = 4 each way) the first start tries for a
#: parameter without effect at its start: a file's value states the parameter's size to
#: within that factor, and an edge farther away would give the term a size nobody stated
#: (matMul_gpu's compute efficiency 0.5 -> 0.04 and dispatch 100 -> 2600-4100 cycles per
#: block, which then fitted to 0.024 and 2900-5200, standing in for a term the model lacks)
LADDER = 2


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
    return value if b is None else b.clip(value)


START_DECADES = 2.0


def random_starts(u0: np.ndarray, lower: np.ndarray, starts: int, seed: int = 0,
                  upper: np.ndarray | None = None) -> list[np.ndarray]:
    """``starts`` seeded random starting points: each coordinate
    ``u0_j · 10^U(-START_DECADES, START_DECADES)``, within its ``lower`` and ``upper``
    bounds; a coordinate with ``u0_j <= 0`` (no scale to draw around) stays there."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(max(0, int(starts))):
        factor = 10.0 ** rng.uniform(-START_DECADES, START_DECADES, size=len(u0))
        out.append(np.clip(np.where(u0 > 0, u0 * factor, u0), lower,
                           np.inf if upper is None else upper))
    return out


#: the relative difference of two least-squares costs within which both starts reached
#: one optimum: scipy's ``least_squares`` stops at a relative change of ``ftol = 1e-8``,
#: and below it the costs differ by the platform's last bits
SAME_OPTIMUM_RTOL = 1e-8


def first_at_optimum(costs) -> int:
    """The index of the first start whose cost (None: the start failed) lies within
    :data:`SAME_OPTIMUM_RTOL` of the least: the start named as the fit's, whichever of
    the starts that reach one optimum ends a last bit lower on this machine."""
    least = min(c for c in costs if c is not None)
    return next(k for k, c in enumerate(costs)
                if c is not None and c <= least + SAME_OPTIMUM_RTOL * abs(least))
