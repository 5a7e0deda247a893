"""Measurement rows evaluated all at once: the engine of fast fits.

A fit evaluates the same rows under thousands of parameter values; only the cost
models change, never the tokens the rows place on the elements.  A :class:`RowBatch`
gathers those tokens once: per group of rows sharing a bound architecture (rows whose
parameters of the ``.moa`` agree), per element and metric, one array per token
attribute over the tokens of all the rows.  Each group is then a placement of the
valuation core (:mod:`mapping.evaluation.core`), which applies the element rules, the
charged copies, the missing-model rule, the aggregation and a system metric's
expression once for every engine; what this module adds is how a rule reads arrays of
tokens: each element's rule (:func:`mapping.semantics.metrics.rule`) gives its features
of all those tokens at once -- the models' own ``token_cost``/``token_features``,
written with operators numpy broadcasts, applied to arrays -- summed per row
(``bincount``, in token order, as the reference evaluator sums) and finished by the
rule's ``finish``.  No rule is restated here.

An element whose models are unchanged since the last evaluation keeps its values
(memoized by its models): a finite-difference step in one parameter recomputes only
the elements that parameter touches.  Folds and random starts share the gathered
tokens: :meth:`RowBatch.subset` slices them for the rows of a fold.

Free parameters of the application change the tokens' numbers, never where they go:
each token remembers the actor or channel of the activity it comes from
(:attr:`Tokens.source`), and an evaluation under new values of those parameters binds
the application once per set of the rows' own values and reads the tokens' counts,
quanta and attributes from that activity (:meth:`RowBatch.values` with ``problem_of``).

The parts of a group's tokens (:class:`_RowParts`): each element's own, the copies a
CN charges to the cores at the ends of a channel (``charge = ends|both``), gathered per
core and CN, and for ``exclusive`` each CN's tokens per PE that owns them (its
channel's producer, :func:`mapping.semantics.traffic.token_owner`).  Memory traffic (a
``roofline`` PE with a memory CN) is never gathered: its bytes come from the PE's
model, so each evaluation places it anew from the PE's own tokens
(:meth:`RowBatch._traffic`: ``token_traffic`` summed per row,
:class:`~moa.cost_models.base.MemoryTraffic` per CN of the route
:func:`mapping.semantics.traffic.traffic_route` gives), after a CN's own tokens as
:func:`mapping.semantics.traffic.place_memory_traffic` places it, and in the share of
the PE that causes it.  A rule whose features do not broadcast (a lookup table, a GPU's
occupancy) is evaluated token by token over the same gathered tokens.

Rows without a value raise :class:`BadRows` (a ``ValueError``: the core's missing-model
rule, :meth:`_Rows.refuse`; counted CN activity under ``exclusive``) or the rule's own ``ValueError``;
the caller (:meth:`mapping.calibration.row_model.RowModel.predict_batch`) asks the
reference evaluator which row and why.  :class:`Unsupported` remains for what this path
does not value, decided by its caller up front: timed aggregations (``schedule``,
``period``: each mapping's firings are scheduled), and new values of the application's
parameters when some token does not say where its numbers come from
(:attr:`RowBatch.rebinds`).  The first rows are checked against the reference evaluator
when a batch is built: a difference (:class:`Unsupported`) means a rule this path does
not know.
"""
from __future__ import annotations

import functools

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from mapping.semantics.aggregation import aggregator
from mapping.bulk import paused
from mapping.semantics.metrics import aggregations_of, base_metrics, is_charged, rule, system_metrics
from mapping.evaluation.core import Parts, Placement, placed_values, refuse_aggregate
from mapping.semantics.traffic import (ChargedToken, TrafficToken, split_charged,
                                       token_owner, traffic_model, traffic_route)
from moa.cost_models.base import MemoryTraffic
from moc.activity import TokenGroup
from mapping.evaluation.row_tokens import SourceTable, Tokens, Once

#: rows compared with the reference evaluator when a batch is built
CHECKED_ROWS = 4
#: element values (floats) a batch keeps memoized before it forgets them: 128 MB
MEMO_LIMIT = 1 << 24
#: rows whose token objects exist at once while a batch gathers their arrays
GATHER_CHUNK = 8192


class Unsupported(Exception):
    """Rows this path does not value (see the module doc)."""


class BadRows(ValueError):
    """Some row has no value (the reference evaluator names it and says why)."""


@dataclass
class _Group:
    """Rows sharing a bound architecture: ``first`` (a row index of the model) stands
    for them; ``at`` are their positions in the batch; ``tokens[metric][element]``;
    ``params[name]`` the per-row values of parameters a system metric reads."""

    first: int
    at: np.ndarray
    tokens: dict[str, dict[str, Tokens]]
    params: dict[str, np.ndarray]
    #: rows standing for each set of the rows' own values of application parameters,
    #: and each row's set (positions in ``variants``)
    variants: list[int]
    variant_of: np.ndarray


class RowBatch:
    """Rows ``indices`` of ``model`` (:class:`mapping.calibration.row_model.RowModel`) at once;
    :meth:`values` evaluates them under the bound architectures ``arch_of`` gives."""

    def __init__(self, model, indices: Sequence[int], *, check: bool = True):
        self.model = model
        self.indices = np.asarray(indices, dtype=np.intp)
        self.n = len(self.indices)
        arch0 = model.bound_arch(int(self.indices[0])) if self.n else model.arch
        self.metric = model.metric
        systems = system_metrics(arch0)
        self._system = self.metric in systems
        if self._system:                 # the reference's error, before any row
            refuse_aggregate(arch0, self.metric, model.requested)
        self.metrics = sorted(base_metrics(arch0, self.metric))
        aggregations = [aggregator(name) for name in
                        aggregations_of(arch0, self.metric, model.requested)]
        if any(agg.timed for agg in aggregations):
            raise Unsupported("a timed aggregation: it schedules each mapping's firings")
        #: an aggregation reads each PE's share of the CNs' tokens (``exclusive``)
        self._shares = any(agg.needs_shares for agg in aggregations)
        #: rows of per-element activity (their CN totals belong to no PE)
        self._counted = any(model.rows[int(i)].activity is not None for i in self.indices)
        #: some PE moves memory traffic: it is placed anew at each evaluation, from the
        #: PE's tokens and its model (:meth:`_traffic`), never gathered
        self._traffic_pes = any(traffic_model(arch0.elements[pe], m) is not None
                                for pe in arch0.pes for m in self.metrics)
        #: one element's part (:attr:`RowModel.element`) of a CN: the traffic it gets
        #: comes from the PEs' whole tokens, gathered apart (``("source", pe)``)
        self._sources_apart = self._traffic_pes and model.element is not None \
            and not arch0.elements[model.element].is_pe
        self._names = sorted({n for s in systems.values() for n in s.references
                              if n not in systems}) if self._system else []
        #: the actors and channels tokens come from (mapping rows of an application with
        #: parameters: tokens that follow new values of those, see :meth:`values`)
        self.sources: list[tuple[str, str]] = []
        self._codes: dict[tuple[str, str], int] = {}
        self.rebinds = bool(model.app is not None and model.app.params and all(
            model.rows[int(i)].activity is None for i in self.indices))
        #: whether the first rows were compared with the reference under such values
        self.rebinding_checked = False
        with paused():        # millions of small objects that all stay alive
            self.groups = self._gather(arch0)
        self._memo: dict = {}
        if check and self.n:
            self._check()

    def _gather(self, arch0) -> list[_Group]:
        """The rows' tokens, in one pass over the rows of each group: rows that share
        their values of the application's parameters are taken together, so that each
        set of values is bound once (:meth:`RowModel.bound` with ``keep=False`` keeps
        the applications of the last sets only)."""
        model = self.model
        by_part: dict[tuple, dict[tuple, list[int]]] = {}
        for pos, i in enumerate(self.indices.tolist()):
            by_part.setdefault(model.arch_part(i), {}).setdefault(
                model.app_part(i), []).append(pos)
        groups = []
        keys = {metric: self._keys(arch0, metric) for metric in self.metrics}
        for by_app in by_part.values():
            positions = [p for at in by_app.values() for p in at]
            rows = [int(self.indices[p]) for p in positions]
            parts: dict[str, dict[Any, list[Tokens]]] = {
                metric: {key: [] for key in keys[metric]} for metric in self.metrics}
            values: dict[str, list] = {name: [] for name in self._names}
            for start in range(0, len(rows), GATHER_CHUNK):   # bounded memory
                chunk = rows[start:start + GATHER_CHUNK]
                owners = [self._owner(i) for i in chunk]
                placed: dict[str, list] = {metric: [] for metric in self.metrics}
                whole: dict[str, list] = {metric: [] for metric in self.metrics}
                for i in chunk:          # row by row: its binding serves every metric
                    for metric in self.metrics:
                        placed[metric].append(model.placed_for(i, metric, keep=False))
                        if self._sources_apart:
                            whole[metric].append(model.placed_for(i, metric, keep=False,
                                                                  whole=True))
                    for name in self._names:
                        values[name].append(model.bound(i, keep=False).params.get(name))
                for metric in self.metrics:
                    for key in keys[metric]:
                        apart = not isinstance(key, str) and key[0] == "source"
                        traffic = self._traffic_pes
                        part = Tokens([_part(p, key, o, traffic) for p, o in
                                       zip((whole if apart else placed)[metric], owners)],
                                      None, self._coder(key) if self.rebinds else None)
                        parts[metric][key].append(part)
            tokens: dict[str, dict[str, Tokens]] = {
                metric: {key: Tokens.joined(p, self._placer(rows, metric, key))
                         for key, p in parts[metric].items()} for metric in self.metrics}
            params = {name: np.array(v, dtype=float) for name, v in values.items()
                      if all(x is not None for x in v)}
            # the first row of each set of values, and each row's set
            variants, variant_of, k = [], np.empty(len(rows), dtype=np.intp), 0
            for v, at in enumerate(by_app.values()):
                variants.append(rows[k])
                variant_of[k:k + len(at)] = v
                k += len(at)
            groups.append(_Group(rows[0], np.array(positions, dtype=np.intp), tokens,
                                 params, variants, variant_of))
        if self.rebinds and any(t.source is None or np.any(t.source < 0)
                                for g in groups for by in g.tokens.values()
                                for t in by.values()):
            self.rebinds = False
        return groups

    def _keys(self, arch, metric: str) -> list:
        """The parts tokens are gathered in: each element's own tokens (its name), each
        PE's copies charged by each charging CN (``("charged", pe, cn)``), and
        for ``exclusive`` each CN's tokens that belong to each PE (``("share", cn,
        pe)``: the channel's producer's, :func:`mapping.semantics.traffic.tokens_by_pe`),
        and the own tokens of each PE outside one element's part (``("source", pe)``,
        whose memory traffic reaches that CN).  Memory traffic is in none of them."""
        keys: list = list(arch.elements)
        if arch.charging and is_charged(metric):
            charging = [c for c in arch.cns if arch.elements[c].charges_ends]
            keys += [("charged", pe, cn) for pe in arch.pes for cn in charging]
        if self._shares:
            keys += [("share", cn, pe) for cn in arch.cns for pe in arch.pes]
        if self._sources_apart:
            keys += [("source", pe) for pe in arch.pes]
        return keys

    def _owner(self, i: int) -> Callable[[Any], str] | None:
        """Row ``i``'s PE of a communication token: its channel's producer's (``None``
        for per-element activity, whose CN totals no PE owns)."""
        row = self.model.rows[i]
        if not self._shares or row.activity is not None:
            return None
        return functools.partial(token_owner, self.model.app, row.mapping)

    def _coder(self, key) -> Callable[[Any], int]:
        """A token's source code: an actor's processing on a PE, a channel's
        communication on a CN or charged to a PE; -1 for a token of another kind."""
        charged = not isinstance(key, str) and key[0] == "charged"
        on_pe = self.model.arch.elements[key].is_pe if isinstance(key, str) \
            else key[0] == "source"
        kind, codes, sources = ("p" if on_pe else "c"), self._codes, self.sources
        want = ChargedToken if charged else TokenGroup

        def code(token) -> int:
            if type(token) is not want:
                return -1
            key = (kind, token.source)
            got = codes.get(key)
            if got is None:
                got = codes[key] = len(sources)
                sources.append(key)
            return got
        return code

    def _placer(self, rows: list[int], metric: str, key):
        """The token objects of element ``name`` per row, placed again on first use and
        then kept: models whose features do not broadcast over arrays of tokens read
        them at every evaluation of a fit, and a placement does not change with the
        values of the model's parameters."""
        return Once(self._placed_again, rows, metric, key)

    def _placed_again(self, rows: list[int], metric: str, key) -> list:
        whole = not isinstance(key, str) and key[0] == "source"
        return [_part(self.model.placed_for(i, metric, keep=False, whole=whole), key,
                      self._owner(i), self._traffic_pes) for i in rows]

    def _check(self) -> None:
        """The first rows against the reference evaluator (:meth:`check_against`)."""
        take = np.arange(min(CHECKED_ROWS, self.n))
        ours = self.subset(take, check=False).values(self.model.bound_arch)
        self.check_against(ours, self.model.reference_value)

    def check_against(self, ours: np.ndarray, reference: Callable[[int], float]) -> None:
        """The first rows' values ``ours`` against ``reference(row index)``: a
        difference means a rule this path does not know, and every row goes the
        reference way (:class:`Unsupported`)."""
        for r in range(min(CHECKED_ROWS, self.n, len(ours))):
            want = reference(int(self.indices[r]))
            if not math.isclose(ours[r], want, rel_tol=1e-9, abs_tol=1e-300):
                raise Unsupported(f"row {r}: {ours[r]!r} here, {want!r} by the reference")

    def rebound(self, model) -> "RowBatch":
        """These rows' tokens for another model of the same rows (see
        :meth:`mapping.calibration.row_model.RowModel.share_rows`)."""
        new = object.__new__(RowBatch)
        new.__dict__.update(self.__dict__)
        new.model, new._memo = model, {}
        return new

    def subset(self, positions, *, check: bool = False) -> "RowBatch":
        """The batch of the rows at ``positions`` (of this batch), tokens sliced, not
        gathered again (the folds of a cross-validation)."""
        positions = np.asarray(positions, dtype=np.intp)
        new = object.__new__(RowBatch)
        new.__dict__.update({k: v for k, v in self.__dict__.items()
                             if k not in ("groups", "indices", "n", "_memo")})
        new.indices = self.indices[positions]
        new.n = len(positions)
        where = np.full(self.n, -1, dtype=np.intp)
        where[positions] = np.arange(len(positions))
        new.groups = []
        for g in self.groups:
            mine = where[g.at]
            keep = np.flatnonzero(mine >= 0)
            if not keep.size:
                continue
            n_rows = len(g.at)
            tokens = {m: {e: t.subset(keep, n_rows) for e, t in by.items()}
                      for m, by in g.tokens.items()}
            new.groups.append(_Group(int(self.indices[g.at[keep[0]]]), mine[keep], tokens,
                                     {k: v[keep] for k, v in g.params.items()},
                                     g.variants, g.variant_of[keep]))
        new._memo = {}
        if check and new.n:
            new._check()
        return new

    # ------------------------------------------------------------------ evaluation

    def values(self, arch_of: Callable[[int], Any],
               problem_of: Callable[[int], Any] | None = None) -> np.ndarray:
        """The rows' values under ``arch_of(first row of each group)``, a bound
        architecture; a ``ValueError`` where some row has no value (:class:`BadRows`,
        a token its rule refuses): the reference evaluator says which and why.

        ``problem_of(row)``: the application is bound anew (free parameters of its own),
        and each row's tokens take their numbers from the activity of
        ``problem_of(a row with the same own values)`` (:attr:`rebinds` must hold)."""
        out = np.empty(self.n)
        if len(self._memo) * max(self.n, 1) > MEMO_LIMIT:
            self._memo.clear()
        if problem_of is not None and not self.rebinds:
            raise Unsupported("tokens that do not follow the application's parameters")
        for k, g in enumerate(self.groups):
            arch = arch_of(g.first)
            key: Any = k
            if problem_of is not None:
                g, key = self._rebound(k, g, problem_of)
            with np.errstate(all="ignore"):     # an overflow is an infinite value, checked
                out[g.at] = placed_values(
                    arch, _Rows(self, key, g, arch), self.metric,
                    None if self._system else self.model.requested,
                    {**g.params, **arch.params}, locate=False).value
        return out

    def _rebound(self, k: int, g: _Group, problem_of) -> tuple[_Group, tuple]:
        """Group ``g`` with its tokens' numbers read from the problems ``problem_of``
        binds for its sets of values, and its memo key (the problems kept alive by the
        memo, as the models are: identities stay valid while the key exists)."""
        problems = [problem_of(i) for i in g.variants]
        key = (k, tuple(id(p.activity) for p in problems))
        got = self._memo.get(("group",) + key)
        if got is not None:
            return got[1], key
        table = SourceTable(self.sources, problems)
        tokens = {m: {e: t.rebound(g.variant_of, table) for e, t in by.items()}
                  for m, by in g.tokens.items()}
        params = {}
        for name in self._names:
            values = [p.params.get(name) for p in problems]
            if all(v is not None for v in values):
                params[name] = np.array(values, dtype=float)[g.variant_of]
        new = _Group(g.first, g.at, tokens, params, g.variants, g.variant_of)
        self._memo[("group",) + key] = (problems, new)
        return new, key

    def _traffic(self, k, g: _Group, arch, metric: str, n: int) -> dict[str, list]:
        """CN → the memory traffic it carries, as
        :func:`~mapping.semantics.traffic.place_memory_traffic` places it (its bytes
        come from the PEs' models, so it is placed at each evaluation): per PE in order
        whose model has a memory, ``(pe, model, bytes (n,), rows placed (n,))`` -- the
        rows of mappings where the PE has tokens of its own and moves some bytes."""
        out: dict[str, list] = {}
        if not self._traffic_pes:
            return out
        only = self.model.element
        for pe in arch.pes:
            model = traffic_model(arch.elements[pe], metric)
            if model is None:
                continue
            source = g.tokens[metric][("source", pe) if self._sources_apart else pe]
            traffic, placed = self._bytes(k, g, pe, metric, model, source, n)
            for cn in traffic_route(arch, pe, model, traffic.memory):
                if only is None or cn == only:
                    out.setdefault(cn, []).append((pe, model, traffic.on(cn), placed))
        return out

    def _bytes(self, k, g: _Group, pe: str, metric: str, model, source: Tokens, n: int):
        """PE ``pe``'s :class:`~moa.cost_models.base.MemoryTraffic` of every row
        (``bytes (n,)``: ``Σ count·token_traffic`` over its own tokens, as
        :meth:`~moa.cost_models.base.CostModel.memory_traffic` sums them) and the rows
        where it is placed; memoized by the model."""
        key = (k, "traffic", pe, metric, id(model))
        got = self._memo.get(key)
        if got is None:
            per = _per_token(model.token_traffic, source)
            memory, miss = model.memory_route()
            data = np.bincount(source.row, weights=source.count * per, minlength=n)
            mapped = np.array([self.model.rows[i].activity is None
                               for i in self.indices[g.at].tolist()], dtype=bool)
            got = self._memo[key] = (model, MemoryTraffic(memory, data, miss),
                                     source.used & (data != 0) & mapped)
        return got[1], got[2]

    def _element(self, k, name, element, metric, tokens: Tokens, n: int, traffic=()):
        """The rule's values of ``tokens`` (with the memory ``traffic`` a CN carries,
        :meth:`_traffic`) per row, ``None`` without a rule."""
        # memoized by the identity of the element's models (kept alive by the memo):
        # unchanged models are the same objects from one evaluation to the next
        models = tuple(element.costs.values()) + tuple(m for _, m, _, _ in traffic)
        key = (k, name, metric, tuple(map(id, models)))
        got = self._memo.get(key)
        if got is not None:
            return got[1]
        r = rule(element, metric)
        if traffic and r is not None:
            tokens = tokens.with_traffic(traffic, n)
        if r is None:
            values = None
        elif not r.vectorizable:
            values = np.array([r.value(ts) for ts in tokens.per_row], dtype=float)
        else:
            values = self._finished(r, tokens, n)
        self._memo[key] = (models, values)
        return values

    @staticmethod
    def _finished(r, tokens: Tokens, n: int) -> np.ndarray:
        """``finish(Σ count·features)`` per row, the features of all tokens at once
        (token by token where they do not broadcast)."""
        features = _per_token(r.features, tokens, r.width)
        if len(features) != r.width:
            raise ValueError(f"model '{r.model.name}' gives {len(features)} features, "
                             f"not {r.width}")
        totals = [np.bincount(tokens.row, weights=tokens.count * f, minlength=n)
                  for f in features]
        return np.broadcast_to(np.asarray(r.finish(totals), dtype=float), (n,))


class _Rows(Placement):
    """The rows of group ``g`` as a placement of the valuation core
    (:mod:`mapping.evaluation.core`): its gathered tokens, valued as arrays."""

    what = "a row"

    def __init__(self, batch: RowBatch, k, g: _Group, arch):
        self.batch, self.k, self.g, self.arch = batch, k, g, arch
        self.count = len(g.at)

    def parts(self, metric):
        return _RowParts(self, metric)

    def timed(self, metric, aggregate):
        raise Unsupported(f"aggregation '{aggregate}'")       # refused up front

    def refuse(self, metric, rows, unmodelled):
        raise BadRows(f"a row's tokens are all on elements without a model for '{metric}'")


class _RowParts(Parts):
    """The parts of the rows' tokens for one metric: a part is ``(tokens, traffic)``,
    the gathered :class:`Tokens` and the memory traffic placed on them
    (:meth:`RowBatch._traffic`), valued by :meth:`RowBatch._element`."""

    def __init__(self, rows: _Rows, metric: str):
        self.rows, self.metric, self.n = rows, metric, rows.count
        self.tokens = rows.g.tokens[metric]
        self.traffic = rows.batch._traffic(rows.k, rows.g, rows.arch, metric, self.n)

    def own(self, name):
        return self.tokens[name], self.traffic.get(name, ())

    def charged(self):
        for key, tokens in self.tokens.items():
            if type(key) is tuple and key[0] == "charged" and len(tokens):
                yield key[1], key[2], (tokens, ())

    def shares(self):
        arch = self.rows.arch
        if self.rows.batch._counted and any(self.tokens[c].used.any() for c in arch.cns):
            raise BadRows("counted activity on a CN belongs to no PE")  # the reference says why
        for key, tokens in self.tokens.items():
            if type(key) is tuple and key[0] == "share":
                _, cn, pe = key
                extra = [t for t in self.traffic.get(cn, ()) if t[0] == pe]   # pe's traffic
                if len(tokens) or extra:
                    yield cn, pe, (tokens, extra)

    def used(self, part):
        tokens, traffic = part
        if not traffic:
            return tokens.used
        return tokens.used | np.logical_or.reduce([placed for *_, placed in traffic])

    def value(self, key, element, part):
        tokens, traffic = part
        rows = self.rows
        return rows.batch._element(rows.k, key, element, self.metric, tokens, self.n, traffic)


def _per_token(f: Callable, tokens: Tokens, width: int | None = None):
    """``f`` of every token: of the arrays at once where ``f`` broadcasts, else token by
    token over the token objects (a bad value then raises as it does for one token).
    ``width``: ``f`` gives that many values per token (features), else one."""
    size = len(tokens)
    try:
        got = f(tokens)
        if width is None:
            return np.broadcast_to(np.asarray(got, dtype=float), (size,))
        return [np.broadcast_to(np.asarray(x, dtype=float), (size,)) for x in got]
    except (ValueError, TypeError, ZeroDivisionError, ArithmeticError, AttributeError,
            KeyError):
        each = np.array([f(t) for t in tokens.flat], dtype=float)
        if width is None:
            return each.reshape(size)
        return list(each.reshape(size, width).T)


def _part(placed: dict, key, owner: Callable[[Any], str] | None = None,
          traffic: bool = False) -> list:
    """The tokens of part ``key`` (see :meth:`RowBatch._keys`) among ``placed``, memory
    traffic (where some PE has any) left out; ``owner`` names a communication token's PE
    (shares)."""
    if isinstance(key, str):
        own = split_charged(placed.get(key, ()))[0]
        return _sdf(own) if traffic else own
    if key[0] == "source":
        return split_charged(placed.get(key[1], ()))[0]
    kind, a, b = key
    if kind == "charged":
        return split_charged(placed.get(a, ()))[1].get(b, [])
    tokens = placed.get(a, ())
    return [t for t in (_sdf(tokens) if traffic else tokens) if owner(t) == b] \
        if owner is not None else []


def _sdf(tokens: list) -> list:
    """``tokens`` without memory traffic (:class:`TrafficToken`, placed last)."""
    if tokens and type(tokens[-1]) is TrafficToken:
        return [t for t in tokens if type(t) is not TrafficToken]
    return tokens
