"""Kiter's benchmark suite and generated graphs analysed in one process (issue 42): prints
JSON, per graph the throughput, Kiter's period where known and the time; the median and
the largest time; the average per graph; the graphs answered, those in error, over 10 s
or different from Kiter's period; the load average (a measurement, not a test).

Measured (load average 1.7 on two cores, throughput only, wall seconds): 38 graphs
answered, none over 10 s, median 0.007 s, largest autogen1 7.0 s, autogen5 6.9 s,
JPEG2000_sized 0.86 s; 1,000 generated 10-actor graphs at 4.5 ms each.  Wall times
follow the load: at load 2.6 autogen1 took 7.0 s in one run and 11.3 s in another.
With ``--simulate`` (the default ``analyse``: buffers and schedule too) at a load of
6-8 on two cores: every buffer answered but those of autogen2/autogen3 (past the limit
firings) and faustExample's unbounded one, median 0.092 s, autogen1 45.2 s, autogen5
59.9 s, H264_sized 8.3 s, autogen4 7.8 s, the rest at most 6.1 s (wall times 3-4 times
the CPU time at that load: ``bench_kiter_base.py`` gives the CPU time of autogen1's
default process as 12.7 s, autogen5's 15.9 s, 16.1 s and 20.8 s before the levels of
``moc.occupancy``, the int64 constraint graph and the cheaper policy steps of
``moc.cycle_ratio``).  At a load of 5.7 before those: autogen1 19.5 s, autogen5
28.0 s, 1.65 s per graph on average; 1,000 generated graphs at 15.2 ms each.  Before
the buffers came from the firings' precedences (state space, load 8.5): autogen1 40 s,
autogen5 122 s, H264, JPEG2000 and PDectect with buffers unexplored, median 0.067 s.

    python tests/perf/bench_kiter.py [--kiter KITER/benchmarks] [--generated 1000]
        [--kiter-bin KITER/Release/bin/kiter] [--one-process]
    python tests/perf/bench_kiter.py --kiter KITER/benchmarks --base COMMIT
        [--repeat 3] [--simulate]

``--base COMMIT`` runs nothing else: the suite in one ``analyse --json-lines`` process
(``--no-simulate``; by default too with ``--simulate``) with this tree and with
``COMMIT``'s code (``git archive``), in turn ``--repeat`` times, the least CPU time
kept; the ratios (this tree's over the base's), whether the two outputs are byte for
byte the same, and per file the CPU milliseconds of ``read_sdf3``, ``bind`` and
``moc.timing.prepared`` in each tree (least of three in one process).  Measured against
10a3a30 (before the faster SDF3 import and bind), the same output in every run: at load
4.3-3.4 (three runs) ``--no-simulate`` 11.71 -> 9.18 s of CPU (0.78; 260 -> 204 ms a
file), read 1933 -> 844 ms in all (0.44), bind 540 -> 19 ms (0.035), prepared 742 ->
129 ms (0.17); at load 3.0-2.6 (one run) 11.65 -> 9.00 s (0.77) and by default 23.96
-> 20.88 s (0.87).  Against 1b67720 (before Howard's cycles were guessed from the step
before), the same output: at load 2.6-3.0 (three runs) ``--no-simulate`` 7.48 -> 6.80 s
of CPU (0.91; 166 -> 151 ms a file), by default 13.16 -> 11.53 s (0.88; 292 -> 256 ms).

With Kiter's program (``--kiter-bin`` or ``KITER_BIN``, built by ``make release``) the
peer run times, on every file of the suite, mapeval in this process, ``mapeval analyse``
as a whole process (``--no-simulate`` and default; its bytecode written, as for an
installed package, whatever ``PYTHONDONTWRITEBYTECODE`` says) and Kiter's
``-a KPeriodicThroughput`` process (wall and CPU seconds, ``--timeout`` each), and
compares the periods (Kiter's ``inf`` is period 0).  Measured at load average 8-11 on
two cores, Kiter run beside: 38 of 45 files read (3 use Kiter's initialisation phases,
4 are not SDF3), all 38 answered; Kiter answers 33 within 120 s and prints ``inf`` on 5;
of the 35 both answer, 33 equal, and on ``SimpleUseCase`` and ``faustExample`` Kiter's
``inf`` is wrong (periods 3 and 14 by hand, tests in ``test_csdf_kperiodic.py`` and
``test_moc_timing.py``).  Since initialisation phases are read: 41 of 45 read and
answered, the three with them periods 23, 4 and 3 (Kiter: 23, 4 and ``inf``, wrong as on
``SimpleUseCase``, whose initial tokens ``SimpleInitUseCase``'s phase writes).  Median
over those 35: 0.018 s in process, 3.3 s as a process
(1.2 s CPU, mostly start-up), Kiter 0.023 s (0.007 s CPU).  Largest: ``autogen5`` 38.7 s
in process against Kiter's 46.9 s, ``autogen1`` 35.0 s where Kiter gives up at 120 s.
``--one-process`` (load 10-16): the suite in one ``analyse --no-simulate`` 34 s of CPU
(0.76 s a file, ``autogen1`` and ``autogen5`` most of it), default 121 s; the 1,000
generated graphs 11.6 ms of CPU each (``--no-simulate``) and 15.5 ms (default).  Now
(load 6-8): 19.1 s of CPU with ``--no-simulate`` (424 ms a file of the 45, 84 s wall)
and 38.5 s by default (856 ms a file, 111 s wall); after the int64 constraint graph
and the actors' own orders at once (load 4.5-4.8): 18.2 s and 37.3 s of CPU (404 and
829 ms a file).

Latest (load 1.1-1.2, quiet, throughput only): 41 graphs answered, median 0.8 ms,
mean 73.2 ms a graph, ``autogen1`` 1.39 s, ``autogen5`` 0.90 s, ``JPEG2000_sized``
0.21 s; 1,000 generated graphs 1.7 ms each.  Before, 122.6 ms a graph (``autogen1``
2.73 s, ``autogen5`` 1.47 s, ``JPEG2000_sized`` 0.25 s); with the components whose
actors fire one at a time solved on the graph of ``starts`` alone, 93.8 ms, but
``JPEG2000_sized`` 0.67 s: Howard's float iteration took 346 steps in which the same
9-18 nodes gained a constant amount, an improvement moving back one firing a step,
until those steps were spread (``moc.policy_spread``).  ``--base e6bcf2a --repeat 1
--simulate`` (load 1.3): 5.73 -> 3.75 s of CPU with ``--no-simulate`` (0.65) and 9.84
-> 8.49 s by default (0.86), the same output in both.  On another machine of the same
kind, quiet (load 0.9-1.1), a stop later: 41 graphs answered, mean 109-134 ms a graph
(``autogen1`` 2.1-2.7 s, ``autogen5`` 1.3-1.6 s as the first run in the process; 1.0
and 0.9 s warm), 1,000 generated graphs 2.8-3.2 ms each; ``--base a95ab42 --repeat 3
--simulate``: 5.70 -> 5.89 s of CPU with ``--no-simulate`` (1.03) and 12.42 -> 10.64 s
by default (0.86, a gain this stop's changes do not explain: the suite by default in
one process took 10.22 s against 10.97 s with the first iterations of firings of time
0 left to the expansion), the output the same but for the lower bound now given on
``autogen2`` and ``autogen3``.

Kiter's ``benchmarks/`` folder (``git clone https://github.com/bbodin/kiter``) comes from
``--kiter`` or the environment variable ``KITER_BENCHMARKS``; without it that part is
skipped.  Kiter's periods known here are those of ``tests/data/kiter_csdf.json``
(matched by file name).  Generated graphs: rings of 10 actors of 1-3 phases with two
chords, rates split over the phases, live by their initial tokens.
"""
from __future__ import annotations

import one_core  # noqa: F401  (first: this tree's code, or MAPEVAL_CODE's, on sys.path)

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from fractions import Fraction  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

from moc import SDFGraph  # noqa: E402
from moc.errors import SDFError  # noqa: E402
from moc.phases import Phases  # noqa: E402
from moc.timing import analyse  # noqa: E402


def kiter_periods() -> dict[str, Fraction]:
    data = json.loads((ROOT / "tests" / "data" / "kiter_csdf.json").read_text())
    return {Path(r["file"]).stem: Fraction(r["period"]) for r in data["graphs"]}


def timed(graph, simulate):
    start = time.perf_counter()
    try:
        result = analyse(graph, simulate=simulate)
        answer = {"throughput": str(result.throughput), "method": result.method}
        if simulate:
            answer["buffers_unexplored"] = len(graph.channels) if result.buffers is None \
                else sum(v is None for v in result.buffers.values())
    except SDFError as exc:
        answer = {"error": str(exc)[:200]}
    return answer, time.perf_counter() - start


def kiter_suite(folder: Path, simulate: bool, exclude=()) -> list[dict]:
    from dsl.errors import ParseError
    from dsl import read_sdf3
    known = kiter_periods()
    rows = []
    for path in sorted(folder.rglob("*.xml")):
        if path.stem in exclude:
            rows.append({"graph": str(path.relative_to(folder)), "excluded": True})
            continue
        try:
            graph = read_sdf3(path)
        except (SDFError, ParseError) as exc:
            rows.append({"graph": str(path.relative_to(folder)), "unread": str(exc)[:120]})
            continue
        answer, seconds = timed(graph, simulate)
        expected = known.get(path.stem)
        rows.append({"graph": str(path.relative_to(folder)), **answer,
                     "kiter_period": None if expected is None else str(expected),
                     "seconds": round(seconds, 4)})
    return rows


def generated(count: int, actors: int, seed: int = 0) -> list[SDFGraph]:
    rng = random.Random(seed)
    graphs = []
    for number in range(count):
        n = [rng.randint(1, 3) for _ in range(actors)]
        g = SDFGraph(f"g{number}")
        for i in range(actors):
            times = [rng.randint(1, 9) for _ in range(n[i])]
            g.add_actor(f"a{i}", exec=Phases(times) if n[i] > 1 else times[0])
        weight = [rng.randint(1, 4) for _ in range(actors)]

        def split(total, parts):
            cuts = sorted(rng.randint(0, total) for _ in range(parts - 1))
            values = [b - a for a, b in zip([0] + cuts, cuts + [total])]
            return Phases(values) if parts > 1 else values[0]
        pairs = [(i, (i + 1) % actors) for i in range(actors)]
        pairs += [(rng.randrange(actors), rng.randrange(actors)) for _ in range(2)]
        for c, (i, j) in enumerate(pairs):
            # enough tokens for a whole cycle of phases of the consumer on a back edge
            back = j <= i
            g.add_channel(f"a{i}", f"a{j}", f"c{c}", prod=split(weight[j], n[i]),
                          cons=split(weight[i], n[j]),
                          delay=weight[i] * n[j] * 4 if back else 0)
        graphs.append(g)
    return graphs


def summary(seconds: list[float]) -> dict:
    return {"count": len(seconds), "median_s": round(statistics.median(seconds), 4),
            "max_s": round(max(seconds), 4),
            "mean_ms_per_graph": round(1000 * sum(seconds) / len(seconds), 2)}


# Peer run: Kiter's own program, timed in the same run as mapeval (--kiter-bin).

KITER_PERIOD = re.compile(r"^(?:KPeriodic|Maximum) period\s+is\s+(\S+)",
                          re.MULTILINE | re.IGNORECASE)
KITER_THROUGHPUT = re.compile(r"^(?:KPeriodic|Maximum) throughput\s+is\s+(\S+)",
                              re.MULTILINE | re.IGNORECASE)
KITER_MS = re.compile(r"^KPeriodic Execution Time is\s+(\S+)", re.MULTILINE)


def child_cpu() -> float:
    """CPU seconds of the finished child processes so far (less load-dependent than
    wall time on a shared machine)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def kiter_process(binary: str, path: Path, timeout: float) -> dict:
    """Kiter's K-periodic throughput of ``path``: its printed throughput and period, the
    wall and CPU time of its whole process and the time it prints for its own
    computation (``status`` answered, inf, timeout or failed)."""
    start, cpu = time.perf_counter(), child_cpu()
    try:
        done = subprocess.run([binary, "-f", str(path), "-a", "KPeriodicThroughput"],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": timeout}
    seconds = round(time.perf_counter() - start, 4)
    cpu = round(child_cpu() - cpu, 4)
    period, throughput = KITER_PERIOD.search(done.stdout), KITER_THROUGHPUT.search(done.stdout)
    if done.returncode or period is None or throughput is None:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
        return {"status": "failed", "exit": done.returncode, "message": tail[0][:160],
                "seconds": seconds, "cpu_s": cpu}
    if throughput.group(1) in ("inf", "-nan", "nan"):
        return {"status": throughput.group(1).lstrip("-"), "period": period.group(1),
                "seconds": seconds, "cpu_s": cpu}
    own = KITER_MS.search(done.stdout)
    return {"status": "answered", "throughput": throughput.group(1),
            "period": period.group(1), "seconds": seconds, "cpu_s": cpu,
            "own_ms": own and float(own.group(1))}


def mapeval_process(paths, simulate: bool, timeout: float, code: Path = ROOT, digest=None):
    """``mapeval analyse --json-lines`` of ``paths`` as one process of the tree ``code``:
    the exact period or the error of each file (in order), and the process's wall and
    CPU time (``digest``: a list that gets the SHA-256 of its whole output)."""
    command = [sys.executable, "-m", "mapping.cli", "analyse", "--json-lines",
               *(() if simulate else ("--no-simulate",)), *map(str, paths)]
    # bytecode written, as pip does for an installed package: a process that compiles
    # every module it imports spends 0.05-0.1 s more
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    start, cpu = time.perf_counter(), child_cpu()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              cwd=code, env={**env, "MPLBACKEND": "Agg",
                                             "PYTHONPATH": str(code)})
    except subprocess.TimeoutExpired:
        return [{"error": f"over {timeout} s"}] * len(paths), timeout, None
    seconds, cpu = time.perf_counter() - start, child_cpu() - cpu
    if digest is not None:
        digest.append(hashlib.sha256(done.stdout.encode()).hexdigest())
    answers = []
    for line in done.stdout.splitlines():
        entry = json.loads(line)
        if "error" in entry:
            answers.append({"error": entry["error"]["message"][:160]})
        else:
            answers.append({"period": entry["exact"]["period"]})
    said = done.stderr.strip().splitlines() or ["no output"]
    message = next((line for line in said if "error:" in line), said[-1])  # not the caret
    answers += [{"error": message[:160]}] * (len(paths) - len(answers))
    return answers, seconds, cpu


def same_period(exact: str, printed: str) -> bool:
    """mapeval's exact period equals Kiter's, printed with six decimals from a double."""
    mine, theirs = Fraction(exact), Fraction(printed)
    return abs(mine - theirs) <= Fraction(1, 10 ** 6) + abs(theirs) * Fraction(1, 10 ** 9)


def peer_equal(row: dict) -> bool | None:
    """Whether mapeval's period equals Kiter's (Kiter's ``inf`` throughput is period 0),
    None where either gives none."""
    mine, kiter = row.get("mapeval", {}).get("period"), row["kiter"]
    if mine is None or kiter["status"] not in ("answered", "inf"):
        return None
    return Fraction(mine) == 0 if kiter["status"] == "inf" else \
        same_period(mine, kiter["period"])


def peer_rows(folder: Path, binary: str, timeout: float) -> list[dict]:
    """Every file of Kiter's suite: mapeval in this process (throughput only), mapeval as
    a whole process (``--no-simulate`` and default) and Kiter's whole process."""
    from dsl import read_sdf3
    from dsl.errors import ParseError
    rows = []
    for path in sorted(folder.rglob("*.xml")):
        row = {"graph": str(path.relative_to(folder))}
        try:
            graph = read_sdf3(path)
        except (SDFError, ParseError) as exc:
            row["unread"] = str(exc)[:120]
        else:
            answer, seconds = timed(graph, simulate=False)
            throughput = answer.get("throughput")
            row["mapeval"] = answer if throughput is None else {   # inf: no cycle bounds it
                "period": "0" if throughput == "inf" else str(1 / Fraction(throughput))}
            row["mapeval_s"] = round(seconds, 4)
        for simulate, key in ((False, "no_simulate"), (True, "default")):
            (answer,), seconds, cpu = mapeval_process([path], simulate, timeout)
            row[f"process_{key}"] = {**answer, "seconds": round(seconds, 4),
                                     "cpu_s": cpu and round(cpu, 4)}
        row["kiter"] = kiter_process(binary, path, timeout)
        equal = peer_equal(row)
        if equal is not None:
            row["equal"] = equal
        print(json.dumps(row), file=sys.stderr, flush=True)
        rows.append(row)
    return rows


def peer_summary(rows: list[dict]) -> dict:
    """Graphs answered by each tool, equal where both answer, median and largest times
    and the ratio of the medians (mapeval's over Kiter's)."""
    def median(values):
        return round(statistics.median(values), 4) if values else None

    def mean(values):
        return round(statistics.fmean(values), 4) if values else None

    read = [r for r in rows if "mapeval" in r]
    kiter_s = [r["kiter"]["seconds"] for r in rows if r["kiter"]["status"] == "answered"]
    both = [r for r in rows if "equal" in r]
    times = {"mapeval_in_process": [r["mapeval_s"] for r in read],
             "mapeval_process_no_simulate": [r["process_no_simulate"]["seconds"]
                                             for r in read],
             "mapeval_process_default": [r["process_default"]["seconds"] for r in read],
             "kiter_process": kiter_s}
    medians = {name: median(values) for name, values in times.items()}
    cpu = {"mapeval_process_no_simulate": [r["process_no_simulate"]["cpu_s"] for r in read],
           "mapeval_process_default": [r["process_default"]["cpu_s"] for r in read],
           "kiter_process": [r["kiter"]["cpu_s"] for r in rows
                             if r["kiter"]["status"] == "answered"]}
    return {
        "files": len(rows), "read": len(read),
        "unread": [r["graph"] for r in rows if "unread" in r],
        "mapeval_answered": sum("period" in r["mapeval"] for r in read),
        "mapeval_errors": [r["graph"] for r in read if "error" in r["mapeval"]],
        "kiter_answered": len(kiter_s),
        "kiter_inf": sum(r["kiter"]["status"] == "inf" for r in rows),
        "kiter_not_answered": {r["graph"]: r["kiter"]["status"] for r in rows
                               if r["kiter"]["status"] != "answered"},
        "both_answered": sum("equal" in r for r in rows),
        "equal": sum(r.get("equal", False) for r in rows),
        "differ": [r["graph"] for r in rows if r.get("equal") is False],
        "median_s": medians,
        "max_s": {name: max(values, default=None) for name, values in times.items()},
        "median_cpu_s": {name: median([v for v in values if v is not None])
                         for name, values in cpu.items()},
        "kiter_own_median_s": median([r["kiter"]["own_ms"] / 1000 for r in rows
                                      if r["kiter"].get("own_ms") is not None]),
        "over_10_s": {name: [r["graph"] for r in read if r[key]["seconds"] > 10]
                      for name, key in (("mapeval_process_no_simulate",
                                         "process_no_simulate"),
                                        ("mapeval_process_default", "process_default"))}
        | {"mapeval_in_process": [r["graph"] for r in read if r["mapeval_s"] > 10]},
        # the whole suite's time per graph, the figure ``--one-process`` gives for
        # mapeval; Kiter's timeouts count at the timeout, so its figure is a least one
        "mean_s_a_graph": {
            "mapeval_in_process": mean([r["mapeval_s"] for r in read]),
            "kiter_processes_at_least": mean(
                [r["kiter"]["seconds"] for r in rows if "mapeval" in r])},
        "median_s_where_both_answer": {
            "graphs": len(both), "mapeval_in_process": median([r["mapeval_s"] for r in both]),
            "mapeval_process_no_simulate": median([r["process_no_simulate"]["seconds"]
                                                   for r in both]),
            "kiter_process": median([r["kiter"]["seconds"] for r in both])},
        "median_ratio_to_kiter": {
            name: round(value / medians["kiter_process"], 2)
            for name, value in medians.items()
            if name != "kiter_process" and value and medians["kiter_process"]}}


def one_process(paths, simulate: bool, timeout: float, code: Path = ROOT,
                digest=None) -> dict:
    """``mapeval analyse --json-lines`` of all ``paths`` in one process: the wall time
    per graph on average, start-up included (issue 42's 20 ms)."""
    answers, seconds, cpu = mapeval_process(paths, simulate, timeout, code, digest)
    return {"simulate": simulate, "graphs": len(paths),
            "answered": sum("period" in a for a in answers),
            "total_s": round(seconds, 2), "cpu_s": cpu and round(cpu, 2),
            "mean_ms_per_graph": round(1000 * seconds / len(paths), 2),
            "mean_cpu_ms_per_graph": cpu and round(1000 * cpu / len(paths), 2)}


def import_times(paths, repeat: int) -> dict:
    """Per file, the least over ``repeat`` runs of the CPU milliseconds of ``read_sdf3``,
    of ``bind`` of the graph read and of ``moc.timing.prepared`` of the graph read (what
    ``analyse`` does before the throughput; ``bind`` included), in this process."""
    from dsl import read_sdf3
    from dsl.errors import ParseError
    from moc.timing import prepared

    def least(run):
        best = None
        for _ in range(repeat):
            start = time.process_time()
            value = run()
            seconds = time.process_time() - start
            best = seconds if best is None else min(best, seconds)
        return value, round(1000 * best, 3)

    rows = {}
    for path in paths:
        row = rows[Path(path).name if Path(path).parent.name == "benchmarks" else
                   f"{Path(path).parent.name}/{Path(path).name}"] = {}

        def read(path=path):
            try:
                return read_sdf3(path)
            except (SDFError, ParseError):
                return None
        graph, row["read_ms"] = least(read)
        if graph is None:
            row["unread"] = True
            continue
        _, row["bind_ms"] = least(graph.bind)
        try:
            _, row["prepared_ms"] = least(lambda: prepared(graph))
        except SDFError:            # initialisation phases: analyse takes them apart
            pass
    return rows


def against_base(args, paths) -> dict:
    """The suite analysed in one process by this tree and by the commit ``args.base``
    (extracted beside), ``--repeat`` times each in turn, the least CPU time kept; the
    ratios (this tree's over the base's), whether the whole output is byte for byte the
    same, and the import, bind and preparation times per file (:func:`import_times`)."""
    from previous import extract
    modes = (False, True) if args.simulate else (False,)
    report = {"base": args.base, "load_average": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as folder:
        trees = {"base": extract(args.base, Path(folder)), "now": ROOT}
        runs = {(label, mode): [] for label in trees for mode in modes}
        digests = {key: [] for key in runs}
        imports = {}
        for _ in range(args.repeat):
            for label, code in trees.items():
                done = subprocess.run(
                    [sys.executable, __file__, "--repeat", "3", "--import-times",
                     *map(str, paths)], capture_output=True, text=True, check=True,
                    env={**os.environ, "MAPEVAL_CODE": str(code), "MPLBACKEND": "Agg"})
                times = json.loads(done.stdout)
                kept = imports.setdefault(label, times)
                for name, row in times.items():
                    for key, value in row.items():
                        if key.endswith("_ms"):
                            kept[name][key] = min(kept[name][key], value)
                for mode in modes:
                    runs[(label, mode)].append(one_process(
                        paths, mode, 10 * args.timeout, code, digests[(label, mode)]))
    for mode in modes:
        base, now = (min(runs[(label, mode)], key=lambda r: r["cpu_s"] or math.inf)
                     for label in trees)
        report["default" if mode else "no_simulate"] = {
            "base": base, "now": now,
            "cpu_ratio": round(now["cpu_s"] / base["cpu_s"], 3),
            "wall_ratio": round(now["total_s"] / base["total_s"], 3),
            "same_output": len(set(digests[("base", mode)] + digests[("now", mode)])) == 1}
    stages = ("read_ms", "bind_ms", "prepared_ms")
    totals = {label: {key: round(sum(row.get(key, 0) for row in rows.values()), 2)
                      for key in stages} for label, rows in imports.items()}
    report["import"] = {
        "total_ms": totals,
        "ratio": {key: round(totals["now"][key] / totals["base"][key], 3) for key in stages},
        "read_ms_per_file": {label: round(totals[label]["read_ms"] / len(paths), 2)
                             for label in totals},
        "files": {name: {f"{key}": [imports["base"][name].get(key),
                                    imports["now"][name].get(key)] for key in stages
                         if key in imports["now"][name]}
                  for name in imports["now"]}}
    report["load_average_end"] = os.getloadavg()[0]
    return report


def generated_files(graphs, folder: Path) -> list[Path]:
    """``graphs`` written as ``.sdf`` files in ``folder``, one graph per file."""
    from dsl.printer import format_sdf
    paths = []
    for g in graphs:
        path = folder / f"{g.name}.sdf"
        path.write_text(format_sdf([g]))
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiter", default=os.environ.get("KITER_BENCHMARKS"))
    parser.add_argument("--generated", type=int, default=1000)
    parser.add_argument("--actors", type=int, default=10)
    parser.add_argument("--exclude", action="append", default=[], metavar="NAME",
                        help="skip Kiter's graph NAME (file name without .xml)")
    parser.add_argument("--simulate", action="store_true",
                        help="schedule and buffers too (default: throughput only)")
    parser.add_argument("--kiter-bin", default=os.environ.get("KITER_BIN"),
                        help="Kiter's program: run it on every graph of the suite too")
    parser.add_argument("--timeout", type=float, default=120,
                        help="seconds for each process of the peer run")
    parser.add_argument("--one-process", action="store_true",
                        help="'mapeval analyse' of the suite and of the generated graphs "
                             "in one process each (default and --no-simulate)")
    parser.add_argument("--base", metavar="COMMIT",
                        help="Kiter's suite in one process (--no-simulate; default too with "
                             "--simulate) with this tree and with COMMIT, and the import "
                             "times per file, as ratios (nothing else is run)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="with --base: runs of each tree in turn, the least kept")
    parser.add_argument("--import-times", nargs="+", metavar="FILE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.import_times:
        print(json.dumps(import_times(args.import_times, args.repeat)))
        return
    if args.base:
        if not args.kiter or not Path(args.kiter).is_dir():
            raise SystemExit("--base needs --kiter or KITER_BENCHMARKS")
        paths = sorted(Path(args.kiter).rglob("*.xml"))
        print(json.dumps(against_base(args, paths), indent=1))
        return
    report = {"simulate": args.simulate, "load_average": os.getloadavg()[0]}
    if args.kiter and Path(args.kiter).is_dir():
        rows = kiter_suite(Path(args.kiter), args.simulate, args.exclude)
        timed_rows = [r for r in rows if "seconds" in r]
        report["kiter"] = {
            "graphs": rows, **summary([r["seconds"] for r in timed_rows]),
            "answered": sum("error" not in r for r in timed_rows),
            "errors": [r["graph"] for r in timed_rows if "error" in r],
            "over_10_s": [r["graph"] for r in timed_rows if r["seconds"] > 10],
            "buffers_unexplored": [r["graph"] for r in timed_rows
                                   if r.get("buffers_unexplored")],
            "differ_from_kiter": [r["graph"] for r in timed_rows
                                  if r["kiter_period"] is not None and "throughput" in r
                                  and Fraction(r["throughput"]) !=
                                  1 / Fraction(r["kiter_period"])]}
    else:
        report["kiter"] = "skipped: no --kiter folder or KITER_BENCHMARKS"
    if args.generated:
        graphs = generated(args.generated, args.actors)
        start = time.perf_counter()
        times, errors, unexplored = [], 0, 0
        for g in graphs:
            answer, seconds = timed(g, args.simulate)
            times.append(seconds)
            errors += "error" in answer
            unexplored += bool(answer.get("buffers_unexplored"))
        report["generated"] = {**summary(times), "errors": errors, "actors": args.actors,
                               "buffers_unexplored": unexplored,
                               "total_s": round(time.perf_counter() - start, 2)}
    if args.kiter_bin and args.kiter and Path(args.kiter).is_dir():
        rows = peer_rows(Path(args.kiter), args.kiter_bin, args.timeout)
        report["peer"] = {"graphs": rows, **peer_summary(rows)}
    if args.one_process:
        report["one_process"] = one_process_report(args)
    report["load_average_end"] = os.getloadavg()[0]
    print(json.dumps(report, indent=1))


def one_process_report(args) -> dict:
    """Kiter's suite (where present) and the generated graphs, each analysed by one
    ``mapeval analyse`` process, throughput only and default."""
    report = {}
    if args.kiter and Path(args.kiter).is_dir():
        paths = sorted(Path(args.kiter).rglob("*.xml"))
        report["kiter_suite"] = [one_process(paths, simulate, 10 * args.timeout)
                                 for simulate in (False, True)]
    if args.generated:
        with tempfile.TemporaryDirectory() as folder:
            paths = generated_files(generated(args.generated, args.actors), Path(folder))
            report["generated"] = [one_process(paths, simulate, 10 * args.timeout)
                                   for simulate in (False, True)]
    return report


if __name__ == "__main__":
    main()
