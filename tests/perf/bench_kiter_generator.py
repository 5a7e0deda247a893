"""Graphs of Kiter's own random generator (``-g GenerateRandomSDF``) with many firings
an iteration, each through ``mapeval analyse --json`` (both ``--csdf-order``),
``--no-simulate`` and ``check`` as whole processes, and Kiter's ``-a
KPeriodicThroughput`` (issue 42): prints JSON, per graph its firings, per mode the wall
and CPU seconds, the exit status and the period; then per mode the largest CPU time,
the graphs over 10 s, in error, or whose period differs from Kiter's (marked
``disconnected`` where Kiter's iteration scales the components apart, a known
difference). A measurement, not a test.

    python tests/perf/bench_kiter_generator.py [--kiter-bin KITER/Release/bin/kiter]
        [--draws 150] [--seed 7] [--firings 300000 2000000] [--timeout 60]

Kiter's program comes from ``--kiter-bin`` or ``KITER_BIN``; without it the script
prints why and exits with status 0. The generator's settings are drawn per graph
(actors 9-18, channels from the actors to 1.5 times them, rates up to 13-50, 1-10
phases, times up to 1-3); graphs that Kiter does not make within 4 s (its search of
initial tokens) are left out, and only those whose iteration has a number of firings
within ``--firings`` are timed. The graphs are written to a temporary directory
(``--keep DIR`` to keep them).
"""
from __future__ import annotations

import one_core  # noqa: F401  (first: this tree's code, or MAPEVAL_CODE's, on sys.path)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from bench_kiter import child_cpu, kiter_process, same_period  # noqa: E402

MODES = {
    "ends": ("analyse", "--json"),
    "starts": ("analyse", "--json", "--csdf-order", "starts"),
    "no_simulate": ("analyse", "--json", "--no-simulate"),
    "check": ("check", "--json"),
}


def draw(rng: random.Random) -> dict[str, int]:
    """The generator's settings of one graph."""
    v = rng.randint(9, 18)
    e = v + rng.randint(0, v // 2)
    return {"min_vertices_count": v, "max_vertices_count": v, "min_edges_count": e,
            "max_edges_count": e, "max_weight": rng.randint(13, 50),
            "max_duration": rng.randint(1, 3), "max_phase_quantity": rng.randint(1, 10),
            "seed": rng.randint(1, 10 ** 6)}


def generate(binary: str, settings: dict, path: Path) -> bool:
    """Kiter's graph of ``settings`` written to ``path`` (its ``-p`` options come
    before ``-g``); False where Kiter fails or takes over 4 s."""
    command = [binary]
    for key, value in settings.items():
        command += ["-p", f"{key}={value}"]
    command += ["-g", "GenerateRandomSDF", "-a", "PrintXML"]
    try:
        done = subprocess.run(command, capture_output=True, timeout=4)
    except subprocess.TimeoutExpired:
        return False
    if done.returncode or b"</sdf3>" not in done.stdout:
        return False
    path.write_bytes(done.stdout)
    return True


def shape(path: Path) -> tuple[int, int]:
    """The firings of one iteration of the graph in ``path`` and its components."""
    from dsl import read_sdf3
    from moc.repetition import repetition_vector
    graph = read_sdf3(path)
    return sum(repetition_vector(graph).values()), len(graph.components())


def mapeval(path: Path, mode: str, timeout: float) -> dict:
    """One ``mapeval`` process of ``mode`` on ``path``: wall and CPU seconds, exit
    status and (for ``analyse``) the period."""
    command = [sys.executable, "-m", "mapping.cli", MODES[mode][0], str(path),
               *MODES[mode][1:]]
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(one_core.CODE)}
    start, cpu = time.perf_counter(), child_cpu()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              cwd=one_core.CODE, env=env)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": timeout}
    row = {"seconds": round(time.perf_counter() - start, 3),
           "cpu_s": round(child_cpu() - cpu, 3), "exit": done.returncode}
    if done.returncode:
        row["message"] = (done.stderr.strip().splitlines() or [""])[-1][:160]
    elif mode != "check":
        row["period"] = json.loads(done.stdout)["period"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiter-bin", default=os.environ.get("KITER_BIN"))
    parser.add_argument("--draws", type=int, default=150)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--firings", type=int, nargs=2, default=(300_000, 2_000_000))
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    if not args.kiter_bin or not Path(args.kiter_bin).is_file():
        print(json.dumps({"skipped": "Kiter's program not given (--kiter-bin or KITER_BIN)"}))
        return
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        run(args, args.keep)
        return
    with tempfile.TemporaryDirectory(prefix="kiter-generated-") as folder:
        run(args, Path(folder))


def run(args, folder: Path) -> None:
    """The graphs drawn into ``folder``, timed and printed (see the module docstring)."""
    rng = random.Random(args.seed)
    rows = []
    for n in range(args.draws):
        path = folder / f"g{n}.xml"
        settings = draw(rng)
        if not generate(args.kiter_bin, settings, path):
            continue
        firings, components = shape(path)
        if not args.firings[0] <= firings <= args.firings[1]:
            continue
        row = {"graph": path.name, "settings": settings, "firings": firings,
               "components": components, "load": round(os.getloadavg()[0], 2)}
        row.update({mode: mapeval(path, mode, args.timeout) for mode in MODES})
        row["kiter"] = kiter_process(args.kiter_bin, path, args.timeout)
        periods = {row[m].get("period") for m in ("ends", "starts", "no_simulate")}
        kiter = row["kiter"].get("period")
        row["same_period"] = None if None in periods or kiter is None else \
            len(periods) == 1 and same_period(str(periods.pop()), kiter)
        print(json.dumps(row), flush=True)
        rows.append(row)
    summary = {"graphs": len(rows), "folder": str(folder) if args.keep else None}
    for mode in MODES:
        times = [r[mode].get("cpu_s", args.timeout) for r in rows]
        summary[f"{mode}_max_cpu_s"] = max(times, default=None)
    summary["over_10_s"] = [r["graph"] for r in rows
                            if any(r[m].get("seconds", 0) > 10 for m in MODES)]
    summary["failed"] = [r["graph"] for r in rows
                         if any(r[m].get("exit") != 0 for m in MODES)]
    summary["different"] = [(r["graph"], "disconnected" if r["components"] > 1 else
                             "connected") for r in rows if r["same_period"] is False]
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
