"""Distributed search speed against local (a script, not a timed test): prints one JSON
object.

    python tests/perf/bench_distributed.py [--budget N] [--repeat N] [--strategy S]

The 20-actor, 30-channel benchmark graph on the 8-PE board (``tests/search_problems.py``,
as in ``bench.py``), one heuristic with a fixed seed, run locally and on local Dask
clusters of 1 and 2 single-thread worker processes, in turns, ``--repeat`` times (the
best of each is kept: the machine may be shared).  Per core means total mappings per
second divided by the cores in use, min(workers, cores); ``cpu_per_s`` divides by the
CPU seconds the shards used instead, which the machine's load does not change, and
``cores_got`` is those CPU seconds over the wall time: the cores the search really had.  Each
worker's own speed is listed too, the CPU seconds of the client's process (where the
scheduler of a local cluster runs), and the load average before and after.
"""
from __future__ import annotations

import one_core  # noqa: F401  (first: one thread before numpy loads)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402


def measure(problem, args, executor=None):
    from mapping.search import search
    cpu, client_cpu = time.thread_time(), time.process_time()
    t = time.perf_counter()
    r = search(problem, "time", args.aggregate, strategy=args.strategy, budget=args.budget,
               seed=args.seed, executor=executor)
    wall = time.perf_counter() - t
    out = {"value": r.value, "evaluations": r.evaluations, "seconds": round(wall, 3),
           "per_s": round(r.evaluations / wall)}
    if executor is None:
        busy = time.thread_time() - cpu
    else:
        workers = executor.outcome.workers
        busy = sum(w["cpu_seconds"] for w in workers.values())
        out["workers"] = {k: {"shards": w["shards"], "per_s": w["per_s"]}
                          for k, w in workers.items()}
        # the client's process (scheduler included) while it waits for the shards
        out["client_cpu_s"] = round(time.process_time() - client_cpu, 3)
    out["cpu_per_s"] = round(r.evaluations / busy)
    # the cores the search actually got from a shared machine
    out["cores_got"] = round(busy / wall, 2)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, default=8_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--strategy", default="anneal")
    ap.add_argument("--aggregate", default="max")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    from mapping.semantics.problem import bind_problem
    from mapping.search.distributed import DaskExecutor
    from search_problems import bench_arch, random_app

    cores = os.cpu_count() or 1
    problem = bind_problem(random_app(20, 30, seed=0), bench_arch())
    load_before = os.getloadavg()
    runs: dict[str, list] = {"local": [], "workers_1": [], "workers_2": []}
    with DaskExecutor(workers=1) as one, DaskExecutor(workers=2) as two:
        for _ in range(args.repeat):
            runs["local"].append(measure(problem, args))
            runs["workers_1"].append(measure(problem, args, one))
            runs["workers_2"].append(measure(problem, args, two))
    best = {k: max(v, key=lambda r: r["per_s"]) for k, v in runs.items()}
    local = best["local"]
    for key, n in (("local", 1), ("workers_1", 1), ("workers_2", 2)):
        b = best[key]
        b["cores_used"] = min(n, cores)
        b["per_core"] = round(b["per_s"] / b["cores_used"])
        b["per_core_vs_local"] = round(b["per_core"] / local["per_s"], 3)
        b["cpu_per_s_vs_local"] = round(b["cpu_per_s"] / local["cpu_per_s"], 3)
        b["same_result_as_local"] = b["value"] == local["value"]
        b["all_per_s"] = [r["per_s"] for r in runs[key]]
    print(json.dumps({"cores": cores, "load_average_before": [round(x, 2) for x in load_before],
                      "load_average_after": [round(x, 2) for x in os.getloadavg()],
                      "problem": "20 actors, 30 channels, 8 PEs", "strategy": args.strategy,
                      "aggregate": args.aggregate, "budget": args.budget,
                      "repeat": args.repeat, **best}, indent=1))


if __name__ == "__main__":
    main()
