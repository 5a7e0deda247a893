"""The storage-throughput trade-off (issue 33, item 3): prints JSON of the in-process CPU
and wall seconds of ``moc.tradeoff.tradeoff`` on SDF3's example graphs, by both ways of
timing a distribution, next to SDF3's own time from ``tests/data/sdf3_buffersize.json``
(a measurement, not a test; note the load: ``uptime``).

    PYTHONPATH=$PWD python tests/perf/bench_tradeoff.py [--budget 60] [GRAPH ...]

Ratios are against the state-space method in the same process.

Issue 42, ``--reach``: per graph (default the two mp3 graphs SDF3 gives no front for, and
Kiter's BlackScholes and Echo under ``--csdf-order starts``), the largest throughput
found (a point of the front, or its top) against the maximal one, the seconds until it
was found, the points of the front and up to which size it is proven, for this tree and
for commit ``REACH_BASE`` (:mod:`previous`), each in a child process in the same run:

    PYTHONPATH=$PWD python tests/perf/bench_tradeoff.py --reach [--budget 60] [GRAPH ...]
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "tests" / "data" / "sdf3_examples"
SDF3 = json.loads((ROOT / "tests" / "data" / "sdf3_buffersize.json").read_text())
CSDF = ROOT / "tests" / "data" / "csdf"
#: main before issue 42's search for the top of the front and growth at a deadlock
REACH_BASE = "54ce135"
#: graph: (file, --csdf-order)
REACH = {"mp3playback": (EXAMPLES / "mp3playback.sdf", "ends"),
         "mp3decoder_block_parallelism": (EXAMPLES / "mp3decoder_block_parallelism.sdf",
                                          "ends"),
         "BlackScholes": (CSDF / "BlackScholes.sdf", "starts"),
         "Echo": (CSDF / "Echo.sdf", "starts")}


def measure(graph, method, budget):
    from moc.tradeoff import tradeoff
    cpu, wall = time.process_time(), time.perf_counter()
    result = tradeoff(graph, method=method, budget=budget)
    return {"cpu": round(time.process_time() - cpu, 3),
            "wall": round(time.perf_counter() - wall, 3), "points": len(result.points),
            "explored": result.explored, "complete": result.complete,
            "proven_size": result.proven_size}


def reach_child(path: str, order: str, budget: float) -> None:
    """In a child process (either tree): one trade-off, printing as JSON the largest
    throughput found and when (the front's steps and, where it exists, its top's,
    watched by wrapping their ``step``)."""
    import importlib
    import dsl
    t = importlib.import_module("moc.tradeoff")
    start, found = time.perf_counter(), {}

    def watch(cls, reached):
        step = cls.step

        def wrapped(self):
            done = step(self)
            value = reached(self)
            if value is not None and value > found.get("value", 0):
                found.update(value=value, seconds=round(time.perf_counter() - start, 2))
            return done
        cls.step = wrapped

    watch(t._Search, lambda s: s.best)
    if hasattr(t, "_Top"):
        watch(t._Top, lambda s: s.found.throughput if s.found else None)
    (graph,) = dsl.load_sdf(path)
    cpu = time.process_time()
    result = t.tradeoff(graph, budget=budget, order=order)
    top = getattr(result, "top", None)
    print(json.dumps({
        "reached": float(found.get("value", 0)), "max": float(result.max_throughput),
        "seconds_to_reached": found.get("seconds"),
        "reached_max": found.get("value", 0) >= result.max_throughput,
        "points": len(result.points), "complete": result.complete,
        "proven_size": result.proven_size, "explored": result.explored,
        "top_size": top.size if top else None,
        "top_least": getattr(result, "top_least", None),
        "wall": round(time.perf_counter() - start, 2),
        "cpu": round(time.process_time() - cpu, 2)}))


def reach(graphs, budget) -> None:
    import sys
    import tempfile
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from previous import child_cpu, extract
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = extract(REACH_BASE, Path(tmp))
        for name in graphs:
            path, order = REACH[name]
            row = {"csdf_order": order}
            for label, code in (("base", base), ("this", ROOT)):
                proc, _ = child_cpu([sys.executable, __file__, "--child", str(path), order,
                                     str(budget)], code)
                row[label] = json.loads(proc.stdout)
            rows[name] = row
    print(json.dumps({"load": os.getloadavg(), "budget": budget, "base": REACH_BASE,
                      "graphs": rows}, indent=1))


def main() -> None:
    import sys
    if sys.argv[1:2] == ["--child"]:
        path, order, budget = sys.argv[2:5]
        return reach_child(path, order, float(budget))
    import dsl
    parser = argparse.ArgumentParser()
    parser.add_argument("graphs", nargs="*")
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--reach", action="store_true",
                        help="issue 42: the throughput reached, against REACH_BASE")
    args = parser.parse_args()
    if args.reach:
        return reach(args.graphs or list(REACH), args.budget)
    args.graphs = args.graphs or ["samplerate", "modem", "h263encoder", "satellite",
                                  "h263decoder"]
    sdf3 = {Path(r["file"]).stem: r for r in SDF3["graphs"] if r["base"] == "sdf3"}
    rows = {}
    for name in args.graphs:
        (graph,) = dsl.load_sdf(EXAMPLES / f"{name}.sdf")
        row = {m: measure(graph, m, args.budget) for m in ("state-space", "kperiodic")}
        row["kperiodic_cpu_ratio"] = round(row["kperiodic"]["cpu"] /
                                           max(row["state-space"]["cpu"], 1e-6), 2)
        record = sdf3.get(name, {})
        row["sdf3"] = {"seconds": record.get("seconds"), "answered": record.get("answered")}
        rows[name] = row
    print(json.dumps({"load": os.getloadavg(), "budget": args.budget, "graphs": rows},
                     indent=1))


if __name__ == "__main__":
    main()
