"""Per-element fits: each element fitted on its own measured column (the GSLA paper)."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Mapping as MappingT, Sequence
import numpy as np
from moa import Architecture
from mapping.errors import InputError
from mapping.calibration.fidelity import fidelity
from mapping.calibration.measurements import MeasurementRow
from mapping.calibration.assessment import Assessment, ElementFit, scored_rows, split_rows
from mapping.calibration.checks import check_free
from mapping.calibration.free import FreeParameter, fitted_architecture, parse_free
from mapping.calibration.row_model import RowModel
from mapping.calibration.solvers import FitResult, STARTS, fit_parameters, predict_fitted


#: the column of an element given as ``ELEMENT=-``: the measured total minus the other
#: elements' columns (GSLA: t_c = t_w - t_1 - t_k)
REST = "-"


def parse_element_columns(text: str | Sequence[str]) -> dict[str, str]:
    """``host=t1,gpu=tk,pcie=-`` → ``{element: column}`` (``-``: :data:`REST`)."""
    items = text.split(",") if isinstance(text, str) else [i for t in text for i in t.split(",")]
    out: dict[str, str] = {}
    for item in (i.strip() for i in items):
        if not item:
            continue
        element, eq, column = (part.strip() for part in item.partition("="))
        if not eq or not element or not column:
            raise InputError(f"--measured-element '{item}': expected ELEMENT=COLUMN "
                             f"(or ELEMENT={REST} for the measured total minus the others)")
        if element in out:
            raise InputError(f"--measured-element: element '{element}' is given twice")
        out[element] = column
    if not out:
        raise InputError("--measured-element: no ELEMENT=COLUMN given")
    if list(out.values()).count(REST) > 1:
        raise InputError(f"--measured-element: only one element can take the rest ({REST})")
    return out


def _element_measured(rows: Sequence[MeasurementRow], columns: MappingT[str, str]
                      ) -> dict[str, np.ndarray]:
    """Each element's measured values, read from its column of every row (the rest:
    the measured total minus the other columns)."""
    out = {}
    for element, column in columns.items():
        if column == REST:
            continue
        values = []
        for row in rows:
            if column not in row.cells:
                raise row.error(f"no column '{column}' (--measured-element {element}="
                                f"{column}; columns: {', '.join(row.cells)})")
            values.append(float(row.number(column)))
        out[element] = np.array(values)
    for element, column in columns.items():
        if column == REST:
            total = np.array([r.measured for r in rows], dtype=float)
            out[element] = total - sum(out.values(), np.zeros(len(rows)))
    return {e: out[e] for e in columns}


@dataclass(frozen=True)
class ElementModel:
    """One element of a per-element fit: its measured ``column`` (``-``: the rest), the
    ``model`` of its own part of every row (rows measured by that column) and the free
    parameters it ``owns``."""

    element: str
    column: str
    model: RowModel
    owns: tuple[FreeParameter, ...]


def element_models(arch: Architecture, rows: Sequence[MeasurementRow],
                   columns: MappingT[str, str], *, app=None, metric: str = "time",
                   aggregate: str | None = None,
                   free: Sequence[str] | str | None = None,
                   params: MappingT[str, Any] | None = None,
                   source: str | None = None) -> list[ElementModel]:
    """The :class:`ElementModel` of each element of ``columns`` (element → measured
    column); every free parameter must belong to the elements of one column."""
    free_params = parse_free(arch, free, app) if free else []
    for fp in free_params:
        if fp.by is not None:
            raise InputError(f"free parameter '{fp.spec}': a per-element fit "
                             "(--measured-element) does not take group-specific parameters")
    for element in columns:
        if element not in arch.elements:
            raise InputError(f"--measured-element: '{element}' is not an element of "
                             f"'{arch.name}' (elements: {', '.join(arch.elements)})")
    owner: dict[str, list[FreeParameter]] = {e: [] for e in columns}
    for fp in free_params:
        holders = {e for e in fp.elements if e in columns}
        if fp.level == "param" or len(holders) != 1 or set(fp.elements) - holders:
            raise InputError(f"free parameter '{fp.spec}' does not belong to exactly one "
                             "element of --measured-element: a per-element fit fits each "
                             "element's own parameters on its own column")
        owner[holders.pop()].append(fp)
    measured_by = _element_measured(rows, columns)
    out = []
    for element, column in columns.items():
        own = [replace(r, measured=float(v)) for r, v in zip(rows, measured_by[element])]
        model = RowModel(arch, own, metric, aggregate, app, params, source, element=element)
        if owner[element]:
            check_free(model.bound_arch(0), owner[element], model.metric)
        out.append(ElementModel(element, column, model, tuple(owner[element])))
    return out


def fit_elements(elements: Sequence[ElementModel], arch: Architecture, train, test=(),
                 starts: int = STARTS, seed: int = 0, progress=None,
                 residuals: str = "absolute", explain: bool = False
                 ) -> tuple[list[FitResult | None], FitResult | None]:
    """Each element's own parameters fitted on its own column over the ``train`` rows
    (``None`` for an element that owns none), and all of them as one fit (``None``
    when nothing is free)."""
    fits: list[FitResult | None] = []
    for e in elements:
        fit = None
        if e.owns:
            fit = replace(fit_parameters(e.model, e.owns, train, starts, seed, progress,
                                         residuals, explain=explain),
                          test=tuple(int(i) for i in test))
        fits.append(fit)
    done = [f for f in fits if f is not None]
    return fits, (_merged_fit(arch, done, train, test) if done else None)


def assess_elements(arch: Architecture, rows: Sequence[MeasurementRow],
                    columns: MappingT[str, str], *, app=None, metric: str = "time",
                    aggregate: str | None = None,
                    free: Sequence[str] | str | None = None, test_fraction: float = 0.2,
                    seed: int = 0, params: MappingT[str, Any] | None = None,
                    source: str | None = None, starts: int = STARTS, progress=None,
                    residuals: str = "absolute",
                    elements: Sequence[ElementModel] | None = None) -> Assessment:
    """The GSLA paper's procedure: each element of ``columns`` (element → measured
    column) fitted on its own column -- its prediction being its own part of the
    system value, the evaluator's per-element value (:class:`RowModel` with
    ``element``) -- on one seeded train split; then the whole model, with every fitted
    value, compared with the measured total on the test rows.  Every free parameter
    must belong to the elements of one column.  ``elements``: those
    :func:`element_models` gives, already built (the folds share them)."""
    if elements is None:
        elements = element_models(arch, rows, columns, app=app, metric=metric,
                                  aggregate=aggregate, free=free, params=params,
                                  source=source)
    train, test = split_rows(len(rows), test_fraction, seed)
    on = scored_rows(train, test)
    fits, merged = fit_elements(elements, arch, train, test, starts, seed, progress,
                                residuals, explain=True)
    per = []
    for e, fit in zip(elements, fits):
        predicted = predict_fitted(e.model, fit) if fit else e.model.predict()
        y = np.array([r.measured for r in e.model.rows], dtype=float)
        per.append(ElementFit(e.element, e.column, fit, fidelity(
            predicted[on], y[on], n=len(rows), n_train=len(train) if fit else 0,
            fitted=fit.values if fit else None)))
    final = RowModel(merged.architecture if merged else arch, rows, metric, aggregate, app,
                     params, source)
    predicted = final.predict()
    measured = np.array([r.measured for r in rows], dtype=float)
    result = fidelity(predicted[on], measured[on], n=len(rows),
                      n_train=len(train) if merged else 0,
                      fitted=merged.values if merged else None)
    return Assessment(result, merged, predicted, measured, final, tuple(per))


def _merged_fit(arch: Architecture, fits: Sequence[FitResult], train, test) -> FitResult:
    """The per-element fits as one: every value, the architecture holding them all."""
    free = tuple(fp for f in fits for fp in f.free)
    theta = [f.values[fp.spec] for f in fits for fp in f.free]
    methods = sorted({f.method for f in fits})
    return FitResult(free, {fp.spec: float(v) for fp, v in zip(free, theta)},
                     "per element: " + ", ".join(methods), fitted_architecture(arch, free, theta),
                     tuple(int(i) for i in train), tuple(int(i) for i in test),
                     sum(f.rank for f in fits),
                     tuple(g for f in fits for g in f.indistinguishable),
                     tuple(w for f in fits for w in f.warnings),
                     float(math.sqrt(sum(f.residual_norm ** 2 for f in fits))),
                     sum(f.starts for f in fits), 0, fits[0].residuals,
                     tuple(b for f in fits for b in f.bounds),
                     tuple(a for f in fits for a in f.at_bound))
