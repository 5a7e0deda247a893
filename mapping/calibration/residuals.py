"""What a fit minimises: the residual rules ``--residuals NAME`` selects."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable
import numpy as np
from mapping.registry import Registry


@dataclass(frozen=True)
class Residual:
    """What the non-linear fit minimises the squares of: ``rule(predicted, measured)``
    per row, divided by ``unit(measured)`` so that its tolerances mean the same whatever
    the measurements' unit."""

    name: str
    rule: Callable[[np.ndarray, np.ndarray], np.ndarray]
    unit: Callable[[np.ndarray], float]
    #: whether every measured value must be positive
    positive: bool = False
    #: whether the residual is the plain difference predicted - measured, so that a
    #: model linear in its free parameters fits by non-negative least squares
    linear: bool = False
    #: scipy's name of the loss on the residuals: ``linear`` (their squares), or a
    #: robust one (``soft_l1``), minimised after the least-squares fit from its values,
    #: with the scale of the residuals it left (:func:`_robust_refit`)
    loss: str = "linear"


def column_norms(A: np.ndarray) -> np.ndarray:
    """Euclidean norms of the columns of ``A``, without overflow for huge entries (each
    column scaled by its largest entry first)."""
    big = np.max(np.abs(A), axis=0) if A.size else np.zeros(A.shape[1])
    safe = np.where(big > 0, big, 1.0)
    return big * np.linalg.norm(A / safe, axis=0)


def _rms(y: np.ndarray) -> float:
    """Root mean square of ``y``, without overflow (1 for all zeros)."""
    top = float(np.max(np.abs(y))) if len(y) else 0.0
    return float(np.sqrt(np.mean((y / top) ** 2))) * top if top > 0 else 1.0


def log_ratio(predicted: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """The relative residual ``log(predicted / measured)``."""
    # A prediction of 0 or below is as far from the measurement as floating point goes.
    return np.log(np.maximum(predicted, np.finfo(float).tiny) / measured)


#: the residuals ``--residuals NAME`` selects (absolute: the default)
RESIDUALS: Registry[Residual] = Registry("residuals")
RESIDUALS.add("absolute", Residual("absolute", lambda p, y: p - y, _rms,
                                    linear=True),
              "predicted - measured: the rows with the largest values decide the fit")
RESIDUALS.add("relative", Residual("relative", log_ratio, lambda y: 1.0, positive=True),
              "log(predicted / measured): every row weighs alike, whatever its size "
              "(measurements spanning decades, e.g. microseconds to seconds)")
RESIDUALS.add("robust", Residual("robust", lambda p, y: p - y, _rms, linear=True,
                                 loss="soft_l1"),
              "as absolute, then a soft-L1 loss scaled by the residuals' median absolute "
              "deviation: rows far off the rest (a warm-up run, a glitch) pull the fit "
              "less")
RESIDUALS.add("robust-relative", Residual("robust-relative", log_ratio, lambda y: 1.0,
                                          positive=True, loss="soft_l1"),
              "as relative, then the soft-L1 loss of robust")

#: a robust loss's scale: this many median absolute deviations of the least-squares
#: residuals (1.4826 MAD estimates a normal standard deviation)
ROBUST_MADS = 1.4826
#: robust fits, each with the scale of the residuals the one before left
ROBUST_PASSES = 2


def residual_rule(name: str) -> Residual:
    """The :class:`Residual` registered as ``name`` (an error naming the known ones)."""
    return RESIDUALS.get(name)
