"""Predict, fit and compare on one split (SPEC §8).

Rows are split at random (seeded) into train and test rows; the parameters are fitted
on the train rows and fidelity is reported on the test rows (the GSLA paper splits its
360 samples 288/72).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping as MappingT, Sequence
import numpy as np
from moa import Architecture
from mapping.errors import InputError
from mapping.calibration.fidelity import FidelityResult, fidelity
from mapping.calibration.measurements import MeasurementRow
from mapping.options import FRACTION
from mapping.calibration.checks import check_bare, check_free
from mapping.calibration.free import expand_groups, parse_free
from mapping.calibration.row_model import RowModel
from mapping.calibration.solvers import FitResult, STARTS, fit_parameters, predict_fitted


def split_rows(n: int, test_fraction: float = 0.2, seed: int = 0
               ) -> tuple[np.ndarray, np.ndarray]:
    """Seeded random split of ``range(n)`` into sorted (train, test) indices; the test
    set has ``round(n·test_fraction)`` rows."""
    FRACTION.check(test_fraction, "--test-fraction")
    n_test = int(round(n * test_fraction))
    if n - n_test < 1:
        raise InputError(f"{n} rows leave none to fit on with --test-fraction {test_fraction}")
    order = np.random.default_rng(seed).permutation(n)
    return np.sort(order[n_test:]), np.sort(order[:n_test])



@dataclass(frozen=True)
class ElementFit:
    """One element fitted on its own column: the ``column`` (``-``: the rest), its
    parameters' ``fit`` and the ``result`` of its own values against that column on the
    test rows (the training rows with ``--test-fraction 0``)."""

    element: str
    column: str
    fit: FitResult | None
    result: FidelityResult

    def to_dict(self) -> dict:
        return {"element": self.element, "column": self.column,
                **(self.fit.to_dict() if self.fit else {"fitted": {}}),
                "fidelity": self.result.to_dict()}


@dataclass(frozen=True)
class Assessment:
    """What ``mapeval fidelity`` / ``fit`` compute: the ``result`` on the test rows,
    the ``fit`` (``None`` without free parameters), every row's ``predicted`` value under
    the (fitted) architecture, and the ``model`` that evaluates rows."""

    result: FidelityResult
    fit: FitResult | None
    predicted: np.ndarray
    measured: np.ndarray
    model: RowModel
    #: the per-element fits (:func:`assess_elements`), empty otherwise
    elements: tuple[ElementFit, ...] = ()

    @property
    def test(self) -> np.ndarray:
        return np.array(self.fit.test if self.fit else range(len(self.measured)), dtype=int)

    @property
    def train(self) -> np.ndarray:
        return np.array(self.fit.train if self.fit else (), dtype=int)

    @property
    def scored(self) -> np.ndarray:
        """The rows the figures are over (:func:`scored_rows`)."""
        return scored_rows(self.train, self.test)


def scored_rows(train, test):
    """The test rows, or the training rows when every row trained (``--test-fraction
    0``): the rows every figure of an assessment is computed over."""
    return test if len(test) else train


def assess(arch: Architecture, rows: Sequence[MeasurementRow], *, app=None,
           metric: str = "time", aggregate: str | None = None,
           free: Sequence[str] | str | None = None, test_fraction: float = 0.2,
           seed: int = 0, params: MappingT[str, Any] | None = None,
           source: str | None = None, starts: int = STARTS,
           progress: Callable[[int], None] | None = None,
           residuals: str = "absolute") -> Assessment:
    """Predict every row, fit ``free`` parameters on a seeded train split if any, and
    compare predictions with measurements on the test rows (``progress`` and
    ``residuals``: those of :func:`fit_parameters`).  A ``SPEC@COLUMN`` parameter has
    one value per value of the column (:func:`expand_groups`)."""
    model = RowModel(arch, rows, metric, aggregate, app, params, source)
    measured = np.array([r.measured for r in rows], dtype=float)
    free_params = expand_groups(parse_free(arch, free, app), rows) if free else None
    if free_params and rows:
        check_free(model.bound_arch(0), free_params, model.metric)
    predicted = model.predict()          # a row that cannot be evaluated stops here
    if free_params:
        check_bare(model, free_params, predicted)
    if not free_params:
        return Assessment(fidelity(predicted, measured), None, predicted, measured, model)
    train, test = split_rows(len(rows), test_fraction, seed)
    fit = fit_parameters(model, free_params, train, starts, seed, progress, residuals,
                         explain=True)
    fit = replace(fit, test=tuple(int(i) for i in test))
    if any(fp.label is not None for fp in fit.free):
        final = model                    # no one architecture holds a value per group
        predicted = predict_fitted(model, fit)
    else:
        bare = {fp.target: fit.values[fp.spec] for fp in fit.free if fp.level == "param"}
        final = RowModel(fit.architecture, rows, metric, aggregate, app,
                         {**(params or {}), **bare}, source)
        final.share_rows(model)
        predicted = final.predict()
    on = scored_rows(train, test)
    result = fidelity(predicted[on], measured[on], n=len(rows), n_train=len(train),
                      fitted=fit.values)
    return Assessment(result, fit, predicted, measured, final)
