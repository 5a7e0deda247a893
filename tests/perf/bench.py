"""Benchmarks of SPEC §11 (a script, not a timed test): prints one JSON object.

    python tests/perf/bench.py [--quick]

- ``sum``/``max``: mapping evaluations per second of the batch evaluator against a
  plain-Python loop over dicts (precomputed per-actor/per-channel cost dicts and routes,
  one mapping at a time), for a 20-actor, 30-channel graph on an 8-PE, 3-CN MoA;
- ``schedule``/``period``: mapping evaluations per second of the batch evaluator for the
  timed aggregations (list-scheduled makespan, static-order period) on the same problem,
  against the reference evaluator one mapping at a time;
- ``single_eval_us``: one mapping through the public API
  (:func:`mapping.evaluation.batch.evaluate_value`, compiled tables cached on the problem);
  ``reference_eval_us``: the reference :func:`mapping.evaluation.reference.evaluate`;
- ``max_paths``: for ``max`` at 8, 16 and 64 PEs, evaluations per second of the group
  tables (``groups``) and of the generic path (``tables``), and the path the evaluator
  picks by itself (``picked``), which should be the faster one;
- ``repetition_10k_s``: repetition vector and activity of a 10,000-actor graph;
- ``parse_10k_s``: parsing a 10,000-actor ``.sdf`` text;
- ``--scaling``: only ``sum`` and ``max`` by actors (20, 100, 1,000) and PEs (8, 16, 64),
  evaluations per second and the ratio to the plain-Python loop;
- ``--base COMMIT``: the same measurements of this tree and of the code of ``COMMIT``
  (``git archive``, run in a child with that code first on the path) in one run, and
  ``speedup``: per measurement, this tree's speed over the other's (rates new/old,
  times old/new; above 1: faster now), each code's best of ``--repeat`` alternated
  runs, and ``median_speedup`` the same of each code's median run (the spread of the
  two says how much the load moved the numbers).  With ``--fresh`` each part
  (``--part``: eval, timed, max_paths, single, repetition, parse) runs in a process of
  its own: in one long process the speed of a path depends on what ran before it (the
  allocator's state; ``max_paths.64.tables``, whose code is the same in 9fa9fb0 and
  now, read 0.78-0.82 of 9fa9fb0 after the other parts on a quiet machine and 1.1 when
  measured first).

Times are CPU seconds of the process (``time.process_time``), rates per CPU second.

One core: BLAS/OpenMP threads are limited to one before numpy is imported.
"""
from __future__ import annotations

import one_core  # noqa: F401  (first: one thread before numpy loads)

import argparse  # noqa: E402
import os  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from moa import Architecture, CostSpec  # noqa: E402
from dsl.mappings import Mapping  # noqa: E402
try:
    from mapping.evaluation.batch import BatchEvaluator, evaluate_value  # noqa: E402
    from mapping.evaluation.reference import evaluate  # noqa: E402
    from mapping.semantics.problem import bind_problem  # noqa: E402
except ImportError:               # a commit before the layout by topic (``--base``)
    from mapping.batch import BatchEvaluator, evaluate_value  # noqa: E402
    from mapping.evaluation import evaluate  # noqa: E402
    from mapping.problem import bind_problem  # noqa: E402
from moc import SDFGraph, activity, repetition_vector  # noqa: E402
from search_problems import bench_arch, random_app  # noqa: E402


def best_time(fn, repeat):
    """The least CPU seconds of ``repeat`` calls of ``fn`` (this process, one thread:
    other processes on a shared machine slow the wall clock, far less the CPU time)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def python_baseline(problem, ev, aggregate):
    """An honest plain-Python evaluator: dicts of precomputed costs, routes per PE pair."""
    actors, pes, cns = ev.actors, ev.pes, ev.cns
    tables = getattr(ev, "tables", ev)          # the base commit had no CostTables
    proc = {a: {p: float(tables.proc[i, j]) for j, p in enumerate(pes)}
            for i, a in enumerate(actors)}
    chans = [(problem.app.channels[c].src, problem.app.channels[c].dst,
              {k: float(tables.comm[i, j]) for j, k in enumerate(cns)})
             for i, c in enumerate(ev.channels)]
    routes = {}
    P = len(pes)
    for s, ps in enumerate(pes):
        for d, pd in enumerate(pes):
            routes[(ps, pd)] = tuple(cns[k] for k in np.flatnonzero(tables.route[s * P + d]))
    lam = ev.lambda_

    def one_sum(m):
        total = 0.0
        for a, p in m.items():
            total += proc[a][p]
        for src, dst, cost in chans:
            for k in routes[(m[src], m[dst])]:
                total += lam * cost[k]
        return total

    def one_max(m):
        pe = dict.fromkeys(pes, 0.0)
        cn = dict.fromkeys(cns, 0.0)
        for a, p in m.items():
            pe[p] += proc[a][p]
        for src, dst, cost in chans:
            for k in routes[(m[src], m[dst])]:
                cn[k] += cost[k]
        return max(max(pe.values()), lam * max(cn.values()))

    return one_sum if aggregate == "sum" else one_max


def bench_eval(problem, aggregate, n_batch, n_python, repeat):
    ev = BatchEvaluator(problem, "time", aggregate)
    rng = np.random.default_rng(0)
    X = rng.integers(0, ev.n_pes, (n_batch, ev.n_actors)).astype(np.int32)
    ev.evaluate(X[:1000])
    t_batch = best_time(lambda: ev.evaluate(X), repeat)
    one = python_baseline(problem, ev, aggregate)
    dicts = [ev.decode(row) for row in X[:n_python]]
    values = [one(m) for m in dicts]
    np.testing.assert_allclose(values, ev.evaluate(X[:n_python]), rtol=1e-9)
    t_py = best_time(lambda: [one(m) for m in dicts], repeat)
    batch_rate, py_rate = n_batch / t_batch, n_python / t_py
    return {"batch_evals_per_s": round(batch_rate), "python_evals_per_s": round(py_rate),
            "ratio": round(batch_rate / py_rate, 1)}


def bench_timed(problem, n_batch, repeat):
    """``schedule`` and ``period``: mappings per second of the batch evaluator, and of the
    reference evaluator one mapping at a time (the same code with ``N = 1``)."""
    out = {}
    X = np.random.default_rng(0).integers(0, len(problem.arch.pes),
                                          (n_batch, len(problem.app.actors))).astype(np.int32)
    for aggregate in ("schedule", "period"):
        ev = BatchEvaluator(problem, "time", aggregate)
        ev.evaluate(X[:100])
        t_batch = best_time(lambda: ev.evaluate(X), repeat)
        mappings = [ev.to_mapping(row) for row in X[:200]]
        ref = [evaluate(problem.app, problem.arch, m, "time", aggregate, problem=problem).value
               for m in mappings]
        np.testing.assert_allclose(ref, ev.evaluate(X[:200]), rtol=1e-9)
        t_ref = best_time(lambda: [evaluate(problem.app, problem.arch, m, "time", aggregate,
                                            problem=problem) for m in mappings], 1)
        batch_rate, ref_rate = n_batch / t_batch, len(mappings) / t_ref
        out[aggregate] = {"batch_evals_per_s": round(batch_rate),
                          "reference_evals_per_s": round(ref_rate),
                          "ratio": round(batch_rate / ref_rate, 1)}
    return out


def bench_single(problem, n):
    arch_pes = problem.arch.pes
    m = Mapping("m", {a: arch_pes[(i * 3) % len(arch_pes)]
                      for i, a in enumerate(problem.app.actors)})
    evaluate_value(problem, m)
    t = best_time(lambda: [evaluate_value(problem, m) for _ in range(n)], 3) / n
    r = best_time(lambda: [evaluate(problem.app, problem.arch, m, problem=problem)
                           for _ in range(max(50, n // 50))], 3) / max(50, n // 50)
    return t * 1e6, r * 1e6


def wide_arch(n_pes):
    """``n_pes`` PEs of two kinds behind three CNs, as the 8-PE benchmark board."""
    a = Architecture(f"wide{n_pes}")
    lsla = lambda alpha, beta=0.0: CostSpec("lsla", {"alpha": alpha, "beta": beta})  # noqa: E731
    a.add_type("A7", costs={"time": lsla(2.0e-9, 1e-6)})
    a.add_type("A15", costs={"time": lsla(0.7e-9, 1e-6)})
    a.add_cn("l2_little", costs={"time": lsla(5e-11, 1e-7)})
    a.add_cn("cci", costs={"time": lsla(1e-10, 2e-6)})
    a.add_cn("l2_big", costs={"time": lsla(4e-11, 1e-7)})
    for i in range(n_pes):
        kind = ("little", "A7", "l2_little") if i % 2 == 0 else ("big", "A15", "l2_big")
        a.add_pe(f"{kind[0]}[{i}]", type_name=kind[1], array=(kind[0], i))
        a.add_link(f"{kind[0]}[{i}]", kind[2])
    a.add_link("l2_little", "cci")
    a.add_link("l2_big", "cci")
    return a


def bench_max_paths(n_batch, repeat, sizes=(8, 16, 64)):
    """``max`` through the group tables and through the generic path, per PE count."""
    out = {}
    for P in sizes:
        problem = bind_problem(random_app(20, 30, seed=1), bench_arch() if P == 8 else wide_arch(P))
        X = np.random.default_rng(0).integers(0, P, (n_batch, 20)).astype(np.int32)
        row = {}
        try:
            paths = {"groups": BatchEvaluator(problem, "time", "max", max_plan=True),
                     "tables": BatchEvaluator(problem, "time", "max", max_plan=False)}
        except TypeError:                       # the base commit: one path only
            paths = {"default": BatchEvaluator(problem, "time", "max")}
        for name, ev in paths.items():
            ev.evaluate(X[:1000])
            row[name] = round(n_batch / best_time(lambda: ev.evaluate(X), repeat))
        auto = BatchEvaluator(problem, "time", "max")
        row["picked"] = getattr(auto, "plan", "default")
        out[str(P)] = row
    return out


def bench_scaling(n_batch, repeat, actors=(20, 100, 1000), pes=(8, 16, 64)):
    """Batch evaluations per second of ``sum`` and ``max`` by graph and platform size
    (1.5 channels per actor; ``n_batch`` mappings scaled down by the actor count), with
    the plain-Python baseline's rate for the ratio."""
    out = {}
    for A in actors:
        for P in pes:
            problem = bind_problem(random_app(A, A * 3 // 2, seed=1),
                                   bench_arch() if P == 8 else wide_arch(P))
            n = max(2000, n_batch * 20 // A)
            X = np.random.default_rng(0).integers(0, P, (n, A)).astype(np.int32)
            row = {}
            for agg in ("sum", "max"):
                ev = BatchEvaluator(problem, "time", agg)
                ev.evaluate(X[:100])
                batch = n / best_time(lambda: ev.evaluate(X), repeat)
                one = python_baseline(problem, ev, agg)
                maps = [dict(zip(ev.actors, (ev.pes[j] for j in x))) for x in X[:2000]]
                python = len(maps) / best_time(lambda: [one(m) for m in maps], repeat)
                row[agg] = {"batch_evals_per_s": round(batch),
                            "ratio": round(batch / python, 1)}
            out[f"{A}x{P}"] = row
    return out


def big_graph(n):
    g = SDFGraph("big")
    for i in range(n):
        g.add_actor(f"a{i}", quanta=1 + i % 7)
    rng = np.random.default_rng(0)
    for i in range(1, n):
        j = int(rng.integers(max(0, i - 10), i))
        g.add_channel(f"a{j}", f"a{i}", f"c{i}", prod=1 + i % 3, cons=1 + i % 3, size=4)
    return g


def big_sdf_text(n):
    lines = ["sdf big {", "    param S = 64"]
    for i in range(n):
        lines.append(f"    actor a{i} [quanta = S * {1 + i % 7}, gamma = 2]")
    for i in range(1, n):
        lines.append(f"    a{i - 1} -> a{i} [prod = {1 + i % 3}, cons = {1 + i % 3}, size = 4]")
    lines.append("}")
    return "\n".join(lines) + "\n"


#: the measurements, in the order one process runs them
PARTS = ("eval", "timed", "max_paths", "single", "repetition", "parse")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (under 30 s)")
    ap.add_argument("--scaling", action="store_true",
                    help="only the table by actors (20, 100, 1000) and PEs (8, 16, 64)")
    ap.add_argument("--base", help="compare with the code of this commit (e.g. 9fa9fb0)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="with --base: runs of each code, alternated; the best counts")
    ap.add_argument("--part", action="append", choices=PARTS,
                    help="measure only this part (repeatable; default: all)")
    ap.add_argument("--fresh", action="store_true",
                    help="with --base: each part in a fresh process of its own, so that "
                         "what a part allocates does not move the next one's numbers")
    args = ap.parse_args(argv)
    if args.base:
        compare(args)
        return
    if args.scaling:
        print(json.dumps({"load": [round(x, 2) for x in os.getloadavg()],
                          "scaling": bench_scaling(200_000, 2)}))
        return
    n_batch, n_python, repeat = (200_000, 10_000, 5) if args.quick else (2_000_000, 50_000, 3)
    parts = args.part or PARTS
    problem = bind_problem(random_app(20, 30, seed=1), bench_arch())
    out = {}
    if "eval" in parts:
        out["sum"] = bench_eval(problem, "sum", n_batch, n_python, repeat)
        out["max"] = bench_eval(problem, "max", n_batch, n_python, repeat)
    if "timed" in parts:
        out.update(bench_timed(problem, n_batch // 10, repeat))
    if "max_paths" in parts:
        out["max_paths"] = bench_max_paths(n_batch // 4, repeat)
    if "single" in parts:
        single, reference = bench_single(problem, 2000 if args.quick else 20000)
        out["single_eval_us"] = round(single, 2)
        out["reference_eval_us"] = round(reference, 1)
    if "repetition" in parts:
        g = big_graph(10_000)

        def analyse():
            bound = g.bind()
            activity(bound, repetition_vector(bound))
        out["repetition_10k_s"] = round(best_time(analyse, repeat), 4)
    if "parse" in parts:
        try:
            from dsl import parse_sdf
        except ImportError:
            out["parse_10k_s"] = None
        else:
            text = big_sdf_text(10_000)
            out["parse_10k_s"] = round(best_time(lambda: parse_sdf(text, "big.sdf"), 1), 3)
    print(json.dumps(out))


def _numbers(doc, prefix=""):
    """``{dotted key: number}`` of a nested result."""
    out = {}
    for k, v in doc.items():
        if isinstance(v, dict):
            out.update(_numbers(v, f"{prefix}{k}."))
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and k != "ratio":
            out[f"{prefix}{k}"] = v
    return out


def compare(args) -> None:
    """This tree against ``args.base`` in one run (see the module doc)."""
    import subprocess
    import sys
    import tempfile
    from pathlib import Path
    from previous import extract
    flags = ["--quick"] if args.quick else []
    load = os.getloadavg()[0]
    runs: dict[str, dict[str, list]] = {"old": {}, "new": {}}
    with tempfile.TemporaryDirectory() as tmp:
        base = extract(args.base, Path(tmp))
        groups = [["--part", p] for p in PARTS] if args.fresh else [[]]
        for _ in range(args.repeat):         # alternated: both see the same load
            for part in groups:
                for name, code in (("old", base), ("new", one_core.ROOT)):
                    proc = subprocess.run([sys.executable, __file__, *flags, *part],
                                          env=dict(os.environ, MAPEVAL_CODE=str(code)),
                                          capture_output=True, text=True, check=True)
                    doc = json.loads(proc.stdout.strip().splitlines()[-1])
                    for key, v in _numbers(doc).items():
                        runs[name].setdefault(key, []).append(v)

    def timed(key):
        return key.endswith(("_s", "_us"))

    def best(values, key):
        return min(values) if timed(key) else max(values)

    def ratio(was, now, key):
        return round(was / now if timed(key) else now / was, 3) if was and now else None
    old = {k: best(v, k) for k, v in runs["old"].items()}
    new = {k: best(v, k) for k, v in runs["new"].items()}
    speedup, median_speedup = {}, {}
    for key in new:
        if key in old and ratio(old[key], new[key], key) is not None:
            speedup[key] = ratio(old[key], new[key], key)
            median_speedup[key] = ratio(float(np.median(runs["old"][key])),
                                        float(np.median(runs["new"][key])), key)
    print(json.dumps({"base": args.base, "load": [load, os.getloadavg()[0]],
                      "repeat": args.repeat, "fresh": args.fresh, "speedup": speedup,
                      "median_speedup": median_speedup, "old": old, "new": new}))


if __name__ == "__main__":
    main()
