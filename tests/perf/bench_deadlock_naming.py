"""What naming a cyclo-static deadlock by its circuit of waits costs where the K-periodic
steps prove it first (``csdf_kperiodic.NAMING_CHECKS``, issue 42), against the code
before it (``NAMING_CHECKS = 0``: the steps' own circuit named, nothing more run), in one
process: a measurement, not a test.  Prints one JSON object.

    python tests/perf/bench_deadlock_naming.py [--repeat N] FILE[@CHANNEL] ...

``FILE@CHANNEL``: the graph of an SDF3 file with one initial token taken off
``CHANNEL`` (for instance Kiter's ``H264_sized.xml@channel_89``).  Per graph, ``check``
(``moc.liveness.check_live``) and ``analyse`` (``moc.timing.analyse``, ``simulate=False``:
the K-periodic throughput) each way, alternated ``N`` times (default 3); the least CPU
seconds, the actors and channels named, and ``ratio`` (now over before, the least CPU
of each).  ``same``: whether ``check`` and ``analyse`` name the same circuit.  ``load``
is ``os.getloadavg()`` before and after.  Measured in ``docs/notes.md`` (issue 42).
"""
from __future__ import annotations

import one_core  # noqa: F401  (first: this tree's code on sys.path)

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402


def _graph(spec):
    from mapping.cli.inputs import load_blocks
    from moc.record import replace
    path, _, channel = spec.partition("@")
    graph = load_blocks(Path(path), "sdf")[0]
    if channel:
        ch = graph.channels[channel]
        graph.channels[channel] = replace(ch, delay=ch.delay - 1)
    return graph.bind()


def _named(run):
    from moc.errors import DeadlockError
    start = time.process_time()
    try:
        run()
        named = "live"
    except DeadlockError as exc:
        named = [list(exc.actors), list(exc.channels)]
    return named, time.process_time() - start


def main(specs, repeat):
    from moc import csdf_kperiodic, repetition_vector
    from moc.liveness import check_live
    from moc.timing import analyse
    naming = csdf_kperiodic.NAMING_CHECKS
    load = [os.getloadavg()[0]]
    rows = []
    for spec in specs:
        graph = _graph(spec)
        q = repetition_vector(graph)
        runs = {"check": lambda: check_live(graph, q),
                "analyse": lambda: analyse(graph, simulate=False)}
        row = {"graph": Path(spec).name, "firings": sum(q.values())}
        for what, run in runs.items():
            found = {}
            for _ in range(repeat):
                for way, checks in (("before", 0), ("now", naming)):
                    csdf_kperiodic.NAMING_CHECKS = checks
                    named, cpu = _named(run)
                    best = found.get(way, (named, cpu))[1]
                    found[way] = (named, min(cpu, best))
            csdf_kperiodic.NAMING_CHECKS = naming
            row[what] = {way: {"named": named, "cpu": round(cpu, 3)}
                         for way, (named, cpu) in found.items()}
            row[what]["ratio"] = round(found["now"][1] / max(found["before"][1], 1e-3), 2)
        row["same"] = {way: row["check"][way]["named"] == row["analyse"][way]["named"]
                       for way in ("before", "now")}
        rows.append(row)
    load.append(os.getloadavg()[0])
    print(json.dumps({"load": load, "naming_checks": naming, "graphs": rows}, indent=1))


if __name__ == "__main__":
    args = sys.argv[1:]
    repeat = 3
    if args[:1] == ["--repeat"]:
        repeat, args = int(args[1]), args[2:]
    if not args:
        sys.exit(__doc__)
    main(args, repeat)
