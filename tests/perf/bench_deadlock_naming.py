"""What naming a cyclo-static deadlock by its circuit of waits costs where the K-periodic
steps prove it first (``csdf_kperiodic.NAMING_CHECKS``, issue 42), against the code
before it: a measurement, not a test.  Prints one JSON object.

``before``: the tree of an earlier commit (``--base``, default 7b60d13: the steps' own
circuit named, the symbolic execution's rounds looking at every actor), extracted by
``previous.py``; ``now``: this tree's code.  Each way runs in a child process of this
script, which times only the analysis (``time.process_time``), not the imports.

    python tests/perf/bench_deadlock_naming.py [--repeat N] [--base REV] FILE[@CHANNEL] ...

``FILE@CHANNEL``: the graph of an SDF3 file with one initial token taken off
``CHANNEL`` (for instance Kiter's ``H264_sized.xml@channel_89``).  Per graph, ``check``
(``moc.liveness.check_live``) and ``analyse`` (``moc.timing.analyse``, ``simulate=False``:
the K-periodic throughput) each way, alternated ``N`` times (default 3); the least CPU
seconds, the actors and channels named, and ``ratio`` (now over before, the least CPU
of each).  ``same``: whether ``check`` and ``analyse`` name the same circuit.  ``load``
is ``os.getloadavg()`` before and after.  Measured in ``docs/notes.md`` (issue 42).
"""
from __future__ import annotations

import one_core  # noqa: F401  (first: the code under test on sys.path)

import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import previous  # noqa: E402

#: main before the naming (the code ``before`` is timed with)
BASE = "7b60d13"


def _graph(spec):
    from mapping.cli.inputs import load_blocks
    from moc.record import replace
    path, _, channel = spec.partition("@")
    graph = load_blocks(Path(path), "sdf")[0]
    if channel:
        ch = graph.channels[channel]
        graph.channels[channel] = replace(ch, delay=ch.delay - 1)
    return graph.bind()


def _child(what, spec):
    """In a child process whose code is ``MAPEVAL_CODE``'s: ``what`` of ``spec``, the
    circuit named (or ``live``) and the CPU seconds it took, as JSON."""
    from moc import repetition_vector
    from moc.errors import DeadlockError
    from moc.liveness import check_live
    from moc.timing import analyse
    graph = _graph(spec)
    q = repetition_vector(graph)
    run = {"check": lambda: check_live(graph, q),
           "analyse": lambda: analyse(graph, simulate=False)}[what]
    start = time.process_time()
    try:
        run()
        named = "live"
    except DeadlockError as exc:
        named = [list(exc.actors), list(exc.channels)]
    print(json.dumps({"named": named, "cpu": time.process_time() - start}))


def _timed(code, what, spec):
    done = subprocess.run([sys.executable, __file__, "--child", what, spec],
                          capture_output=True, text=True, check=True,
                          env=dict(os.environ, MAPEVAL_CODE=str(code)))
    answer = json.loads(done.stdout)
    return answer["named"], answer["cpu"]


def main(specs, repeat, base):
    load = [os.getloadavg()[0]]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ways = (("before", previous.extract(base, Path(tmp))), ("now", previous.ROOT))
        for spec in specs:
            row = {"graph": Path(spec).name}
            for what in ("check", "analyse"):
                found = {}
                for _ in range(repeat):
                    for way, code in ways:
                        named, cpu = _timed(code, what, spec)
                        found[way] = (named, min(cpu, found.get(way, (None, cpu))[1]))
                row[what] = {way: {"named": named, "cpu": round(cpu, 3)}
                             for way, (named, cpu) in found.items()}
                row[what]["ratio"] = round(found["now"][1] / max(found["before"][1], 1e-3), 2)
            row["same"] = {way: row["check"][way]["named"] == row["analyse"][way]["named"]
                           for way in ("before", "now")}
            rows.append(row)
    load.append(os.getloadavg()[0])
    from moc.csdf_kperiodic import NAMING_CHECKS
    print(json.dumps({"load": load, "base": base, "naming_checks": NAMING_CHECKS,
                      "graphs": rows}, indent=1))


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--child"]:
        _child(*args[1:3])
        sys.exit()
    repeat, base = 3, BASE
    while args[:1] in (["--repeat"], ["--base"]):
        if args[0] == "--repeat":
            repeat = int(args[1])
        else:
            base = args[1]
        args = args[2:]
    if not args:
        sys.exit(__doc__)
    main(args, repeat, base)
