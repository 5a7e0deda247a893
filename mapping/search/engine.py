"""The search driver: compiles the objectives, plans shards, runs them (locally or on a
Dask cluster) and assembles a :class:`SearchResult`."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import numpy as np

from mapping.evaluation.batch import BatchEvaluator
from mapping.semantics.problem import Problem
from mapping.search.common import (DEFAULT_BUDGET, DEFAULT_SHARDS, Objectives, Progress,
                                   Scalarizer, SearchError, SearchResult, ShardResult,
                                   Space, Tracker, build_space, combine, relative_gap,
                                   remaining, trace_step, weight_vectors)

from mapping.search.both import IN_ORDER, schedule
from mapping.search.strategies import STRATEGIES, heuristics
from mapping.semantics.metrics import aggregation_label, system_metrics
from mapping.options import POSITIVE_WHOLE

#: ``auto`` enumerates exhaustively up to this many canonical mappings when no budget is
#: given; with a budget, up to the budget
AUTO_EXHAUSTIVE = 1_000_000
#: ``auto`` solves ``sum`` exactly up to this many channel-pair variables (HiGHS proves
#: 100 actors × 16 PEs, 38,400 of them, in about a second)
AUTO_EXACT_VARIABLES = 200_000
#: the heuristic ``auto`` falls back on
AUTO_HEURISTIC = "portfolio"
#: evaluations of the portfolio run that gives ``exact`` its starting mapping for
#: bottleneck aggregations (``--budget`` overrides)
EXACT_START_BUDGET = 200_000


@dataclass
class Setup:
    """Everything a strategy's planner may look at (stays on the client)."""

    problem: Problem
    objectives: Objectives
    space: Space
    budget: int | None
    seed: int
    scales: np.ndarray
    info: dict = field(default_factory=dict)


@dataclass
class Task:
    """One shard of a search: small, picklable, self-contained."""

    strategy: str
    index: int
    objectives: Objectives
    space: Space
    scalarizer: Scalarizer
    budget: int | None
    seed: int
    params: dict = field(default_factory=dict)


def run_task(task: Task, progress: Callable[[int], None] | None = None,
             report: Callable[[Tracker], None] | None = None) -> ShardResult:
    """Run one shard (also what Dask workers run).  ``progress(n)``: n more evaluations;
    ``report(tracker)`` at the same moments, for a shard that streams its best so far."""
    run = STRATEGIES.get(task.strategy)
    rng = np.random.default_rng(np.random.SeedSequence(task.seed, spawn_key=(task.index,)))

    def told(n: int) -> None:
        if progress is not None:
            progress(n)
        report(tracker)

    tracker = Tracker(task.objectives, task.scalarizer, task.budget,
                      progress if report is None else told,
                      deadline=task.params.get("deadline"))
    return run(task, tracker, rng)


def choose_strategy(setup: Setup) -> str:
    """What ``auto`` runs: ``exhaustive`` when the canonical enumeration (mappings up to
    interchangeable PEs) fits the budget (:data:`AUTO_EXHAUSTIVE` without one, and never
    more than exhaustive's own cap); else ``exact`` for one objective whose program is
    linear with a separable aggregation (``sum``) and at most
    :data:`AUTO_EXACT_VARIABLES` channel-pair variables; else :data:`AUTO_HEURISTIC`
    (the portfolio of heuristics) with that budget."""
    from mapping.search import exact, exhaustive
    cap = min(AUTO_EXHAUSTIVE if setup.budget is None else int(setup.budget),
              exhaustive.DEFAULT_LIMIT)
    if setup.space.size <= cap:
        return "exhaustive"
    canon = exhaustive.canonical(setup)
    # an orbit holds at most Π |class|! mappings: counting (a dynamic program over the
    # actors, minutes at 1,000 actors on 64 PEs) only when that leaves the cap in reach
    orbit = math.prod(math.factorial(len(c)) for c in canon.classes)
    if setup.space.size <= cap * orbit and canon.count() <= cap:
        return "exhaustive"
    ev = setup.objectives.evaluators[0]
    if not setup.objectives.multi and ev.aggregation.separable and ev.tables.linear \
            and exact.pair_variables(ev) <= AUTO_EXACT_VARIABLES:
        return "exact"
    return AUTO_HEURISTIC


def run_tasks(tasks: list[Task], label: str, total: int | None, progress, executor
              ) -> list[ShardResult]:
    """Run the shards locally (one after the other) or with ``executor``."""
    bar = Progress(total, label, progress)
    try:
        if executor is None:
            return [run_task(t, bar) for t in tasks]
        return executor.run(tasks, bar)
    finally:
        bar.close()


#: the share of ``exact``'s time limit its starting portfolio runs may take (``max``)
START_SHARE = 0.1
#: the share of the pace of the last starting run that the next one's budget counts on
START_PACE = 0.8
#: seconds kept back from a time limit for what follows the solvers (the report)
MARGIN = 0.5


def choose_engine(setup: Setup) -> str:
    """What ``--engine auto`` runs: ``milp`` for a separable aggregation (``sum``: HiGHS
    proves 100 actors x 16 PEs in seconds); for ``max``, ``both`` when OR-Tools is
    installed (CP-SAT finds good mappings early where the MILP's search stalls, the
    MILP proves the stronger bounds: measured on ``tests/perf/bench_exact_max.py``),
    else ``milp``."""
    from mapping.search import cpsat
    ev = setup.objectives.evaluators[0]
    if ev.aggregation.bottleneck and cpsat.available():
        return "both"
    return "milp"


def starting_mapping(setup: Setup, time_limit: float | None, deadline: float | None,
                     shards: int, progress, executor, found=None
                     ) -> tuple[ShardResult, list]:
    """The portfolio's best mapping for ``exact`` to start from, and its improvements
    ``[(time.time(), value)]``.  The first run spends :data:`EXACT_START_BUDGET`
    evaluations (``--budget`` overrides, and then it is the only run); under a time
    limit, runs with the budget that what is left of :data:`START_SHARE` of it affords
    at the last run's pace (times :data:`START_PACE`) follow while that is at least
    twice the last budget and the last run improved on the ones before.  ``found(row)``
    is called with each better mapping."""
    budget = EXACT_START_BUDGET if setup.budget is None else int(setup.budget)
    # a small space is the solver's to search, not the start's
    most = max(64, setup.space.size // 16)
    budget = min(budget, most)
    stop = None if deadline is None or time_limit is None else \
        time.time() + START_SHARE * max(deadline - time.time(), 0.0)
    best, steps, evaluations = None, [], 0
    while True:
        began = time.time()
        tasks = plan(replace(setup, budget=budget), AUTO_HEURISTIC, shards)
        if stop is not None:
            for t in tasks:
                t.params = dict(t.params, deadline=stop)
        warm = combine(run_tasks(tasks, "exact: starting mapping", budget, progress,
                                 executor))
        evaluations += int(warm.evaluations)
        better = warm.best_row is not None and (best is None or
                                                 warm.best_value < best.best_value)
        if better:
            best = warm
            steps.append((time.time(), float(warm.best_value)))
            if found is not None:
                found(warm.best_row)
        if stop is None or setup.budget is not None or budget >= most or not better:
            break
        afford = budget * START_PACE * (stop - time.time()) / max(time.time() - began, 1e-3)
        if afford < 2 * budget:
            break
        budget = min(int(afford), most)
    if best is None:
        return warm, [(time.time(), math.inf)]
    return replace(best, evaluations=evaluations), steps


def run_exact(setup: Setup, time_limit: float | None, shards: int, progress, executor,
              engine: str = "auto", deadline: float | None = None) -> tuple[ShardResult, dict]:
    """``exact``: for a bottleneck aggregation, portfolio runs
    (:func:`starting_mapping`) first give the solver its starting mapping (a cutoff and
    a hint); then the ``engine`` (:data:`~mapping.search.strategies.ENGINES`; ``auto``:
    :func:`choose_engine`) until ``deadline`` (``time.time()``; default: ``time_limit``
    from now, less :data:`MARGIN`).  The extras report the proven ``bound``, its
    ``bound_source``, the ``gap`` ``(value − bound) / value``, the ``trace`` of
    improvements, whether the ``time_limit_hit``, the ``relaxation_bound`` of the
    cluster relaxation (None where none applied) and, when both engines ran, each
    one's result (``engines``)."""
    from mapping.search import exact
    from mapping.search.strategies import ENGINES
    if setup.objectives.multi:
        raise SearchError("strategy 'exact' optimizes one objective; use exhaustive or a "
                          "heuristic for --objectives")
    ev = setup.objectives.evaluators[0]
    exact.check(ev)
    began = time.time()
    if deadline is None and time_limit is not None:
        deadline = began + time_limit
    if deadline is not None:
        deadline -= min(MARGIN, 0.05 * (time_limit or 0))
    requested = engine
    if engine == "auto":
        engine = ENGINES.get("auto")(setup)
    if engine in ("cpsat", "both"):
        from mapping.search import cpsat
        cpsat.require()
    evaluations, extra, starts = 0, {}, []
    if ev.aggregation.bottleneck:
        from mapping.search import lns
        # in order, the neighbourhoods start from the portfolio's first mapping
        early = lns.Early(setup, deadline) if engine == "both" and deadline is not None \
            and schedule(setup) == IN_ORDER else None
        try:
            warm, starts = starting_mapping(setup, time_limit, deadline, shards, progress,
                                            executor, early)
        except BaseException:
            if early is not None:
                early.cancel()
            raise
        if early is not None and early.beside is not None:
            setup.info["lns"] = early.beside
        evaluations += int(warm.evaluations)
        if warm.best_row is not None and math.isfinite(warm.best_value):
            setup.info["incumbent"] = warm.best_row
            extra["start"] = {"strategy": AUTO_HEURISTIC, "value": float(warm.best_value),
                              "evaluations": int(warm.evaluations), "seed": setup.seed,
                              "seconds": round(starts[-1][0] - began, 3)}
    solve = STRATEGIES.get("exact") if engine == "milp" else ENGINES.get(engine)
    given = remaining(deadline)
    res = solve(setup, time_limit=given)
    evaluations += 1
    combined = ShardResult(res.value, res.row, np.array([res.value]), evaluations,
                           optimal=res.optimal)
    extra.update(engine=engine, solver=res.status, bound=getattr(res, "bound", None),
                 gap=getattr(res, "gap", None), time_limit_hit=bool(res.limited),
                 relaxation_bound=getattr(res, "relaxation_bound", None),
                 partition_bound=getattr(res, "partition_bound", None),
                 packing_bound=getattr(res, "packing_bound", None),
                 split_bound=getattr(res, "split_bound", None),
                 pair_bound=getattr(res, "pair_bound", None))
    if requested != engine:
        extra["engine_chosen_by"] = requested
    extra["bound_source"] = _bound_source(res)
    origin = began if deadline is None or time_limit is None else deadline + min(
        MARGIN, 0.05 * time_limit) - time_limit
    trace = [dict(step, seconds=round(step["seconds"] - origin, 3))
             for step in getattr(res, "trace", ()) or ()]
    if "start" in extra:
        from mapping.search.lns import merged
        extra["start"]["seconds"] = round(extra["start"]["seconds"] + began - origin, 3)
        # the neighbourhoods may have improved on the start before its last run ended
        trace = [dict(step, seconds=round(step["seconds"], 3)) for step in merged(
            [trace_step(at - origin, value, None) for at, value in starts] + trace)]
    if not trace or trace[-1]["value"] != res.value or trace[-1]["bound"] != res.bound:
        trace.append({"seconds": round(time.time() - origin, 3), "value": float(res.value),
                      "bound": res.bound, "gap": res.gap})
    extra["trace"] = trace
    if getattr(res, "parts", None):
        extra["engines"] = res.parts
    if getattr(res, "schedule", None):
        extra["schedule"] = res.schedule
    if res.limited:
        # an engine names the time it was given, what is left of the user's limit
        extra["stopped"] = res.message if time_limit is None or given is None else \
            res.message.replace(f"time limit of {given:g} s", f"time limit of {time_limit:g} s")
    return combined, extra


def objective_aggregate(arch, metric: str, metrics: Sequence[str],
                        aggregate: str | None) -> str | None:
    """The aggregation objective ``metric`` of ``metrics`` is evaluated with: ``aggregate``,
    except for a system metric beside element metrics, whose terms name their own (the
    shared ``--aggregate`` is for the others)."""
    systems = system_metrics(arch)
    if metric in systems and any(m not in systems for m in metrics):
        return None
    return aggregate


def _bound_source(res) -> str | None:
    """Which proof gave the reported bound."""
    if getattr(res, "bound", None) is None:
        return None
    for attr, proof in (("relaxation_bound", "cluster relaxation"),
                        ("split_bound", "split bound"),
                        ("partition_bound", "partition bound"),
                        ("packing_bound", "packing bound"), ("pair_bound", "pair bound")):
        value = getattr(res, attr, None)
        if value is not None and res.bound <= value:
            return proof
    parts = getattr(res, "parts", None) or {}
    for name, part in parts.items():
        if part.get("bound") is not None and part["bound"] >= res.bound:
            return name
    return getattr(res, "engine", "milp")


def prepare(problem: Problem, metric: str = "time", aggregate: str | None = None,
            objectives: Sequence[str] | None = None, pins=None, allowed=None,
            budget: int | None = None, seed: int = 0) -> Setup:
    metrics = list(objectives) if objectives else [metric]
    if len(set(metrics)) != len(metrics):
        raise SearchError(f"--objectives names a metric twice: {', '.join(metrics)}")
    evaluators = [BatchEvaluator(problem, m, objective_aggregate(problem.arch, m, metrics,
                                                                 aggregate)) for m in metrics]
    objs = Objectives(evaluators)
    space = build_space(problem, pins, allowed)
    scales = np.ones(len(metrics))
    if objs.multi:
        # objective scales from a seeded sample, so that weighted sums are balanced
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1 << 30,)))
        F = objs(space.random(rng, 256))
        F = np.where(np.isfinite(F), F, np.nan)
        med = np.nanmedian(np.abs(F), axis=0)
        scales = np.where(np.isfinite(med) & (med > 0), med, 1.0)
    return Setup(problem, objs, space, budget, seed, scales)


def plan(setup: Setup, strategy: str, shards: int = DEFAULT_SHARDS) -> list[Task]:
    weights = weight_vectors(len(setup.scales), shards)
    if strategy == "exhaustive":
        from mapping.search import exhaustive
        parts = exhaustive.plan(setup, shards)
        # exhaustive scores every mapping; the archive keeps the exact front
        scal = Scalarizer(np.ones(len(setup.scales)) / len(setup.scales), setup.scales)
        return [Task(strategy, i, setup.objectives, setup.space, scal, None, setup.seed, p)
                for i, p in enumerate(parts)]
    budget = DEFAULT_BUDGET if setup.budget is None else int(setup.budget)
    POSITIVE_WHOLE.check(budget, "--budget", SearchError)
    shards = max(1, min(shards, budget // 16 or 1))
    if strategy == "portfolio" and not setup.objectives.multi:
        from mapping.search.portfolio import islands
        shards = islands(setup.space, budget, shards)
    shares = [budget // shards + (1 if i < budget % shards else 0) for i in range(shards)]
    return [Task(strategy, i, setup.objectives, setup.space,
                 Scalarizer(weights[i], setup.scales), shares[i], setup.seed)
            for i in range(shards)]


def search(problem: Problem, metric: str = "time", aggregate: str | None = None,
           strategy: str = "auto", budget: int | None = None, seed: int = 0,
           objectives: Sequence[str] | None = None, pins: dict[str, str] | None = None,
           allowed: dict[str, Sequence[str]] | None = None, progress: bool | None = False,
           executor: Any = None, shards: int = DEFAULT_SHARDS,
           time_limit: float | None = None, engine: str = "auto",
           began: float | None = None) -> SearchResult:
    """Search mappings of ``problem`` minimizing ``metric`` (or the Pareto front of
    ``objectives``) aggregated by ``aggregate``.

    ``strategy``: ``auto`` (default: :func:`choose_strategy`), ``exhaustive`` (one
    mapping per class of mappings equivalent under
    interchangeable PEs), ``exact`` (MILP with HiGHS; ``sum``/``max`` of per-token
    costs; :func:`run_exact`, stopped after ``time_limit`` seconds with its proven
    bound and gap), or a heuristic (``greedy``, ``anneal``, ``genetic``, ``tabu``,
    ``portfolio``) seeded with ``seed`` and limited to ``budget`` evaluations (default
    20,000), run as ``shards`` independent islands.  ``pins`` fixes actors to PEs;
    ``allowed`` (or the actors' ``allowed`` attribute) restricts their PEs.  ``executor`` is a
    :class:`mapping.search.distributed.DaskExecutor` (or anything with ``run(tasks)``)
    to run the shards on a cluster; the result is the same as locally.  ``progress``:
    a line on stderr (None: only when stderr is a terminal).
    """
    start = time.perf_counter()
    from mapping.search.strategies import ENGINES
    if engine not in ENGINES:
        raise SearchError(f"unknown engine '{engine}' (known: {', '.join(ENGINES)})")
    # the time limit counts from ``began`` (``time.time()``: the command's start)
    deadline = None if time_limit is None else (began or time.time()) + time_limit
    if strategy not in STRATEGIES:
        raise SearchError(f"unknown strategy '{strategy}' (known: {', '.join(STRATEGIES)})")
    if budget is not None:
        POSITIVE_WHOLE.check(budget, "--budget", SearchError)
    setup = prepare(problem, metric, aggregate, objectives, pins, allowed, budget, seed)
    objs = setup.objectives
    aggregates = {m: aggregation_label(problem.arch, m, objective_aggregate(
        problem.arch, m, objs.names, aggregate)) for m in objs.names}
    requested = strategy
    if strategy == "auto":
        strategy = choose_strategy(setup)
    tasks: list[Task] = []
    if strategy == "exact":
        combined, extra = run_exact(setup, time_limit, shards, progress, executor, engine,
                                    deadline)
    else:
        tasks = plan(setup, strategy, shards)
        total = sum(t.budget for t in tasks) if strategy != "exhaustive" else \
            setup.info.get("count")
        results = run_tasks(tasks, strategy, total, progress, executor)
        combined = combine(results)
        extra = {}
        if setup.info.get("classes"):
            extra["interchangeable"] = setup.info["classes"]
        if strategy == "exhaustive":
            extra["space"] = setup.info.get("space")
        if strategy == AUTO_HEURISTIC:
            from mapping.search.portfolio import member
            extra["portfolio"] = [{"strategy": member(t), "value": float(r.best_value)}
                                  for t, r in zip(tasks, results)]
    if requested != strategy:
        extra["chosen_by"] = requested
    seconds = time.perf_counter() - start
    if combined.best_row is None:
        raise SearchError("the search evaluated no mapping (budget too small?)")
    ev0 = objs.evaluators[0]
    names = objs.names
    front = None
    values: dict[str, float] = {}
    if objs.multi:
        rows, vals = combined.front_rows, combined.front_values
        if rows is None or not len(rows):
            rows, vals = combined.best_row[None, :], combined.best_F[None, :]
        front = tuple({"values": {n: float(v) for n, v in zip(names, fv)},
                       "mapping": ev0.decode(r)} for r, fv in zip(rows, vals))
        best = 0  # the front is sorted by the first objective
        value, row = float(vals[best][0]), rows[best]
        values = {n: float(v) for n, v in zip(names, vals[best])}
    else:
        value, row = float(combined.best_F[0]), combined.best_row
    optimal = combined.optimal and strategy in ("exhaustive", "exact")
    if optimal and strategy == "exhaustive" and not objs.multi:
        extra.update(bound=value, gap=0.0)
    heuristic = strategy in heuristics()
    if objs.multi:
        extra["aggregates"] = aggregates
    return SearchResult(strategy, names[0], aggregates[names[0]],
                        value, ev0.decode(row), int(combined.evaluations), bool(optimal),
                        seconds, tuple(names), values, front, seed if heuristic else None,
                        sum(t.budget for t in tasks) if heuristic else None, extra,
                        {n: u for n in names if (u := problem.arch.unit(n)) is not None})
