"""Honest validation of a model against measurements (SPEC §12).

``--folds K``: the rows, shuffled by ``numpy.random.default_rng(seed).permutation(n)``,
are cut into ``K`` consecutive parts of sizes differing by at most one
(``numpy.array_split``); fold ``k`` tests on part ``k`` and fits on the others.
``--repeats R``: repeat ``r`` (from 0) is the train/test split of
:func:`~mapping.fitting.split_rows` with seed ``seed + r`` (``--test-fraction``, 0.2 by
default: the LSLA paper's 80/20, repeated 100 times there).  ``--folds-by COLUMN``: leave one group out: each value of the column, in sorted order, is
the test fold in turn, the other rows fit (e.g. ``gpu``: each GPU predicted by a model
fitted without it -- a GPU one has not measured).  Every figure is the mean
over the splits, each split's figures are kept.  Without free parameters nothing is
fitted: each split's figures are those of the model's own predictions on its test rows,
the baseline a fitted model is compared with on the same rows.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np

from mapping.errors import InputError
from mapping.fidelity import FidelityResult, fidelity, mean_over_splits
from mapping.fitting import STARTS, FreeParameter, RowModel, fit_parameters, predict_fitted, split_rows
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


def group_splits(labels: Sequence[str]) -> tuple[list[tuple[np.ndarray, np.ndarray]],
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


def cross_validate(model: RowModel, free: Sequence[FreeParameter] | None,
                   splits: Sequence[tuple[np.ndarray, np.ndarray]], kind: str, *,
                   groups: Sequence | None = None, within: str | None = None,
                   fitted=None, starts: int = STARTS, seed: int = 0,
                   progress=None, residuals: str = "absolute",
                   labels: Sequence[str] | None = None,
                   folds_by: str | None = None) -> FidelityResult:
    """Fit ``free`` (if any) on the train rows of each split and compare on its test
    rows; the figures averaged over the splits (``kind``: ``folds`` or ``repeats``).
    ``labels`` name each split's group (folds by the column ``folds_by``).
    ``fitted`` annotates the result (the values fitted on every row); ``progress(1)``
    after every start of every split's fit; ``residuals``: the rule each fit minimises
    (:data:`~mapping.fitting.RESIDUALS`)."""
    measured = np.array([r.measured for r in model.rows], dtype=float)
    plain = None if free else model.predict()
    results = []
    for k, (train, test) in enumerate(splits):
        test = [int(i) for i in test]
        if free:
            fit = fit_parameters(model, free, train, starts, seed, progress, residuals)
            predicted, n_train, values = predict_fitted(model, fit, test), len(train), fit.values
        else:
            predicted, n_train, values = plain[test], 0, None
        result = fidelity(predicted, measured[test], n=len(model.rows), n_train=n_train,
                          fitted=values, groups=None if groups is None else
                          [groups[i] for i in test], within=within)
        results.append(result if labels is None else replace(result, group=labels[k]))
    return mean_over_splits(results, kind, n=len(model.rows), fitted=fitted,
                            folds_by=folds_by)
