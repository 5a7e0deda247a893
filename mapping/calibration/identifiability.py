"""What the training rows cannot determine, and which measured columns would."""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence
import numpy as np
from moa import Architecture
from moa.cost_models import Bounds
from mapping.errors import InputError
from mapping.calibration.free import FreeParameter
from mapping.calibration.parameter_vector import ParameterVector
from mapping.calibration.row_model import RowModel


def indistinguishable_hint(group: Sequence[str], free: Sequence[FreeParameter],
                       columns: tuple[list[str], list[str]] = ([], [])) -> str:
    """A warning naming parameters the rows cannot determine, with what would fix it;
    ``columns``: the measured columns that, varied, would tell them apart, and those
    tried (:func:`separating_columns`)."""
    separating, tried = columns
    effect = "make it matter" if len(group) == 1 else "tell them apart"
    if separating:
        rows = f"add rows that vary {' or '.join(separating)} (other values there {effect})"
    elif tried:
        rows = (f"add rows of other mappings or workloads (other values of "
                f"{', '.join(tried)} alone would not {effect})")
    else:
        rows = f"add rows of other mappings or workloads that {effect}"
    if len(group) == 1:
        return (f"{group[0]} has no effect on the training rows at the fitted values: the "
                f"fit cannot determine it (to fix: leave it out of --fit; or {rows})")
    by = {fp.spec: fp for fp in free}
    members = [by[g] for g in group if g in by]
    same_param = len({(fp.metric, fp.param) for fp in members}) == 1 and \
        all(fp.level != "param" for fp in members)
    hints = [f"fix all but one (leave e.g. {', '.join(group[1:])} out of --fit)"]
    if same_param:
        shared = ", ".join(e for fp in members for e in fp.elements)
        hints.append(f"share one value across {shared} (a type's {members[0].metric} "
                     "model, or a param both use)")
    hints.append(rows)
    return (f"the training rows cannot tell apart {', '.join(group)}: only a combination "
            "of them is determined (the fit chose one of many equally good values); to "
            "fix: " + "; or ".join(hints))


#: at most this many measured columns and training rows are varied to find the columns
#: that would tell indistinguishable parameters apart (:func:`separating_columns`)
SEPARATING_COLUMNS, SEPARATING_ROWS = 12, 4


def separating_columns(model: RowModel, free: Sequence[FreeParameter], train: Sequence[int],
                       theta, bounds: Sequence[Bounds], group: Sequence[str]
                       ) -> tuple[list[str], list[str]]:
    """``(separating, tried)``: the numeric columns of the training rows (parameters they
    set, at most :data:`SEPARATING_COLUMNS`) that, varied, tell ``group`` apart (or make
    a lone parameter matter), and every column whose varied rows could be evaluated.
    A few training rows that load the group's elements are copied with the column
    halved and doubled; the sensitivities of their predictions to a relative change of
    each parameter of ``group`` at the fitted ``theta`` (one-sided differences of 1e-6,
    inside the bounds) get full column rank with the rows' own."""
    names = [fp.spec for fp in free]
    index = [names.index(g) for g in group]
    elements = set().union(*(_elements_of(model.arch, free[j]) for j in index))
    candidates = [i for i in train if any(model.placed(i).get(e) for e in elements)] \
        or list(train)
    picks = [candidates[int(k)] for k in np.unique(np.linspace(
        0, len(candidates) - 1, min(SEPARATING_ROWS, len(candidates))).round().astype(int))]
    columns: list[str] = []
    for i in picks:
        columns += [c for c, v in model.rows[i].params.items()
                    if c not in columns and isinstance(v, (int, float)) and v != 0]
    base = [model.rows[i] for i in picks]
    separating, tried = [], []
    for column in columns[:SEPARATING_COLUMNS]:
        rows = base + [replace(r, params={**r.params, column: r.params[column] * f})
                       for r in base if column in r.params for f in (0.5, 2.0)]
        varied = RowModel(model.arch, rows, model.metric, model.requested, model.app,
                          model.params, model.source, element=model.element)
        try:
            J = _relative_sensitivities(varied, free, theta, bounds, index)
        except (InputError, ValueError, ArithmeticError):
            continue                         # a varied row the model cannot evaluate
        tried.append(column)
        norms = np.linalg.norm(J, axis=0)
        if np.all(norms > 0):
            sv = np.linalg.svd(J / norms, compute_uv=False)
            if sv[-1] > 1e-4 * sv[0]:
                separating.append(column)
    return separating, tried


def _elements_of(arch: Architecture, fp: FreeParameter) -> set[str]:
    """The elements whose models a free parameter sets: its own, or for a bare param
    those with a model argument that uses it."""
    if fp.level != "param":
        return set(fp.elements)
    return {e.name for e in arch.elements.values() for spec in e.costs.values()
            if any(fp.target in getattr(v, "names", ()) for v in
                   getattr(spec, "args", {}).values())}


def _relative_sensitivities(model: RowModel, free, theta, bounds, index) -> np.ndarray:
    """d log(prediction) / d log(theta_j) of every row of ``model`` for j in ``index``
    (one-sided differences of 1e-6, stepping inwards at a bound)."""
    theta = np.asarray(theta, dtype=float)
    with np.errstate(all="ignore"):
        vector = ParameterVector(free)
        base = model.predict(None, vector.overrides(theta))
        scale = np.where(base != 0, np.abs(base), 1.0)
        out = []
        for j in index:
            h = 1e-6 * (abs(theta[j]) if theta[j] != 0 else 1.0)
            step = h if theta[j] + h in bounds[j] else -h
            moved = theta.copy()
            moved[j] += step
            out.append((model.predict(None, vector.overrides(moved)) - base) / scale
                       * (theta[j] if theta[j] != 0 else 1.0) / step)
    return np.column_stack(out)
