"""Record what ``moc.timing.analyse`` (the default: throughput, latency, buffers and the
first iteration's schedule) answered before issue 33, so that tests can hold the new
default to the same numbers wherever the old one answered.

    mkdir /tmp/before && git archive d8d4169 | tar -x -C /tmp/before
    PYTHONPATH=$PWD python tests/oracle_before/record.py /tmp/before d8d4169

Run from the repository root.  Each graph is analysed by the old code in its own process
(``timeout`` seconds, default 60); ``tests/data/analyse_before.json`` gets, per graph,
the exact throughput and latency, the buffers (``"inf"`` unbounded, null unexplored) and
a SHA-256 of the schedule (:func:`schedule_digest`), or the error or timeout that
stopped it.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "analyse_before.json"
SHARED = ROOT / ".." / "shared" / "data" / "graphs"
GRAPHS = (sorted((ROOT / "tests" / "data" / "sdf3_examples").glob("*.sdf"))
          + sorted((ROOT / "tests" / "data" / "sdf3_oracle").glob("*.sdf"))
          + sorted((ROOT / "examples" / "timing").glob("*.sdf"))
          + sorted(SHARED.glob("*.xml")))

RUN = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import dsl
from moc.timing import analyse
path = sys.argv[2]
graph = dsl.read_sdf3(path) if path.endswith(".xml") else dsl.load_sdf(path)[0]
start = time.perf_counter()
try:
    result = analyse(graph)
except Exception as exc:
    print(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:300],
                      "seconds": round(time.perf_counter() - start, 2)}))
else:
    print(json.dumps({"throughput": str(result.throughput), "period": str(result.period),
                      "latency": str(result.latency),
                      "buffers": {c: None if n is None else str(n)
                                  for c, n in result.buffers.items()},
                      "schedule": [[a, [[str(f.start), str(f.end)] for f in fs]]
                                   for a, fs in result.schedule.items()],
                      "seconds": round(time.perf_counter() - start, 2)}))
"""


def schedule_digest(schedule) -> str:
    """SHA-256 of ``[[actor, [[start, end], ...]], ...]`` (exact values as text) in
    compact JSON."""
    return hashlib.sha256(json.dumps(schedule, separators=(",", ":")).encode()).hexdigest()


def main(argv):
    before = Path(argv[1])
    commit = subprocess.run(["git", "rev-parse", argv[2]], capture_output=True, text=True,
                            check=True).stdout.strip()
    timeout = float(argv[3]) if len(argv) > 3 else 60
    records = []
    for path in GRAPHS:
        shared = path.resolve().is_relative_to(SHARED.resolve())
        relative = (path.resolve().relative_to(SHARED.resolve()) if shared
                    else path.relative_to(ROOT)).as_posix()
        base = "shared" if shared else "repo"
        try:
            out = subprocess.run([sys.executable, "-c", RUN, str(before), str(path)],
                                 capture_output=True, text=True, timeout=timeout).stdout
            record = json.loads(out.strip().splitlines()[-1])
        except subprocess.TimeoutExpired:
            record = {"error": f"no answer within {timeout:g} s"}
        if "schedule" in record:
            record["schedule"] = schedule_digest(record["schedule"])
        records.append({"file": relative, "base": base, **record})
        print(relative, record.get("error") or record["throughput"])
    DATA.write_text(json.dumps({
        "before": {"commit": commit, "date": datetime.date.today().isoformat(),
                   "program": "moc.timing.analyse (the default of 'mapeval analyse') "
                              "before issue 33, one process per graph",
                   "shared": "paths relative to ../shared/data/graphs/",
                   "timeout_seconds": timeout},
        "graphs": records}, indent=1) + "\n")
    print(f"wrote {DATA.relative_to(ROOT)}: {len(records)} graphs")


if __name__ == "__main__":
    main(sys.argv)
