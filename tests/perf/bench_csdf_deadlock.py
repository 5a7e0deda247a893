"""The liveness check of cyclo-static graphs (``moc.liveness.check_live``, what ``mapeval
check`` runs) with the symbolic execution beside the K-periodic steps, against the
K-periodic steps alone (the execution's answers ignored): a measurement, not a test.
Prints one JSON object.

    python tests/perf/bench_csdf_deadlock.py FILE ...

Per SDF3 file (for instance ``g0012-dead.xml`` of the differential campaign on SDF3's
generator, seed 24, and other ``*-dead*`` files) and way, a child process reads the
graph and checks it: the verdict and the message (the circuit named can differ), the
CPU seconds of the check alone, the child's peak memory (MB, ``os.wait4``), and their
ratios (``ratio``: beside over alone, below 1 a gain).  ``load`` is
``os.getloadavg()`` before and after.  Measured in ``docs/notes.md`` (issue 42).
"""
from __future__ import annotations

import one_core  # noqa: F401  (first: this tree's code on sys.path)

import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402


def one(way, path):
    """In the child: check ``path`` the ``way`` given and print the verdict and CPU."""
    from mapping.cli.inputs import load_blocks
    from moc import csdf_kperiodic, repetition_vector
    from moc.errors import DeadlockError, SDFError
    from moc.liveness import check_live
    if way == "alone":
        csdf_kperiodic._Symbolic.live = lambda self, size: False
    graph = load_blocks(Path(path), "sdf")[0].bind()
    q = repetition_vector(graph)
    start = time.process_time()
    try:
        check_live(graph, q)
        verdict = "live"
    except DeadlockError as exc:
        verdict = str(exc).splitlines()[0]
    except SDFError as exc:
        verdict = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    print(json.dumps({"verdict": verdict, "firings": sum(q.values()),
                      "cpu": round(time.process_time() - start, 3)}))


def main(files):
    rows = []
    load = [os.getloadavg()[0]]
    for path in files:
        row = {"graph": Path(path).name}
        for way in ("alone", "beside"):
            child = subprocess.Popen([sys.executable, __file__, "--one", way, str(path)],
                                     stdout=subprocess.PIPE, text=True)
            out = child.stdout.read()
            _, _, usage = os.wait4(child.pid, 0)
            found = json.loads(out)
            row["firings"] = found.pop("firings")
            row[way] = {**found, "peak_mb": round(usage.ru_maxrss / 1024, 1)}
        row["same_verdict"] = (row["alone"]["verdict"] == "live") == \
            (row["beside"]["verdict"] == "live")
        row["ratio"] = {k: round(row["beside"][k] / max(row["alone"][k], 1e-3), 3)
                        for k in ("cpu", "peak_mb")}
        rows.append(row)
    load.append(os.getloadavg()[0])
    print(json.dumps({"load": load, "graphs": rows}, indent=1))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--one":
        one(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1:])
