"""How well a model *ranks* alternatives against measurements (SPEC §8).

Two views of the same question, as in the papers:

- ``tau``: Kendall's tau-b between predicted and measured values (scipy), with its
  p-value -- the GSLA paper's fidelity (Payvar et al. 2021, Table 3);
- ``fidelity``: the fraction of pairs of rows that the model orders as the
  measurements do (Bambha & Bhattacharyya's definition, used by the LSLA paper), where
  a tie in one but not the other counts as a disagreement and a tie in both as an
  agreement.

Spearman's rho, the mean absolute percentage error and R² come beside them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
from scipy import stats

#: keys of the JSON document of ``mapeval fidelity``, in order (SPEC §7)
JSON_KEYS = ("n", "n_train", "n_test", "tau", "p_value", "fidelity", "spearman", "mape",
             "r2", "fitted")

# Rows per block of the pairwise comparison: bounds memory to ~BLOCK·n bytes per array.
_BLOCK = 1024


@dataclass(frozen=True)
class FidelityResult:
    """Agreement between predicted and measured values over ``n_test`` rows.

    ``n`` is the number of rows used, ``n_train`` of those that fitted the parameters
    ``fitted`` (``None`` without fitting: then every row is a test row).  ``mape`` is in
    percent, over the rows whose measured value is not zero.  Undefined statistics
    (fewer than two rows, constant values) are ``nan`` (``null`` in JSON).
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

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in JSON_KEYS}
        d["fitted"] = dict(self.fitted) if self.fitted is not None else None
        for key, value in d.items():
            if isinstance(value, float) and not math.isfinite(value):
                d[key] = None
        return d

    def __str__(self):
        where = (f"{self.n_test} test rows (fitted on {self.n_train} of {self.n})"
                 if self.n_train else f"{self.n_test} rows")
        lines = [f"fidelity over {where}:",
                 f"  Kendall tau-b  {_fmt(self.tau)}   (p = {_fmt(self.p_value, '.3g')})",
                 f"  pairs ordered  {_fmt(self.fidelity)}   (fraction of pairs ordered as measured)",
                 f"  Spearman rho   {_fmt(self.spearman)}",
                 f"  MAPE           {_fmt(self.mape, '.3g')} %",
                 f"  R^2            {_fmt(self.r2)}"]
        if self.fitted:
            width = max(len(k) for k in self.fitted)
            lines.append("fitted parameters:")
            lines += [f"  {k:<{width}}  {v:.6g}" for k, v in self.fitted.items()]
        return "\n".join(lines)

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in JSON_KEYS)
        return f"FidelityResult({fields})"


def _fmt(value, spec=".4f"):
    return "n/a" if value is None or not math.isfinite(value) else format(value, spec)


def pairwise_fidelity(predicted, measured) -> float:
    """The fraction of the ``n·(n-1)/2`` row pairs that ``predicted`` orders as
    ``measured`` does; a tie counts as an order of its own (tie against tie agrees,
    tie against an order disagrees).  ``nan`` for fewer than two rows."""
    p = np.asarray(predicted, dtype=float).ravel()
    m = np.asarray(measured, dtype=float).ravel()
    if p.shape != m.shape:
        raise ValueError(f"predicted and measured differ in length ({p.size} != {m.size})")
    n = p.size
    if n < 2:
        return math.nan
    agree = 0
    cols = np.arange(n)
    for start in range(0, n - 1, _BLOCK):
        stop = min(start + _BLOCK, n)
        sp = np.sign(p[start:stop, None] - p[None, :])
        sm = np.sign(m[start:stop, None] - m[None, :])
        upper = cols[None, :] > np.arange(start, stop)[:, None]   # each pair once, i < j
        agree += int(np.count_nonzero((sp == sm) & upper))
    return agree / (n * (n - 1) / 2)


def fidelity(predicted, measured, *, n: int | None = None, n_train: int = 0,
             fitted: Mapping[str, float] | None = None) -> FidelityResult:
    """Compare ``predicted`` with ``measured`` (same length, same row order).

    ``n`` (all rows, default: these plus ``n_train``), ``n_train`` and ``fitted`` only
    annotate the result: pass the test rows here.
    """
    p = np.asarray(predicted, dtype=float).ravel()
    m = np.asarray(measured, dtype=float).ravel()
    if p.shape != m.shape:
        raise ValueError(f"predicted and measured differ in length ({p.size} != {m.size})")
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(m))):
        raise ValueError("predicted and measured values must be finite")
    n_test = p.size
    tau = p_value = rho = math.nan
    if n_test >= 2 and np.ptp(p) > 0 and np.ptp(m) > 0:
        kt = stats.kendalltau(p, m, variant="b")
        tau, p_value = float(kt.statistic), float(kt.pvalue)
        rho = float(stats.spearmanr(p, m).statistic)
    with np.errstate(all="ignore"):      # an overflow is an infinite error, not a warning
        mape, r2 = _errors(p, m)
    return FidelityResult(n=n_test + n_train if n is None else n, n_train=n_train,
                          n_test=n_test, tau=tau, p_value=p_value,
                          fidelity=pairwise_fidelity(p, m), spearman=rho, mape=mape, r2=r2,
                          fitted=dict(fitted) if fitted is not None else None)


def _errors(p: np.ndarray, m: np.ndarray) -> tuple[float, float]:
    """MAPE (percent, over the non-zero measurements) and R²."""
    n_test = p.size
    nonzero = m != 0
    mape = float(np.mean(np.abs((p[nonzero] - m[nonzero]) / m[nonzero])) * 100) \
        if np.any(nonzero) else math.nan
    ss_tot = float(np.sum((m - m.mean()) ** 2)) if n_test else 0.0
    r2 = 1.0 - float(np.sum((m - p) ** 2)) / ss_tot if ss_tot > 0 else math.nan
    return mape, r2
