"""The set-partitioning bound (:mod:`mapping.search.partition_bound`) alone within a
fixed time (by default 48 s, its share of a 120 s ``exact`` run), this tree against
earlier commits in the same run: the bound reached, its seconds, the column generation's
rounds (master programs solved), exact pricing programs and their seconds, and each
Lagrangian bound ``L(T)`` with the second it was computed at.

Every tree bounds the same instance between the same values: ``upper`` the portfolio's
mapping (a fixed budget and seed) and ``lower`` the higher of the pair bound and the
cluster relaxation's bound within its share of ``--relax-limit`` seconds, both computed
once by this tree.  Instances: ``NxP`` generated as ``tests/perf/bench_exact_max.py``
does (``45x12`` seed 0 by default, ``--seeds``), or the stored ones by name.  Prints one
JSON document with the load average.

    python tests/perf/bench_partition_bound.py --instances 45x12,60x12,a50_p12_s4 \\
        --budget 48 --base 5b13f5f --variant plain:master.ALPHA=0
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(HERE.parent), str(HERE)]

#: the child: the bound of one instance in one tree, its exact pricing and Lagrangian
#: bounds logged by wrapping the functions both trees have
CHILD = r"""
import json, sys, time
import dsl
from mapping.semantics.problem import bind_problem
from mapping.search.engine import prepare
from mapping.search import partition_bound
from mapping.search.partition_bound import master, pricing
sdf, moa, upper, lower, budget = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:6])
for name, value in json.loads(sys.argv[6]).items():
    module, const = name.split(".")
    setattr(sys.modules["mapping.search.partition_bound." + module], const, value)
setup = prepare(bind_problem(dsl.load_sdf(sdf)[0], dsl.load_moa(moa)[0]), "time", "max")
ev, allowed = setup.objectives.evaluators[0], setup.space.allowed
log = {"rounds": 0, "exact": 0, "exact_seconds": 0.0, "master_seconds": 0.0,
       "local": 0, "local_seconds": 0.0, "lagrangian": []}
began = time.monotonic()
solve, lagr = master.Master.solve, master._lagrangian
local = master._local_round
def counted(self):
    log["rounds"] += 1
    t = time.monotonic()
    got = solve(self)
    log["master_seconds"] += time.monotonic() - t
    return got
def searched(*args, **kw):
    t = time.monotonic()
    got = local(*args, **kw)
    log["local"] += 1
    log["local_seconds"] += time.monotonic() - t
    return got
def logged(tb, pi, mins, sides):
    got = lagr(tb, pi, mins, sides)
    log["lagrangian"].append((round(time.monotonic() - began, 2), float(f"{got:.5g}")))
    return got
def timed(f):
    def run(self, *args):
        t = time.monotonic()
        try:
            return f(self, *args)
        finally:
            log["exact"] += 1
            log["exact_seconds"] += time.monotonic() - t
    return run
master.Master.solve, master._lagrangian = counted, logged
master._local_round = searched
pricing.Problem.exact = timed(pricing.Problem.exact)
pricing.SideProblem.exact = timed(pricing.SideProblem.exact)
res = partition_bound.bound(ev, allowed, upper, lower, budget)
print(json.dumps(dict(log, value=res.value, seconds=round(res.seconds, 2),
                      columns=res.columns,
                      trials=[[None if x is None else float(f"{x:.5g}") for x in t]
                              for t in res.trials],
                      **{k: round(log[k], 2) for k in log if k.endswith("seconds")})))
"""


def instance(tmp: Path, name: str, seed: int) -> tuple[Path, Path]:
    if "x" in name:
        from bench_exact_max import write_generated
        n, P = map(int, name.split("x"))
        return write_generated(tmp, n, P, seed)
    stem = ROOT / "tests" / "data" / "search_instances" / name
    return stem.with_suffix(".sdf"), stem.with_suffix(".moa")


def limits(files, relax_limit: float, budget: int) -> tuple[float, float]:
    """``(upper, lower)`` of the instance, by this tree."""
    import dsl
    import numpy as np
    from mapping.semantics.problem import bind_problem
    from mapping.search import exact
    from mapping.search.bounds import communication_bound
    from mapping.search.engine import prepare, search
    problem = bind_problem(dsl.load_sdf(files[0])[0], dsl.load_moa(files[1])[0])
    found = search(problem, "time", "max", strategy="portfolio", budget=budget, seed=0)
    setup = prepare(problem, "time", "max")
    space = setup.space
    row = np.array([space.pes.index(found.mapping[a]) for a in space.actors])
    relaxed = exact.cluster_floor(setup, relax_limit, incumbent=row)
    ev = setup.objectives.evaluators[0]
    lower = max(relaxed or 0.0, communication_bound(ev, setup.space.allowed))
    return float(found.value), float(lower)


def run(code: Path, files, upper: float, lower: float, budget: float,
        constants: dict) -> dict:
    argv = [sys.executable, "-c", CHILD, *map(str, files), repr(upper), repr(lower),
            repr(budget), json.dumps(constants)]
    began = time.perf_counter()
    proc = subprocess.run(argv, env=dict(os.environ, PYTHONPATH=str(code)),
                          capture_output=True, text=True, cwd=str(code))
    if proc.returncode != 0:
        return {"error": proc.stderr[-800:]}
    return dict(json.loads(proc.stdout), wall=round(time.perf_counter() - began, 2))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", default="45x12,60x12,80x16,a50_p12_s4")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--budget", type=float, default=48.0)
    ap.add_argument("--relax-limit", type=float, default=120.0)
    ap.add_argument("--start-budget", type=int, default=50_000)
    ap.add_argument("--base", default="", help="earlier commits (comma-separated)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:M.C=V,...",
                    help="this tree again with constants of the package's modules set "
                         "(e.g. 'plain:master.ALPHA=0'); repeatable")
    ap.add_argument("--limits-file", type=Path,
                    help="a JSON file of each instance's (upper, lower), read where it "
                         "has the instance, written otherwise")
    args = ap.parse_args(argv)
    from previous import extract
    report = {"load_average_before": os.getloadavg(), "budget": args.budget,
              "instances": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        trees = {"now": (ROOT, {})}
        for spec in args.variant:
            name, _, sets = spec.partition(":")
            trees[name] = (ROOT, {k: json.loads(v) for k, v in
                                  (item.split("=") for item in sets.split(",") if item)})
        for rev in filter(None, args.base.split(",")):
            (tmp / rev).mkdir()
            trees[f"before {rev}"] = (extract(rev, tmp / rev), {})
        known = json.loads(args.limits_file.read_text()) \
            if args.limits_file and args.limits_file.exists() else {}
        for name in filter(None, args.instances.split(",")):
            for seed in map(int, args.seeds.split(",")) if "x" in name else [None]:
                files = instance(tmp, name, seed or 0)
                key = name if seed is None else f"{name} seed {seed}"
                if key not in known:
                    known[key] = limits(files, args.relax_limit, args.start_budget)
                    if args.limits_file:
                        args.limits_file.write_text(json.dumps(known))
                upper, lower = known[key]
                row = report["instances"][key] = {"upper": upper, "lower": lower}
                for tree, (code, constants) in trees.items():
                    row[tree] = run(code, files, upper, lower, args.budget, constants)
                    got = row[tree]
                    print(key, tree, got.get("value"), got.get("seconds"),
                          got.get("rounds"), got.get("error", ""), file=sys.stderr,
                          flush=True)
                # each tree's bound over this tree's
                if row["now"].get("value"):
                    row["ratios"] = {t: row[t]["value"] / row["now"]["value"]
                                     for t in trees if t != "now" and row[t].get("value")}
    report["load_average_after"] = os.getloadavg()
    # the innermost lists on one line each
    print(re.sub(r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: "[" + " ".join(m.group(1).split()) + "]",
                 json.dumps(report, indent=1)))


if __name__ == "__main__":
    main()
