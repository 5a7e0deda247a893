"""Candidate moves per second of the local searches (issue 13; a script, not a timed
test): prints one JSON object.

    python tests/perf/moves_bench.py [--quick] [--budget N]

On the 20-actor, 30-channel graph on the 8-PE, 3-CN board of ``tests/perf/bench.py``,
for ``greedy``, ``tabu`` and ``anneal`` under ``sum`` and ``max``: one search with the
budget (default 2,000,000 evaluations, each candidate move one evaluation), its value,
wall-clock and CPU seconds, and candidate moves per second of each (CPU time is the
figure to read on a shared machine: it does not count the time other processes hold the
cores).  ``evaluator`` gives the batch evaluator's own rate on random mappings, the
ceiling a search without delta evaluation could reach; ``load`` the machine's load
averages (1, 5, 15 minutes) at the start and the end.

One core: BLAS/OpenMP threads are limited to one before numpy is imported.
"""
from __future__ import annotations

import one_core  # noqa: F401  (first: one thread before numpy loads)

import argparse  # noqa: E402
import os  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from mapping.evaluation.batch import BatchEvaluator  # noqa: E402
from mapping.semantics.problem import bind_problem  # noqa: E402
from mapping.search import search  # noqa: E402
from search_problems import bench_arch, random_app  # noqa: E402

STRATEGIES = ("greedy", "tabu", "anneal")


def run(problem, strategy, aggregate, budget, seed=0):
    wall, cpu = time.perf_counter(), time.process_time()
    res = search(problem, "time", aggregate, strategy=strategy, budget=budget, seed=seed)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"value": res.value, "evaluations": res.evaluations, "seconds": round(wall, 3),
            "cpu_seconds": round(cpu, 3), "moves_per_s": round(res.evaluations / wall),
            "moves_per_cpu_s": round(res.evaluations / cpu)}


def evaluator_rate(problem, aggregate, n):
    ev = BatchEvaluator(problem, "time", aggregate)
    X = np.random.default_rng(0).integers(0, ev.n_pes, (n, ev.n_actors))
    ev.evaluate(X[:1000])
    cpu = time.process_time()
    ev.evaluate(X)
    return round(n / (time.process_time() - cpu))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a budget of 200,000 (seconds)")
    ap.add_argument("--budget", type=int, default=None, help="evaluations per search")
    args = ap.parse_args(argv)
    budget = args.budget or (200_000 if args.quick else 2_000_000)
    problem = bind_problem(random_app(20, 30, seed=1), bench_arch())
    out = {"problem": "20 actors, 30 channels, 8 PEs, 3 CNs", "budget": budget,
           "load": [round(x, 2) for x in os.getloadavg()]}
    for aggregate in ("sum", "max"):
        out[aggregate] = {s: run(problem, s, aggregate, budget) for s in STRATEGIES}
        out[aggregate]["evaluator_per_cpu_s"] = evaluator_rate(problem, aggregate,
                                                               budget // 4)
    out["load_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
