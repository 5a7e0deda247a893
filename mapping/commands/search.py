"""``mapeval search``: find the best mappings (SPEC §9)."""
from __future__ import annotations

from mapping.errors import InputError
from mapping.inputs import add_model_options, classify, load_single, one, parse_params
from mapping.output import check_output, print_json, write_atomically
from mapping.search.strategies import STRATEGIES


def add_search_options(p) -> None:
    """The options of ``mapeval search``, shared with ``mapeval plot pareto``."""
    p.add_argument("files", nargs="+", metavar="FILE", help="APP.sdf ARCH.moa")
    add_model_options(p)
    p.add_argument("--strategy", choices=STRATEGIES.names(), default="auto",
                   help="default auto. " + STRATEGIES.describe())
    p.add_argument("--budget", type=int, metavar="N",
                   help="evaluations a heuristic may spend (default 20000); for exhaustive, "
                   "the largest enumeration allowed; auto enumerates only what fits in it; "
                   "exact for max spends it on its starting mapping (default 200000)")
    p.add_argument("--seed", type=int, default=0, metavar="N",
                   help="seed of the heuristics (default 0)")
    p.add_argument("--objectives", metavar="M1,M2,...",
                   help="several metrics: report the Pareto front of non-dominated mappings")
    p.add_argument("--pin", action="append", default=[], metavar="ACTOR=PE",
                   help="fix an actor to a PE (repeatable, or comma-separated)")
    p.add_argument("--time-limit", type=float, metavar="SECONDS",
                   help="stop the exact solver after this long (wall clock): the best "
                   "mapping found, optimal: false, with the proven bound and the gap")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the search shards on this Dask scheduler (tcp://host:8786); "
                   "needs the 'distributed' extra")
    p.add_argument("--workers", type=int, metavar="N",
                   help="run the shards on a local Dask cluster of N workers (127.0.0.1)")
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
    from mapping.problem import bind_problem
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
    if args.budget is not None and args.budget < 1:
        raise InputError(f"--budget must be positive, got {args.budget}")
    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be positive, got {args.workers}")
    pins = parse_pins(args.pin)
    executor = None
    if args.scheduler or args.workers:
        from mapping.search.distributed import DaskExecutor
        executor = DaskExecutor(address=args.scheduler, workers=args.workers)
    from mapping.progress import shown
    progress = shown(args.progress, getattr(args, "json", False))
    try:
        return search(problem, metric=args.metric, aggregate=args.aggregate,
                      strategy=args.strategy, budget=args.budget, seed=args.seed,
                      objectives=objectives, pins=pins, progress=progress,
                      executor=executor, time_limit=args.time_limit)
    finally:
        if executor is not None:
            executor.close()


def proof_line(result) -> str:
    """How far ``exact``'s answer is from proven: its bound, gap and time limit."""
    extra = result.extra
    if result.strategy != "exact" or "bound" not in extra:
        return ""
    bound, gap = extra.get("bound"), extra.get("gap")
    proof = "no lower bound proven" if bound is None else \
        f"proven lower bound {bound:.6g}, gap {gap:.3%}"
    limit = "time limit hit" if extra.get("time_limit_hit") else "within the time limit"
    start = extra.get("start")
    warm = f"; started from {start['strategy']} at {start['value']:.6g}" if start else ""
    return f"{proof} ({limit}){warm}"


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
    return 0
