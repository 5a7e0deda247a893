"""Honest validation of a model against measurements (SPEC §12).

``--folds K``: the rows, shuffled by ``numpy.random.default_rng(seed).permutation(n)``,
are cut into ``K`` consecutive parts of sizes differing by at most one
(``numpy.array_split``); fold ``k`` tests on part ``k`` and fits on the others.
``--repeats R``: repeat ``r`` (from 0) is the train/test split of
:func:`~mapping.calibration.fitting.split_rows` with seed ``seed + r`` (``--test-fraction``, 0.2 by
default: the LSLA paper's 80/20, repeated 100 times there).  ``--folds-by COLUMN``: leave one group out: each value of the column, in sorted order, is
the test fold in turn, the other rows fit (e.g. ``gpu``: each GPU predicted by a model
fitted without it -- a GPU one has not measured).  Every figure is the mean
over the splits, each split's figures are kept.  Without free parameters nothing is
fitted: each split's figures are those of the model's own predictions on its test rows,
the baseline a fitted model is compared with on the same rows.

``--fit-by COLUMN`` fits one parameter set per group of rows sharing the column's value:
the split (or every fold, every repeat) is made within each group by the same rules
(:func:`group_splits`), so every group trains and tests; each group's test rows are
predicted by its own fit, and the figures are those of all test rows together.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Mapping as MappingT, Sequence

import numpy as np

from mapping.errors import InputError
from mapping.calibration.fidelity import FidelityResult, fidelity, group_rows, mean_over_splits
from mapping.calibration.assessment import Assessment, scored_rows, split_rows
from mapping.calibration.checks import check_bare, check_free
from mapping.calibration.elements import fit_elements
from mapping.calibration.free import (GROUP_MARK, FreeParameter, expand_groups, fitted_architecture,
                                      group_label, group_values, parse_free)
from mapping.calibration.row_model import RowModel
from mapping.calibration.solvers import FitResult, STARTS, fit_parameters, predict_fitted
from mapping.options import POSITIVE_WHOLE, whole

#: K of K-fold cross-validation: two folds at least
FOLDS = whole(2)


def fold_splits(n: int, folds: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """``folds`` (train, test) index pairs of K-fold cross-validation (see the module
    doc); every row is a test row exactly once."""
    FOLDS.check(folds, "--folds")
    if folds > n:
        raise InputError(f"--folds {folds}: only {n} rows; at most one fold per row")
    parts = np.array_split(np.random.default_rng(seed).permutation(n), folds)
    return [(np.sort(np.concatenate(parts[:k] + parts[k + 1:])), np.sort(parts[k]))
            for k in range(folds)]


def leave_one_group_out(labels: Sequence[str]) -> tuple[list[tuple[np.ndarray, np.ndarray]],
                                                         list[str]]:
    """Leave-one-group-out (train, test) index pairs, one per distinct label (sorted),
    and the labels in that order; every row is a test row exactly once."""
    groups = sorted(set(labels))
    if len(groups) < 2:
        raise InputError(f"--folds-by needs at least two groups, found "
                         f"{len(groups)} ({', '.join(groups) or 'none'})")
    index = np.arange(len(labels))
    members = np.array(labels, dtype=object)
    return [(index[members != g], index[members == g]) for g in groups], groups


def repeat_splits(n: int, repeats: int, test_fraction: float = 0.2, seed: int = 0
                  ) -> list[tuple[np.ndarray, np.ndarray]]:
    """``repeats`` seeded train/test splits, repeat ``r`` with seed ``seed + r``."""
    POSITIVE_WHOLE.check(repeats, "--repeats")
    splits = [split_rows(n, test_fraction, seed + r) for r in range(repeats)]
    if len(splits[0][1]) < 2:
        raise InputError(f"--repeats with --test-fraction {test_fraction} leaves "
                         f"{len(splits[0][1])} test row{'s' if len(splits[0][1]) != 1 else ''} "
                         f"of {n}: at least two are needed to rank")
    return splits


def stratified_splits(labels: Sequence, make) -> list[tuple[np.ndarray, np.ndarray]]:
    """Splits made within each group of rows: ``make(n, label)`` gives the (train,
    test) pairs of a group of ``n`` rows (all groups the same number of pairs); pair
    ``k`` of the result joins every group's pair ``k``, so that every group has
    training and test rows in every split."""
    members = group_rows(labels)
    made = {label: make(len(idx), label) for label, idx in members.items()}
    count = len(next(iter(made.values()))) if made else 0
    return [(np.sort(np.concatenate([idx[made[g][k][0]] for g, idx in members.items()])),
             np.sort(np.concatenate([idx[made[g][k][1]] for g, idx in members.items()])))
            for k in range(count)]


def group_splits(labels: Sequence, column: str, *, folds: int | None = None,
                 repeats: int | None = None, test_fraction: float = 0.2, seed: int = 0
                 ) -> list[tuple[np.ndarray, np.ndarray]]:
    """The splits of ``--folds``, ``--repeats`` or one ``--test-fraction`` split made
    within each group of ``column`` (:func:`stratified_splits`)."""
    def make(n, label):
        try:
            if folds is not None:
                return fold_splits(n, folds, seed)
            if repeats is not None:
                return [split_rows(n, test_fraction, seed + r) for r in range(repeats)]
            return [split_rows(n, test_fraction, seed)]
        except InputError as exc:
            raise InputError(f"group '{label}' of column '{column}' ({n} rows): {exc}") \
                from None
    return stratified_splits(labels, make)


def group_fits(model: RowModel, free: Sequence[FreeParameter], train, fit_by: Sequence,
               column: str, *, starts: int = STARTS, seed: int = 0, progress=None,
               residuals: str = "absolute") -> dict[str, FitResult]:
    """Each group of ``fit_by`` (one label per row of ``model``) → the fit of ``free``
    on its rows among ``train`` (``--fit-by COLUMN``)."""
    train = np.asarray(train, dtype=int)
    labels = np.array(fit_by, dtype=object)
    fits = {}
    for label in dict.fromkeys(fit_by):
        rows = train[labels[train] == label]
        if not len(rows):
            raise InputError(f"--fit-by {column}: group '{label}' has no training row")
        fits[label] = fit_parameters(model, free, rows, starts, seed, progress, residuals)
    return fits


def grouped_prediction(model: RowModel, fits: MappingT[str, FitResult], fit_by: Sequence,
                       rows) -> np.ndarray:
    """The predictions of ``rows``, each by the fit of its group."""
    rows = np.asarray(rows, dtype=int)
    labels = np.array(fit_by, dtype=object)
    out = np.empty(len(rows))
    for label, fit in fits.items():
        at = np.flatnonzero(labels[rows] == label)
        if len(at):
            out[at] = predict_fitted(model, fit, rows[at])
    return out


def merged_group_fit(arch, fits: MappingT[str, FitResult], column: str, train, test
                     ) -> FitResult:
    """The fits of the groups of ``column`` as one: each value under
    ``SPEC@COLUMN=LABEL``, as a group-specific parameter would be named."""
    free, values = [], {}
    for label, fit in fits.items():
        for fp in fit.free:
            named = replace(fp, spec=f"{fp.spec}{GROUP_MARK}{column}={label}", by=column,
                            label=label)
            free.append(named)
            values[named.spec] = fit.values[fp.spec]
    some = next(iter(fits.values()))
    return FitResult(tuple(free), values, f"{some.method} per group of {column}",
                     fitted_architecture(arch, free, [values[fp.spec] for fp in free]),
                     tuple(int(i) for i in train), tuple(int(i) for i in test),
                     sum(f.rank for f in fits.values()),
                     tuple(g for f in fits.values() for g in f.indistinguishable),
                     tuple(f"group '{label}': {w}" for label, f in fits.items()
                           for w in f.warnings),
                     float(np.sqrt(sum(f.residual_norm ** 2 for f in fits.values()))),
                     0, 0, some.residuals)     # each group's fit has its own best start


def with_group_details(result: FidelityResult, labels: Sequence, train, *,
                       fits: MappingT[str, FitResult] | None = None,
                       fit: FitResult | None = None) -> FidelityResult:
    """``result`` whose per-group figures (of its ``within`` column) also say how many
    of the group's rows trained and the values fitted for the group: its own fit
    (``fits``, ``--fit-by``) or the pooled ``fit``'s shared values and that group's own
    (:func:`~mapping.calibration.fitting.group_values`)."""
    if not result.groups:
        return result
    labels = np.array(labels, dtype=object)
    trained = labels[np.asarray(train, dtype=int)] if len(train) else labels[:0]
    groups = {}
    for label, r in result.groups.items():
        n_train = int(np.count_nonzero(trained == label))
        values = None
        if fits is not None and label in fits:
            values = dict(fits[label].values)
        elif fit is not None:
            values = group_values(fit.values, fit.free, result.within, label)
        groups[label] = replace(r, n=int(np.count_nonzero(labels == label)),
                                n_train=n_train, fitted=values)
    return replace(result, groups=groups)


def assess_by(arch, rows, column: str, *, app=None, metric: str = "time",
              aggregate: str | None = None, free=None, test_fraction: float = 0.2,
              seed: int = 0, params=None, source: str | None = None,
              starts: int = STARTS, progress=None, residuals: str = "absolute",
              within: str | None = None) -> Assessment:
    """:func:`~mapping.calibration.fitting.assess` with one parameter set per value of ``column``
    (``--fit-by``): the rows of each group split alike (:func:`group_splits`), each
    group's parameters fitted on its training rows and its test rows predicted with
    them.  The figures are over all test rows, within and per group of ``within``
    (default ``column``); ``fit`` holds every group's values as ``SPEC@COLUMN=LABEL``."""
    within = within or column
    model = RowModel(arch, rows, metric, aggregate, app, params, source)
    labels = [group_label(r, column, f"--fit-by {column}") for r in rows]
    by_within = labels if within == column else \
        [group_label(r, within, f"--within {within}") for r in rows]
    measured = np.array([r.measured for r in rows], dtype=float)
    free_params = expand_groups(parse_free(arch, free, app), rows) if free else None
    if free_params:
        if any(fp.by == column for fp in free_params):
            raise InputError(f"--fit-by {column} fits every parameter per group of "
                             f"'{column}' already: drop '{GROUP_MARK}{column}'")
        check_free(model.bound_arch(0), free_params, model.metric)
    predicted = model.predict()
    if free_params:
        check_bare(model, free_params, predicted)
    else:
        result = fidelity(predicted, measured, groups=by_within, within=within)
        return Assessment(with_group_details(result, by_within, []), None, predicted,
                          measured, model)
    train, test = group_splits(labels, column, test_fraction=test_fraction, seed=seed)[0]
    fits = group_fits(model, free_params, train, labels, column, starts=starts, seed=seed,
                      progress=progress, residuals=residuals)
    merged = merged_group_fit(arch, fits, column, train, test)
    predicted = grouped_prediction(model, fits, labels, np.arange(len(rows)))
    on = scored_rows(train, test)
    result = fidelity(predicted[on], measured[on], n=len(rows), n_train=len(train),
                      fitted=merged.values, groups=[by_within[i] for i in on],
                      within=within)
    result = with_group_details(result, by_within, train,
                                fits=fits if within == column else None)
    return Assessment(result, merged, predicted, measured, model)


def split_results(model: RowModel, free: Sequence[FreeParameter] | None,
                  splits: Sequence[tuple[np.ndarray, np.ndarray]], *,
                  groups: Sequence | None = None, within: str | None = None,
                  fit_by: Sequence | None = None, fit_column: str | None = None,
                  starts: int = STARTS, seed: int = 0, progress=None,
                  residuals: str = "absolute", elements=None) -> list[FidelityResult]:
    """The figures of each split: ``free`` (if any) fitted on its train rows -- one fit,
    or with ``fit_by`` (a label per row, of column ``fit_column``) one fit per group, or
    with ``elements`` (:func:`~mapping.calibration.fitting.element_models`) each element's own
    parameters on its own column -- and the test rows compared; ``groups`` (labels of
    column ``within``) adds the figures within and per group."""
    measured = np.array([r.measured for r in model.rows], dtype=float)
    plain = None if free else model.predict()
    results = []
    for train, test in splits:
        test = np.array([int(i) for i in test], dtype=int)
        fits, fit = None, None
        if not free:
            predicted, n_train, values = plain[test], 0, None
        elif fit_by is not None:
            fits = group_fits(model, free, train, fit_by, fit_column, starts=starts,
                              seed=seed, progress=progress, residuals=residuals)
            predicted = grouped_prediction(model, fits, fit_by, test)
            n_train = len(train)
            values = merged_group_fit(model.arch, fits, fit_column, train, test).values
        elif elements is not None:
            _, fit = fit_elements(elements, model.arch, train, test, starts, seed, progress,
                                  residuals)
            predicted, n_train, values = predict_fitted(model, fit, test), len(train), fit.values
        else:
            fit = fit_parameters(model, free, train, starts, seed, progress, residuals)
            predicted, n_train, values = predict_fitted(model, fit, test), len(train), fit.values
        labels = None if groups is None else [groups[i] for i in test]
        result = fidelity(predicted, measured[test], n=len(model.rows), n_train=n_train,
                          fitted=values, groups=labels, within=within)
        if groups is not None:
            result = with_group_details(result, groups, train if free else [],
                                        fits=fits if within == fit_column else None, fit=fit)
        results.append(result)
    return results


def cross_validate(model: RowModel, free: Sequence[FreeParameter] | None,
                   splits: Sequence[tuple[np.ndarray, np.ndarray]], kind: str, *,
                   groups: Sequence | None = None, within: str | None = None,
                   fitted=None, starts: int = STARTS, seed: int = 0,
                   progress=None, residuals: str = "absolute",
                   fit_by: Sequence | None = None, fit_column: str | None = None,
                   labels: Sequence[str] | None = None, folds_by: str | None = None,
                   elements=None) -> FidelityResult:
    """Fit ``free`` (if any) on the train rows of each split and compare on its test
    rows; the figures averaged over the splits (``kind``: ``folds`` or ``repeats``).
    ``fitted`` annotates the result (the values fitted on every row); ``progress(1)``
    after every start of every split's fit; ``residuals``: the rule each fit minimises
    (:data:`~mapping.calibration.fitting.RESIDUALS`); ``fit_by``: one fit per group
    (:func:`split_results`); ``labels`` name each split's group when the splits leave
    one group of the column ``folds_by`` out (:func:`leave_one_group_out`);
    ``elements``: the per-element fit of each split (:func:`split_results`)."""
    results = split_results(model, free, splits, groups=groups, within=within,
                            fit_by=fit_by, fit_column=fit_column, starts=starts, seed=seed,
                            progress=progress, residuals=residuals, elements=elements)
    if labels is not None:
        results = [replace(r, group=label) for r, label in zip(results, labels)]
    return mean_over_splits(results, kind, n=len(model.rows), fitted=fitted,
                            folds_by=folds_by)
