"""``mapeval search``: find the best mappings."""
from __future__ import annotations

from dataclasses import replace

from mapping.errors import InputError
from mapping.options import NATURAL, POSITIVE_WHOLE, SECONDS
from mapping.cli.inputs import add_model_options, classify, load_single, one, parse_params
from mapping.output import check_output, print_json, write_atomically
from mapping.search.strategies import STRATEGIES


def add_search_options(p) -> None:
    """The options of ``mapeval search``, shared with ``mapeval plot pareto``."""
    p.add_argument("files", nargs="+", metavar="FILE", help="APP.sdf ARCH.moa")
    add_model_options(p)
    p.add_argument("--strategy", choices=STRATEGIES.names(), default="auto",
                   help="default auto. " + STRATEGIES.describe())
    p.add_argument("--budget", type=POSITIVE_WHOLE, metavar="N",
                   help="evaluations a heuristic may spend (default 20000); for exhaustive, "
                   "the largest enumeration allowed; auto enumerates only what fits in it; "
                   "exact for max spends it on its starting mapping (default 200000, "
                   "then under --time-limit more while a tenth of the limit affords it)")
    p.add_argument("--seed", type=NATURAL, default=0, metavar="N",
                   help="seed of the heuristics (default 0)")
    p.add_argument("--objectives", metavar="M1,M2,...",
                   help="several metrics: report the Pareto front of non-dominated mappings")
    p.add_argument("--pin", action="append", default=[], metavar="ACTOR=PE",
                   help="fix an actor to a PE (repeatable, or comma-separated)")
    p.add_argument("--time-limit", type=SECONDS, metavar="SECONDS",
                   help="stop the exact solver after this long (wall clock): the best "
                   "mapping found, optimal: false, with the proven bound and the gap; on "
                   "--scheduler/--workers, stop the shards after this long and return the "
                   "best mapping they found so far (exit 0, with what was lost)")
    from mapping.search.strategies import ENGINES
    p.add_argument("--engine", choices=ENGINES.names(), default="auto",
                   help="the solver of --strategy exact (default auto). " + ENGINES.describe())
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the search shards on this Dask scheduler (tcp://host:8786); "
                   "needs the 'distributed' extra. A bad, unreachable or silent address is "
                   "an error (exit 2) within --connect-timeout; if the scheduler is lost "
                   "or you press Ctrl-C, the best mapping found so far is returned (exit "
                   "0, with a 'stopped:' line saying what was lost)")
    p.add_argument("--workers", type=POSITIVE_WHOLE, metavar="N",
                   help="run the shards on a local Dask cluster of N single-thread workers "
                   "(127.0.0.1), shut down at the end on every path")
    p.add_argument("--retries", type=NATURAL, default=1, metavar="N",
                   help="with --scheduler/--workers: run a failed shard again up to N times "
                   "(default 1); a shard that still fails is left out and reported")
    p.add_argument("--connect-timeout", type=SECONDS, default=20.0, metavar="SECONDS",
                   help="with --scheduler: seconds allowed to connect, and for every wait "
                   "on the scheduler (default 20)")
    p.add_argument("--progress", action="store_true",
                   help="show progress on stderr even when it is not a terminal")


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="search for the best mappings",
        description="Search mappings of an application (.sdf) onto an architecture (.moa) "
        "that minimize a metric, or the Pareto front of several (--objectives). Actors may "
        "carry an attribute allowed = \"PE or type names\" restricting their PEs; --pin "
        "fixes one. Candidates are evaluated in numpy batches.",
        epilog="example: mapeval search app.sdf arch.moa --strategy anneal --budget 100000 "
        "--seed 1 -o best.map --json")
    add_search_options(p)
    p.add_argument("-o", "--output", metavar="BEST.map",
                   help="write the best mapping (or one mapping per point of the front) as "
                   "a .map file")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(run=run)


def run_search(args, command: str = "search"):
    """Load the inputs named by ``args`` and run the search they ask for."""
    from mapping.semantics.problem import bind_problem
    from mapping.search import parse_pins, search

    inputs = classify(args.files, ("sdf", "moa"))
    app = load_single(one(inputs.sdf, "sdf", command), "sdf", args.graph)
    arch = load_single(one(inputs.moa, "moa", command), "moa", args.architecture)
    problem = bind_problem(app, arch, parse_params(args.param))
    objectives = None
    if args.objectives:
        objectives = [m.strip() for m in args.objectives.split(",") if m.strip()]
        if not objectives:
            raise InputError("--objectives: give metric names separated by commas")
    if args.scheduler is not None and args.workers is not None:
        raise InputError("give --scheduler ADDRESS or --workers N, not both")
    pins = parse_pins(args.pin)
    executor = None
    if args.scheduler is not None or args.workers:
        from mapping.search.distributed import DaskExecutor
        executor = DaskExecutor(address=args.scheduler, workers=args.workers,
                                timeout=args.connect_timeout, retries=args.retries,
                                time_limit=args.time_limit)
    from mapping.progress import shown
    from mapping.cli.main import STARTED
    progress = shown(args.progress, getattr(args, "json", False))
    try:
        result = search(problem, metric=args.metric, aggregate=args.aggregate,
                        strategy=args.strategy, budget=args.budget, seed=args.seed,
                        objectives=objectives, pins=pins, progress=progress,
                        executor=executor, time_limit=args.time_limit,
                        engine=getattr(args, "engine", "auto"), began=STARTED)
        return distributed_outcome(result, executor)
    finally:
        if executor is not None:
            executor.close()


def distributed_outcome(result, executor):
    """``result`` with what the cluster reports: each worker's speed (``cluster``) and,
    when shards were lost, a ``stopped`` statement and ``optimal: false``."""
    outcome = getattr(executor, "outcome", None)
    if outcome is None:
        return result
    extra = dict(result.extra)
    extra["cluster"] = outcome.to_dict()
    statement = outcome.statement
    optimal = result.optimal
    if statement:
        extra["stopped"] = f"{extra['stopped']}; {statement}" if "stopped" in extra \
            else statement
        # exact's proof does not depend on its starting mapping
        optimal = optimal and result.strategy == "exact"
    return replace(result, extra=extra, optimal=optimal)


def proof_line(result) -> str:
    """How far ``exact``'s answer is from proven: its bound, gap and time limit."""
    extra = result.extra
    if result.strategy != "exact" or "bound" not in extra:
        return ""
    bound, gap = extra.get("bound"), extra.get("gap")
    floors = [f"{name} {extra[key]:.6g}" for key, name in
              (("relaxation_bound", "cluster relaxation"), ("packing_bound", "packing bound"),
               ("partition_bound", "partition bound"), ("split_bound", "split bound"))
              if extra.get(key) is not None]
    floor = f" ({', '.join(floors)})" if floors else ""
    proof = "no lower bound proven" if bound is None else \
        f"proven lower bound {bound:.6g}{floor}, gap {gap:.3%}"
    limit = "time limit hit" if extra.get("time_limit_hit") else "within the time limit"
    start = extra.get("start")
    warm = f"; started from {start['strategy']} at {start['value']:.6g}" if start else ""
    engine = extra.get("engine")
    source = extra.get("bound_source")
    how = "" if engine is None else f"; engine {engine}" + (
        f", bound from {source}" if source else "")
    parts = extra.get("engines") or {}
    each = "".join(f"; {name} gap {p['gap']:.3%}" for name, p in parts.items()
                   if p.get("gap") is not None)
    return f"{proof} ({limit}){warm}{how}{each}"


def cluster_line(result) -> str:
    """Each Dask worker's speed: shards run and mappings per second while busy."""
    workers = result.extra.get("cluster", {}).get("workers") or {}
    return "workers: " + "; ".join(
        f"{w} {s['shards']} shard{'s' if s['shards'] != 1 else ''}, "
        f"{(s['per_s'] or 0) / 1e6:.2f} M mappings/s" for w, s in sorted(workers.items())
    ) if workers else ""


def run(args):
    import dsl
    from dsl.mappings import Mapping

    if args.output:
        check_output(args.output, args.files, (".map",), "the best mappings")
    result = run_search(args)
    if args.output:
        text = dsl.format_map([Mapping(name, m) for name, m in result.mappings()])
        write_atomically(args.output, text + "\n", inputs=args.files, suffixes=(".map",),
                         what="the best mappings")
    if args.json:
        print_json(result.to_dict())
    else:
        print(result)
        line = proof_line(result)
        if line:
            print(line)
        line = cluster_line(result)
        if line:
            print(line)
    return 0
