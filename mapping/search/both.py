"""The ``both`` engine of ``exact`` under a bottleneck aggregation: CP-SAT
(:mod:`~mapping.search.cpsat`), the lower bounds (the cluster relaxation, the packing,
split and partition bounds), the MILP (:mod:`~mapping.search.exact`) and the
large-neighbourhood search (:mod:`~mapping.search.lns`) on two cores, in one of two
orders (:func:`schedule`), joined into one anytime result."""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import replace

from mapping.search.common import proves_optimal, relative_gap, remaining, trace_step

#: the share of the rest that ``both`` gives CP-SAT before the MILP: the MILP never
#: improved on CP-SAT's gap (82 runs of ``tests/perf/bench_exact_max.py``), but the
#: neighbourhoods run beside it on the core it leaves idle, and from CP-SAT's mapping
#: they found better ones than CP-SAT's own search in the time (0.75 before: 45 x 12
#: seed 0 at 0.46% against 0.68-0.89%, 120 s under load; the research notes)
CPSAT_SHARE = 0.5

#: ``both`` runs CP-SAT beside the bounds (one worker, in a thread, from the start to
#: the end) instead of after them on instances of at most this many actor-PE pairs:
#: there CP-SAT's search proves what the bounds cannot (30 actors x 8 PEs, seeds 0
#: and 2 of ``tests/perf/bench_exact_max.py``, in 8-13 deterministic seconds, 20 s of
#: wall clock at a load average of 4), and its proof needs the time the bounds take
#: (the research notes); on 30 x 12 (``a30_p12_s2``) it proved nothing and slowed the
#: partition bound (a gap of 2.98% against 0.41% in order, 120 s)
BESIDE_PAIRS = 300
#: the share of the time limit that the proof of the best packing leaves, beside CP-SAT,
#: to the packing bound's bisection where it has proven nothing
PROOF_TAIL = 0.1
#: CP-SAT's workers beside the bounds: the bounds take the other core
BESIDE_WORKERS = 1
#: the share of the time limit that ``both`` in order gives the local search of the
#: packing (:func:`polished`) before the bounds, and again after them: on 45 x 12
#: (``--comm 0.1``) it found from a random mapping in 11-47 s mappings 0.14-0.35% above
#: the packing bound, where the engines had ended 0.28-0.69% above it (the research
#: notes, h56prove)
POLISH_SHARE = 0.2
#: the share of the time limit that ``both`` in order gives the proof of the best packing
#: with the CNs charged (:func:`~mapping.search.packing.proof`) where a CN carries nearly
#: the bottleneck, in place of the packing bound's bisection: on the stored
#: ``a50_p8_s3`` its decisions took the mapping from 5.2967e-5 to 5.2579e-5 in 30 s and
#: to 5.2555e-5 in 90 s (the research notes, h57comm)
CHARGED_SHARE = 0.3
#: the share of the time limit that ``both`` in order gives the cluster relaxation, the
#: bound, where the proof with the CNs charged runs: on ``a50_p8_s3`` it converges in
#: 27-38 s alone and beside the neighbourhoods, but 5 of 10 runs cut it at 48 s (0.4),
#: 0.3-0.4% below its optimum (the research notes)
CHARGED_RELAXATION_SHARE = 0.5
#: the two orders of ``both`` (``schedule`` in the JSON)
IN_ORDER, BESIDE = "bounds, cpsat, milp", "cpsat beside the bounds"


def schedule(setup) -> str:
    """How ``both`` orders its engines on ``setup``: ``"cpsat beside the bounds"`` on
    instances of at most :data:`BESIDE_PAIRS` allowed actor-PE pairs, else ``"bounds,
    cpsat, milp"``."""
    pairs = int(setup.space.allowed.sum())
    return BESIDE if pairs <= BESIDE_PAIRS else IN_ORDER


def solve_both(setup, time_limit: float | None = None):
    """The cluster relaxation's bound (:func:`~mapping.search.exact.cluster_floor`)
    first, then the packing bound (:func:`~mapping.search.packing.within_share`),
    then the set-partitioning bound (:func:`~mapping.search.partition_bound.floor`,
    within :func:`~mapping.search.partition_bound.share` of the time limit; skipped
    where the floor already proves the starting mapping), then CP-SAT with the highest
    of the three as a floor for :data:`CPSAT_SHARE` of what is left, then the MILP from the best mapping so far (a cutoff) and the same floor for
    the rest: the best mapping, the higher bound, and each engine's own result in
    ``parts``.  The large-neighbourhood search (:mod:`mapping.search.lns`) improves
    the starting mapping in a thread on the core the bounds and the MILP leave idle
    (paused while CP-SAT's two workers search): CP-SAT starts from its mapping, it goes
    on from CP-SAT's where that is better, and its best mapping counts as the engines'
    (``parts["lns"]``).  Where a PE is the bottleneck the packing's local search
    (:func:`polished`) first improves the start, within :data:`POLISH_SHARE` of the
    limit, and again, within the same share, once the bounds have ended, from the best
    mapping known (the neighbourhoods' where they went further), the neighbourhoods
    still running beside it; its mappings are the bounds' and CP-SAT's incumbents.
    Where a CN carries nearly the bottleneck of the best mapping known by then, the
    proof of the best packing with the CNs charged replaces the packing bound, the
    relaxation gets :data:`CHARGED_RELAXATION_SHARE`, and the neighbourhoods' escape
    restarts them from its mapping (:func:`restarts`).
    On small instances (:func:`schedule`)
    CP-SAT runs instead beside the bounds, from the start to the end
    (:func:`_beside`)."""
    import numpy as np
    from mapping.search import cpsat, exact, lns, packing, partition_bound
    if schedule(setup) == BESIDE:
        return _beside(setup, time_limit)
    began = time.time()
    deadline = None if time_limit is None else began + time_limit
    start = setup.info.get("incumbent")
    beside = setup.info.pop("lns", None) or (None if start is None else lns.Beside(
        setup, start, math.inf if deadline is None else deadline, setup.seed))
    improved = []                   # (time.time(), value) of the local search's mappings
    ev = setup.objectives.evaluators[0]

    def adopt(new):
        """``new`` (a mapping or None), where better than the incumbent, the incumbent
        from here on, offered to the neighbourhoods."""
        nonlocal setup
        value = None if new is None else exact.mapping_value(ev, new)
        if value is not None and value < exact.mapping_value(ev, setup.info["incumbent"]):
            improved.append((time.time(), value))
            setup = replace(setup, info=dict(setup.info, incumbent=new))
            if beside is not None:
                beside.offer(new)

    def polish(row, until):
        """The packing's local search from ``row`` until ``until``, adopted; its mapping
        where lower than ``row``, else None."""
        new = polished(setup, row, until)
        adopt(new)
        return new

    def theirs():
        """The neighbourhoods' best mapping so far, or None."""
        found = None if beside is None else beside.best()
        return None if found is None else found[0]

    try:
        if start is not None:
            path = polish(start, None if deadline is None else
                          began + POLISH_SHARE * time_limit)
            path = start if path is None else path
            if beside is not None:
                # where the neighbourhoods stall, the packing's search goes on from
                # where it was cut: its own path, whose basin may be another
                kicks = np.random.default_rng(setup.seed + 1)

                def resumed(row, until, stop):
                    nonlocal path
                    new = polished(setup, path, until, stop, kicks)
                    path = path if new is None else new
                    return new
                beside.escape_by(resumed)
        # the best mapping known by now (the neighbourhoods' often) says better than
        # the start whether a CN carries nearly the bottleneck (``a50_p8_s3``: a start
        # at 5.449e-5 with the bus far below it, the neighbourhoods at 5.324e-5 with
        # the bus at 99% of it)
        adopt(theirs())
        # a PE is the bottleneck and a CN carries nearly as much: the packing bound's
        # bisection gives way to the proof with the CNs charged, and the cluster
        # relaxation, the bound there, gets the larger share
        charged = start is not None and partition_bound.heavy(setup) and \
            not partition_bound.communicating(setup)
        lifted = []
        relaxed = exact.cluster_floor(
            setup, time_limit, incumbent=setup.info["incumbent"] if start is not None
            else None, share=CHARGED_RELAXATION_SHARE if charged
            else exact.RELAXATION_SHARE, found=lifted)
        if charged and lifted and beside is not None:
            # the packing's search gives nothing here (:func:`polished`): the way out
            # of the neighbourhoods' basin is their own search from the relaxation's
            # mapping, whose classes are the bound's
            beside.escape_by(restarts(setup, lifted[0]))
        if charged:
            # the proof of the best packing with the CNs charged, whose decisions find
            # better mappings (where a CN is the bottleneck the bisection returns at
            # once; the time stays the partition bound's)
            proved = packing.proof(setup, [setup.info["incumbent"], theirs()],
                                   time.time() + packing.SECONDS if deadline is None else
                                   min(deadline, time.time() + CHARGED_SHARE * time_limit),
                                   better=theirs, improved=adopt, charged=True)
            packed = proved.value
        else:
            packed = packing.within_share(setup, time_limit, deadline, relaxed).value
        floor = max(relaxed or 0.0, packed or 0.0) or None
        parted = None if packing.proves_start(setup, floor) else partition_bound.floor(
            setup, None if deadline is None else min(
                partition_bound.share(setup) * time_limit, remaining(deadline)), floor).value
        floor = max(floor or 0.0, parted or 0.0) or None
        bounded = time.time()
        if start is not None:
            # the packing's local search again, from the best mapping known (whose
            # kicks leave a local optimum of its moves), the neighbourhoods beside it
            adopt(theirs())
            polish(setup.info["incumbent"], None if deadline is None else
                   min(deadline, time.time() + POLISH_SHARE * time_limit))
        if beside is not None:
            beside.pause()          # CP-SAT's two workers take both cores
            adopt(theirs())
        left = remaining(deadline)
        share = None if left is None else left * CPSAT_SHARE
        first = replace(cpsat.solve(setup, time_limit=share, floor=floor),
                        relaxation_bound=relaxed, partition_bound=parted,
                        packing_bound=packed)
        second = None
        if not first.optimal:
            ahead = first.row
            if beside is not None:
                beside.offer(first.row)
                beside.resume()
                if beside.best() is not None and beside.best()[1] < first.value:
                    ahead = beside.best()[0]
            second = exact.solve(replace(setup, info=dict(setup.info, incumbent=ahead)),
                                 time_limit=remaining(deadline), relaxed=floor,
                                 solve_relaxation=False)
    finally:
        found = None if beside is None else beside.finish()
    parts = {}
    steps = lns.steps(improved, [(bounded, floor)])
    if found is not None:
        parts["lns"] = lns.part(found)
        steps += lns.steps(found.trace, [(bounded, floor)])
        # the start's value, as without the neighbourhoods
        first = replace(first, incumbent=found.start if start is None else
                        exact.mapping_value(setup.objectives.evaluators[0], start))
    parts["cpsat"] = _summary(first, began)
    trace = lns.merged(steps + list(first.trace))
    if second is None and (found is None or found.value >= first.value):
        return replace(first, engine="both", parts=parts, schedule=IN_ORDER, trace=trace)
    results = [first]
    if second is not None:
        parts["milp"] = _summary(second, began)
        results.append(second)
    best = min(results, key=lambda r: r.value)
    if found is not None and found.value < best.value:
        best = replace(best, value=found.value, row=found.row)
    bounds = [(r.bound, name) for r, name in ((first, "cpsat"), (second, "milp"))
              if r is not None and r.bound is not None]
    bound = min(max(bounds)[0], best.value) if bounds else None
    return _joined(best, bound, first.optimal or (second is not None and second.optimal),
                   first.limited or (second is not None and second.limited),
                   "CP-SAT then the MILP", time_limit, trace,
                   (second or first).status, first.incumbent, relaxed, parts,
                   first.pair_bound, parted, IN_ORDER, packed)


def polished(setup, row, deadline: float | None = None, stop=None, rng=None):
    """The mapping ``row`` improved by the packing's local search
    (:func:`~mapping.search.packing.reoptimize`, iterated with random kicks until
    ``deadline``: :func:`~mapping.search.packing.kicked`), where a PE is its
    bottleneck and the result's value is lower; else None.  Nothing either where a
    CN carries nearly the bottleneck of ``setup``'s incumbent
    (:func:`~mapping.search.partition_bound.heavy`): the PEs' own loads are not what
    holds the mapping there, and the partition bound needs the time."""
    import numpy as np
    from mapping.search import exact, packing, partition_bound
    from mapping.search.bounds import element_tables, linear_bottleneck
    ev = setup.objectives.evaluators[0]
    row = np.asarray(row, dtype=np.intp)
    value = exact.mapping_value(ev, row)
    if not linear_bottleneck(ev) or not math.isfinite(value) or \
            not packing.pe_bottleneck(ev, row, value) or partition_bound.heavy(setup):
        return None
    own = element_tables(ev)[0]
    new = packing.kicked(own, setup.space.allowed & np.isfinite(own), row, deadline,
                         np.random.default_rng(setup.seed) if rng is None else rng, stop)
    return new if exact.mapping_value(ev, new) < value else None


def restarts(setup, row):
    """An escape for the neighbourhoods (:meth:`~mapping.search.lns.Beside.escape_by`):
    their search again (:func:`~mapping.search.lns.improve`), from ``row`` first, then
    from wherever the escape last got to, each time with a seed of its own.  On the
    stored ``a50_p8_s3`` (a CN at 99% of the bottleneck) the neighbourhoods from the
    start end in one of several basins (5.2551-5.3243e-5); from the cluster
    relaxation's mapping, lifted, two seeds reached 5.2625e-5 and 5.2933e-5 in 40 s,
    where from the worst basin's mapping its kicks and the proof of the best packing
    found nothing better in 60 s (the research notes)."""
    import numpy as np
    from mapping.search import lns
    path = np.asarray(row, dtype=np.intp)
    seeds = itertools.count(setup.seed + 2)

    def restarted(best, until, stop):
        nonlocal path
        path = lns.improve(setup, path, until, stop, seed=next(seeds)).row
        return path
    return restarted


def _beside(setup, time_limit: float | None = None):
    """``both`` on a small instance: CP-SAT (:data:`BESIDE_WORKERS` workers, the pair
    bound its only floor) in a thread until the time limit, the split bound, the proof
    of the best packing, the cluster relaxation, the packing bound and the partition
    bound (as in :func:`solve_both`) meanwhile; CP-SAT
    is stopped once the bounds have proven its mapping, and the bounds once CP-SAT's
    search has ended (proven, or at the time limit): the packing bound's solves and
    the partition bound check that between their programs, as they check their
    deadlines, and HiGHS's programs (the cluster relaxation's, the exact pricing's)
    are interrupted where highspy is installed (:mod:`mapping.search.highs`; without
    it they run to their end).  The proof of the best packing
    (:func:`~mapping.search.packing.proof`) comes after the split bound, before the
    packing bound's bisection; the cluster relaxation comes before it where a CN
    carries nearly the bottleneck (:func:`~mapping.search.partition_bound.heavy`),
    elsewhere after the bisection, in the time left (if the bounds have not proven
    the best mapping): where
    the PEs' own loads set the bottleneck, it proves optimal what CP-SAT's search
    alone did not within 120 s (the research notes); it goes on from CP-SAT's best
    mapping whenever that packs better than its own best packing (ending the decision
    under way, which that mapping answers), its packings are mappings too, and CP-SAT
    is stopped once the bound proves the best mapping known.  It leaves
    :data:`PROOF_TAIL` of the time limit to the bisection, which runs where it proved
    nothing.  Then the large-neighbourhood
    search (:class:`~mapping.search.lns.Beside`) takes their core from the start
    until CP-SAT's search ends.  The mapping is the better of CP-SAT's and the
    neighbourhoods' (never worse than the start), the bound the highest of the
    four."""
    import threading
    from mapping.search import cpsat, exact, lns, packing, partition_bound
    began = time.time()
    deadline = None if time_limit is None else began + time_limit
    box: dict = {}
    ended = threading.Event()

    def prove():
        try:
            box["result"] = cpsat.solve(setup, time_limit=time_limit,
                                        workers=BESIDE_WORKERS, deadline=deadline,
                                        started=lambda s: box.setdefault("solver", s),
                                        improved=lambda v, r: box.update(value=v, row=r))
        except BaseException as err:        # re-raised in the caller's thread
            box["error"] = err
        finally:
            ended.set()

    thread = threading.Thread(target=prove, name="cpsat", daemon=True)
    thread.start()
    relaxed = parted = split = packed = found = None
    ev = setup.objectives.evaluators[0]
    start = setup.info.get("incumbent")
    packings, proved = [], None      # (time.time(), value, row) of the packings found
    ended_at = []                    # (time.time(), bound) as each bound ends
    try:
        parted = split = partition_bound.early(setup, time_limit, ended.is_set,
                                               lambda: box.get("value"))
        ended_at.append((time.time(), split))
        if parted is not None and "solver" in box and proves_optimal(min(
                exact.mapping_value(ev, start), box.get("value", math.inf)), parted,
                cpsat.TOLERANCE):
            box["solver"].stop_search()     # the split bound proved the start optimal
        # the proof first where no CN is near the bottleneck: the cluster relaxation,
        # the only bound here that counts communication, took a quarter of the limit
        # there for a bound below the proof's (the research notes, h56prove)
        proof_first = not partition_bound.heavy(setup)
        if not proof_first:
            relaxed = exact.cluster_floor(setup, time_limit, incumbent=start,
                                          stop=ended.is_set)
            ended_at.append((time.time(), relaxed))
        if not ended.is_set() and start is not None and \
                not packing.proves_start(setup, max(relaxed or 0.0, parted or 0.0)):
            # the proof of the best packing, on the bounds' core (where a PE is the
            # bottleneck: on the others it returns at once), from CP-SAT's best
            # mapping whenever that packs better, until CP-SAT ends or PROOF_TAIL of
            # the time limit is left for the bisection
            proved = packing.proof(setup, [start, box.get("row")], None if deadline is None
                                   else deadline - PROOF_TAIL * time_limit, ended.is_set,
                                   better=lambda: box.get("row"), charged=not proof_first)
            now = time.time()
            if proved.row is not None:
                packings.append((now, exact.mapping_value(ev, proved.row), proved.row))
            packed = proved.value
            ended_at.append((now, packed))
        if not ended.is_set() and packed is None:
            bisected = packing.within_share(setup, time_limit, deadline, relaxed,
                                            ended.is_set)
            packed, now = bisected.value, time.time()
            if bisected.row is not None:
                packings.append((now, exact.mapping_value(ev, bisected.row), bisected.row))
            ended_at.append((now, packed))
        floor = max(relaxed or 0.0, packed or 0.0, parted or 0.0)
        if proof_first and not ended.is_set() and not proves_optimal(min(
                [box.get("value", math.inf)] + [v for _, v, _ in packings]), floor,
                cpsat.TOLERANCE):
            # the proof came first (no CN near the bottleneck): the relaxation in the
            # time left, if any
            relaxed = exact.cluster_floor(setup, time_limit, incumbent=start,
                                          stop=ended.is_set)
            ended_at.append((time.time(), relaxed))
            floor = max(floor, relaxed or 0.0)
        known = min([box.get("value", math.inf)] + [v for _, v, _ in packings])
        if "solver" in box and proves_optimal(known, floor, cpsat.TOLERANCE):
            box["solver"].stop_search()
        if not ended.is_set() and not packing.proves_start(setup, floor):
            parted = max(parted or 0.0, partition_bound.floor(setup, None if deadline is None
                else min(partition_bound.share(setup) * time_limit, remaining(deadline)),
                floor or None, stop=ended.is_set).value or 0.0) or None
            ended_at.append((time.time(), parted))
        floor = max(floor, parted or 0.0)
        if "solver" in box and packing.proves_start(setup, floor):
            box["solver"].stop_search()
        if not ended.is_set() and start is not None:
            # the bounds' core is idle until CP-SAT ends: the neighbourhoods use it
            beside = lns.Beside(setup, start, math.inf if deadline is None else deadline,
                                setup.seed)
            ended.wait(None if deadline is None else remaining(deadline))
            found = beside.finish()
    finally:
        thread.join(None if deadline is None else remaining(deadline) + 1.0)
        if thread.is_alive() and "solver" in box:   # never leave it running at exit
            box["solver"].stop_search()
            thread.join()
    if "error" in box:
        raise box["error"]
    res = box["result"]
    parts, trace = {"cpsat": _summary(res, began)}, res.trace
    # each step of the neighbourhoods or of a packing carries the bounds ended by then
    found_steps = [] if found is None else list(found.trace)
    trace = lns.merged(list(trace) + lns.steps(
        found_steps + [(at, v) for at, v, _ in packings], ended_at))
    if found is not None:
        parts["lns"] = lns.part(found)
        if found.value < res.value:
            res = replace(res, value=found.value, row=found.row)
    if packings:
        at, value, row = min(packings, key=lambda p: p[1])
        if value < res.value:
            res = replace(res, value=value, row=row)
    if proved is not None and proved.decisions:
        # the proof's own packing (the bisection's, if it ran after, may follow it)
        value = None if proved.row is None else exact.mapping_value(ev, proved.row)
        parts["packing"] = {"value": value, "bound": proved.value,
                            "gap": None if value is None else relative_gap(value, proved.value),
                            "optimal": proved.value is not None,
                            "decisions": len(proved.decisions),
                            "seconds": round(time.time() - began, 3)}
    bound = min(max(relaxed or 0.0, parted or 0.0, packed or 0.0, res.bound or 0.0),
                res.value)
    return _joined(res, bound, res.optimal, res.limited, "CP-SAT", time_limit, trace,
                   res.status, res.incumbent, relaxed, parts, res.pair_bound, parted,
                   BESIDE, packed, split)


def _joined(best, bound, proven, limited, who, time_limit, trace, status, incumbent,
            relaxed, parts, pair_bound, parted, order, packed=None, split=None):
    """``both``'s result: ``best``'s mapping, the highest ``bound`` proven (None if
    none) and the gap between them; optimal where an engine ``proven`` it or the gap is
    within CP-SAT's tolerance, else ``limited`` as the engines (named ``who``) were."""
    from mapping.search import cpsat, exact
    gap = relative_gap(best.value, bound)
    optimal = proven or proves_optimal(best.value, bound, cpsat.TOLERANCE)
    limited = not optimal and limited
    message = "" if not limited or bound is None else (
        f"{who} stopped at the time limit of {time_limit or 0:g} s before proving "
        f"optimality; the mapping is the best found so far (gap {gap:.2%} to the proven "
        f"bound {bound:.6g})")
    steps = list(trace) + ([] if bound is None else [
        trace_step(time.time(), best.value, bound)])
    return exact.ExactResult(best.value, best.row, optimal, status, best.value, limited,
                             message, bound, gap, incumbent, relaxed, engine="both",
                             trace=tuple(steps), parts=parts, pair_bound=pair_bound,
                             partition_bound=parted, schedule=order,
                             packing_bound=packed, split_bound=split)


def _summary(res, began) -> dict:
    return {"value": float(res.value), "bound": res.bound, "gap": res.gap,
            "optimal": bool(res.optimal), "seconds": round(time.time() - began, 3)}
