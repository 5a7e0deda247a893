"""A calibration study: what ``mapeval fit``, ``fidelity`` and ``plot fidelity`` run.

:func:`run_study` decides, from its options, which study runs: the model's own figures
(nothing free), one seeded train/test split, ``folds`` K-fold cross-validation,
``repeats`` repeated splits, ``folds_by`` leave one group out, ``fit_by`` one parameter
set per group (splits made within each group), ``PARAM@COLUMN`` one value of a
parameter per group in a pooled fit, ``measured_element`` the GSLA paper's per-element
fits, and ``within`` the figures within groups of rows.  With folds or repeats the
reported parameters are fitted on every row and the figures are the means over the
splits (:mod:`mapping.calibration.validation`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Callable, Mapping as MappingT, Sequence

from mapping.calibration.assessment import Assessment, assess
from mapping.calibration.elements import assess_elements, element_models, parse_element_columns
from mapping.calibration.fidelity import fidelity
from mapping.calibration.free import GROUP_MARK, expand_groups, group_label, parse_free
from mapping.calibration.measurements import MeasurementRow, Measurements
from mapping.calibration.solvers import STARTS
from mapping.calibration.validation import (assess_by, cross_validate, fold_splits,
                                            group_splits, leave_one_group_out,
                                            repeat_splits, with_group_details)
from mapping.errors import InputError


def run_study(arch, rows: Measurements | Sequence[MeasurementRow], *, app=None,
              metric: str = "time", aggregate: str | None = None,
              fit: str | Sequence[str] | None = None, folds: int | None = None,
              repeats: int | None = None, folds_by: str | None = None,
              within: str | None = None, fit_by: str | None = None,
              measured_element: str | Sequence[str] | MappingT[str, str] | None = None,
              residuals: str = "absolute", starts: int = STARTS, seed: int = 0,
              test_fraction: float = 0.2, params: MappingT[str, Any] | None = None,
              source: str | None = None, columns: Sequence[str] | None = None,
              progress: Callable[[int], None] | None = None) -> Assessment:
    """The calibration study the options ask for (see the module doc), on the unbound
    ``arch`` and the measurement ``rows`` (a :class:`~mapping.calibration.measurements.Measurements`
    from :func:`~mapping.calibration.measurements.read_measurements`, or its rows; then
    ``columns`` are the table's columns and ``source`` its path, for the messages).

    ``fit``: the free parameters (``ELEMENT.METRIC.PARAM``, ``TYPE.METRIC.PARAM``, a
    bare param, patterns, ``PARAM@COLUMN``); ``residuals``, ``starts``, ``seed`` and
    ``test_fraction`` as :func:`~mapping.calibration.solvers.fit_parameters` and
    :func:`~mapping.calibration.assessment.assess`; ``measured_element``:
    ``ELEMENT=COLUMN`` pairs (``host=t_1,gpu=t_k,pcie=-``) or a dict; ``params``:
    values of params under every row's own.  ``progress(n)`` after every start of every
    fit; a :class:`~mapping.progress.Progress` without a total gets the number of starts.
    The result's ``result`` holds the figures (over the folds or repeats, within groups),
    its ``fit`` the values fitted on the usual split (on every row with folds or
    repeats)."""
    if isinstance(rows, Measurements):
        columns = rows.columns if columns is None else columns
        source = str(rows.path) if source is None else source
        rows = rows.rows
    rows = list(rows)
    if columns is None:
        columns = list(dict.fromkeys(c for r in rows for c in r.cells))
    where = f"{source}: " if source else ""
    given = [o for o, v in (("--folds", folds), ("--folds-by", folds_by),
                            ("--repeats", repeats)) if v is not None]
    if len(given) > 1:
        raise InputError(f"give {' or '.join(given)}, "
                         f"{'not both' if len(given) == 2 else 'only one'}")
    if folds_by is not None and fit_by is not None:
        raise InputError("--fit-by fits each group on its own rows, so --folds-by cannot "
                         "leave a group out: give one of them")
    for option, column in (("--within", within), ("--fit-by", fit_by),
                           ("--folds-by", folds_by)):
        if column is not None and column not in columns:
            raise InputError(f"{where}no column '{column}' for {option} "
                             f"(columns: {', '.join(columns)})")
    items = fit.split(",") if isinstance(fit, str) else list(fit or ())
    grouped = {item.strip(): item.partition(GROUP_MARK)[2].strip()
               for item in items if GROUP_MARK in item}
    for item, column in grouped.items():
        if column and column not in columns:
            raise InputError(f"{where}no column '{column}' for {item} "
                             f"(columns: {', '.join(columns)})")
    pooled_by = [c for c in dict.fromkeys(grouped.values()) if c]
    within = within or fit_by or (pooled_by[0] if pooled_by else None)
    cross = folds is not None or repeats is not None or folds_by is not None
    strata = None if fit_by is None else \
        [group_label(r, fit_by, f"--fit-by {fit_by}") for r in rows]
    splits = labels = None
    if folds_by is not None:
        splits, labels = leave_one_group_out([group_label(r, folds_by, f"--folds-by {folds_by}")
                                              for r in rows])
    elif cross and strata is not None:
        splits = group_splits(strata, fit_by, folds=folds, repeats=repeats,
                              test_fraction=test_fraction, seed=seed)
    elif cross:
        splits = (fold_splits(len(rows), folds, seed) if folds is not None else
                  repeat_splits(len(rows), repeats, test_fraction, seed))
    fits = (1 + len(splits) if cross else 1) if fit else 0
    fits *= len(set(strata)) if fit_by else 1
    if progress is not None and getattr(progress, "total", False) is None:
        progress.total = (1 + starts) * fits or None
    groups = None if within is None else [group_label(r, within, f"--within {within}")
                                          for r in rows]
    if measured_element is None or isinstance(measured_element, Mapping):
        element_columns = None if measured_element is None else dict(measured_element)
    else:
        element_columns = parse_element_columns(measured_element)
    if element_columns is not None and fit_by is not None:
        raise InputError("--measured-element does not go with --fit-by")
    common = dict(app=app, metric=metric, aggregate=aggregate, free=fit,
                  test_fraction=0.0 if cross else test_fraction, seed=seed,
                  params=params, source=source, starts=starts, progress=progress,
                  residuals=residuals)
    elements = None
    if element_columns is not None:
        # the GSLA paper's per-element fit: each element on its own column; the element
        # models serve the fit on the usual split and every fold's
        elements = element_models(arch, rows, element_columns, app=app, metric=metric,
                                  aggregate=aggregate, free=fit, params=params,
                                  source=source)
        assessment = assess_elements(arch, rows, element_columns, elements=elements,
                                     **common)
    elif fit_by:
        assessment = assess_by(arch, rows, fit_by, within=within, **common)
    else:
        assessment = assess(arch, rows, **common)
    result = assessment.result
    if cross:
        fitted = assessment.fit
        free = None
        if fitted is not None:
            free = expand_groups(parse_free(arch, fit, app), rows) if fit_by else fitted.free
        result = cross_validate(assessment.model, free, splits,
                                "repeats" if repeats is not None else "folds",
                                groups=groups, within=within,
                                fitted=fitted.values if fitted else None,
                                starts=starts, seed=seed, progress=progress,
                                residuals=residuals, fit_by=strata if fit_by else None,
                                fit_column=fit_by, labels=labels, folds_by=folds_by,
                                elements=elements)
    if not cross and groups is not None and not fit_by:
        on = assessment.scored
        result = fidelity(assessment.predicted[on], assessment.measured[on], n=result.n,
                          n_train=result.n_train, fitted=result.fitted,
                          groups=[groups[i] for i in on], within=within)
        result = with_group_details(result, groups, assessment.train, fit=assessment.fit)
    return replace(assessment, result=result)
