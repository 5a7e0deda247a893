"""How well a model *ranks* alternatives against measurements (SPEC §8).

Two views of the same question, as in the papers:

- ``tau``: Kendall's tau-b between predicted and measured values (scipy), with its
  p-value -- the GSLA paper's fidelity (Payvar et al. 2021, Table 3);
- ``fidelity``: the fraction of pairs of rows that the model orders as the
  measurements do (Bambha & Bhattacharyya's definition, used by the LSLA paper), where
  a tie in one but not the other counts as a disagreement and a tie in both as an
  agreement.

Spearman's rho, the mean absolute percentage error and R² come beside them.

Every ranking statistic sees the predictions through :func:`ranking_values`: rounded to
12 significant digits, so that alternatives equal in exact arithmetic but not in
floating point (``0.1 + 0.2`` against ``0.3``) tie as they should (SPEC §12).

``within`` figures (SPEC §12) restrict the pairs to rows of one group (alternatives of
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

#: keys of the JSON document of ``mapeval fidelity``, in order (SPEC §7)
JSON_KEYS = ("n", "n_train", "n_test", "tau", "p_value", "fidelity", "spearman", "mape",
             "r2", "fidelity_within", "tau_within", "fitted", "folds", "repeats")

#: the figures averaged over folds or repeats (SPEC §12)
FIGURES = ("tau", "fidelity", "spearman", "mape", "r2", "fidelity_within", "tau_within")

#: the most groups whose own figures a result lists (``groups``); beyond, only the
#: within-group figures (each group's figures cost a tau and a rho of their own)
GROUPS_LISTED = 1000

#: significant digits the predictions keep before ranking (SPEC §12)
RANK_DIGITS = 12

# Rows per block of the pairwise comparison: bounds memory to ~BLOCK·n bytes per array.
_BLOCK = 1024


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
    ``nan`` (a mean of p-values is no p-value; each split has its own).
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
    fidelity_within: float = math.nan
    tau_within: float = math.nan
    within: str | None = None
    folds: tuple["FidelityResult", ...] | None = None
    repeats: tuple["FidelityResult", ...] | None = None
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
        keys = ("n_train", "n_test", "tau", "p_value", "fidelity", "spearman", "mape", "r2",
                "fidelity_within", "tau_within")
        d = {k: getattr(self, k) for k in keys}
        d["fitted"] = dict(self.fitted) if self.fitted is not None else None
        return _finite(d)

    def __str__(self):
        splits = self.splits
        if splits is not None:
            kind = "folds" if self.folds is not None else "repeated splits"
            fitted = f", fitted on ~{self.n_train} each" if self.n_train else ""
            where = (f"{len(splits)} {kind} of {self.n} rows (~{self.n_test} test rows "
                     f"each{fitted}), the mean")
        else:
            where = (f"{self.n_test} test rows (fitted on {self.n_train} of {self.n})"
                     if self.n_train else f"{self.n_test} rows")
        p = "" if splits is not None else f"   (p = {_fmt(self.p_value, '.3g')})"
        lines = [f"fidelity over {where}:",
                 f"  Kendall tau-b  {_fmt(self.tau)}{p}",
                 f"  pairs ordered  {_fmt(self.fidelity)}   (fraction of pairs ordered as measured)",
                 f"  Spearman rho   {_fmt(self.spearman)}",
                 f"  MAPE           {_fmt(self.mape, '.3g')} %",
                 f"  R^2            {_fmt(self.r2)}"]
        if self.within is not None:
            lines += [f"within rows of equal {self.within}:",
                      f"  Kendall tau-b  {_fmt(self.tau_within)}   (tau_within, groups weighted by pairs)",
                      f"  pairs ordered  {_fmt(self.fidelity_within)}   (fidelity_within)"]
        if splits is not None:
            label = "fold" if self.folds is not None else "repeat"
            head = f"  {label:>6}  {'train':>5}  {'test':>5}  {'tau':>7}  {'fidelity':>8}"
            if self.within is not None:
                head += f"  {'tau_within':>10}  {'fid_within':>10}"
            lines += [f"per {label}:", head]
            for i, r in enumerate(splits, 1):
                row = (f"  {i:>6}  {r.n_train:>5}  {r.n_test:>5}  {_fmt(r.tau):>7}  "
                       f"{_fmt(r.fidelity):>8}")
                if self.within is not None:
                    row += f"  {_fmt(r.tau_within):>10}  {_fmt(r.fidelity_within):>10}"
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
            lines.append(f"  {str(label):<{width}}  {r.n:>5}  {r.n_test:>5}  {_fmt(r.tau):>7}  "
                         f"{_fmt(r.fidelity):>8}  {_fmt(r.mape, '.3g'):>7}")
        return lines

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in JSON_KEYS)
        return f"FidelityResult({fields})"


def _finite(d: dict) -> dict:
    for key, value in d.items():
        if isinstance(value, float) and not math.isfinite(value):
            d[key] = None
    return d


def _fmt(value, spec=".4f"):
    return "n/a" if value is None or not math.isfinite(value) else format(value, spec)


def ranking_values(predicted) -> np.ndarray:
    """The predictions as every ranking statistic sees them: rounded to ``RANK_DIGITS``
    significant digits, so that values equal in exact arithmetic tie."""
    p = np.asarray(predicted, dtype=float).ravel()
    return np.array([float(format(v, f".{RANK_DIGITS}g")) for v in p.tolist()], dtype=float)


def _agreeing_pairs(p: np.ndarray, m: np.ndarray) -> int:
    """How many of the pairs ``i < j`` ``p`` orders as ``m`` (ties an order of their own)."""
    n = p.size
    agree = 0
    cols = np.arange(n)
    for start in range(0, n - 1, _BLOCK):
        stop = min(start + _BLOCK, n)
        sp = np.sign(p[start:stop, None] - p[None, :])
        sm = np.sign(m[start:stop, None] - m[None, :])
        upper = cols[None, :] > np.arange(start, stop)[:, None]   # each pair once, i < j
        agree += int(np.count_nonzero((sp == sm) & upper))
    return agree


def _pair(predicted, measured) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(predicted, dtype=float).ravel()
    m = np.asarray(measured, dtype=float).ravel()
    if p.shape != m.shape:
        raise ValueError(f"predicted and measured differ in length ({p.size} != {m.size})")
    return ranking_values(p), m


def pairwise_fidelity(predicted, measured) -> float:
    """The fraction of the ``n·(n-1)/2`` row pairs that ``predicted`` orders as
    ``measured`` does; a tie counts as an order of its own (tie against tie agrees,
    tie against an order disagrees).  ``nan`` for fewer than two rows."""
    p, m = _pair(predicted, measured)
    n = p.size
    return _agreeing_pairs(p, m) / (n * (n - 1) / 2) if n >= 2 else math.nan


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
    ``nan`` when no group has two rows."""
    p, m = _pair(predicted, measured)
    keys = list(groups)
    if len(keys) != p.size:
        raise ValueError(f"{len(keys)} group labels for {p.size} rows")
    members: dict[Any, list[int]] = {}
    for i, key in enumerate(keys):
        members.setdefault(key, []).append(i)
    pairs = agree = 0
    weighted_tau = 0.0
    for rows in members.values():
        k = len(rows)
        if k < 2:
            continue
        idx = np.array(rows)
        n_pairs = k * (k - 1) // 2
        pairs += n_pairs
        agree += _agreeing_pairs(p[idx], m[idx])
        tau = _tau(p[idx], m[idx])[0]
        weighted_tau += n_pairs * (0.0 if math.isnan(tau) else tau)
    if not pairs:
        return math.nan, math.nan
    return agree / pairs, weighted_tau / pairs


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
        mape, r2 = _errors(raw, m)
    fid_within = tau_within = math.nan
    per_group = None
    if groups is not None:
        fid_within, tau_within = within_groups(p, m, groups)
        members = group_rows(groups)
        if len(members) <= GROUPS_LISTED:
            per_group = {label: fidelity(raw[idx], m[idx]) for label, idx in members.items()}
    return FidelityResult(n=n_test + n_train if n is None else n, n_train=n_train,
                          n_test=n_test, tau=tau, p_value=p_value,
                          fidelity=_agreeing_pairs(p, m) / (n_test * (n_test - 1) / 2)
                          if n_test >= 2 else math.nan,
                          spearman=rho, mape=mape, r2=r2,
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
                     group: bool = False) -> FidelityResult:
    """One result whose figures are the means of ``splits`` (``kind`` ``"folds"`` or
    ``"repeats"``), leaving out the splits where a figure is undefined; each group's
    figures are the means of its own.  ``group``: the splits are one group's (their
    ``n`` is kept and they are not listed again)."""
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
                          **figures, **({} if group else {kind: splits}))


def _errors(p: np.ndarray, m: np.ndarray) -> tuple[float, float]:
    """MAPE (percent, over the non-zero measurements) and R²."""
    n_test = p.size
    nonzero = m != 0
    mape = float(np.mean(np.abs((p[nonzero] - m[nonzero]) / m[nonzero])) * 100) \
        if np.any(nonzero) else math.nan
    ss_tot = float(np.sum((m - m.mean()) ** 2)) if n_test else 0.0
    r2 = 1.0 - float(np.sum((m - p) ** 2)) / ss_tot if ss_tot > 0 else math.nan
    return mape, r2
