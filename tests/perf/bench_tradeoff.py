"""The storage-throughput trade-off (issue 33, item 3): prints JSON of the in-process CPU
and wall seconds of ``moc.tradeoff.tradeoff`` on SDF3's example graphs, by both ways of
timing a distribution, next to SDF3's own time from ``tests/data/sdf3_buffersize.json``
(a measurement, not a test; note the load: ``uptime``).

    PYTHONPATH=$PWD python tests/perf/bench_tradeoff.py [--budget 60] [GRAPH ...]

Ratios are against the state-space method in the same process.
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


def measure(graph, method, budget):
    from moc.tradeoff import tradeoff
    cpu, wall = time.process_time(), time.perf_counter()
    result = tradeoff(graph, method=method, budget=budget)
    return {"cpu": round(time.process_time() - cpu, 3),
            "wall": round(time.perf_counter() - wall, 3), "points": len(result.points),
            "explored": result.explored, "complete": result.complete,
            "proven_size": result.proven_size}


def main() -> None:
    import dsl
    parser = argparse.ArgumentParser()
    parser.add_argument("graphs", nargs="*", default=["samplerate", "modem", "h263encoder",
                                                      "satellite", "h263decoder"])
    parser.add_argument("--budget", type=float, default=60.0)
    args = parser.parse_args()
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
