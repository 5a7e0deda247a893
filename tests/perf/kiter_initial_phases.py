"""Graphs with initialisation phases from Kiter's own generator (``-g GenerateRandomSDF
-p max_init_phase_quantity=N``), each answered three ways: Kiter's ``-a
KPeriodicThroughput``, ``mapeval``'s throughput (both orders of an actor's firings; in
this process) and the self-timed execution event by event (``tests/initialised_run.py``,
an oracle that shares no code with ``moc``'s analyses), and classified: equal to
Kiter's, or which of the three disagree (issue 42).  A differential check, not a test.

    python tests/perf/kiter_initial_phases.py [--kiter-bin KITER/Release/bin/kiter]
        [--draws 200] [--seed 1] [--keep DIR [--again [--only g3.xml ...]]]

Kiter's program comes from ``--kiter-bin`` or ``KITER_BIN``; without it the script
prints why and exits with status 0.  The settings are drawn per graph (3-8 actors,
channels from the actors to twice them, rates up to 2-8, 1-3 periodic and 0-2
initialisation phases, times up to 1-3).  Prints one JSON document: per graph its
settings, the three answers and its class, then the count of each class.
"""
from __future__ import annotations

import one_core  # noqa: F401  (first: this tree's code on sys.path)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import tempfile  # noqa: E402
from collections import Counter  # noqa: E402
from fractions import Fraction  # noqa: E402
from pathlib import Path  # noqa: E402

from bench_kiter import kiter_process, same_period  # noqa: E402
from bench_kiter_generator import generate  # noqa: E402
from initialised_run import run as execute  # noqa: E402


def draw(rng: random.Random, wide: bool = False) -> dict[str, int]:
    """The generator's settings of one graph (``wide``: 3-14 actors, rates up to 16,
    1-5 periodic and up to 3 initialisation phases, times up to 6)."""
    v = rng.randint(3, 14 if wide else 8)
    e = rng.randint(v, 2 * v)
    return {"min_vertices_count": v, "max_vertices_count": v, "min_edges_count": e,
            "max_edges_count": e, "max_weight": rng.randint(2, 16 if wide else 8),
            "max_duration": rng.randint(1, 6 if wide else 3),
            "max_phase_quantity": rng.randint(1, 5 if wide else 3),
            "max_init_phase_quantity": rng.randint(1, 3) if wide else 2,
            "seed": rng.randint(1, 10 ** 6)}


def mapeval(path: Path) -> dict:
    """mapeval's exact period under each order of an actor's firings, or its error."""
    from dsl import read_sdf3
    from moc.errors import DeadlockError
    from moc.timing import throughput
    from moc.timing import analyse
    graph = read_sdf3(path)
    try:
        periods = {order: str(throughput(graph, order=order).period)
                   for order in ("ends", "starts")}
    except DeadlockError as exc:
        return {"deadlock": str(exc)[:200]}
    found = analyse(graph)
    if found.schedule is not None:
        periods["firings"] = {a: [(str(f.start), str(f.end)) for f in fs]
                              for a, fs in found.schedule.items()}
        periods["latency"] = str(found.latency)
    if found.buffers is not None:
        periods["buffers"] = {c: str(v) for c, v in found.buffers.items()}
    return periods


def simulated(path: Path, events: int) -> dict:
    """The period the event-by-event execution repeats with, or ``deadlock``."""
    from dsl import read_sdf3
    from moc.repetition import repetition_vector
    graph = read_sdf3(path).bind()
    seen = {}
    outcome, found = execute(graph, repetition_vector(graph), events, seen)
    if outcome == "period":
        return {"outcome": outcome, "period": str(found),
                "firings": {a: [(str(s), str(e)) for s, e in fs]
                            for a, fs in seen["firings"].items()},
                "buffers": {c: str(v) for c, v in seen["buffers"].items()}}
    if outcome == "long":
        return {"outcome": outcome, "stalled": found["stalled"],
                "pace": None if found["pace"] is None else float(found["pace"])}
    return {"outcome": outcome, **({} if found is None else {"waiting": found})}


def classify(row: dict) -> str:
    mine, kiter, sim = row["mapeval"], row["kiter"], row["execution"]
    if sim["outcome"] in ("deadlock", "initialisation unfinished"):
        mine_ok = "deadlock" in mine
    elif sim["outcome"] == "period":
        mine_ok = "deadlock" not in mine and Fraction(mine["ends"]) == Fraction(sim["period"])
    elif "deadlock" in mine:    # part of the graph stops, the rest fires on
        mine_ok = bool(sim["stalled"]) or None
    else:                       # tokens pile up: the pace over the second half
        mine_ok = sim["pace"] is not None and \
            abs(sim["pace"] - float(Fraction(mine["ends"]))) <= 0.01 * sim["pace"] or None
    if mine_ok and sim["outcome"] == "period":
        # the transient too: the first iteration's firings and the buffer maxima
        if "firings" in mine and mine["firings"] != sim["firings"] or \
                "buffers" in mine and mine["buffers"] != sim["buffers"]:
            return "mapeval's transient != execution"
    if kiter["status"] not in ("answered", "inf"):
        return f"kiter {kiter['status']}" + ("" if mine_ok else ", mapeval != execution")
    kiter_period = Fraction(0) if kiter["status"] == "inf" else None
    if "deadlock" in mine:
        agree = False
    elif kiter_period is not None:
        agree = Fraction(mine["ends"]) == 0
    else:
        agree = same_period(mine["ends"], kiter["period"])
    if agree:
        return "equal" if mine_ok is not False else "equal, both != execution"
    if mine_ok:
        found = ("kiter live, execution deadlocks" if "deadlock" in mine else
                 "kiter inf, execution finite" if kiter["status"] == "inf" else
                 "kiter's period != execution's")
        return found + (" (in part, the rest fires on)" if "deadlock" in mine and
                        sim["outcome"] == "long" else " (its pace)" if
                        sim["outcome"] == "long" else "")
    return "mapeval != execution" if mine_ok is False else "differ, execution too long"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiter-bin", default=os.environ.get("KITER_BIN"))
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--wide", action="store_true", help="wider settings (see draw)")
    parser.add_argument("--again", action="store_true", help="with --keep: the graphs "
                        "kept there before, not generated again")
    parser.add_argument("--only", nargs="*", help="with --again: these files only")
    args = parser.parse_args()
    if not args.kiter_bin or not Path(args.kiter_bin).is_file():
        print(json.dumps({"skipped": "Kiter's program not given (--kiter-bin or KITER_BIN)"}))
        return
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        rows = campaign(args, args.keep)
    else:
        with tempfile.TemporaryDirectory(prefix="kiter-init-") as folder:
            rows = campaign(args, Path(folder))
    print(json.dumps({"graphs": rows, "classes": Counter(r["class"] for r in rows)},
                     indent=1))


def campaign(args, folder: Path) -> list[dict]:
    rng = random.Random(args.seed)
    rows = []
    for n in range(args.draws):
        path = folder / f"g{n}.xml"
        settings = draw(rng, args.wide)
        if args.again:
            if not path.exists() or (args.only and path.name not in args.only):
                continue
        elif not generate(args.kiter_bin, settings, path) or ";" not in path.read_text():
            continue
        row = {"graph": path.name, "settings": settings,
               "kiter": kiter_process(args.kiter_bin, path, args.timeout),
               "mapeval": mapeval(path), "execution": simulated(path, args.events)}
        row["class"] = classify(row)
        rows.append(row)
    return rows


if __name__ == "__main__":
    main()
