"""How well a model *ranks* alternatives against measurements.

Two views of the same question, as in the papers:

- ``tau``: Kendall's tau-b between predicted and measured values (scipy), with its
  p-value -- the GSLA paper's fidelity (Payvar et al. 2021, Table 3);
- ``fidelity``: the fraction of pairs of rows that the model orders as the
  measurements do (Bambha & Bhattacharyya's definition, used by the LSLA paper), where
  a tie in one but not the other counts as a disagreement and a tie in both as an
  agreement.

Spearman's rho, the mean and the median absolute percentage error (``mape``, ``mdape``:
the median is what a typical row misses by, whatever a few outliers do) and R² come
beside them.

Every ranking statistic sees the predictions through :func:`ranking_values`: rounded to
12 significant digits, so that alternatives equal in exact arithmetic but not in
floating point (``0.1 + 0.2`` against ``0.3``) tie as they should.

``within`` figures restrict the pairs to rows of one group (alternatives of
one workload): ``fidelity_within`` counts the agreeing pairs of all groups over their
pairs; ``tau_within`` is the mean of the groups' tau-b weighted by their pair counts
(a group of one row has no pair and no weight; a group with pairs whose predictions or
measurements are all equal has no tau-b and counts as tau 0: it orders nothing).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
from scipy import stats

#: keys of the JSON document of ``mapeval fidelity``, in order
JSON_KEYS = ("n", "n_train", "n_test", "tau", "p_value", "fidelity", "spearman", "mape",
             "mdape", "r2", "fidelity_within", "tau_within", "fitted", "folds", "folds_by",
             "repeats")

#: the figures averaged over folds or repeats
FIGURES = ("tau", "fidelity", "spearman", "mape", "mdape", "r2", "fidelity_within",
           "tau_within")

#: the most groups whose own figures a result lists (``groups``); beyond, only the
#: within-group figures (each group's figures cost a tau and a rho of their own)
GROUPS_LISTED = 1000

#: significant digits the predictions keep before ranking
RANK_DIGITS = 12

@dataclass(frozen=True)
class FidelityResult:
    """Agreement between predicted and measured values over ``n_test`` rows.

    ``n`` is the number of rows used, ``n_train`` of those that fitted the parameters
    ``fitted`` (``None`` without fitting: then every row is a test row).  ``mape`` is in
    percent, over the rows whose measured value is not zero.  Undefined statistics
    (fewer than two rows, constant values) are ``nan`` (``null`` in JSON).
    ``fidelity_within``/``tau_within`` are the figures within groups of the column
    ``within`` (``nan`` without one).  Under cross-validation ``folds`` (or ``repeats``)
    holds one result per split and every figure is their mean (``nan`` splits left out);
    ``n_train``/``n_test`` are then the mean split sizes, rounded, and ``p_value`` is
    ``nan`` (a mean of p-values is no p-value; each split has its own).  Folds by a
    column (leave one group out) name it in ``folds_by``, and each fold its ``group``.
    """

    n: int
    n_train: int
    n_test: int
    tau: float
    p_value: float
    fidelity: float
    spearman: float
    mape: float
    r2: float
    fitted: Mapping[str, float] | None = field(default=None)
    mdape: float = math.nan
    fidelity_within: float = math.nan
    tau_within: float = math.nan
    within: str | None = None
    folds: tuple["FidelityResult", ...] | None = None
    repeats: tuple["FidelityResult", ...] | None = None
    folds_by: str | None = None
    group: str | None = None
    #: each group of ``within`` → its own figures (over its rows; under cross-validation
    #: the mean over the splits), in the order the groups first appear; ``None``
    #: beyond :data:`GROUPS_LISTED` groups
    groups: Mapping[str, "FidelityResult"] | None = None

    @property
    def splits(self) -> tuple["FidelityResult", ...] | None:
        return self.folds if self.folds is not None else self.repeats

    def rows_described(self) -> str:
        """Which rows the figures are over, for titles: ``"72 test rows"``, ``"360
        rows"`` or ``"mean over 5 folds of ~72 test rows"``."""
        if self.splits is not None:
            kind = "folds" if self.folds is not None else "repeated splits"
            return f"mean over {len(self.splits)} {kind} of ~{self.n_test} test rows"
        return f"{self.n_test} {'test rows' if self.n_train else 'rows'}"

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in JSON_KEYS}
        d["fitted"] = dict(self.fitted) if self.fitted is not None else None
        for key in ("folds", "repeats"):
            if d[key] is not None:
                d[key] = [r.split_dict() for r in d[key]]
        if self.groups is not None:
            d["within"] = self.within
            d["groups"] = [{"group": label, **r.group_dict()}
                           for label, r in self.groups.items()]
        return _finite(d)

    def group_dict(self) -> dict:
        """The figures of one group (JSON): those of :meth:`split_dict` but the
        within-group ones, and ``n``."""
        return {"n": self.n, **{k: v for k, v in self.split_dict().items()
                                if k not in ("fidelity_within", "tau_within")}}

    def split_dict(self) -> dict:
        """The figures of one fold or repeat (JSON)."""
        keys = ("n_train", "n_test", "tau", "p_value", "fidelity", "spearman", "mape",
                "mdape", "r2", "fidelity_within", "tau_within")
        d = {"group": self.group} if self.group is not None else {}
        d.update((k, getattr(self, k)) for k in keys)
        d["fitted"] = dict(self.fitted) if self.fitted is not None else None
        return _finite(d)

    def __str__(self):
        splits = self.splits
        if splits is not None:
            kind = "folds" if self.folds is not None else "repeated splits"
            fitted = f", fitted on ~{self.n_train} each" if self.n_train else ""
            if self.folds_by is not None:
                kind = f"folds (one per {self.folds_by})"
            where = (f"{len(splits)} {kind} of {self.n} rows (~{self.n_test} test rows "
                     f"each{fitted}), the mean")
        else:
            where = (f"{self.n_test} test rows (fitted on {self.n_train} of {self.n})"
                     if self.n_train else f"{self.n_test} rows")
        p = "" if splits is not None else f"   (p = {figure_text(self.p_value, '.3g')})"
        lines = [f"fidelity over {where}:",
                 f"  Kendall tau-b  {figure_text(self.tau)}{p}",
                 f"  pairs ordered  {figure_text(self.fidelity)}   "
                 "(fraction of pairs ordered as measured)",
                 f"  Spearman rho   {figure_text(self.spearman)}",
                 f"  MAPE           {figure_text(self.mape, '.3g')} %",
                 f"  median APE     {figure_text(self.mdape, '.3g')} %",
                 f"  R^2            {figure_text(self.r2)}"]
        if self.within is not None:
            lines += [f"within rows of equal {self.within}:",
                      f"  Kendall tau-b  {figure_text(self.tau_within)}   "
                      "(tau_within, groups weighted by pairs)",
                      f"  pairs ordered  {figure_text(self.fidelity_within)}   "
                      "(fidelity_within)"]
        if splits is not None:
            label = "fold" if self.folds is not None else "repeat"
            head = f"  {label:>6}  {'train':>5}  {'test':>5}  {'tau':>7}  {'fidelity':>8}"
            if self.within is not None:
                head += f"  {'tau_within':>10}  {'fid_within':>10}"
            head += f"  {'mdape %':>8}"
            if self.folds_by is not None:
                head += f"  {self.folds_by}"
            lines += [f"per {label}:", head]
            for i, r in enumerate(splits, 1):
                row = (f"  {i:>6}  {r.n_train:>5}  {r.n_test:>5}  {figure_text(r.tau):>7}  "
                       f"{figure_text(r.fidelity):>8}")
                if self.within is not None:
                    row += (f"  {figure_text(r.tau_within):>10}  "
                            f"{figure_text(r.fidelity_within):>10}")
                row += f"  {figure_text(r.mdape, '.3g'):>8}"
                if r.group is not None:
                    row += f"  {r.group}"
                lines.append(row)
        lines += self.group_lines()
        if self.fitted:
            width = max(len(k) for k in self.fitted)
            what = " (on every row)" if splits is not None else ""
            lines.append(f"fitted parameters{what}:")
            lines += [f"  {k:<{width}}  {v:.6g}" for k, v in self.fitted.items()]
        return "\n".join(lines)

    def group_lines(self) -> list[str]:
        """Each group's own figures, one line each (nothing without groups)."""
        if not self.groups:
            return []
        width = max([len(str(k)) for k in self.groups] + [5])
        lines = [f"per group of {self.within}:",
                 f"  {'group':<{width}}  {'rows':>5}  {'test':>5}  {'tau':>7}  "
                 f"{'fidelity':>8}  {'MAPE %':>7}"]
        for label, r in self.groups.items():
            lines.append(f"  {str(label):<{width}}  {r.n:>5}  {r.n_test:>5}  "
                         f"{figure_text(r.tau):>7}  {figure_text(r.fidelity):>8}  "
                         f"{figure_text(r.mape, '.3g'):>7}")
        return lines

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in JSON_KEYS)
        return f"FidelityResult({fields})"


def _finite(d: dict) -> dict:
    for key, value in d.items():
        if isinstance(value, float) and not math.isfinite(value):
            d[key] = None
    return d


def figure_text(value, spec: str = ".4f") -> str:
    """A figure as text in ``spec``; ``n/a`` where it is undefined (``None``, nan, inf:
    a tau-b of rows that all tie, an R^2 of one row)."""
    return "n/a" if value is None or not math.isfinite(value) else format(value, spec)


def ranking_values(predicted) -> np.ndarray:
    """The predictions as every ranking statistic sees them: rounded to ``RANK_DIGITS``
    significant digits, so that values equal in exact arithmetic tie."""
    p = np.asarray(predicted, dtype=float).ravel()
    distinct, back = np.unique(p, return_inverse=True)     # each value formatted once
    rounded = np.array([float(format(v, f".{RANK_DIGITS}g")) for v in distinct.tolist()],
                       dtype=float)
    return rounded[back.ravel()]


@dataclass(frozen=True)
class PairCounts:
    """The pairs of rows within each group (``(G,)`` integer arrays, group ``g`` the
    ``g``-th distinct label in order of appearance): ``pairs`` = k(k-1)/2, ``tied_p``/``tied_m`` the pairs tied
    in the predictions / measurements, ``tied_both`` tied in both, ``discordant`` ordered
    oppositely.  The concordant pairs are what is left (inclusion-exclusion)."""

    pairs: np.ndarray
    tied_p: np.ndarray
    tied_m: np.ndarray
    tied_both: np.ndarray
    discordant: np.ndarray

    @property
    def concordant(self) -> np.ndarray:
        return self.pairs - self.discordant - self.tied_p - self.tied_m + self.tied_both

    @property
    def agreeing(self) -> np.ndarray:
        """Pairs ordered alike, a tie in both counting as alike (Bambha & Bhattacharyya)."""
        return self.concordant + self.tied_both

    def tau_b(self) -> np.ndarray:
        """Kendall's tau-b per group, ``(C - D) / sqrt((n0 - n1)(n0 - n2))``; ``nan``
        where every prediction or every measurement of the group ties."""
        left = (self.pairs - self.tied_p).astype(float)
        right = (self.pairs - self.tied_m).astype(float)
        defined = (left > 0) & (right > 0)
        num = (self.concordant - self.discordant).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(defined, num / np.sqrt(left * right), np.nan)


def _dense(x: np.ndarray) -> np.ndarray:
    """Dense ranks (0, 1, ...) of ``x``; equal values share a rank."""
    return np.unique(x, return_inverse=True)[1].ravel().astype(np.int64)


def _group_codes(groups) -> np.ndarray:
    """Group ``g`` (0, 1, ...) of each row: the ``g``-th distinct label in order of first
    appearance (any hashable labels)."""
    if isinstance(groups, np.ndarray) and groups.ndim == 1 and groups.dtype != object:
        _, first, back = np.unique(groups, return_index=True, return_inverse=True)
        return np.argsort(np.argsort(first))[back.ravel()].astype(np.int64)
    codes: dict = {}
    return np.array([codes.setdefault(label, len(codes)) for label in groups],
                    dtype=np.int64)


def _tied_pairs(key: np.ndarray, group: np.ndarray, groups: int) -> np.ndarray:
    """Per group, the pairs of rows of equal ``key`` (a key determines its group)."""
    _, first, size = np.unique(key, return_index=True, return_counts=True)
    return np.bincount(group[first], weights=size * (size - 1) // 2, minlength=groups
                       ).astype(np.int64)


def _inversions(values: np.ndarray) -> np.ndarray:
    """For each position ``j``, how many ``i < j`` have ``values[i] > values[j]``
    (``values``: integers in ``[0, n)``).  A bottom-up merge sort whose levels are
    numpy operations over all blocks at once: O(n log n) comparisons, O(n) memory."""
    n = values.size
    out = np.zeros(n, dtype=np.int64)
    vals = values.astype(np.int64)
    pos = np.arange(n)
    idx = np.arange(n)
    width = 1
    while width < n:
        pair = idx // (2 * width)
        key = pair * n + vals                          # blocks stay apart, in order
        left = (idx % (2 * width)) < width
        lkeys = key[left]                              # sorted: blocks are sorted
        right = ~left
        q, b = key[right], pair[right]
        greater = np.searchsorted(lkeys, (b + 1) * n, "left") \
            - np.searchsorted(lkeys, q, "right")
        out[pos[right]] += greater
        order = np.argsort(key, kind="stable")         # merges two sorted runs per block
        vals, pos = vals[order], pos[order]
        width *= 2
    return out


def pair_counts(predicted, measured, groups=None) -> PairCounts:
    """:class:`PairCounts` of ``predicted`` (already :func:`ranking_values`) against
    ``measured``, within each group of ``groups`` (one label per row; ``None``: one
    group).  Knight's method (as scipy's ``kendalltau``): the rows sorted by group,
    measurement and prediction, the discordant pairs are the inversions of the
    predictions in that order, counted by merge sort; ties by sorting.  O(n log n) time,
    O(n) memory."""
    p = np.asarray(predicted, dtype=float).ravel()
    m = np.asarray(measured, dtype=float).ravel()
    g = np.zeros(p.size, dtype=np.int64) if groups is None else _group_codes(groups)
    n = p.size
    G = int(g.max()) + 1 if n else 0
    size = np.bincount(g, minlength=G).astype(np.int64)
    rp, rm = _dense(p), _dense(m)
    gp = _dense(g * n + rp)                            # (group, p) ranked together
    order = np.lexsort((rp, rm, g))                    # by group, then m, then p
    # within a group, an inversion of p in this order is a discordant pair; ranking
    # (group, p) together keeps pairs across groups from counting
    discordant = np.bincount(g[order], weights=_inversions(gp[order]), minlength=G
                             ).astype(np.int64)
    return PairCounts(size * (size - 1) // 2, _tied_pairs(gp, g, G),
                      _tied_pairs(g * n + rm, g, G), _tied_pairs(gp * n + rm, g, G),
                      discordant)


def _pair(predicted, measured) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(predicted, dtype=float).ravel()
    m = np.asarray(measured, dtype=float).ravel()
    if p.shape != m.shape:
        raise ValueError(f"predicted and measured differ in length ({p.size} != {m.size})")
    return ranking_values(p), m


def _agreeing_fraction(p: np.ndarray, m: np.ndarray) -> float:
    counts = pair_counts(p, m)
    return float(counts.agreeing[0] / counts.pairs[0]) if p.size >= 2 else math.nan


def pairwise_fidelity(predicted, measured) -> float:
    """The fraction of the ``n·(n-1)/2`` row pairs that ``predicted`` orders as
    ``measured`` does; a tie counts as an order of its own (tie against tie agrees,
    tie against an order disagrees).  ``nan`` for fewer than two rows."""
    return _agreeing_fraction(*_pair(predicted, measured))


def _tau(p: np.ndarray, m: np.ndarray) -> tuple[float, float]:
    """Kendall's tau-b and its p-value (``nan`` when undefined); ``p`` already rounded."""
    if p.size >= 2 and np.ptp(p) > 0 and np.ptp(m) > 0:
        kt = stats.kendalltau(p, m, variant="b")
        return float(kt.statistic), float(kt.pvalue)
    return math.nan, math.nan


def within_groups(predicted, measured, groups) -> tuple[float, float]:
    """``(fidelity_within, tau_within)``: the figures over the pairs of rows in one group
    only (``groups[i]`` is row ``i``'s group): the agreeing pairs of all groups over
    their pairs, and the groups' tau-b weighted by their pair counts (an undefined
    tau-b, all predictions or measurements of the group equal, counts as 0).
    ``nan`` when no group has two rows.  O(n log n) (:func:`pair_counts`)."""
    p, m = _pair(predicted, measured)
    labels = groups if isinstance(groups, np.ndarray) else list(groups)
    if len(labels) != p.size:
        raise ValueError(f"{len(labels)} group labels for {p.size} rows")
    if not p.size:
        return math.nan, math.nan
    counts = pair_counts(p, m, labels)
    pairs = int(counts.pairs.sum())
    if not pairs:
        return math.nan, math.nan
    tau = np.nan_to_num(counts.tau_b(), nan=0.0)
    return (float(counts.agreeing.sum() / pairs),
            float(np.sum(counts.pairs * tau) / pairs))


def fidelity(predicted, measured, *, n: int | None = None, n_train: int = 0,
             fitted: Mapping[str, float] | None = None, groups=None,
             within: str | None = None) -> FidelityResult:
    """Compare ``predicted`` with ``measured`` (same length, same row order).

    ``n`` (all rows, default: these plus ``n_train``), ``n_train`` and ``fitted`` only
    annotate the result: pass the test rows here.  ``groups`` (one label per row, the
    cells of column ``within``) adds the figures within groups.
    """
    raw = np.asarray(predicted, dtype=float).ravel()
    p, m = _pair(raw, measured)
    if not (np.all(np.isfinite(raw)) and np.all(np.isfinite(m))):
        raise ValueError("predicted and measured values must be finite")
    n_test = p.size
    tau, p_value = _tau(p, m)
    rho = float(stats.spearmanr(p, m).statistic) if not math.isnan(tau) else math.nan
    with np.errstate(all="ignore"):      # an overflow is an infinite error, not a warning
        mape, mdape, r2 = _errors(raw, m)
    fid_within = tau_within = math.nan
    per_group = None
    if groups is not None:
        fid_within, tau_within = within_groups(p, m, groups)
        members = group_rows(groups)
        if len(members) <= GROUPS_LISTED:
            per_group = {label: fidelity(raw[idx], m[idx]) for label, idx in members.items()}
    return FidelityResult(n=n_test + n_train if n is None else n, n_train=n_train,
                          n_test=n_test, tau=tau, p_value=p_value,
                          fidelity=_agreeing_fraction(p, m),
                          spearman=rho, mape=mape, mdape=mdape, r2=r2,
                          fitted=dict(fitted) if fitted is not None else None,
                          fidelity_within=fid_within, tau_within=tau_within,
                          within=within if groups is not None else None, groups=per_group)


def group_rows(groups) -> dict[Any, np.ndarray]:
    """Each label of ``groups`` (one per row) → its rows, in order of first appearance."""
    members: dict[Any, list[int]] = {}
    for i, key in enumerate(groups):
        members.setdefault(key, []).append(i)
    return {key: np.array(rows, dtype=int) for key, rows in members.items()}


def mean_over_splits(splits: Sequence[FidelityResult], kind: str, *, n: int,
                     fitted: Mapping[str, float] | None = None,
                     folds_by: str | None = None, group: bool = False) -> FidelityResult:
    """One result whose figures are the means of ``splits`` (``kind`` ``"folds"`` or
    ``"repeats"``), leaving out the splits where a figure is undefined; each group's
    figures are the means of its own.  ``folds_by`` names the column whose groups the
    folds are (leave one group out); ``group``: the splits are one group's (their ``n``
    is kept and they are not listed again)."""
    if kind not in ("folds", "repeats"):
        raise ValueError(f"kind must be 'folds' or 'repeats', not {kind!r}")
    splits = tuple(splits)

    def mean(key):
        values = [getattr(r, key) for r in splits]
        values = [v for v in values if not math.isnan(v)]
        return float(np.mean(values)) if values else math.nan

    figures = {key: mean(key) for key in FIGURES}
    labels = dict.fromkeys(k for r in splits for k in (r.groups or ()))
    groups = {label: mean_over_splits([r.groups[label] for r in splits
                                       if r.groups and label in r.groups], kind,
                                      n=0, group=True)
              for label in labels} if labels else None
    if group:
        n = int(round(np.mean([r.n for r in splits])))
    return FidelityResult(n=n, n_train=int(round(np.mean([r.n_train for r in splits]))),
                          n_test=int(round(np.mean([r.n_test for r in splits]))),
                          p_value=math.nan, fitted=dict(fitted) if fitted is not None else None,
                          within=splits[0].within if splits else None, groups=groups,
                          folds_by=folds_by, **figures, **({} if group else {kind: splits}))


def _errors(p: np.ndarray, m: np.ndarray) -> tuple[float, float, float]:
    """MAPE and its median (percent, over the non-zero measurements) and R²."""
    n_test = p.size
    nonzero = m != 0
    ape = np.abs((p[nonzero] - m[nonzero]) / m[nonzero]) * 100
    mape = float(np.mean(ape)) if ape.size else math.nan
    mdape = float(np.median(ape)) if ape.size else math.nan
    ss_tot = float(np.sum((m - m.mean()) ** 2)) if n_test else 0.0
    r2 = 1.0 - float(np.sum((m - p) ** 2)) / ss_tot if ss_tot > 0 else math.nan
    return mape, mdape, r2
