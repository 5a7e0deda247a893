"""Timing of ``mapeval analyse`` next to SDF3 and Kiter (issue 33; a script, not a timed
test): prints one JSON object.

    python tests/perf/bench_analyse.py [--sdf3 PATH] [--kiter PATH] [--quick]
        [--only NAME] [--base COMMIT]

For every graph: the default analysis (throughput, latency, buffers, schedule) and
``--no-simulate`` (throughput only), each in process (:func:`moc.timing.analyse`, best
of ``--repeat``, wall and CPU time: CPU time hardly depends on the load) and as a
whole process (``python -m mapping.cli.main analyse FILE --json``,
interpreter start included); SDF3's ``sdf3analysis --algo throughput`` and Kiter's
``kiter -a KPeriodicThroughput`` on the same graph written by ``export sdf3``, as whole
processes (wall and CPU time) and as the time each prints for its own analysis; the throughputs each gave
and whether they agree (relative 1e-5: SDF3 prints 6 digits).  Ratios:
``default / sdf3`` and ``no_simulate / kiter``, in process against the tool's own time,
both measured here; ``TIMEOUT`` seconds per external run.
``--sdf3``/``--kiter`` (or ``$SDF3_ANALYSIS``/``$KITER``) name the programs
(``tests/oracle_sdf3/build.sh`` builds SDF3; Kiter builds with CMake, boost, libxml2
and GLPK); without one its columns are null.

Graphs: SDF3's testbench restated in ``tests/data/sdf3_examples/``; the rings of issue
33 (5 actors, repetition vector summing to 3·10^5, 1/20 and 1/1000 of an iteration's
tokens on the closing channel), the ring of issue 42 (5 actors, times 3, 5, 2, 7, 4,
q = (333343, 166667, 250037, 83399, 166554) summing to 10^6, 1/20 and 1/1000 of an
iteration's tokens) and rings of 100 and 1,000 actors; random strongly connected graphs
of 100, 300 and 1,000 actors (``tests/dataflow_graphs.py``); the two-actor cycle of
about 2·10^5 firings per iteration.  ``--only`` keeps the graphs whose name holds it.
``load`` is ``os.getloadavg()`` before and after: the machine is shared, so times scale
with it.

``--base COMMIT`` also runs the tree of an earlier commit as whole processes
(``mapeval analyse FILE`` and ``--json``): per graph ``base_process`` (its wall and CPU
seconds), ``process`` (this tree's), their ratios (this tree's over the base's) and
whether both printed the same bytes (the whole text and the whole JSON document).

Measured with ``--base 10a3a30 --repeat 1`` at a load of 3.3-4.1 (issue 42; CPU and
wall seconds of one process, text / ``--json``; the same bytes from both trees on
every graph):

    graph               CPU: base -> now               wall: base -> now
    ring5_1e6_1/20      7.7 / 10.2 -> 1.0 / 2.7        14.1 / 15.7 -> 1.3 / 4.8
    ring5_1e6_1/1000    9.3 / 11.7 -> 2.1 / 4.2        14.2 / 18.5 -> 3.3 / 6.5
    ring5_q3e5_1/20     4.6 / 5.4  -> 1.0 / 1.5         9.3 / 8.7  -> 2.1 / 3.0
    ring5_q3e5_1/1000   2.6 / 3.3  -> 1.4 / 1.8         5.2 / 6.8  -> 1.9 / 3.7
    two_actor_2e5       7.0 / 7.5  -> 2.3 / 2.7         9.1 / 12.5 -> 3.4 / 4.3

the others within the noise (0.3-1.1 s).
"""
from __future__ import annotations

import one_core  # noqa: F401  (first: one thread before numpy loads)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import dsl  # noqa: E402
from previous import cli_module, extract  # noqa: E402
from dataflow_graphs import (big_two_actor_cycle, random_strongly_connected,  # noqa: E402
                             ring)
from moc.timing import analyse  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60


def graphs(quick):
    for path in sorted((ROOT / "tests" / "data" / "sdf3_examples").glob("*.sdf")):
        yield f"testbench/{path.stem}", dsl.load_sdf(path)[0]
    q5 = [100003, 49999, 75011, 25013, 49973]
    full = list(ring(q5).channels.values())[-1].delay
    for share in (20,) if quick else (20, 1000):
        yield f"ring5_q3e5_1/{share}", ring(q5, [3, 5, 2, 7, 4], full // share,
                                            name="ring5")
    q6 = [333343, 166667, 250037, 83399, 166554]
    full = list(ring(q6).channels.values())[-1].delay
    for share in (20,) if quick else (20, 1000):
        yield f"ring5_1e6_1/{share}", ring(q6, [3, 5, 2, 7, 4], full // share,
                                           name="ring5")
    for n in (100,) if quick else (100, 1000):
        rng = random.Random(n)
        yield f"ring{n}", ring([rng.randint(1, 4) for _ in range(n)],
                               [rng.randint(1, 100) for _ in range(n)], name=f"ring{n}")
    for n in (100, 300) if quick else (100, 300, 1000):
        yield f"scc{n}", random_strongly_connected(n, seed=1)
    if not quick:
        yield "two_actor_2e5", big_two_actor_cycle()


def best(fn, repeat):
    """The best wall and CPU time of ``repeat`` calls, and the value."""
    times, cpu, value = [], [], None
    for _ in range(repeat):
        start, used = time.perf_counter(), time.process_time()
        value = fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - used)
    return min(times), min(cpu), value


def children_cpu():
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run(argv, pattern):
    """Wall time of ``argv``, the float ``pattern`` finds in its output (group 1) and
    group 2 if any; None on a timeout or a failure."""
    start, used = time.perf_counter(), children_cpu()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"wall_s": None, "error": f"no answer within {TIMEOUT} s"}
    wall, cpu = time.perf_counter() - start, children_cpu() - used
    match = re.search(pattern, done.stdout)
    if done.returncode or not match:
        return {"wall_s": round(wall, 4), "error": (done.stderr or done.stdout)[-200:]}
    own = match.group(2) if match.re.groups > 1 else None
    return {"wall_s": round(wall, 4), "cpu_s": round(cpu, 4),
            "throughput": float(match.group(1)),
            "own_s": None if own is None else float(own) / 1000}


def mapeval(path, *options, code=ROOT, output=False):
    """Wall and CPU seconds of ``mapeval analyse PATH --json OPTIONS`` by the tree
    ``code`` (and with ``output`` what it printed), or None."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    start, used = time.perf_counter(), children_cpu()
    try:
        done = subprocess.run([sys.executable, "-m", cli_module(code), "analyse",
                               str(path), *options], capture_output=True, text=True,
                              timeout=TIMEOUT, env=env, cwd=str(code))
    except subprocess.TimeoutExpired:
        return None
    if done.returncode:
        return None
    times = {"wall_s": round(time.perf_counter() - start, 4),
             "cpu_s": round(children_cpu() - used, 4)}
    return (times, done.stdout) if output else times


def against(path, base):
    """Whole processes of ``mapeval analyse PATH`` (text) and ``--json`` by this tree
    and the tree ``base``: times, ratios and whether the outputs are the same bytes."""
    row = {}
    for mode, options in (("text", ()), ("json", ("--json",))):
        now, then = (mapeval(path, *options, code=code, output=True)
                     for code in (ROOT, base))
        if now is None or then is None:
            row[mode] = None
            continue
        row[mode] = {"process": now[0], "base_process": then[0],
                     "wall_ratio": round(now[0]["wall_s"] / then[0]["wall_s"], 3),
                     "cpu_ratio": round(now[0]["cpu_s"] / then[0]["cpu_s"], 3),
                     "same_output": now[1] == then[1]}
    return row


def agree(a, b):
    return a is None or b is None or abs(a - b) <= 1e-5 * max(abs(a), abs(b))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdf3", default=os.environ.get("SDF3_ANALYSIS"))
    parser.add_argument("--kiter", default=os.environ.get("KITER"))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="graphs whose name holds this")
    parser.add_argument("--base", help="an earlier commit run beside this tree")
    args = parser.parse_args(argv)
    report = {"load_before": os.getloadavg(), "sdf3": args.sdf3, "kiter": args.kiter,
              "base": args.base, "graphs": []}
    with tempfile.TemporaryDirectory() as tmp:
        base = extract(args.base, Path(tmp)) if args.base else None
        for name, graph in graphs(args.quick):
            if args.only not in name:
                continue
            sdf = Path(tmp) / (graph.name + ".sdf")
            xml = Path(tmp) / (graph.name + ".xml")
            sdf.write_text(dsl.format_sdf(graph))
            dsl.write_sdf3(graph, xml)
            analyse(graph, simulate=False)                 # warm: imports, caches
            default_s, default_cpu, result = best(lambda: analyse(graph), args.repeat)
            throughput_s, throughput_cpu, _ = best(lambda: analyse(graph, simulate=False),
                                                   args.repeat)
            row = {"graph": name, "actors": len(graph.actors),
                   "channels": len(graph.channels),
                   "throughput": float(result.throughput), "method": result.method,
                   "default_s": round(default_s, 4),
                   "no_simulate_s": round(throughput_s, 4),
                   "default_cpu_s": round(default_cpu, 4),
                   "no_simulate_cpu_s": round(throughput_cpu, 4),
                   "default_process": mapeval(sdf, "--json"),
                   "no_simulate_process": mapeval(sdf, "--json", "--no-simulate")}
            if base is not None:
                row["against_base"] = against(sdf, base)
            if args.sdf3:
                row["sdf3"] = run([args.sdf3, "--graph", str(xml), "--algo", "throughput"],
                                  r"thr\(.*\) = (\S+)\s+analysis time: ([\d.]+)ms")
            if args.kiter:
                row["kiter"] = run([args.kiter, "-f", str(xml), "-a",
                                    "KPeriodicThroughput"],
                                   r"KPeriodic Throughput is\s+(\S+)\s+KPeriodic Period is"
                                   r"\s+\S+\s+KPeriodic Execution Time is\s+(\S+)")
            for tool, mine in (("sdf3", "default_s"), ("kiter", "no_simulate_s")):
                other = row.get(tool) or {}
                if other.get("own_s"):
                    row[f"{mine}_over_{tool}"] = round(row[mine] / other["own_s"], 1)
                if "throughput" in other:
                    row[f"agrees_with_{tool}"] = agree(other["throughput"],
                                                       row["throughput"])
            report["graphs"].append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    report["load_after"] = os.getloadavg()
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
