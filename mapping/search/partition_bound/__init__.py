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
from mapping.search.partition_bound.master import Pool, over, run_trial

#: the bisection stops when the interval left is this share of the starting value
RESOLUTION = 2e-3
#: proofs keep this much (relative) below the trial value, for the LP's tolerances
SAFETY = 1e-7
#: the share of the time that the bisection takes at most, the proof the rest
BISECTION = 0.5


@dataclass(frozen=True)
class PartitionBound:
    """The outcome of :func:`bound`: ``value`` the proven lower bound (None where none
    applies or nothing was proven), ``trials`` the ``(T, z, L)`` triples evaluated
    (``z`` the master's value with the local search's columns, ``L`` the Lagrangian
    bound where the pricing was exact), ``columns`` generated, ``seconds`` taken,
    ``complete`` (ended within the time) and ``stopped`` (the caller had asked it to
    stop by its end)."""

    value: float | None
    trials: tuple = ()
    columns: int = 0
    seconds: float = 0.0
    complete: bool = False
    stopped: bool = False


def bound(ev, allowed, upper: float, lower: float = 0.0, time_limit: float | None = None,
          seed: int = 0, stop=None) -> PartitionBound:
    """The set-partitioning bound of the compiled ``max`` objective ``ev`` over the
    ``(A, P)`` mask ``allowed`` (see the module) between ``lower`` (a proven bound)
    and ``upper`` (a mapping's value), within ``time_limit`` seconds: a bisection on
    ``T`` with the local search's columns (its master value above ``T`` or not) to the
    estimated crossing, then the exact pricing there (and, where its bound falls short
    of ``T``, halfway down to that bound, while the time lasts).  ``stop()``, checked
    between programs as the deadline is, ends it early with what it proved so far
    (another thread's request: ``both`` stops the bounds once CP-SAT has proven)."""
    began = time.monotonic()
    if not linear_bottleneck(ev) or not upper > 0:
        return PartitionBound(None)
    deadline = None if time_limit is None else began + time_limit
    tb = Tables(ev, allowed)
    if tb.C == 0:
        return PartitionBound(None, seconds=time.monotonic() - began, complete=True)
    rng = np.random.default_rng(seed)
    pool = Pool()
    lo, hi = max(lower, 0.0), upper
    trials = []
    halfway = None if deadline is None else began + BISECTION * time_limit
    while hi - lo > RESOLUTION * upper:
        if over(halfway, stop):
            break
        T = 0.5 * (lo + hi)
        z, _, _ = run_trial(tb, T, pool, halfway, rng, prove=False, stop=stop)
        if z is None:
            break
        trials.append((T, z, None))
        if z > T:
            lo = T
        else:
            hi = T
    # the proof at the estimated crossing; where it falls short (the local search's
    # columns overestimated the program there), again halfway down to what it proved
    proven, T, center = None, lo, None
    while T > lower and (proven is None or T - proven > RESOLUTION * upper) \
            and not over(None, stop):
        z, got, center = run_trial(tb, T, pool, deadline, rng, prove=True, center=center,
                                   stop=stop)
        if got is None:
            break
        trials.append((T, z, got))
        proven = max(proven or 0.0, min(T, got) * (1 - SAFETY))
        if got >= T or over(deadline, stop):
            break
        T = 0.5 * (max(got, lower) + T)
    complete = deadline is None or time.monotonic() <= deadline
    return PartitionBound(proven if proven and proven > 0 else None, tuple(trials),
                          len(pool), time.monotonic() - began, complete,
                          over(None, stop))


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
    return bound(ev, allowed, upper, lower, time_limit, seed=setup.seed, stop=stop)
