"""Rows at scale over a few workloads (issue 39): prints one JSON object.

    python tests/perf/bench_workloads.py [--rows N] [--workloads K] [--base COMMIT]

``mapeval fidelity`` of ``--rows`` (default 200,000) generated mapping rows whose
``.sdf`` parameters W, H, D take ``--workloads`` (default 6) distinct sets of values
(``workload_study.py``), in a fresh process with this tree's code and with the code of
``--base`` (default 9fa9fb0, main before issue 39, which bound the application about
once per row): CPU seconds, wall seconds and peak memory of each child
(``os.wait4``), the speedup in CPU time, and whether both print the same figures.
"""
from __future__ import annotations

import one_core  # noqa: F401  (first: one thread before numpy loads)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from previous import BASE, cli_module, extract  # noqa: E402
from workload_study import write_workload_study  # noqa: E402


def run(code: Path, files: dict) -> dict:
    """One ``mapeval fidelity`` in a fresh process, measured alone."""
    argv = [sys.executable, "-m", cli_module(code), "fidelity", str(files["sdf"]),
            str(files["moa"]), str(files["csv"]), "--actor-column", "pe_{actor}",
            "--measured", "time_s", "--json"]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t = time.perf_counter()
        proc = subprocess.Popen(argv, env=dict(os.environ, PYTHONPATH=str(code)),
                                cwd=str(code), stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)      # this child's own resources
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode:
            raise SystemExit(f"mapeval failed ({code}): {err.read()[-2000:]}")
        doc = json.loads(out.read())
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "wall_s": wall,
            "peak_mb": usage.ru_maxrss / 1024, "tau": doc["tau"], "fidelity": doc["fidelity"]}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--workloads", type=int, default=6)
    p.add_argument("--base", default=BASE)
    args = p.parse_args()
    out = {"load": os.getloadavg()[0], "rows": args.rows, "workloads": args.workloads,
           "base": args.base}
    with tempfile.TemporaryDirectory() as tmp:
        files = write_workload_study(Path(tmp) / "study", args.rows, args.workloads)
        base = extract(args.base, Path(tmp))
        out["new"] = run(one_core.ROOT, files)
        out["old"] = run(base, files)
    out["speedup"] = out["old"]["cpu_s"] / out["new"]["cpu_s"]
    out["same_figures"] = (out["old"]["tau"], out["old"]["fidelity"]) == \
        (out["new"]["tau"], out["new"]["fidelity"])
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
