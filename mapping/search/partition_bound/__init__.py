"""A lower bound on the bottleneck (``max``) that counts the traffic a capacitated
partition of the actors forces: the set-partitioning (Dantzig-Wolfe) relaxation, solved
by column generation (issue 43).

For a trial value ``T``, a *column* is a PE ``p`` (or a class of PEs alike in every
table below, used at most its size times) with a set ``S`` of actors whose load on
``p`` is at most ``T``.  Every mapping whose PE loads are at most ``T`` picks one column
per PE, covering each actor once.  Its CN loads are linear in the columns, up to the
channels between two PEs: a channel (a pair of actors joined by channels, with the
costs :func:`~mapping.search.bounds.element_tables` tabulates for each placement
``(s, d)`` of its ends) costs on CN ``k`` at least ``v·D_k(s, d)``, where ``D_k(s, d)
= w_k(s) + w_k(d) + Σ_G w_k(G)·[s ∈ G xor d ∈ G]`` is a non-negative combination of
cut functions below the architecture's routes (:func:`route_cuts`: on a tree of buses
and bridges, exactly the routes: a bus is charged half a channel by each end on a PE
behind it and half by each end beyond it) and ``v`` the largest volume with ``v·D_k ≤``
the channel's cost.  The column of ``s`` carries ``v·w_k(s)`` for each channel with
exactly one end in ``S``, and channels inside ``S`` their exact cost.  Communication
charged to the cores (``charge = ends | both``) is charged to a column at its least
over the other end's PEs.

The group terms are carried by a second kind of column: a *side* of a group ``G`` (on
a tree, one side of a bridge, or the PEs behind one bus) is a set ``U`` of actors whose
least own loads on ``G``'s PEs sum to at most ``|G|·T``, and the rest's beyond ``G``
to at most ``(P − |G|)·T``; it carries ``Σ_j v_j·w_k(G)·[a_j ∈ U xor b_j ∈ U]``.  Every
mapping with PE loads ≤ ``T`` picks, for each group, exactly one side: the actors on
``G``'s PEs (their loads sum to at most ``|G|·T``, and each PE's load is at least its
actors' own loads, all loads being non-negative), exactly those that the columns of
``G``'s PEs cover.  So its CN loads are at least the sum of its PE columns' and side
columns' charges.

The master linear program minimizes the busiest CN ``z`` over non-negative weights
``λ`` of PE columns and ``μ`` of sides: each actor covered once, at most ``|K|``
columns of a class ``K``, one side per group, each actor's share on ``G``'s PEs
(``Σ_λ [K ⊆ G]·S_a·λ``) equal to its share in ``G``'s sides (``Σ_μ U_a·μ``), and each
CN's charges at most ``z``.  Lagrangian bound: for any multipliers ``π`` of the cover,
``σ_G`` of the coupling, ``κ_G`` of the one side and ``ν ≥ 0, Σν ≤ 1`` of the CNs,
with ``rc_K(S) = ν·cost(S) − Σ_{a∈S} (π_a + Σ_{G ⊇ K} σ_G(a))`` and ``rc_G(U) =
ν·cost(U) + Σ_{a∈U} σ_G(a) − κ_G``, a mapping with PE loads ≤ ``T`` (columns ``S_p``,
sides ``U_G``) has busiest CN ``≥ Σ_k ν_k·load_k ≥ Σ_p ν·cost(S_p) + Σ_G ν·cost(U_G) =
Σ_a π_a + Σ_G κ_G + Σ_p rc(S_p) + Σ_G rc_G(U_G)`` (the σ terms cancel: the columns of
``G``'s PEs cover exactly ``U_G``), so at least ``L(T) = Σ_a π_a + Σ_K |K|·min(0, min_S
rc_K(S)) + Σ_G (κ_G + min_U rc_G(U))`` (a PE with no actor is the empty column, of
reduced cost 0).  With the pricing exact (mixed-integer programs: a quadratic knapsack
per class, a capacitated minimum cut per group, their proven bounds; ``+∞`` where no
side fits) it is a proof.  So ``OPT ≥ min(T, L(T))``: either some load of the optimum
exceeds ``T``, or the optimum is a mapping of the relaxation.  The sides make the
bridge's charge the cut of a side that fits, not ``|y_G(a) − y_G(b)|`` of fractional
shares, which vanishes for actors split alike.  :func:`bound` bisects on ``T`` between
a known bound and the starting mapping's value with columns from iterated local
searches on the pricing problems, then prices exactly at the estimated crossing, where
the local search finds none, each exact round at multipliers smoothed towards the best
bound's, the best bound kept.  Columns and their master program: Dantzig and Wolfe
(1960); the set-partitioning bound of capacitated graph partitioning: Mehrotra and
Trick (1998); the Lagrangian bound of an unfinished column generation: Lasdon (1970);
the smoothing: Wentges (1997).

Only linear tables of a bottleneck aggregation are bounded (those ``exact`` models).
The parts: the columns' data and the charging of cut channels to the CNs in
:mod:`~mapping.search.partition_bound.charges`, the pricing problems in
:mod:`~mapping.search.partition_bound.pricing`, the master program and the column generation
at one trial value in :mod:`~mapping.search.partition_bound.master`; here the bisection.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from mapping.search.bounds import linear_bottleneck
from mapping.search.partition_bound.charges import Tables, route_cuts  # noqa: F401
from mapping.search.partition_bound import split
from mapping.search.partition_bound.master import Pool, over, run_trial
from mapping.search.partition_bound.pricing import SideProblem

#: the bisection stops when the interval left is this share of the starting value
RESOLUTION = 2e-3
#: proofs keep this much (relative) below the trial value, for the LP's tolerances
SAFETY = 1e-7
#: the share of the time that the bisection takes at most, the proof the rest
BISECTION = 0.5
#: the most windows of the first group's side work (:func:`windowed`)
WINDOWS = 3
#: with windows, the share of the time for the bound without them (the rest is the
#: windows': :func:`_ascend`)
PLAIN = 0.55
#: the windows' first trial lies this far (relative) above the bound without them
STEP = 0.03
#: the windows run only where the bound without them leaves more than this gap to the
#: starting value (elsewhere the time is CP-SAT's: the stored ``a50_p12_s4``, whose
#: bound converges within 34 s at 0.3% below its best mapping, ended at 1.48% with
#: the windows' time against 0.37% without, the bounds equal, one run each)
WINDOWS_GAP = 0.05
#: the split bound (:mod:`~mapping.search.partition_bound.split`, :func:`early`) runs where
#: the instance has at most this many actor-PE pairs (its CP-SAT programs proved 20 x 8 and
#: 30 x 8 of ``tests/perf/bench_exact_max.py`` optimal in 1-3 s; on 45 x 12, 540 pairs,
#: the smaller side's was not proven in 60 s), within :data:`SPLIT` of the time
SPLIT_PAIRS = 300
SPLIT = 0.4


@dataclass(frozen=True)
class PartitionBound:
    """The outcome of :func:`bound`: ``value`` the proven lower bound (None where none
    applies or nothing was proven), ``trials`` the ``(T, z, L)`` triples evaluated
    (``z`` the master's value with the local search's columns, ``L`` the Lagrangian
    bound where the pricing was exact), ``columns`` generated, ``seconds`` taken,
    ``complete`` (ended within the time), ``stopped`` (the caller had asked it to
    stop by its end)."""

    value: float | None
    trials: tuple = ()
    columns: int = 0
    seconds: float = 0.0
    complete: bool = False
    stopped: bool = False


def bound(ev, allowed, upper: float, lower: float = 0.0, time_limit: float | None = None,
          seed: int = 0, stop=None, windows: bool = False) -> PartitionBound:
    """The set-partitioning bound of the compiled ``max`` objective ``ev`` over the
    ``(A, P)`` mask ``allowed`` (see the module) between ``lower`` (a proven bound)
    and ``upper`` (a mapping's value), within ``time_limit`` seconds: a bisection on
    ``T`` with the local search's columns (its master value above ``T`` or not) to the
    estimated crossing, then the exact pricing there (and, where its bound falls short
    of ``T``, halfway down to that bound, while the time lasts).  ``stop()``, checked
    between programs as the deadline is, ends it early with what it proved so far
    (another thread's request: ``both`` stops the bounds once CP-SAT has proven).
    With ``windows``, that takes :data:`PLAIN` of the time, and where it leaves a gap
    above :data:`WINDOWS_GAP` to ``upper`` the rest goes to proofs with the first
    group's sides split by their work (:func:`_ascend`)."""
    began = time.monotonic()
    if not linear_bottleneck(ev) or not upper > 0:
        return PartitionBound(None)
    end = None if time_limit is None else began + time_limit
    deadline = end if end is None or not windows else began + PLAIN * time_limit
    tb = Tables(ev, allowed)
    if tb.C == 0:
        return PartitionBound(None, seconds=time.monotonic() - began, complete=True)
    rng = np.random.default_rng(seed)
    pool = Pool()
    whole, centers = [(0.0, math.inf)], {}
    lo, hi = max(lower, 0.0), upper
    trials = []
    halfway = None if deadline is None else began + BISECTION * (deadline - began)
    while hi - lo > RESOLUTION * upper:
        if over(halfway, stop):
            break
        T = 0.5 * (lo + hi)
        z, _ = windowed(tb, T, pool, halfway, rng, False, stop, whole, centers)
        if z is None:
            break
        trials.append((T, z, None))
        if z > T:
            lo = T
        else:
            hi = T
    # the proof at the estimated crossing; where it falls short (the local search's
    # columns overestimated the program there), again halfway down to what it proved
    proven, T = None, lo
    while T > lower and (proven is None or T - proven > RESOLUTION * upper) \
            and not over(None, stop):
        # the first proof may run on into the windows' time: without it they would
        # climb from ``lower`` (80 x 16 of the benchmark: 5.98e-5 against 6.5-6.9e-5)
        z, got = windowed(tb, T, pool, deadline if proven is not None else end, rng, True,
                          stop, whole, centers)
        if got is None:
            break
        trials.append((T, z, got))
        proven = max(proven or 0.0, min(T, got) * (1 - SAFETY))
        if got >= T or over(deadline, stop):
            break
        T = 0.5 * (max(got, lower) + T)
    if windows and tb.groups and (proven or lower) < upper * (1 - WINDOWS_GAP):
        proven = _ascend(tb, pool, rng, stop, end, max(proven or 0.0, lower), upper,
                         trials) or proven
    complete = end is None or time.monotonic() <= end
    return PartitionBound(proven if proven and proven > 0 else None, tuple(trials),
                          len(pool), time.monotonic() - began, complete, over(None, stop))


def _ascend(tb, pool, rng, stop, end, proven: float, upper: float, trials: list):
    """The windows' proofs (:func:`windowed`) upward from ``proven`` until ``end``:
    each trial :data:`STEP` (relative) above the last value proven, first refining the
    windows with the local search's columns (where their least value is not above the
    trial, the step halves without a proof), the step halving after each proof that
    falls short.  The highest value proven (None: none above ``proven``)."""
    windows, centers = [(0.0, math.inf)], {}
    best, step = None, STEP
    while step > RESOLUTION and not over(end, stop):
        T = proven * (1 + step)
        if T >= upper:
            step *= 0.5
            continue
        z, _ = windowed(tb, T, pool, end, rng, False, stop, windows, centers, WINDOWS)
        if z is None:
            break
        if z <= T:
            step *= 0.5
            continue
        z, got = windowed(tb, T, pool, end, rng, True, stop, windows, centers, WINDOWS)
        if got is None:
            break
        trials.append((T, z, got))
        if min(T, got) * (1 - SAFETY) > proven:
            proven = best = min(T, got) * (1 - SAFETY)
        if got < T:
            step *= 0.5
    return best


def windowed(tb, T: float, pool: Pool, deadline, rng, prove: bool, stop, windows: list,
             centers: dict, most: int = 1):
    """:func:`~mapping.search.partition_bound.master.run_trial` once per window of the
    first group's side work (``windows``: ``(low, high)`` covering ``[0, ∞)``, refined
    in place, up to ``most`` of them; one window, ``[0, ∞)``, is the bound without
    windows; ``centers``: each window's best multipliers, kept from call to call):
    ``(z, L)``, the least of the windows' (None where one of them ran out of time).
    Every mapping with PE loads ≤ ``T`` has its side's work within some window, and the program of that
    window holds it, so the least bound of the windows bounds it.  Without windows the
    master mixes sides of very different works, each of which alone would load the
    CNs beyond ``T`` (45 x 12 of ``tests/perf/bench_exact_max.py``: a side of 37
    actors with one of 3, the research notes).  Where a window's value (``L``, or
    ``z`` before the proof) is below ``T`` and its master mixes sides whose works lie
    apart, it is split at their mean work, while there are fewer than ``most``;
    each window gets an even share of the time left."""
    probe = SideProblem(tb, 0, T, np.zeros(tb.C), np.zeros(tb.A)) if tb.groups else None
    zs, Ls, i = [], [], 0
    while i < len(windows):
        low, high = windows[i]
        now = time.monotonic()
        until = None if deadline is None else now + (deadline - now) / (len(windows) - i)
        out: dict = {}
        z, got, center = run_trial(tb, T, pool, until, rng, prove, centers.get(windows[i]),
                                   stop, (0, low, high), out)
        if z is None or (prove and got is None):
            return None, None
        short = got if prove else z
        sides = [] if probe is None else [(float(probe.win[u].sum()), w)
                                          for g, u, w in out.get("sides", ()) if g == 0]
        if short < T and len(windows) < most and len(sides) > 1:
            works = np.array([x for x, _ in sides])
            mid = float(works @ [w for _, w in sides]) / sum(w for _, w in sides)
            if works.max() - works.min() > RESOLUTION * T and low < mid < high:
                windows[i:i + 1] = [(low, mid), (mid, high)]
                centers[windows[i]] = centers[windows[i + 1]] = center
                continue
        centers[windows[i]] = center
        zs.append(z)
        Ls.append(got)
        i += 1
    return min(zs), (min(Ls) if prove else None)


def trial(ev, allowed, T: float, time_limit: float | None = None, seed: int = 0
          ) -> float | None:
    """``L(T)`` of the compiled ``max`` objective ``ev`` over the mask ``allowed``: a
    proven lower bound on the busiest CN of every mapping whose PE loads are all at
    most ``T`` (None where the time ran out first or no bound applies)."""
    if not linear_bottleneck(ev):
        return None
    deadline = None if time_limit is None else time.monotonic() + time_limit
    tb = Tables(ev, allowed)
    if tb.C == 0:
        return None
    return run_trial(tb, T, Pool(), deadline, np.random.default_rng(seed), prove=True)[1]


def floor(setup, time_limit: float | None = None, lower: float | None = None,
          stop=None) -> PartitionBound:
    """:func:`bound` of the search ``setup``'s single ``max`` objective, bisected
    between ``lower`` (a bound proven before; at least the pair bound of
    :mod:`mapping.search.bounds`) and the value of its starting mapping
    (``setup.info["incumbent"]``; without one, nothing is bounded); ``stop()`` ends it
    early (:func:`bound`)."""
    from mapping.search.bounds import communication_bound
    from mapping.search.exact import mapping_value
    ev = setup.objectives.evaluators[0]
    incumbent = setup.info.get("incumbent")
    if incumbent is None or not linear_bottleneck(ev):
        return PartitionBound(None)
    upper = mapping_value(ev, incumbent)
    if not math.isfinite(upper):
        return PartitionBound(None)
    allowed = setup.space.allowed
    lower = max(lower or 0.0, communication_bound(ev, allowed))
    return bound(ev, allowed, upper, lower, time_limit, seed=setup.seed, stop=stop,
                 windows=communicating(setup))


def early(setup, time_limit: float | None, stop=None, known=None) -> float | None:
    """The split bound alone (:mod:`~mapping.search.partition_bound.split`), where
    :func:`bound` would run it, between the pair bound and the best mapping's value
    within :data:`SPLIT` of :data:`SHARE_CN` of ``time_limit``: ``both`` runs it before
    the cluster relaxation on small instances where a CN carries nearly the bottleneck
    (:func:`heavy`), whose optimum it proves in seconds.  ``known()``: the value of a
    better mapping found meanwhile (CP-SAT's), or None; the bound tries again just
    below it.  Only those first trials, the cheap proofs of an optimal mapping: below
    them the bisection is slow near the optimum and the core is the other bounds'
    (the stored ``a30_p8_s1``: 33.6 s for 2.77e-5).  Its value (None: none, or not
    tried)."""
    from mapping.search.bounds import communication_bound
    from mapping.search.exact import mapping_value
    row = setup.info.get("incumbent")
    ev, allowed = setup.objectives.evaluators[0], setup.space.allowed
    if row is None or allowed.size > SPLIT_PAIRS or not heavy(setup):
        return None
    until = None if time_limit is None else \
        time.monotonic() + SPLIT * SHARE_CN * time_limit
    start = mapping_value(ev, row)

    def best() -> float:
        return min(start, (known() if known is not None else None) or math.inf)

    value, upper = None, best()
    lower = communication_bound(ev, allowed)
    while True:
        got, _ = split.bound(ev, allowed, max(lower, value or 0.0), upper, until,
                             lambda: (stop is not None and stop()) or best() < upper)
        value = max(value or 0.0, got or 0.0) or None
        if best() >= upper or over(until, stop) or (value or 0.0) >= best():
            break
        upper = best()
    return value


#: the share of the time limit that ``both`` (:mod:`mapping.search.engine`) gives the
#: bound, after the cluster relaxation and the packing bound
SHARE = 0.4
#: the share where a CN sets the starting mapping's bottleneck (:func:`communicating`):
#: there the bound is the gap's (CP-SAT and the MILP raised no bound above it on
#: ``tests/perf/bench_exact_max.py``'s communication-heavy family; the neighbourhoods
#: improve the mapping beside it), and its windows need the time (45 x 12 seed 0
#: alone: 4.908e-5 in 84 s, 4.081e-5 in 48 s, against 4.715e-5 without windows)
SHARE_CN = 0.7


def communicating(setup) -> bool:
    """Whether a CN sets the bottleneck of ``setup``'s starting mapping."""
    from mapping.search.exact import mapping_value
    from mapping.search.packing import pe_bottleneck
    row = setup.info.get("incumbent")
    if row is None:
        return False
    row = np.asarray(row, dtype=np.intp)
    value = mapping_value(setup.objectives.evaluators[0], row)
    return math.isfinite(value) and value > 0 and \
        not pe_bottleneck(setup.objectives.evaluators[0], row, value)


#: :func:`heavy`'s least share of the bottleneck on the busiest CN (the communication-
#: heavy 30 x 8 of ``tests/perf/bench_exact_max.py``: 99.6%, a PE the bottleneck; at
#: ``--comm 0.1``, 26-60%)
HEAVY = 0.9


def heavy(setup) -> bool:
    """Whether a CN carries at least :data:`HEAVY` of the bottleneck of ``setup``'s
    starting mapping."""
    from mapping.search.exact import mapping_value
    row = setup.info.get("incumbent")
    ev = setup.objectives.evaluators[0]
    if row is None or not linear_bottleneck(ev):
        return False
    row = np.asarray(row, dtype=np.intp)
    value = mapping_value(ev, row)
    loads = ev.loads(row[None, :])[0]
    cns = [i for i, e in enumerate(ev.elements) if e not in ev.pe_index]
    return bool(cns) and math.isfinite(value) and value > 0 and \
        float(ev.tables.lambda_ * loads[cns].max()) >= HEAVY * value


def share(setup) -> float:
    """``both``'s share of the time limit for :func:`floor` on ``setup``."""
    return SHARE_CN if communicating(setup) else SHARE
