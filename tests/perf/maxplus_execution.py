"""The self-timed execution of a cyclo-static graph with initialisation phases, computed
firing by firing from its precedences rather than instant by instant, so that it runs
hundreds of iterations of 10^5 firings: a check of a period that owes nothing to
``moc``'s analyses (only the reader and the repetition vector are mapeval's).

    python tests/perf/maxplus_execution.py FILE... [--order ends|starts] [--seconds S]

An actor's firing ``ν`` is initialisation phase ``ν`` while ``ν < m``, then periodic
phase ``(ν − m) mod n``; it reads ``C(ν)`` tokens in all from a channel and its
producer has written ``P(j)`` after its firing ``j``.  Firing ``ν`` starts at
``S(ν) = max(S(ν−1), E_p(j))`` over the channels it reads, ``j`` the least with
``P(j) ≥ C(ν) − M0`` (none where ``C(ν) ≤ M0``), and ends at ``E(ν) = max(S(ν) + d,
E(ν−1))`` under ``ends`` (SDF3's and mapeval's default: firings end in order, so the
count of tokens reaches ``C(ν) − M0`` exactly when firing ``j`` ends) or ``S(ν) + d``
under ``starts`` (Kiter's model: the consumer waits for the firing that writes the last
token it reads; see ``docs/reference/dataflow.md``).  These are the ASAP times of the
precedence graph (Bodin, Munier-Kordon, de Dinechin, DAC 2016: the K-periodic
constraints are these precedences folded over ``K`` iterations).

The period: past the initialisation, firing ``ν + c·q(a)`` depends on the shifted
dependencies of firing ``ν``, so once every firing of ``L`` consecutive iterations
(``L`` above the longest reach of a dependency back, in iterations) is its ``c``-th
predecessor's plus one ``Δ``, by induction on the precedences every later one is too,
and the execution is periodic: ``Δ / c`` a (global) iteration, exactly.  A graph whose
strongly connected components run at different paces never repeats that way (tokens
pile up); the period of the whole is then the largest of its components' executed
apart, each with the channels from outside taken away (a component's pace is the
largest of its own and its predecessors'; max-plus algebra, Baccelli et al. 1992, ch. 3),
and the whole graph is still run to see every actor fire (else a deadlock).  Prints
one JSON line a file: the period as a fraction and, per component, its own, ``c``,
``i0`` (the first iteration of the window checked, past the transient) and the
iterations run; or ``deadlock`` with the actors that stop; ``too large`` past
``--budget`` firings to run; ``unknown`` (a component's pace over the last half where
no repetition was seen).  ``tests/oracle_sdf3/execution_check.py --precedences`` uses it.
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
import time as clock
from bisect import bisect_left
from fractions import Fraction
from itertools import accumulate
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path[:0] = [str(HERE.parents[2]), str(HERE.parents[1])]     # the repository, tests/

from stepped import phase, phase_counts  # noqa: E402


class Model:
    """Per actor its initialisation phases and one cycle of periodic phases (rates and
    times), per channel the cumulative counts: everything but the times of firings,
    in memory proportional to the phases, not to the iteration."""

    def __init__(self, graph, q, actors=None):
        actors = list(graph.actors) if actors is None else list(actors)
        keep = set(actors)
        n = phase_counts(graph)
        self.actors, self.q = actors, {a: q[a] for a in actors}
        self.n = {a: n[a] for a in actors}
        self.m, self.init_d, self.per_d = {}, {}, {}
        for a in actors:
            init = graph.actors[a].initial_phases
            self.m[a] = 0 if init is None else init.count
            assert q[a] % n[a] == 0, (a, q[a], n[a])
            self.init_d[a] = [] if init is None else \
                list(init.attrs.get("exec", (0,) * init.count))
            self.per_d[a] = [phase(graph.actors[a].attrs.get("exec", 0), r)
                             for r in range(n[a])]
        self.ins = {a: [] for a in actors}
        for ch in graph.channels.values():
            if ch.src not in keep or ch.dst not in keep:
                continue
            p, a = ch.src, ch.dst
            ip, ia = graph.actors[p].initial_phases, graph.actors[a].initial_phases
            pinit = [] if ip is None else list(ip.prod.get(ch.name, (0,) * ip.count))
            cinit = [] if ia is None else list(ia.cons.get(ch.name, (0,) * ia.count))
            pcycle = list(accumulate(phase(ch.prod, r) for r in range(n[p])))
            ccycle = list(accumulate(phase(ch.cons, r) for r in range(n[a])))
            total = pcycle[-1] * (q[p] // n[p])
            assert total == ccycle[-1] * (q[a] // n[a]), ch.name
            self.ins[a].append(Channel(ch.name, p, ch.delay, list(accumulate(pinit)),
                                       pcycle, list(accumulate(cinit)), ccycle, total,
                                       self.m[p], n[p]))

    def time(self, a, k):
        m = self.m[a]
        return self.init_d[a][k] if k < m else self.per_d[a][(k - m) % self.n[a]]


class Channel:
    """``pcycle``, ``ccycle``: cumulative rates over one cycle of the producer's and
    the consumer's periodic phases; ``total``: tokens an iteration."""

    def __init__(self, name, src, delay, pinit, pcycle, cinit, ccycle, total, mp, np_):
        self.name, self.src, self.delay = name, src, delay
        self.pinit, self.pcycle, self.cinit, self.ccycle = pinit, pcycle, cinit, ccycle
        self.total, self.mp, self.np = total, mp, np_
        self.pinit_total = pinit[-1] if pinit else 0
        self.cinit_total = cinit[-1] if cinit else 0

    def consumed(self, k, m, n):
        """``C(k)``: tokens read by the consumer's firings 0..k (``n`` phases)."""
        if k < m:
            return self.cinit[k]
        cycles, r = divmod(k - m, n)
        return self.cinit_total + cycles * self.ccycle[-1] + self.ccycle[r]

    def writer(self, need):
        """The producer's least firing ``j`` with ``P(j) ≥ need`` (``need > 0``)."""
        if need <= self.pinit_total:
            return bisect_left(self.pinit, need)
        if self.pcycle[-1] == 0:
            return None                         # never written: the consumer waits
        cycles, rest = divmod(need - self.pinit_total - 1, self.pcycle[-1])
        return self.mp + cycles * self.np + bisect_left(self.pcycle, rest + 1)


def execute(model: Model, order="ends", iterations=64, deadline=None):
    """Runs until every actor has made ``iterations`` iterations past its
    initialisation (a producer more where a consumer waits on it), or stops.
    Returns ``(S, E, done)``: each actor's start and end times of its firings
    ``0..done[a]−1`` (lists)."""
    acts = model.actors
    S = {a: [] for a in acts}
    E = {a: [] for a in acts}
    goal = {a: model.m[a] + iterations * model.q[a] for a in acts}
    ends = order == "ends"
    moved = True
    rounds = 0
    while moved:
        moved = False
        rounds += 1
        if deadline is not None and rounds % 64 == 0 and clock.monotonic() > deadline:
            raise TimeoutError
        for a in acts:
            Sa, Ea = S[a], E[a]
            m, n = model.m[a], model.n[a]
            ins = model.ins[a]
            k = len(Sa)
            while k < goal[a]:
                t = Sa[-1] if k else 0
                blocked = False
                for ch in ins:
                    need = ch.consumed(k, m, n) - ch.delay
                    if need <= 0:
                        continue
                    j = ch.writer(need)
                    Ep = E[ch.src]
                    if j is None or j >= len(Ep):
                        if j is not None and j >= goal[ch.src]:
                            goal[ch.src] = j + 1    # a producer runs on as far as
                            moved = True            # its consumers' goals need
                        blocked = True
                        break
                    if Ep[j] > t:
                        t = Ep[j]
                e = t + model.time(a, k)
                if blocked:
                    break
                if ends and k and Ea[-1] > e:
                    e = Ea[-1]
                Sa.append(t)
                Ea.append(e)
                k += 1
                moved = True
                if deadline is not None and not k & 0x3FFF and clock.monotonic() > deadline:
                    raise TimeoutError
    return S, E, {a: len(S[a]) for a in acts}


def reach(model: Model) -> tuple[int, int]:
    """Iterations back and ahead, at most, from a periodic firing to a firing it waits
    for (ahead: an initialisation that read more than the producer's wrote).  Firing
    ``r`` of iteration ``i`` waits for the producer's iteration ``i + ⌊(need − 1) /
    total⌋``, ``need`` growing with ``r``: its first and last firings bound it."""
    back, ahead = 1, 0
    for a in model.actors:
        for ch in model.ins[a]:
            if not ch.total:
                continue
            for read in (ch.ccycle[0], ch.total):
                need = ch.cinit_total + read - ch.delay - ch.pinit_total
                shift = (need - 1) // ch.total
                back, ahead = max(back, 1 - shift), max(ahead, shift)
    return back, ahead


def period(model: Model, order="ends", deadline=None, start=32, budget=10**7):
    """``("period", Δ/c, c, i0, iterations)`` from a uniform shift as above over the
    last iterations run, doubling them while the firings stay within ``budget``;
    ``("deadlock", actors)``; ``("unknown", pace)`` (the last half's slowest)."""
    back, ahead = reach(model)
    L = back + 1
    size = sum(model.q.values())
    iterations = max(start, 4 * L)
    if (iterations + ahead + 1) * size > budget:
        return ("too large", size)
    while True:
        S, E, done = execute(model, order, iterations + ahead + 1, deadline)
        stuck = [a for a in model.actors if done[a] < model.m[a] + iterations * model.q[a]]
        if stuck:
            return ("deadlock", stuck)
        base = {a: [S[a][model.m[a] + i * model.q[a]] for i in range(iterations)]
                for a in model.actors}
        a0 = model.actors[0]
        for c in range(1, iterations):
            i0 = iterations - L - c
            if i0 < L:
                break
            delta = base[a0][i0 + c] - base[a0][i0]
            if all(base[a][i + c] - base[a][i] == delta
                   for i in range(i0, i0 + L) for a in model.actors) and \
                    _exact(model, S, E, i0, c, L, delta):
                return ("period", Fraction(delta, c), c, i0, iterations)
        if 2 * iterations * size > budget:
            half = iterations // 2
            pace = max(Fraction(base[a][iterations - 1] - base[a][half],
                                iterations - 1 - half) for a in model.actors)
            return ("unknown", pace)
        iterations *= 2


def _exact(model, S, E, i0, c, L, delta):
    """The shift checked firing by firing (the hashes only found it)."""
    for a in model.actors:
        m, q = model.m[a], model.q[a]
        lo, hi = m + i0 * q, m + (i0 + L) * q
        for X in (S[a], E[a]):
            for k in range(lo, hi):
                if X[k + c * q] - X[k] != delta:
                    return False
    return True


def components(graph, actors=None):
    """Strongly connected components (networkx's), in the channels among ``actors``."""
    import networkx as nx
    actors = list(graph.actors) if actors is None else list(actors)
    keep = set(actors)
    g = nx.DiGraph()
    g.add_nodes_from(actors)
    g.add_edges_from((ch.src, ch.dst) for ch in graph.channels.values()
                     if ch.src in keep and ch.dst in keep)
    return [sorted(c, key=actors.index) for c in nx.strongly_connected_components(g)]


def analyse(path, order="ends", seconds=60, **limits):
    from dsl import read_sdf3
    return {"file": Path(path).name,
            **analyse_graph(read_sdf3(path), order, seconds, **limits)}


def analyse_graph(graph, order="ends", seconds=60, whole_iterations=4, budget=10**7):
    """The verdict on a graph (``SDFGraph``, bound here) as a dict, as printed; past
    ``budget`` firings to run (the times of each are kept) ``too large``."""
    from moc.repetition import repetition_vector
    graph = graph.bind()
    q = repetition_vector(graph)
    deadline = clock.monotonic() + seconds
    result = {"order": order}
    whole = Model(graph, q)
    runs = whole_iterations + reach(whole)[1] + 1
    if runs * sum(q.values()) + sum(whole.m.values()) > budget:
        return {**result, "verdict": "too large", "firings": sum(q.values())}
    S, E, done = execute(whole, order, runs, deadline)
    stuck = [a for a in whole.actors if done[a] < whole.m[a] + whole_iterations * whole.q[a]]
    if stuck:
        result.update(verdict="deadlock", stuck=stuck,
                      unstarted_initialisation=[a for a in stuck if done[a] < whole.m[a]])
        return result
    comps = components(graph)
    if len(comps) == 1:
        found = period(whole, order, deadline)
        parts = [(comps[0], found)]
    else:
        parts = [(comp, period(Model(graph, q, comp), order, deadline)) for comp in comps]
    result["components"] = [{"actors": len(c), "outcome": f[0],
                             "value": f[1] if f[0] in ("deadlock", "too large")
                             else str(f[1]),
                             **({"c": f[2], "i0": f[3], "iterations": f[4]}
                                if f[0] == "period" else {})} for c, f in parts]
    if all(f[0] == "period" for _, f in parts):
        result.update(verdict="period", period=str(max(f[1] for _, f in parts)))
    else:
        result.update(verdict="unknown")
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--order", default="ends", choices=["ends", "starts"])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--budget", type=float, default=1e7,
                        help="most firings to run (their times are kept: ~80 bytes each)")
    parser.add_argument("--whole-iterations", type=int, default=4,
                        help="iterations of the whole graph run to see every actor fire")
    args = parser.parse_args(argv)
    for path in args.files:
        began = clock.monotonic()
        try:
            found = analyse(path, args.order, args.seconds, budget=int(args.budget),
                            whole_iterations=args.whole_iterations)
        except TimeoutError:
            found = {"file": path.name, "order": args.order, "verdict": "slow"}
        except Exception as error:      # an inconsistent or damaged file: said, not fatal
            found = {"file": path.name, "order": args.order, "verdict": "error",
                     "message": str(error)[:160]}
        found["seconds"] = round(clock.monotonic() - began, 2)
        print(json.dumps(found), flush=True)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    main()
