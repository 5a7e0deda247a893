"""The tokens of many measurement rows as arrays (:class:`Tokens`), the engine
:class:`mapping.evaluation.row_batch.RowBatch` values: one duck-typed token per element
whose ``count``, ``quanta`` and attributes are arrays over the tokens of all rows, that
the cost models' ``token_cost``/``token_features`` take as they take one token; and the
numbers of each token's source under new values of the application's parameters
(:class:`SourceTable`)."""
from __future__ import annotations

from itertools import chain
from operator import attrgetter
from typing import Any, Callable, Sequence

import numpy as np

from mapping.semantics.traffic import traffic_token

_COUNT, _QUANTA, _ATTRS = attrgetter("count"), attrgetter("quanta"), attrgetter("attrs")


class Tokens:
    """The tokens of one element in one group of rows, as one duck-typed token whose
    ``count``, ``quanta`` and attributes (``get``) are arrays over the tokens; ``row``
    is each token's row within the group.  An attribute some tokens lack takes the
    default given to ``get`` there.  The token objects themselves (:attr:`per_row`,
    :attr:`flat`, for rules evaluated token by token) are placed again when asked for:
    kept for a million rows, they would cost gigabytes."""

    #: each token's actor or channel in :attr:`RowBatch.sources` (``None``: not kept)
    source: np.ndarray | None

    def __init__(self, groups: Sequence[Sequence[Any]], again: Callable[[], list] | None,
                 code: Callable[[Any], int] | None = None):
        self._again = again
        sizes = list(map(len, groups))
        flat = list(chain.from_iterable(groups))
        self.row = np.repeat(np.arange(len(groups)), sizes).astype(np.intp)
        self.source = None if code is None else \
            np.fromiter(map(code, flat), dtype=np.intp, count=len(flat))
        self.count = np.fromiter(map(_COUNT, flat), dtype=float, count=len(flat))
        self.quanta = np.fromiter(map(_QUANTA, flat), dtype=float, count=len(flat))
        attrs = list(map(_ATTRS, flat))
        self._attrs: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
        for name in set().union(*attrs):
            has = np.array([name in a for a in attrs], dtype=bool)
            values = np.array([a.get(name, 0.0) for a in attrs], dtype=float)
            self._attrs[name] = (values, None if has.all() else has)
        #: the rows with at least one token here
        self.used = np.array(sizes, dtype=np.intp) > 0

    @classmethod
    def joined(cls, parts: Sequence["Tokens"], again: Callable[[], list]) -> "Tokens":
        """The tokens of consecutive chunks of rows as one."""
        new = object.__new__(cls)
        new._again = again
        offsets = np.cumsum([0] + [len(p.used) for p in parts[:-1]])
        new.row = np.concatenate([p.row + o for p, o in zip(parts, offsets)]) \
            if parts else np.zeros(0, dtype=np.intp)
        new.count = np.concatenate([p.count for p in parts]) if parts else np.zeros(0)
        new.quanta = np.concatenate([p.quanta for p in parts]) if parts else np.zeros(0)
        new.used = np.concatenate([p.used for p in parts]) if parts else np.zeros(0, bool)
        new.source = None if not parts or any(p.source is None for p in parts) else \
            np.concatenate([p.source for p in parts])
        new._attrs = {}
        for name in {k for p in parts for k in p._attrs}:
            values, has = [], []
            for p in parts:
                v, h = p._attrs.get(name, (np.zeros(len(p)), np.zeros(len(p), dtype=bool)))
                values.append(v)
                has.append(np.ones(len(p), dtype=bool) if h is None else h)
            has_all = np.concatenate(has)
            new._attrs[name] = (np.concatenate(values), None if has_all.all() else has_all)
        return new

    def __len__(self):
        return self.count.size

    @property
    def per_row(self) -> list[list]:
        """The token groups of each row."""
        return self._again()

    @property
    def flat(self) -> list:
        return [t for g in self.per_row for t in g]

    def get(self, key, default=None):
        if key == "quanta":
            return self.quanta
        got = self._attrs.get(key)
        if got is None:
            return default
        values, has = got
        if has is None:
            return values
        if default is None:
            raise TypeError(f"attribute '{key}' is missing on some tokens")
        return np.where(has, values, default)

    def with_traffic(self, traffic: Sequence[tuple], n_rows: int) -> "Tokens":
        """These tokens and, after them, the memory-traffic tokens ``traffic``:
        ``(pe, model, bytes (n_rows,), placed (n_rows,))`` in the order of the PEs, one
        token of ``quanta = bytes`` per row where placed (a row's tokens keep the
        reference evaluator's order: the SDF's, then the traffic)."""
        new = object.__new__(Tokens)
        rows = [np.flatnonzero(placed) for *_, placed in traffic]
        sizes = [self.count.size] + [r.size for r in rows]
        data = [amount[r] for (_, _, amount, _), r in zip(traffic, rows)]
        new.row = np.concatenate([self.row] + rows).astype(np.intp)
        new.count = np.concatenate([self.count] + [np.ones(r.size) for r in rows])
        new.quanta = np.concatenate([self.quanta] + data)
        new.source = None
        new.used = self.used | np.logical_or.reduce([p for *_, p in traffic])
        new._attrs = {}
        theirs = {"bytes": np.concatenate(data)}
        for name in set(self._attrs) | set(theirs):
            values, has = self._attrs.get(name, (np.zeros(sizes[0]), np.zeros(sizes[0], bool)))
            has = np.ones(sizes[0], bool) if has is None else has
            other = theirs.get(name)
            more = np.ones(sum(sizes[1:]), bool) if other is not None else \
                np.zeros(sum(sizes[1:]), bool)
            all_has = np.concatenate([has, more])
            new._attrs[name] = (np.concatenate(
                [values, other if other is not None else np.zeros(sum(sizes[1:]))]),
                None if all_has.all() else all_has)
        new._again = Once(self._traffic_objects, traffic, n_rows)
        return new

    def _traffic_objects(self, traffic: Sequence[tuple], n_rows: int) -> list[list]:
        out = [list(g) for g in self.per_row]
        for pe, model, amount, placed in traffic:
            memory = model.memory_route()[0]
            for r in np.flatnonzero(placed).tolist():
                out[r].append(traffic_token(pe, memory, float(amount[r])))
        return out

    def subset(self, rows: np.ndarray, n_rows: int) -> "Tokens":
        """The tokens of ``rows`` (positions in this group, renumbered 0..)."""
        new = object.__new__(Tokens)
        keep = np.zeros(n_rows, dtype=bool)
        keep[rows] = True
        mask = keep[self.row]
        renumber = np.full(n_rows, -1, dtype=np.intp)
        renumber[rows] = np.arange(len(rows))
        new.row = renumber[self.row[mask]]
        order = np.argsort(new.row, kind="stable")        # rows in their new order
        new.row = new.row[order]
        new.count, new.quanta = self.count[mask][order], self.quanta[mask][order]
        new.source = None if self.source is None else self.source[mask][order]
        new._attrs = {k: (v[mask][order], None if h is None else h[mask][order])
                      for k, (v, h) in self._attrs.items()}
        new._again = Once(_picked, self._again, list(rows))
        new.used = self.used[rows]
        return new

    def rebound(self, variant: np.ndarray, table: "SourceTable") -> "Tokens":
        """These tokens with the numbers of their sources in ``table``: row ``r``'s in
        its set of values ``variant[r]`` (positions in the group)."""
        new = object.__new__(Tokens)
        new.row, new.used, new.source = self.row, self.used, self.source
        at = (variant[self.row], self.source)
        new.count, new.quanta = table.count[at], table.quanta[at]
        new._attrs = {}
        for name, (values, has) in table.attrs.items():
            mine = has[at]
            if mine.any():
                new._attrs[name] = (values[at], None if mine.all() else mine)
        new._again = Once(self._objects, variant, table.objects)
        return new

    def _objects(self, variant: np.ndarray, objects: list[list]) -> list[list]:
        out: list[list] = [[] for _ in range(len(variant))]
        for r, s in zip(self.row.tolist(), self.source.tolist()):
            out[r].append(objects[variant[r]][s])
        return out


def _picked(again: Callable[[], list], rows: list[int]) -> list:
    return [again()[r] for r in rows]


class Once:
    """``make(*args)``, made on the first call and kept (the token objects of a part,
    placed again only if a rule asks for them)."""

    __slots__ = ("make", "args", "value")

    def __init__(self, make, *args):
        self.make, self.args, self.value = make, args, None

    def __call__(self):
        if self.value is None:
            self.value = self.make(*self.args)
        return self.value


class SourceTable:
    """The token group of each source (``sources``: ``(kind, name)``, kind ``p`` an
    actor's processing, ``c`` a channel's communication) in the activity of each bound
    problem: ``count``, ``quanta`` ``(problems, sources)``; ``attrs[name]`` values and
    presence."""

    def __init__(self, sources: Sequence[tuple[str, str]], problems: Sequence[Any]):
        self.objects = [[(p.activity.processing if kind == "p" else
                          p.activity.communication)[name] for kind, name in sources]
                        for p in problems]
        flat = list(chain.from_iterable(self.objects))
        shape = (len(problems), len(sources))
        self.count = np.fromiter(map(_COUNT, flat), float, len(flat)).reshape(shape)
        self.quanta = np.fromiter(map(_QUANTA, flat), float, len(flat)).reshape(shape)
        attrs = list(map(_ATTRS, flat))
        self.attrs = {name: (np.array([a.get(name, 0.0) for a in attrs], float).reshape(shape),
                             np.array([name in a for a in attrs], bool).reshape(shape))
                      for name in set().union(*attrs)}
