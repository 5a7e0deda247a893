"""Rows at scale (issue 31): prints one JSON object.

    python tests/perf/bench_rows.py [--rows N] [--base COMMIT]

On ``--rows`` (default 200,000) generated per-element activity rows
(``fit_study.write_activity_study``: 8 cores, LSLA energy, stated ground truth, 5 %
noise), each in a fresh process (CPU seconds and peak memory from ``resource``):

- ``fidelity``: ``mapeval fidelity`` (tau, pairs ordered, Spearman, MAPE, R²);
- ``within``: ``fidelity --within config`` (6 groups);
- ``fit4``: ``mapeval fidelity --fit`` with 4 parameters (NNLS);
- ``fit4_nonlinear``: the same with ``--residuals relative`` (bounded non-linear least
  squares, 8 random starts).

Against the code of ``--base`` (default 9fa9fb0, main before issue 39; ``git archive`` into a temporary
directory) on ``--base-rows`` (default 20,000) rows, where it still finishes: the same
``fidelity`` run, and the ratio of the two per row.
"""
from __future__ import annotations

import one_core  # noqa: F401  (first: one thread before numpy loads)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from previous import BASE, cli_module  # noqa: E402

FREE = ["l0.energy.alpha", "b0.energy.alpha", "l1.energy.alpha", "b1.energy.alpha"]


def run(code: Path, files: dict, extra: list[str]) -> dict:
    """One ``mapeval fidelity`` in a fresh process: CPU s, wall s, peak RSS (MB)."""
    argv = [sys.executable, "-m", cli_module(code), "fidelity", str(files["moa"]),
            str(files["csv"]), "--measured", "energy_J", "--metric", "energy",
            "--quanta-column", "quanta_{element}", "--tokens-column", "tokens_{element}",
            "--json", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(argv, env=dict(os.environ, PYTHONPATH=str(code)), cwd=str(code),
                          capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"mapeval failed ({code}): {proc.stderr[-2000:]}")
    doc = json.loads(proc.stdout)
    return {"cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
            "wall_s": wall, "peak_mb": after.ru_maxrss / 1024,
            "tau": doc["tau"], "fidelity": doc["fidelity"],
            "fidelity_within": doc["fidelity_within"], "fitted": doc["fitted"]}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--base-rows", type=int, default=20_000)
    p.add_argument("--base", default=BASE)
    args = p.parse_args()
    sys.path.insert(0, str(HERE))
    import fit_study

    out = {"load": os.getloadavg()[0], "rows": args.rows, "base": args.base,
           "note": "peak_mb is the largest child so far (RUSAGE_CHILDREN)"}
    with tempfile.TemporaryDirectory() as tmp:
        big = fit_study.write_activity_study(Path(tmp) / "big", args.rows, FREE)
        out["fidelity"] = run(ROOT, big, [])             # in order of growing memory
        out["within"] = run(ROOT, big, ["--within", "config"])
        out["fit4"] = run(ROOT, big, ["--fit", ",".join(FREE)])
        out["fit4_nonlinear"] = run(ROOT, big, ["--fit", ",".join(FREE),
                                                "--residuals", "relative"])
        base = Path(tmp) / "base"
        base.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.base],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        small = fit_study.write_activity_study(Path(tmp) / "small", args.base_rows, FREE)
        old, new = run(base, small, []), run(ROOT, small, [])
        out["base_fidelity"] = {"rows": args.base_rows, "old": old, "new": new,
                                "speedup": old["cpu_s"] / new["cpu_s"],
                                "same_figures": old["tau"] == new["tau"]
                                and old["fidelity"] == new["fidelity"]}
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
