"""The predicted value of each measurement row (:class:`RowModel`).

A row that cannot be evaluated, or evaluates to infinity, is an error at the row and
the column whose value causes it.
"""
from __future__ import annotations

import copy
import functools
import math
from dataclasses import replace
from typing import Any, Callable, Mapping as MappingT, Sequence
import numpy as np
from moa import Architecture
from mapping.evaluation.batch import BatchEvaluator
from mapping.errors import InputError
from mapping.evaluation.activity import combine, element_tokens, evaluate_activity
from mapping.evaluation.reference import evaluate
from mapping.calibration.measurements import MeasurementRow
from mapping.semantics.aggregation import aggregator
from mapping.semantics.metrics import (aggregations_of, check_metric, is_charged,
                                      system_metrics)
from mapping.semantics.problem import bind_problem
from mapping.semantics.routing import place_tokens, validate_mapping
from mapping.semantics.traffic import traffic_model
from mapping.evaluation.row_batch import RowBatch, Unsupported
from mapping.calibration.parameter_vector import GROUPS, PARAMS, add_override
from mapping.calibration.probes import rebuilt


#: models and architectures built under free values that a RowModel keeps at most
_KEEP = 512
#: bound applications kept beside the rows' own problems (rows gathered once)
_KEEP_APPS = 64

#: a parameter set with at least this many distinct mappings goes to the batch evaluator
#: (compiling it costs as much as 5 to 16 reference evaluations on the examples)
BATCH_MIN = 16


class RowModel:
    """Predicts the measured value of each row: its parameters bound into the
    application and architecture, its mapping (or per-element activity) evaluated for
    ``metric`` with ``aggregate``.

    Each parameter set is bound once (:func:`bind_problem`, routes included) and rows
    with the same parameters and mapping are evaluated once.  Predictions under other
    values of free parameters (``overrides``) rebuild only the touched models, on copies
    of the bound architectures that share their routes; a parameter set with many
    mappings goes to the batch evaluator."""

    def __init__(self, arch: Architecture, rows: Sequence[MeasurementRow],
                 metric: str = "time", aggregate: str | None = None, app=None,
                 params: MappingT[str, Any] | None = None, source: str | None = None,
                 element: str | None = None):
        self.arch, self.rows, self.metric, self.app = arch, list(rows), metric, app
        #: predict only this element's part of the system value (its own tokens, every
        #: other element idle): the per-element fit of the GSLA paper
        self.element = element
        self.aggregate = aggregate or arch.aggregate
        self._requested = aggregate         # None: each metric's own (a system metric's terms)
        self.params = dict(params or {})     # command-line overrides under the rows' own
        self.source = source
        self._bound: dict[tuple, Any] = {}
        self._placed: dict[tuple, dict] = {}
        self._checked = False
        self._combines: bool | None = None
        self._timed: bool | None = None
        self._batches: dict = {}
        #: bound applications and architectures shared by rows (:func:`bind_problem`)
        self._bindings: dict = {}
        #: models and architectures bound under free values, kept across predictions
        self._made: dict = {}
        self._param_archs: dict = {}
        self._arch_parts: dict[int, tuple] = {}
        #: applications bound under free values of their parameters (batched rows)
        self._app_bindings: dict = {}
        self._identities: dict[int, tuple] = {}
        for row in self.rows:
            if row.activity is None and (app is None or row.mapping is None):
                raise row.error("no mapping for this row (give a .map file, "
                                "--mapping-column, --actor-column or --quanta-column)")
        try:
            at_defaults = arch.bind(self.params)
        except ValueError:
            pass                             # the rows' own parameters may fix it
        else:
            check_metric(at_defaults, metric)
            self._checked = True

    @property
    def requested(self) -> str | None:
        """The aggregation asked for (``None``: each metric's own, a system metric's
        terms theirs)."""
        return self._requested

    def share_rows(self, other: "RowModel") -> None:
        """Reuse what ``other`` (the same rows, application and metric; another
        architecture of the same elements, e.g. the fitted one) gathered: the bound
        applications and, where the application is bound alike, the rows' tokens
        (:class:`~mapping.evaluation.row_batch.RowBatch`, which refuses tokens that depend on
        cost models)."""
        if other.app is not self.app:
            return
        self._bindings.update({k: v for k, v in other._bindings.items() if k[0] != "arch"})
        names = set(self.app.params) if self.app is not None else set()
        alike = (len(self.rows) == len(other.rows)
                 and all(a is b for a, b in zip(self.rows, other.rows))
                 and (self.metric, self.element, self._requested)
                 == (other.metric, other.element, other._requested)
                 and {k: v for k, v in self.params.items() if k in names}
                 == {k: v for k, v in other.params.items() if k in names}
                 and list(self.arch.elements) == list(other.arch.elements))
        batch = other._batches.get(None)
        if alike and batch:
            self._batches = {None: batch.rebound(self)}

    def _key(self, row, drop: str | None = None):
        values = {**self.params, **{k: v for k, v in row.params.items() if k != drop}}
        return tuple(sorted(values.items()))

    def row_identity(self, i: int) -> tuple:
        """Rows with equal identities have equal predictions."""
        got = self._identities.get(i)
        if got is None:
            row = self.rows[i]
            what = id(row.mapping) if row.activity is None \
                else tuple(sorted(row.activity.items()))
            got = self._identities[i] = (self._key(row), what)
        return got

    def row_error(self, i: int, message: str | Exception, good=math.isfinite) -> InputError:
        """An error about row ``i``, at the column whose value causes it if one does;
        ``message`` may be the exception that says what went wrong (one already about
        row ``i`` is returned as it is)."""
        if isinstance(message, InputError) and getattr(message, "row", None) == i:
            return message
        row = self.rows[i]
        exc = row.error(str(message), self._culprit(i, good))
        if exc.origin is None and self.source:
            exc.origin = (self.source, row.line, 1)
        exc.row = i
        return exc

    def _culprit(self, i: int, good=math.isfinite) -> str | None:
        """The first parameter column of row ``i`` without which the row evaluates to a
        ``good`` (by default finite) value, the file's value standing in for the cell."""
        row = self.rows[i]
        for name in sorted(row.params, key=lambda n: row.positions.get(n, (0, 0))):
            try:
                value = self._evaluate(i, self._bind(row, self._key(row, drop=name)))
            except (ValueError, ArithmeticError, KeyError):
                continue
            if good(value):
                return name
        return None

    def _bind(self, row, key, keep: bool = True):
        values = dict(key)
        if row.activity is None:
            problem = bind_problem(self.app, self.arch, values, cache=self._bindings)
            if not keep:
                # rows gathered once, by the million, keep the applications of their
                # last _KEEP_APPS sets of values (the row batch gathers the rows of one
                # set together): one binding per set, at bounded memory
                apps = [k for k in self._bindings if k[0] == "app"]
                for k in apps[:-_KEEP_APPS] if len(apps) > _KEEP_APPS else ():
                    del self._bindings[k]
            return problem
        arch = self._bindings.get(("arch", key))
        if arch is None:
            arch = self._bindings[("arch", key)] = self.arch.bind(values)
        return arch

    def bound(self, i: int, keep: bool = True):
        """The problem (application rows) or bound architecture (activity rows) of row
        i; ``keep=False``: not kept unless it already was (rows gathered once)."""
        row = self.rows[i]
        key = self._key(row)
        got = self._bound.get(key)
        if got is None:
            try:
                got = self._bind(row, key, keep)
            except ValueError as exc:
                raise self.row_error(i, exc) from None
            if not self._checked:
                check_metric(got if isinstance(got, Architecture) else got.arch, self.metric)
                self._checked = True
            if keep:
                self._bound[key] = got
        return got

    def bound_arch(self, i: int) -> Architecture:
        b = self.bound(i)
        return b if isinstance(b, Architecture) else b.arch

    def placed(self, i: int) -> dict[str, list]:
        """Element → the token groups of row ``i`` (independent of cost parameters)."""
        return self.placed_for(i, self.metric)

    def placed_for(self, i: int, metric: str, keep: bool = True, whole: bool = False
                   ) -> dict[str, list]:
        """:meth:`placed` for ``metric`` (a term of a system metric places its own);
        ``keep=False``: not kept for later calls (rows gathered once, by the million);
        ``whole``: every element's tokens, even with :attr:`element`."""
        keep = keep and not whole
        key = (self.row_identity(i), metric) if keep else None
        got = self._placed.get(key) if keep else None
        if got is None:
            b = self.bound(i, keep)
            try:
                got = self._place(i, b, metric, whole)
            except (ValueError, KeyError) as exc:
                raise self.row_error(i, exc) from None
            if keep:
                self._placed[key] = got
        return got

    def _place(self, i: int, b, metric: str, whole: bool = False) -> dict[str, list]:
        """Row ``i``'s tokens on the bound problem (or architecture) ``b``: every
        element's, or with :attr:`element` (and not ``whole``) that element's alone."""
        row = self.rows[i]
        if row.activity is None:
            validate_mapping(b.app, b.arch, row.mapping)
            got = place_tokens(b.app, b.arch, row.mapping, b.activity, metric,
                               charge=is_charged(metric))
        else:
            got = element_tokens(b if isinstance(b, Architecture) else b.arch, row.activity)
        if self.element is not None and not whole:
            got = {name: (tokens if name == self.element else [])
                   for name, tokens in got.items()}
        return got

    def _direct(self, arch: Architecture) -> bool:
        """Whether the evaluator's value of a mapping is :func:`combine` of its placed
        tokens: no system metric, no timed aggregation, no per-PE shares of the CNs, no
        memory traffic (its bytes come from the models, which overrides change)."""
        if self._combines is None:
            agg = aggregator(self.aggregate)
            self._combines = not (agg.timed or agg.needs_shares
                                  or self.metric in system_metrics(arch)
                                  or any(traffic_model(arch.elements[pe], self.metric)
                                         for pe in arch.pes))
        return self._combines

    def _evaluate(self, i: int, bound, again: bool = False) -> float:
        """Row ``i``'s value on ``bound``; ``again``: its tokens are those of
        :meth:`placed` and its value is their :func:`combine` (:meth:`_direct`)."""
        row = self.rows[i]
        if self.element is not None or again:
            arch = bound if isinstance(bound, Architecture) else bound.arch
            # one element's part: the tokens of this binding (another row's values, free
            # values of the application), never a failing binding of the row's own
            placed = self.placed(i) if again else self._place(i, bound, self.metric)
            return combine(arch, placed, self.metric, self._requested,
                           arch.params if bound is arch else bound.params)
        if row.activity is not None:
            return evaluate_activity(bound, row.activity, self.metric, self._requested)
        return evaluate(bound.app, bound.arch, row.mapping, metric=self.metric,
                        aggregate=self._requested, problem=bound).value

    def _variant(self, i: int, overrides, cache, arch_only: bool = False) -> Any:
        """Row ``i``'s bound problem (or architecture; only that with ``arch_only``)
        under ``overrides``.

        The architecture binds only its own parameters, so rows whose values of those
        agree share one bound, rebuilt architecture per call (``cache``): each row keeps
        its bound application, and a set of free values costs one binding, not one per
        row.  A free parameter of the application rebinds the row's whole problem."""
        b = self.bound(i)
        if not overrides:
            return b.arch if arch_only and not isinstance(b, Architecture) else b
        row = self.rows[i]
        params = overrides.get(PARAMS) or {}
        rebind = self._rebinds_app(overrides)
        if rebind:
            values = {**self.params, **params, **row.params}   # the row's own cells win
            key = ("problem", tuple(sorted(values.items())))
        else:
            key = ("arch", tuple(sorted(params.items())), self.arch_part(i))
        cache = {} if cache is None else cache
        got = cache.get(key)
        if got is None:
            models = {k: v for k, v in overrides.items() if k != PARAMS}
            if len(self._made) > _KEEP:
                self._made.clear()
            if len(self._param_archs) > _KEEP:
                self._param_archs.clear()
            try:
                if rebind:
                    values = dict(key[1])
                    got = bind_problem(self.app, self.arch, values,
                                       cache=cache.setdefault("bindings", {})) \
                        if row.activity is None else self.arch.bind(values)
                elif params:
                    # kept across calls: the steps of a finite-difference Jacobian in
                    # the other parameters bind the architecture with the same values
                    got = self._param_archs.get(key)
                    if got is None:
                        got = self._param_archs[key] = self.arch.bind(
                            {**self.params, **params, **row.params})
                else:
                    got = self.bound_arch(i)
                arch = got if isinstance(got, Architecture) else got.arch
                arch = rebuilt(arch, models, self._made)
            except (ValueError, ArithmeticError) as exc:
                raise self.row_error(i, exc) from None
            got = arch if isinstance(got, Architecture) else replace(got, arch=arch)
            cache[key] = got
        if rebind:
            return got.arch if arch_only and not isinstance(got, Architecture) else got
        if arch_only or isinstance(b, Architecture):
            return got
        if params:                           # the row's problem with the new architecture
            return replace(b, arch=got, params={**b.params, **got.params})
        return replace(b, arch=got)

    def arch_part(self, i: int) -> tuple:
        """The values of row ``i``'s parameters that its architecture declares."""
        got = self._arch_parts.get(i)
        if got is None:
            values = {**self.params, **self.rows[i].params}
            got = self._arch_parts[i] = tuple(sorted(
                (k, v) for k, v in values.items() if k in self.arch.params))
        return got

    def app_part(self, i: int) -> tuple:
        """Row ``i``'s own values of the application's parameters."""
        names = self.app.params if self.app is not None else {}
        return tuple(sorted((k, v) for k, v in self.rows[i].params.items() if k in names))

    def _rebinds_app(self, overrides) -> bool:
        """Whether ``overrides`` set a parameter of the application (its tokens change)."""
        params = (overrides or {}).get(PARAMS) or {}
        return self.app is not None and any(k in self.app.params for k in params)

    def value(self, i: int, overrides=None, cache=None) -> float:
        """Row ``i`` predicted; ``overrides`` replace model arguments of the bound
        architecture (``element → metric → {param: value}``)."""
        # Under overrides that leave the application alone the row's tokens are those
        # placed once (:meth:`placed`): only the element values are computed anew.
        again = bool(overrides) and self.rows[i].activity is None \
            and not self._rebinds_app(overrides) and self._direct(self.bound_arch(i))
        bound = self._variant(i, overrides, cache, arch_only=again)
        try:
            with np.errstate(all="ignore"):
                value = float(self._evaluate(i, bound, again))
        except (ValueError, ArithmeticError) as exc:
            raise self.row_error(i, exc) from None
        if not math.isfinite(value):
            raise self.row_error(i, f"the predicted {self.metric} is {value}, not a finite number")
        return value

    def reference_value(self, i: int) -> float:
        """Row ``i`` by the reference evaluator, at the files' values."""
        with np.errstate(all="ignore"):
            return float(self._evaluate(i, self.bound(i)))

    @property
    def timed(self) -> bool:
        """Whether the rows' value schedules each mapping's firings: the aggregation
        (or that of a term of a system metric) is timed (``schedule``, ``period``).
        Such rows take the one path the array core does not cover
        (:meth:`_row_by_row`); every other row is valued by the core
        (:meth:`predict_batch`)."""
        if self._timed is None:
            self._timed = any(aggregator(name).timed for name in aggregations_of(
                self.arch, self.metric, self._requested))
        return self._timed

    def row_batch(self, indices) -> RowBatch | None:
        """The :class:`~mapping.evaluation.row_batch.RowBatch` of rows ``indices``, built
        once for every row and sliced for subsets; ``None`` for timed rows
        (:attr:`timed`) or when its first rows differ from the reference evaluator (a
        rule the core does not know: those rows are then valued one by one)."""
        if self.timed:
            return None
        indices = np.asarray(indices, dtype=np.intp)
        key = indices.tobytes()
        if key in self._batches:
            return self._batches[key]
        every = self._batches.get(None, False)
        if every is False:
            try:
                every = RowBatch(self, range(len(self.rows)))
            except Unsupported:
                every = None
            self._batches[None] = every
        got = None
        if every is not None:
            got = every if len(indices) == len(self.rows) and \
                np.array_equal(indices, np.arange(len(self.rows))) else every.subset(indices)
        if len(self._batches) > 16:
            self._batches = {None: every}
        self._batches[key] = got
        return got

    def predict_batch(self, indices, overrides, cache) -> np.ndarray | None:
        """All rows at once by the array core (:mod:`mapping.evaluation.row_batch`), or
        ``None`` for rows it does not value: timed ones (:attr:`timed`), new values of
        the application's parameters where the tokens cannot follow them
        (:attr:`RowBatch.rebinds`), a batch whose first rows differ from the reference.
        A row without a value (a bad parameter, tokens on unmodelled elements only, an
        infinite prediction) is the reference evaluator's error about that row."""
        if not indices or self.timed:
            return None
        try:
            batch = self.row_batch(indices)
            if batch is None:
                return None
            problem_of: Callable[[int], Any] | None = None
            if self._rebinds_app(overrides):
                if not batch.rebinds:
                    return None
                if len(self._app_bindings) > _KEEP:
                    self._app_bindings.clear()
                cache.setdefault("bindings", self._app_bindings)
                problem_of = functools.partial(self._variant, overrides=overrides,
                                               cache=cache)

                def arch_of(i):
                    return problem_of(i).arch
            elif overrides:
                def arch_of(i):
                    return self._variant(i, overrides, cache, arch_only=True)
            else:
                arch_of = self.bound_arch
            with np.errstate(all="ignore"):
                out = batch.values(arch_of, problem_of)
            if problem_of is not None and not batch.rebinding_checked \
                    and not self._check_rebinding(batch, out, overrides, cache):
                return None
        except (ValueError, ArithmeticError) as exc:
            raise self._explained(indices, overrides, cache, exc) from None
        bad = np.flatnonzero(~np.isfinite(out))
        if bad.size:
            i = indices[int(bad[0])]
            self.value(i, overrides, cache)          # the reference's error, if it has one
            raise self.row_error(i, f"the predicted {self.metric} is {out[bad[0]]}, not a "
                                 "finite number")
        return out

    def _explained(self, indices, overrides, cache, exc: Exception) -> Exception:
        """The error about the row that made the array core fail with ``exc``: the
        reference evaluator's, on the first row it refuses (``exc`` itself when it is
        already about a row, or when no row is refused)."""
        if isinstance(exc, InputError) and getattr(exc, "row", None) is not None:
            return exc
        for i in indices:
            try:
                self.value(i, overrides, cache)
            except (ValueError, ArithmeticError) as error:
                return error
        return exc

    def _check_rebinding(self, batch: RowBatch, out: np.ndarray, overrides, cache) -> bool:
        """The first rows of a batch under new values of the application's parameters
        against the reference evaluator, once: a difference sends every such
        evaluation of the batch the reference way (``False``)."""
        try:
            batch.check_against(out, lambda i: self.value(i, overrides, cache))
        except Unsupported:
            batch.rebinds = False
            return False
        batch.rebinding_checked = True
        return True

    def predict(self, indices=None, overrides=None) -> np.ndarray:
        """The predictions of rows ``indices`` (all by default) under ``overrides``: by
        the array core (:meth:`predict_batch`) where it values them, else one by one
        (:meth:`_row_by_row`)."""
        indices = list(range(len(self.rows)) if indices is None else indices)
        if overrides and GROUPS in overrides:
            return self._predict_groups(indices, overrides)
        cache: dict = {}
        fast = self.predict_batch(indices, overrides, cache)
        if fast is not None:
            return fast
        return self._row_by_row(indices, overrides, cache)

    def _row_by_row(self, indices, overrides, cache) -> np.ndarray:
        """The rows :meth:`predict_batch` leaves, each by the reference evaluator, rows
        alike once; timed rows with many mappings of one parameter set by the search's
        batch evaluator (:meth:`_timed_tables`)."""
        memo: dict[tuple, float] = {}
        if self.timed:
            self._timed_tables(indices, overrides, cache, memo)
        out = np.empty(len(indices))
        for r, i in enumerate(indices):
            ident = self.row_identity(i)
            if ident not in memo:
                memo[ident] = self.value(i, overrides, cache)
            out[r] = memo[ident]
        return out

    def _predict_groups(self, indices, overrides) -> np.ndarray:
        """:meth:`predict` where some values hold for one group of rows each: the rows
        under the same such values predicted together, with the shared ones."""
        grouped = overrides[GROUPS]
        shared = {k: v for k, v in overrides.items() if k != GROUPS}
        parts: dict[tuple, list[int]] = {}
        for r, i in enumerate(indices):
            key = tuple(j for j, (fp, _) in enumerate(grouped) if fp.applies_to(self.rows[i]))
            parts.setdefault(key, []).append(r)
        out = np.empty(len(indices))
        for key, at in parts.items():
            merged = copy.deepcopy(shared)
            for j in key:
                add_override(merged, *grouped[j])
            out[at] = self.predict([indices[r] for r in at], merged)
        return out

    def _timed_tables(self, indices, overrides, cache, memo) -> None:
        """Timed rows (:attr:`timed`: each mapping's firings scheduled): a parameter set
        with at least :data:`BATCH_MIN` distinct mappings without fixed routes through
        the search's batch evaluator, whose firing tables serve all of them, into
        ``memo``; the rest, and any row it cannot value (the reference evaluator then
        names the row and says why), go one by one."""
        groups: dict[tuple, dict[tuple, int]] = {}
        if self.element is not None:
            return                           # one element's part: the reference path
        for i in indices:
            row = self.rows[i]
            if row.activity is None and not row.mapping.routes:
                key, what = self.row_identity(i)
                groups.setdefault(key, {}).setdefault((key, what), i)
        for members in groups.values():
            if len(members) < BATCH_MIN:
                continue
            for i in members.values():
                self.placed(i)               # checks the mapping as the reference does, once
            first = next(iter(members.values()))
            try:
                evaluator = BatchEvaluator(self._variant(first, overrides, cache), self.metric,
                                           self._requested)
                X = np.array([evaluator.encode(self.rows[i].mapping) for i in members.values()])
                with np.errstate(all="ignore"):
                    values = evaluator.evaluate(X)
            except (ValueError, KeyError, ArithmeticError):
                continue
            for ident, v in zip(members, values):
                if math.isfinite(v):
                    memo[ident] = float(v)
