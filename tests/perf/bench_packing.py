"""The packing decision (:func:`mapping.search.packing.decide`: class assignment by
CP-SAT under dual feasible rows, each class's packing checked, cuts where it fails)
against CP-SAT on the whole packing (one Boolean per actor-PE pair, loads of alike PEs
ordered: the model of the packing bound tried in cb46952) on the same decisions, in
the same process, one worker each.

The decisions (issue 43's notes, ``tests/perf/bench_exact_max.py --comm 0.1``): 30 x 8
seed 1 at 3.1176e-5, 45 x 12 seeds 0 and 1 at 3.44e-5 and 3.4172e-5 (all infeasible),
and 80 x 16 seed 1 at 4.9567e-5 (undecided by CP-SAT in 50 deterministic seconds).
Prints one JSON document: per decision each side's outcome, wall seconds, process CPU
seconds and CP-SAT's deterministic seconds (summed over its solves), with the load
average, for the machine is shared.

    python tests/perf/bench_packing.py --limit 60
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(HERE.parent), str(HERE)]

import numpy as np  # noqa: E402

#: (n, P, seed, T) of the decisions
DECISIONS = ((30, 8, 1, 3.1176e-5), (45, 12, 0, 3.44e-5), (45, 12, 1, 3.4172e-5),
             (80, 16, 1, 4.9567e-5))


def tables(n, P, seed, comm):
    import dsl
    from bench_exact_max import write_generated
    from mapping.search.bounds import element_tables
    from mapping.search.engine import prepare
    from mapping.semantics.problem import bind_problem
    with tempfile.TemporaryDirectory() as tmp:
        sdf, moa = write_generated(Path(tmp), n, P, seed, comm)
        setup = prepare(bind_problem(dsl.load_sdf(sdf)[0], dsl.load_moa(moa)[0]), "time",
                        "max")
    return element_tables(setup.objectives.evaluators[0])[0], setup.space.allowed


def whole(w, usable, groups, C, limit):
    """CP-SAT on the whole packing: ``(outcome, deterministic seconds)``."""
    from ortools.sat.python import cp_model
    A, P = w.shape
    model = cp_model.CpModel()
    x = [[model.new_bool_var("") if usable[a, p] and w[a, p] <= C else None
          for p in range(P)] for a in range(A)]
    for xs in x:
        model.add_exactly_one([v for v in xs if v is not None])
    loads = [sum(int(w[a, p]) * x[a][p] for a in range(A) if x[a][p] is not None)
             for p in range(P)]
    for load in loads:
        model.add(load <= C)
    for members in groups:
        for prev, cur in zip(members[:-1], members[1:]):
            model.add(loads[prev] >= loads[cur])
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = limit
    status = solver.solve(model)
    outcome = {cp_model.INFEASIBLE: "infeasible", cp_model.FEASIBLE: "feasible",
               cp_model.OPTIMAL: "feasible"}.get(status, "unknown")
    return outcome, solver.deterministic_time


def timed(f, *args):
    wall, cpu = time.perf_counter(), time.process_time()
    got = f(*args)
    return got, round(time.perf_counter() - wall, 3), round(time.process_time() - cpu, 3)


def main(argv=None):
    from mapping.search import packing
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=float, default=60.0,
                    help="seconds for each decision on each side")
    ap.add_argument("--comm", type=float, default=0.1)
    args = ap.parse_args(argv)
    report = {"load_average_before": os.getloadavg(), "cpus": os.cpu_count(),
              "limit": args.limit, "decisions": {}}
    for n, P, seed, T in DECISIONS:
        own, allowed = tables(n, P, seed, args.comm)
        usable = allowed & np.isfinite(own)
        unit = T * packing.PRECISION
        w = packing.integer_sizes(own, usable, unit)
        C = packing.capacity(T, unit)
        groups = packing.classes(own, usable)
        (ours, _), wall, cpu = timed(packing.decide, w, usable, groups, C,
                                     time.time() + args.limit)
        (theirs, det), wall2, cpu2 = timed(whole, w, usable, groups, C, args.limit)
        row = {"T": T, "decide": {"outcome": ours, "wall": wall, "cpu": cpu},
               "cpsat_whole": {"outcome": theirs, "wall": wall2, "cpu": cpu2,
                               "deterministic": round(det, 3)}}
        if ours != "unknown" and theirs != "unknown" and ours != theirs:
            row["disagree"] = True
        row["speedup_cpu"] = round(cpu2 / cpu, 1) if cpu else None
        report["decisions"][f"{n}x{P}_s{seed}"] = row
        print(f"{n}x{P}_s{seed}", json.dumps(row), file=sys.stderr, flush=True)
    report["load_average_after"] = os.getloadavg()
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
