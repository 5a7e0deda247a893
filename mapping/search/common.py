"""What every strategy shares: the search space, objectives, results, Pareto archives,
evaluation budgets and progress reporting."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from mapping.evaluation.batch import BatchEvaluator
from mapping.errors import MappingError
from mapping.progress import Progress  # noqa: F401 - its home is mapping.progress

#: independent sub-runs ("islands") of a heuristic, each with its own seed and share of
#: the budget; they run one after the other locally, in parallel on a Dask cluster, and
#: give the same result either way
DEFAULT_SHARDS = 4
DEFAULT_BUDGET = 20_000


class SearchError(MappingError):
    """A search that cannot run as asked (bad constraint, strategy, objective)."""


# ----------------------------------------------------------------------- objectives
@dataclass
class Objectives:
    """One or more compiled objectives (metric, aggregate); all minimized."""

    evaluators: list[BatchEvaluator]

    @property
    def names(self) -> list[str]:
        return [e.metric for e in self.evaluators]

    @property
    def multi(self) -> bool:
        return len(self.evaluators) > 1

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """``(N, objectives)`` values of the ``(N, actors)`` mappings ``X``."""
        return np.column_stack([e.evaluate(X) for e in self.evaluators])


@dataclass
class Scalarizer:
    """Weighted sum of objectives divided by their scales (one objective: the value)."""

    weights: np.ndarray
    scales: np.ndarray

    def __call__(self, F: np.ndarray) -> np.ndarray:
        if F.shape[1] == 1:
            return F[:, 0]
        return (F / self.scales) @ self.weights


def weight_vectors(n_objectives: int, count: int) -> list[np.ndarray]:
    """``count`` weight vectors spread over the simplex (the axes first)."""
    if n_objectives == 1:
        return [np.ones(1)] * count
    out = [np.eye(n_objectives)[i] for i in range(n_objectives)]
    if n_objectives == 2:
        inner = [np.array([1 - t, t]) for t in np.linspace(0, 1, max(count, 2))[1:-1]]
    else:
        rng = np.random.default_rng(12345)
        inner = list(rng.dirichlet(np.ones(n_objectives), size=count))
    out += inner
    return [out[i % len(out)] for i in range(count)]


# --------------------------------------------------------------------------- space
@dataclass
class Space:
    """Which PEs each actor may use: ``allowed[a, p]`` (pins and ``allowed`` applied)."""

    actors: list[str]
    pes: list[str]
    allowed: np.ndarray

    def __post_init__(self):
        self.choices = [np.flatnonzero(row) for row in self.allowed]
        self.n_choices = np.array([len(c) for c in self.choices])
        # choice table for vectorized sampling: choice_table[a, i] = i-th allowed PE
        width = max(1, int(self.n_choices.max(initial=1)))
        self.choice_table = np.zeros((len(self.actors), width), dtype=np.intp)
        for a, c in enumerate(self.choices):
            self.choice_table[a, :len(c)] = c
        self.free = np.flatnonzero(self.n_choices > 1)
        # _position[a, p]: index of PE p among the allowed PEs of actor a
        self._position = np.cumsum(self.allowed, axis=1) - 1

    @property
    def size(self) -> int:
        return math.prod(int(n) for n in self.n_choices)

    def random(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` mappings drawn uniformly from the allowed PEs of each actor."""
        pick = (rng.random((n, len(self.actors))) * self.n_choices).astype(np.intp)
        return self.choice_table[np.arange(len(self.actors)), pick]

    def random_move(self, rng: np.random.Generator, X: np.ndarray) -> np.ndarray:
        """A copy of ``X`` with one free actor per row moved to another allowed PE."""
        Y = X.copy()
        if not len(self.free):
            return Y
        a, p = self.random_moves(rng, X)
        Y[np.arange(len(X)), a] = p
        return Y

    def random_moves(self, rng: np.random.Generator, X: np.ndarray, rows=None
                     ) -> tuple[np.ndarray, np.ndarray]:
        """One random move per row of ``X`` (of ``X[rows]``; needs a free actor): a free
        actor and a uniformly chosen *different* allowed PE for it."""
        rows = np.arange(len(X)) if rows is None else rows
        n = len(rows)
        a = self.free[rng.integers(0, len(self.free), n)]
        k = self.n_choices[a]
        cur = self._position[a, X[rows, a]]
        shift = 1 + (rng.random(n) * (k - 1)).astype(np.intp)
        return a, self.choice_table[a, (cur + shift) % k]

    def moves_of(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every single-actor move of each row of ``X`` (free actors to their other
        allowed PEs): ``(actors (N,), pes (K, N))``, the same ``N`` moves per row,
        actor by actor."""
        if not hasattr(self, "_move_list"):
            k = self.n_choices[self.free] - 1
            acts = np.repeat(self.free, k)
            shift = 1 + np.arange(len(acts)) - np.repeat(np.cumsum(k) - k, k)
            self._move_list = acts, shift
        acts, shift = self._move_list
        pos = self._position[acts, X[:, acts]]
        return acts, self.choice_table[acts, (pos + shift) % self.n_choices[acts]]

    def alternatives(self, X: np.ndarray, a: int, shift=None) -> np.ndarray:
        """``(K, k)``: for each row of ``X``, the ``k`` allowed PEs of actor ``a`` other
        than its current one, in a fixed cyclic order (or those ``shift (K, w)`` steps,
        each in ``1 .. k``, along it)."""
        n = int(self.n_choices[a])
        shift = np.arange(1, n) if shift is None else shift
        return self.choice_table[a, (self._position[a, X[:, a]][:, None] + shift) % n]

    def neighbours(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """All mappings one move away from ``x``: (rows, moved actor, new PE)."""
        actors, pes = [], []
        for a in self.free:
            for p in self.choices[a]:
                if p != x[a]:
                    actors.append(a)
                    pes.append(p)
        actors, pes = np.array(actors, dtype=np.intp), np.array(pes, dtype=np.intp)
        Y = np.repeat(x[None, :], len(actors), axis=0)
        Y[np.arange(len(actors)), actors] = pes
        return Y, actors, pes


def build_space(problem, pins: dict[str, str] | None = None,
                allowed: dict[str, Sequence[str]] | None = None) -> Space:
    """The search space of ``problem``: each actor's ``allowed`` attribute (a list of PE,
    type or array names, or one string of names separated by spaces or commas), the
    ``allowed`` overrides given here, and ``pins`` (actor → PE)."""
    arch, app = problem.arch, problem.app
    actors, pes = list(app.actors), arch.pes
    P = len(pes)
    if not P:
        raise SearchError(f"architecture '{arch.name}' has no PE to map actors to")
    groups: dict[str, set[int]] = {}
    for i, p in enumerate(pes):
        e = arch.elements[p]
        groups.setdefault(p, set()).add(i)
        if e.type_name:
            groups.setdefault(e.type_name, set()).add(i)
        if e.array:
            groups.setdefault(e.array[0], set()).add(i)
            groups.setdefault(f"{e.array[0]}[*]", set()).add(i)
    mask = np.ones((len(actors), P), dtype=bool)
    overrides = dict(allowed or {})
    for ai, a in enumerate(actors):
        spec = overrides.get(a, app.actors[a].attrs.get("allowed"))
        if spec is None:
            continue
        names = spec.replace(",", " ").split() if isinstance(spec, str) else list(spec)
        row = np.zeros(P, dtype=bool)
        for name in names:
            if name not in groups:
                raise SearchError(f"actor '{a}': allowed names unknown PE or type '{name}' "
                                  f"(PEs: {', '.join(pes)}; types: "
                                  f"{', '.join(arch.types) or 'none'})")
            row[list(groups[name])] = True
        mask[ai] = row
    for a, p in (pins or {}).items():
        if a not in app.actors:
            raise SearchError(f"--pin {a}={p}: unknown actor '{a}' "
                              f"(actors: {', '.join(actors)})")
        if p not in groups or p not in pes:
            raise SearchError(f"--pin {a}={p}: unknown PE '{p}' (PEs: {', '.join(pes)})")
        ai, pi = actors.index(a), pes.index(p)
        if not mask[ai, pi]:
            raise SearchError(f"--pin {a}={p}: PE '{p}' is not allowed for actor '{a}'")
        mask[ai] = False
        mask[ai, pi] = True
    empty = [a for ai, a in enumerate(actors) if not mask[ai].any()]
    if empty:
        raise SearchError(f"no PE is allowed for actor{'s' if len(empty) > 1 else ''} "
                          f"{', '.join(repr(a) for a in empty)}")
    return Space(actors, pes, mask)


def parse_pins(items: Sequence[str] | None) -> dict[str, str]:
    """``--pin actor=pe`` options (repeatable, or comma-separated)."""
    from dsl.mappings import Mapping
    pins: dict[str, str] = {}
    for item in items or []:
        for actor, pe in Mapping.from_text(item, "pin").assignment.items():
            if actor in pins and pins[actor] != pe:
                raise SearchError(f"--pin: actor '{actor}' is pinned twice")
            pins[actor] = pe
    return pins


# ------------------------------------------------------------------------- archive
def nondominated(F: np.ndarray) -> np.ndarray:
    """Boolean mask of the rows of ``F`` that no other row dominates (duplicates: the
    first is kept)."""
    n = len(F)
    keep = np.ones(n, dtype=bool)
    order = np.lexsort(F.T[::-1])                  # sort by first objective, then others
    Fs = F[order]
    for i in range(n):
        if not keep[order[i]]:
            continue
        # rows after i in sorted order that i dominates or duplicates
        rest = Fs[i + 1:]
        dominated = np.all(rest >= Fs[i], axis=1)
        keep[order[i + 1:][dominated]] = False
    return keep


def hypervolume(F: np.ndarray, reference: Sequence[float]) -> float:
    """The area dominated by the two-objective points ``F`` (minimized) and bounded by
    ``reference`` (Zitzler & Thiele 1998's S metric), exact: the sum of the rectangles
    between consecutive non-dominated points sorted by the first objective.  Points that
    do not dominate the reference add nothing."""
    F = np.asarray(F, dtype=float).reshape(-1, 2)
    r = np.asarray(reference, dtype=float)
    F = F[np.all(np.isfinite(F), axis=1) & np.all(F < r, axis=1)]
    if not len(F):
        return 0.0
    F = F[nondominated(F)]
    F = F[np.argsort(F[:, 0], kind="stable")]            # second objective falls
    upper = np.concatenate([[r[1]], F[:-1, 1]])
    return float(np.sum((r[0] - F[:, 0]) * (upper - F[:, 1])))


#: the reference point of a reported hypervolume: the front's worst value of each
#: objective plus this share of the front's range (of the worst value if the range is 0)
REFERENCE_MARGIN = 0.1


def reference_point(F: np.ndarray) -> np.ndarray:
    """The reference point reported with a front's hypervolume (:data:`REFERENCE_MARGIN`)."""
    F = np.asarray(F, dtype=float)
    worst, best = F.max(axis=0), F.min(axis=0)
    span = np.where(worst > best, worst - best, np.abs(worst))
    return worst + REFERENCE_MARGIN * np.where(span > 0, span, 1.0)


@dataclass
class Archive:
    """Non-dominated mappings seen so far, with their objective values."""

    rows: np.ndarray | None = None
    values: np.ndarray | None = None
    limit: int = 1000

    def add(self, X: np.ndarray, F: np.ndarray) -> None:
        finite = np.all(np.isfinite(F), axis=1)
        X, F = X[finite], F[finite]
        if not len(X):
            return
        if self.values is not None and len(self.values):
            # drop candidates dominated by (or equal to) an archived point, cheaply first
            dom = np.zeros(len(F), dtype=bool)
            for v in self.values:
                dom |= np.all(F >= v, axis=1)
            X, F = X[~dom], F[~dom]
            if not len(X):
                return
            X = np.vstack([self.rows, X])
            F = np.vstack([self.values, F])
        keep = nondominated(F)
        X, F = X[keep], F[keep]
        # duplicate mappings (same values) collapse through domination; keep order stable
        order = np.lexsort(F.T[::-1])
        self.rows, self.values = X[order][:self.limit], F[order][:self.limit]

    def merge(self, other: "Archive") -> None:
        if other.rows is not None:
            self.add(other.rows, other.values)


# --------------------------------------------------------------------- budget, best
@dataclass
class Tracker:
    """Counts evaluations against a budget, keeps the best mapping (ties: the
    lexicographically smallest row) and, for several objectives, the archive."""

    objectives: Objectives
    scalarize: Scalarizer
    budget: int | None
    progress: Callable[[int], None] | None = None
    evaluations: int = 0
    best_value: float = math.inf
    best_row: np.ndarray | None = None
    best_F: np.ndarray | None = None
    archive: Archive | None = None
    #: wall clock (``time.time()``) after which no evaluation is left, once one mapping
    #: has been valued (a time limit)
    deadline: float | None = None

    def __post_init__(self):
        if self.objectives.multi and self.archive is None:
            self.archive = Archive()

    @property
    def remaining(self) -> int:
        if self.deadline is not None and self.best_row is not None \
                and time.time() >= self.deadline:
            return 0
        return (self.budget - self.evaluations) if self.budget is not None else 1 << 62

    def evaluate(self, X: np.ndarray) -> np.ndarray:
        """Scalar fitness of the rows of ``X`` (truncated to the remaining budget)."""
        return self.evaluate_all(X)[0]

    def evaluate_all(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Scalar fitness ``(n,)`` and objective values ``(n, objectives)`` of the rows
        of ``X`` (truncated to the remaining budget)."""
        if self.budget is not None and len(X) > self.remaining:
            X = X[:max(self.remaining, 0)]
        if not len(X):
            return np.empty(0), np.empty((0, len(self.objectives.evaluators)))
        F = self.objectives(X)
        s = self.scalarize(F)
        self.evaluations += len(X)
        if self.archive is not None:
            self.archive.add(X, F)
        i = int(np.argmin(s))
        v = s[i]
        if v < self.best_value or (v == self.best_value and self.best_row is not None
                                   and _lex_less(X[i], self.best_row)):
            ties = np.flatnonzero(s == v)
            if len(ties) > 1:
                i = ties[np.lexsort(X[ties].T[::-1])[0]]
            if v < self.best_value or _lex_less(X[i], self.best_row):
                self.best_value, self.best_row, self.best_F = float(v), X[i].copy(), F[i].copy()
        elif self.best_row is None and math.isinf(v):
            self.best_value, self.best_row, self.best_F = float(v), X[i].copy(), F[i].copy()
        if self.progress is not None:
            self.progress(len(X))
        return s, F

    def count(self, n: int) -> None:
        """Count ``n`` valuations that are not of whole mappings (the candidate
        placements of a construction): they spend the budget as evaluations do."""
        self.evaluations += n
        if self.progress is not None:
            self.progress(n)

    def offer(self, values: np.ndarray, rows: Callable[[np.ndarray], np.ndarray]) -> None:
        """Count candidates valued elsewhere (one objective, by delta evaluation):
        ``values (n,)`` within the budget, ``rows(idx)`` the mappings of candidates
        ``idx``, built only for a new best.  That best's exact value is taken when the
        result is read (:func:`shard_result`)."""
        n = len(values)
        if not n:
            return
        self.evaluations += n
        i = int(np.argmin(values))
        v = float(values[i])
        if v < self.best_value or (v == self.best_value and (
                self.best_row is not None or math.isinf(v))):
            ties = np.flatnonzero(values == v)
            Y = rows(ties)
            j = np.lexsort(Y.T[::-1])[0]
            if v < self.best_value or self.best_row is None or _lex_less(Y[j], self.best_row):
                self.best_value, self.best_row, self.best_F = v, Y[j].copy(), None
        if self.progress is not None:
            self.progress(n)

    def exact_best(self) -> None:
        """Value the best mapping with the objectives themselves (after :meth:`offer`)."""
        if self.best_row is not None and self.best_F is None:
            F = self.objectives(self.best_row[None, :])
            self.best_F = F[0]
            self.best_value = float(self.scalarize(F)[0])

    @property
    def exhausted(self) -> bool:
        return self.remaining <= 0


def _lex_less(a: np.ndarray, b: np.ndarray) -> bool:
    diff = np.flatnonzero(a != b)
    return bool(len(diff)) and a[diff[0]] < b[diff[0]]


# ------------------------------------------------------------------------ results
@dataclass(frozen=True)
class ShardResult:
    """What one shard returns (small, picklable)."""

    best_value: float
    best_row: np.ndarray | None
    best_F: np.ndarray | None
    evaluations: int
    front_rows: np.ndarray | None = None
    front_values: np.ndarray | None = None
    optimal: bool = False


def combine(results: Sequence[ShardResult]) -> ShardResult:
    """The best of several shards (ties: the lexicographically smallest mapping), their
    evaluations added, their fronts merged."""
    best = None
    for r in results:
        if r.best_row is None:
            continue
        if best is None or r.best_value < best.best_value or (
                r.best_value == best.best_value and _lex_less(r.best_row, best.best_row)):
            best = r
    archive = Archive()
    for r in results:
        if r.front_rows is not None:
            archive.add(r.front_rows, r.front_values)
    evals = sum(r.evaluations for r in results)
    if best is None:
        return ShardResult(math.inf, None, None, evals)
    return ShardResult(best.best_value, best.best_row, best.best_F, evals,
                       archive.rows, archive.values, all(r.optimal for r in results))


def shard_result(tracker: Tracker, optimal: bool = False) -> ShardResult:
    tracker.exact_best()
    a = tracker.archive
    return ShardResult(tracker.best_value, tracker.best_row, tracker.best_F,
                       tracker.evaluations, None if a is None else a.rows,
                       None if a is None else a.values, optimal)


@dataclass(frozen=True)
class SearchResult:
    """The outcome of a search; ``to_dict()`` gives the JSON of ``mapeval search``."""

    strategy: str
    metric: str
    aggregate: str
    value: float
    mapping: dict[str, str]
    evaluations: int
    optimal: bool
    seconds: float
    objectives: tuple[str, ...] = ()
    values: dict[str, float] = field(default_factory=dict)
    front: tuple[dict, ...] | None = None
    seed: int | None = None
    budget: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: objective -> its declared (or the papers') unit, a label
    units: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = {"strategy": self.strategy, "metric": self.metric, "aggregate": self.aggregate,
             "value": self.value, "mapping": dict(self.mapping),
             "evaluations": self.evaluations, "optimal": self.optimal,
             "seconds": self.seconds}
        if self.front is not None:
            d["objectives"] = list(self.objectives)
            d["values"] = dict(self.values)
            d["front"] = [{"values": dict(p["values"]), "mapping": dict(p["mapping"])}
                          for p in self.front]
            hv = self.hypervolume
            if hv is not None:
                d["hypervolume"] = hv
        if self.seed is not None:
            d["seed"] = self.seed
        if self.budget is not None:
            d["budget"] = self.budget
        if self.units:
            d["units"] = dict(self.units)
        d.update(self.extra)
        return d

    @property
    def hypervolume(self) -> dict | None:
        """For a front of two objectives: ``{"value", "reference"}``, the exact area the
        front dominates up to the reference point (:func:`reference_point`: the front's
        worst values plus 10% of its range), so that fronts of one problem compare."""
        if self.front is None or len(self.objectives) != 2 or not self.front:
            return None
        F = np.array([[p["values"][n] for n in self.objectives] for p in self.front])
        if not np.all(np.isfinite(F)):
            return None
        ref = reference_point(F)
        return {"value": hypervolume(F, ref),
                "reference": {n: float(v) for n, v in zip(self.objectives, ref)}}

    def mappings(self) -> list[tuple[str, dict[str, str]]]:
        """``(name, actor → PE)`` of the best mapping, or of every point of the front."""
        if self.front is None:
            return [("best", dict(self.mapping))]
        return [(f"pareto_{i}", dict(p["mapping"])) for i, p in enumerate(self.front)]

    def __str__(self):
        chosen = f" (chosen by {self.extra['chosen_by']})" if "chosen_by" in self.extra else ""
        unit = f" {self.units[self.metric]}" if self.metric in self.units else ""
        lines = [f"{self.strategy} search{chosen}: {self.metric} ({self.aggregate}) = "
                 f"{self.value:.6g}{unit}{' (optimal)' if self.optimal else ''}; "
                 f"{self.evaluations} evaluations in {self.seconds:.3g} s"]
        if "stopped" in self.extra:
            lines.append(f"stopped: {self.extra['stopped']}; the best mapping found, not "
                         "proven optimal")
        if self.front is None:
            width = max([len(a) for a in self.mapping] + [5])
            lines += [f"  {a:<{width}} -> {p}" for a, p in self.mapping.items()]
        else:
            names = list(self.objectives)
            hv = self.hypervolume
            lines.append(f"Pareto front: {len(self.front)} mappings" + ("" if hv is None else
                         f"; hypervolume {hv['value']:.6g} up to ("
                         + ", ".join(f"{n} {v:.6g}" for n, v in hv["reference"].items())
                         + ")"))
            heads = [f"{n} ({self.units[n]})" if n in self.units else n for n in names]
            lines.append("  " + "  ".join(f"{h:>12}" for h in heads) + "  mapping")
            for p in self.front:
                m = ", ".join(f"{a}={pe}" for a, pe in p["mapping"].items())
                lines.append("  " + "  ".join(f"{p['values'][n]:>12.6g}" for n in names)
                             + f"  {m}")
        return "\n".join(lines)


def relative_gap(value: float, bound: float | None) -> float | None:
    """The gap ``(value − bound) / |value|`` between a mapping's ``value`` and a proven
    lower ``bound`` on the optimum: None without a bound, 0 where the bound meets the
    value (a value of 0 over a bound of 0 included), infinite at a value of 0 above a
    negative bound."""
    if bound is None:
        return None
    if value == bound:
        return 0.0
    return (value - bound) / abs(value) if value else math.inf


#: the fewest seconds a solver's time limit may be: a deadline already passed still
#: gives a limit the solvers accept
FEWEST_SECONDS = 0.01


def solver_seconds(seconds: float) -> float:
    """A solver's time limit of ``seconds``, at least :data:`FEWEST_SECONDS`."""
    return max(seconds, FEWEST_SECONDS)


def stopped(deadline: float | None, stop=None, clock=time.time) -> bool:
    """Whether a search should end: ``deadline`` (a time of ``clock``) has come, or
    ``stop()`` (another thread's request) is true."""
    return (deadline is not None and clock() >= deadline) or \
        (stop is not None and bool(stop()))


def remaining(deadline: float | None) -> float | None:
    """Seconds left until ``deadline`` (``time.time()``), at least
    :data:`FEWEST_SECONDS`; None without one."""
    return None if deadline is None else solver_seconds(deadline - time.time())


def proves_optimal(value: float, bound: float | None, tolerance: float) -> bool:
    """Whether a proven lower ``bound`` shows a mapping of ``value`` optimal within
    ``tolerance``: the bound is at or above the value (a value of 0 included), or their
    :func:`relative_gap`, the gap reported (relative to the value, as HiGHS's
    ``mip_rel_gap``), is at most ``tolerance``.  Never without a bound."""
    if bound is None:
        return False
    return bound >= value or relative_gap(value, bound) <= tolerance


def trace_step(seconds: float, value: float, bound: float | None) -> dict:
    """One step of an exact search's ``trace``: the best ``value`` and the ``bound``
    proven at ``seconds`` (``time.time()`` until the caller counts from its start),
    with their :func:`relative_gap`."""
    gap = relative_gap(value, bound)
    return {"seconds": float(seconds), "value": float(value),
            "bound": None if bound is None else float(bound), "gap": gap}
