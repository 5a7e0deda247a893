"""The default ``mapeval analyse`` of graphs with millions of firings an iteration, this
tree against an earlier commit's (issue 42: "no graph over 10 s"): a measurement, not a
test.  Prints one JSON object.

    python tests/perf/bench_large_iterations.py [FILE ...] [--base COMMIT]

Per graph, each tree runs ``python -m mapping.cli.main analyse FILE`` (the table, the
default) as a whole process: its CPU seconds (user and system) and peak memory (MB,
the child's own, from ``os.wait4``), their ratios (this tree's over the base's), the
latency each printed and the limits this tree's ``method`` names for what it left
out.  Graphs: the FILEs given (for instance graphs of Kiter's generator written by
``bench_kiter_generator.py --keep DIR``), and two made here: the five-actor ring of
issue 42 (10^6 firings an iteration, 1/1000 of an iteration's tokens on the closing
channel), whose latency must stay, and the same ring scaled to 3·10^6 firings with a
self-loop of one token on each actor (one firing at a time, as Kiter's generator
makes them), whose latency must stay too.
``load`` is ``os.getloadavg()`` before and after.

Measured at ``82906d5`` -> this commit on 70 graphs of a campaign on Kiter's
generator (0.1-9.3 million firings an iteration) at a load of about 2.5 on two cores:
see ``docs/limitations.md``.
"""
from __future__ import annotations

import one_core  # noqa: F401  (first: this tree's code on sys.path)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import dsl  # noqa: E402
from dataflow_graphs import ring  # noqa: E402
from previous import cli_module, extract  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BASE = "82906d5"
Q6 = [333343, 166667, 250037, 83399, 166554]


def made(into: Path) -> list[Path]:
    """The two rings, written as SDF3 files in ``into``."""
    full = list(ring(Q6).channels.values())[-1].delay
    g = ring(Q6, [3, 5, 2, 7, 4], full // 1000, name="ring5_1e6")
    q3 = [3 * n for n in Q6]
    serial = ring(q3, [3, 5, 2, 7, 4], 3 * full // 1000, name="ring5_3e6_serial")
    for a in list(serial.actors):
        serial.add_channel(a, a, f"self_{a}", prod=1, cons=1, delay=1)
    paths = []
    for graph in (g, serial):
        path = into / f"{graph.name}.xml"
        dsl.write_sdf3(graph, path)
        paths.append(path)
    return paths


def run(code: Path, path: Path) -> dict:
    """``analyse FILE`` with ``code`` first on the import path: CPU seconds, peak MB,
    the latency printed and what ``method`` says was left out."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", cli_module(code), "analyse", str(path)],
            env=dict(os.environ, PYTHONPATH=str(code), MPLBACKEND="Agg"),
            stdout=out, stderr=err, cwd=str(code))
        # the child's own usage (reaped here, not by Popen)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return _row(out.read(), err.read(), proc.returncode, usage)


def _row(out, err, status, usage):
    latency = re.search(r"^  latency +(\S+)", out, re.M)
    method = re.search(r"^  method +(.*)$", out, re.M)
    left = re.findall(r"--limit (\w+)=N", method.group(1)) if method else []
    return {"cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_mb": round(usage.ru_maxrss / 1024), "status": status,
            "latency": latency.group(1) if latency else None, "limits_named": left,
            **({"error": err.strip()[-300:]} if status else {})}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--base", default=BASE)
    args = parser.parse_args(argv)
    report = {"load_before": os.getloadavg(), "base": args.base, "graphs": []}
    with tempfile.TemporaryDirectory() as tmp:
        base = extract(args.base, Path(tmp))
        for path in made(Path(tmp)) + [f.resolve() for f in args.files]:
            now, before = run(ROOT, path), run(base, path)
            row = {"graph": path.name, "base": before, "now": now,
                   "cpu_ratio": round(now["cpu_s"] / max(before["cpu_s"], 1e-3), 3),
                   "peak_ratio": round(now["peak_mb"] / max(before["peak_mb"], 1), 3),
                   "same_latency": now["latency"] == before["latency"]}
            report["graphs"].append(row)
            print(json.dumps(row), file=sys.stderr)
    rows = report["graphs"]
    report["load_after"] = os.getloadavg()
    report["most_cpu_s"] = {"base": max(r["base"]["cpu_s"] for r in rows),
                            "now": max(r["now"]["cpu_s"] for r in rows)}
    report["most_peak_mb"] = {"base": max(r["base"]["peak_mb"] for r in rows),
                              "now": max(r["now"]["peak_mb"] for r in rows)}
    report["latency_changed"] = [r["graph"] for r in rows if not r["same_latency"]
                                 and r["now"]["latency"] != "-"]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
