"""Kiter's K-periodic period against ours under both orders of an actor's own firings,
on random cyclo-static graphs whose firings overlap (no self-loop holds an actor to one
at a time), and print the tally as JSON.

    PYTHONPATH=$PWD python tests/oracle_sdf3/compare_kiter_orders.py KITER [GRAPHS] [SEED]

``KITER``: a checkout of github.com/bbodin/kiter built by ``make release`` (its
``Release/bin/kiter``; see ``record_kiter.py``).  Each graph is a ring of 2-4 actors
of 1-3 phases (times 1-9) with up to two chords, rates of one cycle of phases split at
random over the phases (0 in a phase too), so that the graph is consistent; each
channel that goes back holds one iteration's tokens or more.  A graph goes to Kiter as
``mapeval export sdf3`` writes it.
"""
from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import tempfile
from fractions import Fraction
from pathlib import Path


def random_graph(rng: random.Random, name: str):
    from moc import SDFGraph
    from moc.phases import Phases

    def split(total, parts):
        cuts = sorted(rng.randint(0, total) for _ in range(parts - 1))
        values = [b - a for a, b in zip([0] + cuts, cuts + [total])]
        return Phases(values) if parts > 1 else values[0]
    k = rng.randint(2, 4)
    n = [rng.randint(1, 3) for _ in range(k)]
    g = SDFGraph(name)
    for i in range(k):
        times = [rng.randint(1, 9) for _ in range(n[i])]
        g.add_actor(f"a{i}", exec=Phases(times) if n[i] > 1 else times[0])
    w = [rng.randint(1, 3) for _ in range(k)]
    pairs = [(i, (i + 1) % k) for i in range(k)]
    pairs += [(rng.randrange(k), rng.randrange(k)) for _ in range(rng.randint(0, 2))]
    for c, (i, j) in enumerate(pairs):
        g.add_channel(f"a{i}", f"a{j}", f"c{c}", prod=split(w[j], n[i]),
                      cons=split(w[i], n[j]),
                      delay=w[i] * w[j] + rng.randint(0, 3) if j <= i else rng.randint(0, 1))
    return g


def kiter_period(kiter: Path, graph) -> Fraction | None:
    from dsl import write_sdf3
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "graph.xml"
        write_sdf3(graph, xml)
        out = subprocess.run([str(kiter), "-f", str(xml), "-a", "KPeriodicThroughput"],
                             capture_output=True, text=True, timeout=120).stdout
    line = re.search(r"^KPeriodic Period is\s+(\S+)$", out, re.M)
    # printed with six decimals: the nearest fraction of a small denominator
    return None if line is None else Fraction(line.group(1)).limit_denominator(1000)


def main(argv):
    from moc.errors import SDFError
    from moc.timing import prepared, self_timed_period
    kiter = Path(argv[1]) / "Release" / "bin" / "kiter"
    count = int(argv[2]) if len(argv) > 2 else 60
    rng = random.Random(int(argv[3]) if len(argv) > 3 else 1)
    tally, cases = {}, []
    for number in range(count):
        graph = random_graph(rng, f"random{number}")
        bound, durations, q, _ = prepared(graph)
        try:
            ours = {order: self_timed_period(bound, durations, q, order).period
                    for order in ("ends", "starts")}
        except SDFError:
            continue
        theirs = kiter_period(kiter, graph)
        key = "orders differ" if ours["ends"] != ours["starts"] else "orders agree"
        key += ", kiter: " + ("starts" if theirs == ours["starts"] else
                              "ends" if theirs == ours["ends"] else
                              "below both" if theirs is not None and theirs < min(
                                  ours.values()) else "other")
        tally[key] = tally.get(key, 0) + 1
        cases.append({"graph": number, "ends": str(ours["ends"]),
                      "starts": str(ours["starts"]), "kiter": str(theirs)})
    print(json.dumps({"tally": tally, "cases": cases}, indent=1))


if __name__ == "__main__":
    main(sys.argv)
