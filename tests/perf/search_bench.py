"""Search benchmark of issue 13 (a script, not a timed test): prints one JSON object.

    python tests/perf/search_bench.py [--quick] [--sizes 100x16,300x32] [--aggregate max]
        [--budget 2000000] [--time-limit 60] [--strategies auto,exact,anneal,...]
        [--reference anneal,genetic,...] [--seed 0]

Instances are :func:`search_instances.instance` (random SDF graphs of 1.5 channels per
actor on a board of little/big cores and DSPs behind a bus with 2 or 3 CNs, with
communication costs), by default 20, 50, 100, 300 and 1,000 actors on 8 to 64 PEs.
For each strategy: the value, for ``exact`` the proven bound, the gap and whether the
time limit was hit, wall and CPU seconds, and the evaluations.  ``--reference`` runs the
listed strategies again with ten times the budget: ``best_known`` is the best value of
any run, and ``auto_gap`` how far ``auto`` is above it (issue 13 asks for at most 2%).
``exact`` is skipped beyond ``--exact-variables`` channel-pair variables.  The machine's
load average is printed with the results: the seconds depend on it.

``--quick``: 20 and 50 actors, budget 20,000, time limit 2 s (a few seconds).
"""
from __future__ import annotations

import one_core  # noqa: F401  (first: one thread before numpy loads)

import argparse  # noqa: E402
import os  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

from mapping.evaluation.batch import BatchEvaluator  # noqa: E402
from mapping.semantics.problem import bind_problem  # noqa: E402
from mapping.search import SearchError, search  # noqa: E402
from mapping.search.exact import pair_variables  # noqa: E402
from search_instances import instance  # noqa: E402

SIZES = ((20, 8), (50, 12), (100, 16), (300, 32), (1000, 64))
STRATEGIES = ("auto", "exact", "portfolio", "anneal", "genetic", "tabu", "greedy")


def run_one(problem, strategy, aggregate, budget, time_limit, seed):
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        res = search(problem, "time", aggregate, strategy=strategy, budget=budget, seed=seed,
                     time_limit=time_limit if strategy == "exact" else None)
    except SearchError as e:
        return {"strategy": strategy, "error": str(e)}
    out = {"strategy": strategy, "budget": budget, "value": res.value,
           "optimal": res.optimal, "evaluations": res.evaluations,
           "seconds": round(time.perf_counter() - wall, 2),
           "cpu_seconds": round(time.process_time() - cpu, 2)}
    if res.extra.get("chosen_by"):
        out["chosen"] = res.strategy
    for key in ("bound", "gap", "time_limit_hit", "start"):
        if key in res.extra:
            out[key] = res.extra[key]
    if "portfolio" in res.extra:
        out["members"] = res.extra["portfolio"]
    return out


def bench_instance(n, P, seed, args, strategies, reference):
    app, arch = instance(n, P, seed)
    problem = bind_problem(app, arch)
    ev = BatchEvaluator(problem, "time", args.aggregate)
    row = {"actors": n, "pes": P, "channels": len(app.channels), "seed": seed,
           "aggregate": args.aggregate, "results": []}
    for strategy in strategies:
        if strategy == "exact" and pair_variables(ev) > args.exact_variables:
            row["results"].append({"strategy": "exact", "skipped": f"{pair_variables(ev)} "
                                   "channel-pair variables"})
            continue
        row["results"].append(run_one(problem, strategy, args.aggregate, args.budget,
                                      args.time_limit, args.seed))
        print(json.dumps(row["results"][-1]), file=sys.stderr, flush=True)
    for strategy in reference:
        r = run_one(problem, strategy, args.aggregate, 10 * args.budget, args.time_limit,
                    args.seed)
        r["reference"] = True
        row["results"].append(r)
        print(json.dumps(r), file=sys.stderr, flush=True)
    values = [r["value"] for r in row["results"] if "value" in r]
    if values:
        row["best_known"] = min(values)
        auto = [r["value"] for r in row["results"] if r["strategy"] == "auto"
                and not r.get("reference") and "value" in r]
        if auto and row["best_known"] > 0:
            row["auto_gap"] = auto[0] / row["best_known"] - 1
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20 and 50 actors, small budgets")
    ap.add_argument("--sizes", help="ACTORSxPES,... (default 20x8,50x12,100x16,300x32,"
                    "1000x64)")
    ap.add_argument("--aggregate", default="max", choices=("max", "sum"))
    ap.add_argument("--budget", type=int, help="evaluations per heuristic (default 2000000)")
    ap.add_argument("--time-limit", type=float, help="of exact, seconds (default 60)")
    ap.add_argument("--strategies", help="comma-separated (default all)")
    ap.add_argument("--reference", default="", help="strategies run with 10x the budget")
    ap.add_argument("--exact-variables", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=0, help="of the heuristics")
    ap.add_argument("--instance-seed", type=int, default=None,
                    help="seed of the instances (default: their index)")
    args = ap.parse_args(argv)
    if args.quick:
        sizes = [(20, 8), (50, 12)]
        args.budget = args.budget or 20_000
        args.time_limit = args.time_limit or 2.0
    else:
        sizes = list(SIZES)
        args.budget = args.budget or 2_000_000
        args.time_limit = args.time_limit or 60.0
    if args.sizes:
        sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    strategies = args.strategies.split(",") if args.strategies else list(STRATEGIES)
    reference = [s for s in args.reference.split(",") if s]
    out = {"load_average": list(os.getloadavg()), "cpus": os.cpu_count(),
           "budget": args.budget, "time_limit": args.time_limit, "instances": []}
    for i, (n, P) in enumerate(sizes):
        seed = i if args.instance_seed is None else args.instance_seed
        out["instances"].append(bench_instance(n, P, seed, args, strategies, reference))
    out["load_average_end"] = list(os.getloadavg())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
