"""Kiter's benchmark suite and generated graphs analysed in one process (issue 42): prints
JSON, per graph the throughput, Kiter's period where known and the time; the median and
the largest time; the average per graph; the graphs answered, those in error, over 10 s
or different from Kiter's period; the load average (a measurement, not a test).

Measured (load average 1.7 on two cores, throughput only, wall seconds): 38 graphs
answered, none over 10 s, median 0.007 s, largest autogen1 7.0 s, autogen5 6.9 s,
JPEG2000_sized 0.86 s; 1,000 generated 10-actor graphs at 4.5 ms each.  Wall times
follow the load: at load 2.6 autogen1 took 7.0 s in one run and 11.3 s in another.
With ``--simulate`` (the default ``analyse``: buffers and schedule too) at a load of
5.7: every buffer answered but those of autogen2/autogen3 (past the limit firings) and
faustExample's unbounded one, median 0.029 s, autogen1 19.5 s, autogen5 28.0 s (the
throughput about half of each), the rest at most 3.2 s (autogen4), 1.65 s per graph on
average; 1,000 generated graphs at 15.2 ms each.  Before the buffers came from the
firings' precedences (state space, load 8.5): autogen1 40 s, autogen5 122 s, H264,
JPEG2000 and PDectect with buffers unexplored, median 0.067 s.

    python tests/perf/bench_kiter.py [--kiter KITER/benchmarks] [--generated 1000]

Kiter's ``benchmarks/`` folder (``git clone https://github.com/bbodin/kiter``) comes from
``--kiter`` or the environment variable ``KITER_BENCHMARKS``; without it that part is
skipped.  Kiter's periods known here are those of ``tests/data/kiter_csdf.json``
(matched by file name).  Generated graphs: rings of 10 actors of 1-3 phases with two
chords, rates split over the phases, live by their initial tokens.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiter", default=os.environ.get("KITER_BENCHMARKS"))
    parser.add_argument("--generated", type=int, default=1000)
    parser.add_argument("--actors", type=int, default=10)
    parser.add_argument("--exclude", action="append", default=[], metavar="NAME",
                        help="skip Kiter's graph NAME (file name without .xml)")
    parser.add_argument("--simulate", action="store_true",
                        help="schedule and buffers too (default: throughput only)")
    args = parser.parse_args()
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
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
