"""``mapeval analyse`` (the default order of an actor's firings, ends in order) against
the event-by-event execution of ``tests/initialised_run.py`` (written for the tests,
no code shared with ``moc``'s analyses) on the files of a campaign: period, buffer
maxima, the first iteration's firings and the latency (issue 42).

    python tests/oracle_sdf3/execution_check.py OUTDIR [--firings N] [--events N]

Run from the repository root, with mapeval installed.  ``OUTDIR`` holds the ``.xml``
files of a campaign (``campaign.py``, ``campaign_kiter.py``); the ``*.opt.xml``
settings and damaged ``bad-*`` copies are left out.  All files go through one
``analyse --json-lines`` process; each file whose iteration has at most ``--firings``
firings (initialisation firings included) and whose actors each read a channel (a
source would start firings without bound at an instant) is then executed, with a
limit of ``--events`` instants and ``--seconds``.  A buffer the execution cannot bound
(``inf`` in mapeval: tokens pile up, no state recurs) is compared only as such.
Prints a tally and the differing files as JSON, written to
``OUTDIR/execution-ORDER.json``.  ``--csdf-order starts`` compares that order of
``analyse`` with an execution whose firings of an actor end in any order (Kiter's).
``--precedences`` decides the period or deadlock of a file past those limits (or with
a source) by ``tests/perf/maxplus_execution.py`` (under ``starts`` its Kiter's rule).
"""
from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[2])]   # this tree before tests/
sys.path.append(str(Path(__file__).resolve().parents[1]))
sys.path.append(str(Path(__file__).resolve().parents[1] / "perf"))
from initialised_run import run as execute  # noqa: E402
from maxplus_execution import analyse_graph  # noqa: E402

MAPEVAL = [sys.executable, "-m", "mapping.cli"]


class Slow(Exception):
    pass


def _alarm(*_):
    raise Slow


def by_precedences(graph, doc: dict, dead: bool, seconds: int, order: str,
                   why: str) -> tuple[str, dict]:
    """The period or deadlock alone, from ``tests/perf/maxplus_execution.py`` (under
    ``starts`` Kiter's rule, not a count of tokens): for what the event-by-event
    execution cannot reach (``why``)."""
    try:
        found = analyse_graph(graph, order, seconds)
    except TimeoutError:
        return why + ", precedences slow", {}
    if found["verdict"] == "deadlock":
        return ("equal deadlock" if dead else "differ: deadlock") + " (precedences)", {}
    if found["verdict"] != "period":
        return f"{why}, precedences {found['verdict']}", {}
    if dead:
        return "differ: live (precedences)", {"period": [None, found["period"]]}
    ours = (doc.get("exact") or {}).get("period")
    if ours is not None and Fraction(ours) == Fraction(found["period"]):
        return "equal period (precedences)", {}
    return "differ (precedences)", {"period": [ours, found["period"]]}


def compare(path: Path, doc: dict, firings: int, events: int,
            seconds: int = 5, order: str = "ends",
            precedences: bool = False) -> tuple[str, dict]:
    from dsl import read_sdf3
    from moc.repetition import repetition_vector
    dead = "error" in doc and "deadlock" in doc["error"]["message"]
    if "error" in doc and not dead:
        return "mapeval error", {"message": doc["error"]["message"][:160]}
    graph = read_sdf3(path).bind()
    q = repetition_vector(graph)
    m = sum((a.initial_phases.count if a.initial_phases else 0)
            for a in graph.actors.values())

    def past(why):
        return by_precedences(graph, doc, dead, 6 * seconds, order, why) \
            if precedences else (why, {})
    if sum(q.values()) + m > firings:
        return past("too many firings")
    if any(not any(ch.dst == a for ch in graph.channels.values()) for a in graph.actors):
        return past("a source")
    record: dict = {}
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        try:
            outcome, found = execute(graph, q, events, record,
                                     ends_in_order=order == "ends")
        finally:
            signal.alarm(0)
    except Slow:                # also where the alarm rings as it is being cancelled
        return past("execution slow")
    exact = doc.get("exact") or {}
    if outcome in ("deadlock", "initialisation unfinished"):
        return ("equal deadlock" if dead else "differ: deadlock"), {}
    if outcome != "period":
        return past("execution long")
    if dead:
        return "differ: live", {}
    diff = {}
    if exact.get("period") is None or Fraction(exact["period"]) != found:
        diff["period"] = [exact.get("period"), str(found)]
    buffers = doc.get("buffers")
    if buffers is not None:
        for ch, value in buffers.items():
            if value is not None and value != "inf" and value != record["buffers"][ch]:
                diff.setdefault("buffers", {})[ch] = [value, record["buffers"][ch]]
    schedule = doc.get("schedule")
    if schedule is not None:
        for a, rows in schedule.items():
            ours = [(r["start"], r["end"]) for r in rows]
            theirs = record["firings"][a]
            if len(ours) != len(theirs) or any(   # JSON gives a fraction as a float
                    abs(x - float(y)) > 1e-9 * max(1, abs(x))
                    for pair, other in zip(ours, theirs) for x, y in zip(pair, other)):
                diff.setdefault("schedule", []).append(a)
    if exact.get("latency") is not None:
        last = max((e for fs in record["firings"].values() for _, e in fs), default=0)
        if Fraction(exact["latency"]) != last:
            diff["latency"] = [exact["latency"], str(last)]
    checked = ("buffers" if buffers is not None else "") + \
        (" schedule" if schedule is not None else "")
    return ("equal " + checked).strip() if not diff else "differ", diff


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--firings", type=int, default=2000)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--csdf-order", default="ends", choices=["ends", "starts"],
                        help="the order of an actor's own firings, of mapeval and of the "
                        "execution alike (starts: Kiter's rule)")
    parser.add_argument("--precedences", action="store_true",
                        help="past those limits (or with a source), the period or deadlock "
                        "of tests/perf/maxplus_execution.py, 6 times --seconds")
    args = parser.parse_args(argv)
    files = sorted(p for p in args.outdir.glob("*.xml")
                   if not p.name.endswith(".opt.xml") and not p.name.startswith("bad-"))
    out = subprocess.run(MAPEVAL + ["analyse", "--json-lines", "--csdf-order",
                                    args.csdf_order, *map(str, files)],
                         capture_output=True, text=True).stdout
    docs = {Path(d["file"]).name: d for d in map(json.loads, out.splitlines())}
    tally, differ = Counter(), []
    for path in files:
        verdict, diff = compare(path, docs.get(path.name, {"error": {"message": "none"}}),
                                args.firings, args.events, args.seconds, args.csdf_order,
                                args.precedences)
        print(path.name, verdict, file=sys.stderr, flush=True)
        tally[verdict] += 1
        if verdict.startswith("differ"):
            differ.append({"file": path.name, **diff})
    found = {"files": len(files), "tally": tally, "differ": differ}
    print(json.dumps(found, indent=1))
    (args.outdir / f"execution-{args.csdf_order}.json").write_text(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
