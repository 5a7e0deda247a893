"""What naming a cyclo-static deadlock by its circuit of waits costs where the K-periodic
steps prove it first (``csdf_kperiodic.NAMING_CHECKS``, issue 42), against the code
before it, in one process: a measurement, not a test.  Prints one JSON object.

``before``: ``NAMING_CHECKS = 0`` (the steps' own circuit named, nothing more run) and
the symbolic execution's rounds looking at every actor (:func:`_rounds_over_all`, the
loop as it was); ``now``: this tree's code.

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


def _rounds_over_all(actors, channels, caps, n, left):
    """The rounds of ``moc.deadlock._component_firings`` as they were before issue 42's
    naming: every actor not finished looked at in every round."""
    from moc.deadlock import Cumulative, _SelfLoop
    index = {a: i for i, a in enumerate(actors)}
    tokens = [ch.delay for ch in channels]
    ins, outs = [[] for _ in actors], [[] for _ in actors]
    for c, ch in enumerate(channels):
        a, b = index[ch.src], index[ch.dst]
        ins[b].append((c, _SelfLoop(ch, n[ch.dst]), True) if a == b else
                      (c, Cumulative(ch.cons, n[ch.dst]), False))
        outs[a].append((c, Cumulative(ch.prod, n[ch.src]), a == b))
    remaining, period, fired = [caps[a] for a in actors], [n[a] for a in actors], \
        [0] * len(actors)

    def state():
        return tuple(tokens) + tuple(f % k for f, k in zip(fired, period))
    mark, mark_fired, power, length = state(), list(fired), 1, 0
    runs = checks = 0
    while True:
        progress = finished = False
        for i in range(len(actors)):
            if not remaining[i]:
                continue
            checks += 1 + len(ins[i])
            f, m = fired[i], remaining[i]
            for c, rates, loop in ins[i]:
                m = rates.most(f, tokens[c], m) if loop else min(m, rates.most(f, tokens[c]))
                if m <= 0:
                    break
            if m <= 0:
                continue
            for c, rates, loop in ins[i]:
                tokens[c] -= (rates.read if loop else rates)(f + m) - \
                    (rates.read if loop else rates)(f)
            for c, made, _ in outs[i]:
                tokens[c] += made(f + m) - made(f)
            fired[i] += m
            remaining[i] -= m
            finished = finished or not remaining[i]
            progress = True
            runs += 1
        if not progress:
            break
        left[0] -= runs
        left[1] -= checks
        runs = checks = 0
        while left[0] < 0 or left[1] < 0:
            yield
        now = state()
        length += 1
        if not finished and now == mark:
            delta = [f - g for f, g in zip(fired, mark_fired)]
            times = min((r // d for r, d in zip(remaining, delta) if d), default=0) - 1
            if times > 0:
                for i, d in enumerate(delta):
                    fired[i] += times * d
                    remaining[i] -= times * d
        if finished or now == mark or length == power:
            power = 1 if finished or now == mark else power * 2
            mark, mark_fired, length = now, list(fired), 0
    return dict(zip(actors, fired))


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
    from moc import csdf_kperiodic, deadlock, repetition_vector
    from moc.liveness import check_live
    from moc.timing import analyse
    naming, rounds = csdf_kperiodic.NAMING_CHECKS, deadlock._component_firings
    ways = (("before", 0, _rounds_over_all), ("now", naming, rounds))
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
                for way, checks, loop in ways:
                    csdf_kperiodic.NAMING_CHECKS, deadlock._component_firings = checks, loop
                    named, cpu = _named(run)
                    best = found.get(way, (named, cpu))[1]
                    found[way] = (named, min(cpu, best))
            csdf_kperiodic.NAMING_CHECKS, deadlock._component_firings = naming, rounds
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
