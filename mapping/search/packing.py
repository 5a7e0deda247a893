"""The packing bound of a bottleneck (``max``) mapping problem (issue 43): the PEs'
own loads alone, decided class by class.

Every PE's load is at least the sum of its actors' own loads (``own`` of
:func:`~mapping.search.bounds.element_tables`: processing, and what an actor's channels
to itself charge); the channels between two actors only add to the loads.  So if no
assignment puts at most ``T`` of own load on every PE, every mapping's bottleneck is at
least ``T``: a packing of items of PE-dependent sizes into the PEs (scheduling on
unrelated machines), where PEs alike in their sizes and allowed actors form a *class*
of identical bins.

**Integers.**  One unit is :data:`PRECISION` times the largest trial value; sizes are
rounded *down* and the capacity is ``C = ⌊T / unit⌋`` (both with a margin against
the floating-point division's rounding, :func:`integer_sizes`): a real packing under ``T`` has
integer loads ``Σ ⌊s / unit⌋ ≤ ⌊Σ s / unit⌋ ≤ C``, so "no integer packing" proves "no
real packing".

**The decision** is a logic-based Benders decomposition (Hooker and Ottosson, 2003).
The master assigns each actor to one class (``x[a, c]``) under rows that every packing
satisfies, summed over the class's ``m_c`` PEs: dual feasible functions ``f`` (every
bin's items have ``Σ f(w) ≤ f(C)``; Fekete and Schepers, 2001), namely the capacity,
the rounding family ``r_k(w) = ⌈(k + 1)·w / C⌉ − 1`` against ``k`` for ``k = 1 …``
:data:`ROUNDING_K` (``k = 1``: two actors above half the capacity never share a PE;
Martello and Toth's ``L2`` counts them), and ``U_e(w) = C`` above ``C − e``, ``w``
between, 0 below ``e`` (an item above ``C − e`` leaves room only for items below
``e``).  Classes of at most :data:`SPLIT` PEs are modelled PE by PE in the master
(loads ordered), where the summed rows are weakest.  CP-SAT solves it (one worker),
maximizing the least slack of the other classes so that their packings have room.
Infeasible: so is the packing.  Otherwise each other class is checked — first fit
decreasing, a local search of moves and exchanges, then CP-SAT on its identical bins —
and where its actors do not pack, a minimal set ``S`` that does not (dropping actors,
smallest first, while it stays unpackable) is cut off: at most ``|S| − 1`` of ``S ∪ {b :
w_b ≥ max_S w}`` in that class, since a set holding ``|S|`` of them holds a copy of
``S`` with every actor replaced by one at least as large.  When every class packs, the
packing found is returned.

:func:`bound` bisects the trial value between the highest value proven and the least
packing found; :func:`floor` runs it on a prepared search from its best mapping.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from mapping.search import packing_price
from mapping.search.bins import LOCAL_STEPS, pack_bins, solve as _solve
from mapping.search.bounds import element_tables, linear_bottleneck
from mapping.search.common import proves_optimal, stopped
from mapping.search.cpsat import FIRST_TRIAL

#: one integer unit of size, relative to the largest trial value
PRECISION = 1e-7
#: the rounding dual feasible functions ``r_1 … r_K`` of the master
ROUNDING_K = 10
#: the thresholds ``e`` of the ``U_e`` functions, as shares of the capacity
THRESHOLDS = (0.1, 0.2, 0.3, 0.4)
#: classes of at most this many PEs are modelled PE by PE in the master: on 30 x 8
#: (``tests/perf/bench_exact_max.py --comm 0.1``, seed 1) summed rows let the master
#: put sets in a two-PE class that do not pack, 26 masters and 10 s to the proof,
#: against one master and 2.3 s PE by PE
SPLIT = 2
#: seconds the master may spend on the least slack after its first solution (a
#: proof of its optimum is not needed: on 45 x 12 one took the whole 5 s it was given)
SLACK_SECONDS = 0.3
#: the same with the CN rows, where the slack of every row is maximized: the lower the
#: packing's loads, the further the proof's next step (``a50_p8_s3``: 2 s a decision,
#: 5.2967e-5 to 5.2579e-5 in 15 decisions, the research notes, h57comm)
CN_SETTLE = 2.0
#: the search ends when the interval left is this share of the best value
RESOLUTION = 1e-5
#: the share of the time left that one decision may take
DECISION_SHARE = 0.25
#: the most PEs whose actors :func:`reoptimize` places anew at once: on 30 x 8 (``--comm
#: 0.1``, seeds 0 and 2) from a random mapping 3 reached 0.5% and 0.1% above the optimal
#: packing in 0.3-1 s, 4 reached 0.05% and 0.0002% in 2-4 s, 5 the optimum in 22 and 7 s
REOPTIMIZE_WIDTH = 4
#: the actors that :func:`kicked` moves at random between two runs of :func:`reoptimize`:
#: on 45 x 12 seed 0 (``--comm 0.1``), from a local optimum 0.54% above the packing
#: bound, 6 reached 0.21-0.39% within 40 s in three runs of three, 3 and 12 nothing
#: better than 0.54% in one run each (the research notes)
KICK = 6
#: :func:`prove` keeps its unit (and so its cuts) while the best packing stays above
#: this share of the one it was chosen for
UNIT_FLOOR = 0.9


@dataclass(frozen=True)
class PackingBound:
    """``value``: the highest ``T`` proven infeasible (None: none); ``packed``: the
    least packing found (an upper bound on the packing's optimum, above which no bound
    of this kind exists); ``decisions``: ``(T, outcome, seconds)`` in order."""

    value: float | None
    packed: float | None
    decisions: tuple = ()
    row: np.ndarray | None = None


def own_bottleneck(own: np.ndarray, row) -> float:
    """The largest sum of the own loads ``own[a, row[a]]`` that the mapping ``row``
    puts on one PE."""
    A, P = own.shape
    return float(np.bincount(row, own[np.arange(A), row], minlength=P).max())


def classes(own: np.ndarray, usable: np.ndarray) -> list[list[int]]:
    """The PEs grouped by equal sizes and usable actors, in order of first PE."""
    out: dict[bytes, list[int]] = {}
    for p in range(own.shape[1]):
        key = np.where(usable[:, p], own[:, p], -1.0).tobytes()
        out.setdefault(key, []).append(p)
    return list(out.values())


def dual_feasible_rows(w: np.ndarray, capacity: int) -> list[tuple[np.ndarray, int]]:
    """``(f(w), f(C))`` of the module's dual feasible functions for integer sizes ``w``
    under ``capacity`` (the capacity row itself excluded): every set of sizes summing
    to at most ``capacity`` has ``Σ f ≤ f(C)``."""
    w = np.asarray(w, dtype=np.int64)
    C = int(capacity)
    rows = []
    for k in range(1, ROUNDING_K + 1):
        rows.append((np.where(w > 0, ((k + 1) * w - 1) // C, 0), k))
    for share in THRESHOLDS:
        e = int(share * C)
        if 0 < e <= C // 2:
            rows.append((np.where(w > C - e, C, np.where(w >= e, w, 0)), C))
    return rows


def decide(w: np.ndarray, usable: np.ndarray, groups, capacity: int,
           deadline: float | None = None, stop=None, cuts: list | None = None,
           hint=None, known=(), cn=None):
    """Whether the actors of integer sizes ``w (A, P)`` pack onto the PEs under
    ``capacity`` (``groups``: :func:`classes`): ``("infeasible" | "feasible" |
    "unknown", row)``, ``row`` the PE of each actor where feasible (see the module).
    ``cuts``, if given, receives each cut as ``(class, actors, most)``; ``known``:
    cuts of an earlier decision on the same sizes and classes at a capacity at least
    this one (a set that packs into no class's PEs under it packs under none less),
    in the master from the start.  ``cn``: the CN rows at this unit
    (:class:`~mapping.search.packing_cn.Rows`), every row's least slack maximized."""
    from ortools.sat.python import cp_model
    A = w.shape[0]
    C = int(capacity)
    fits = usable & (w <= C)
    if not fits.any(axis=1).all():
        return "infeasible", None
    model = cp_model.CpModel()
    x = [[model.new_bool_var("") if fits[a, g[0]] else None for g in groups]
         for a in range(A)]
    for a in range(A):
        model.add_exactly_one([v for v in x[a] if v is not None])
    split, pooled, slack = {}, [], model.new_int_var(0, C, "slack")
    for c, members in enumerate(groups):
        on = [a for a in range(A) if x[a][c] is not None]
        sizes = w[:, members[0]]
        m = len(members)
        for f, top in dual_feasible_rows(sizes[on], C):
            if f.sum() > top * m:
                model.add(sum(int(v) * x[a][c] for a, v in zip(on, f) if v) <= top * m)
        if m <= SPLIT:
            y = {(a, b): model.new_bool_var("") for a in on for b in range(m)}
            for a in on:
                model.add(sum(y[a, b] for b in range(m)) == x[a][c])
            loads = [sum(int(sizes[a]) * y[a, b] for a in on) for b in range(m)]
            for b in range(m):
                model.add(loads[b] + (0 if cn is None else slack) <= C)
            for b in range(m - 1):
                model.add(loads[b] >= loads[b + 1])
            split[c] = y
        else:
            pooled.append(c)
            model.add(sum(int(sizes[a]) * x[a][c] for a in on) + m * slack <= m * C)
    for c, actors, most in known:
        on = [x[a][c] for a in actors if x[a][c] is not None]
        if len(on) > most:
            model.add(sum(on) <= most)
    if cn is not None:
        places = [[p] if c in split else members for c, members in enumerate(groups)
                  for p in (members if c in split else members[:1])]
        on = [[(split[c].get((a, members.index(p))) if c in split else x[a][c])
               for c, members in enumerate(groups)
               for p in (members if c in split else members[:1])] for a in range(A)]
        cn.add(model, places, on, C, slack)
    if pooled or cn is not None:
        model.maximize(slack)
    if hint is not None:
        where = {p: (c, members.index(p)) for c, members in enumerate(groups)
                 for p in members}
        for a in range(A):
            c, b = where[int(hint[a])]
            for k, v in enumerate(x[a]):
                if v is not None:
                    model.add_hint(v, k == c)
            if c in split:
                for bb in range(len(groups[c])):
                    if (a, bb) in split[c]:
                        model.add_hint(split[c][a, bb], bb == b)
    while True:
        if stopped(deadline, stop):
            return "unknown", None
        left = None if deadline is None else deadline - time.time()
        status, solver = _solve(model, left, stop, None if not pooled and cn is None
                                else SLACK_SECONDS if cn is None else CN_SETTLE)
        if status != "feasible":
            return status, None
        row = np.full(A, -1, dtype=np.intp)
        chosen = np.array([[v is not None and solver.boolean_value(v) for v in xs]
                           for xs in x])
        for c, y in split.items():
            for (a, b), v in y.items():
                if solver.boolean_value(v):
                    row[a] = groups[c][b]
        cut = False
        for c in pooled:
            members = groups[c]
            on = np.flatnonzero(chosen[:, c])
            got, bins = pack_bins(w[on, members[0]], len(members), C, deadline, stop)
            if got == "feasible":
                row[on] = np.asarray(members)[bins]
                continue
            if got == "unknown":
                return "unknown", None
            keep = _minimal(on, w[:, members[0]], len(members), C, deadline, stop)
            largest = w[keep, members[0]].max()
            lifted = [b for b in range(A) if x[b][c] is not None and b not in keep
                      and w[b, members[0]] >= largest]
            most = len(keep) - 1
            model.add(sum(x[a][c] for a in list(keep) + lifted) <= most)
            if cuts is not None:
                cuts.append((c, list(keep) + lifted, most))
            cut = True
        if not cut:
            return "feasible", row


def _minimal(on, sizes, m: int, C: int, deadline, stop) -> list[int]:
    """A subset of the actors ``on`` that does not pack into ``m`` bins of ``C``
    (``on`` does not), minimal but for decisions left unknown: actors are dropped,
    smallest first, where the rest is proven not to pack."""
    keep = [int(a) for a in on[np.argsort(sizes[on], kind="stable")]]
    i = 0
    while i < len(keep):
        trial = keep[:i] + keep[i + 1:]
        if pack_bins(sizes[trial], m, C, deadline, stop)[0] == "infeasible":
            keep = trial
        else:
            i += 1
    return keep


#: relative slack against the division's rounding: sizes shrink by it, capacities grow
EPSILON = 1e-12


def integer_sizes(own: np.ndarray, usable: np.ndarray, unit: float) -> np.ndarray:
    """``⌊own / unit⌋`` where usable, 0 elsewhere (see the module), a little less
    where the floating-point quotient is within :data:`EPSILON` of a whole number
    (rounded up by the division, it would no longer be a bound from below)."""
    q = np.where(usable, own, 0.0) / unit
    return np.floor(q * (1 - EPSILON)).astype(np.int64)


def capacity(T: float, unit: float) -> int:
    """``⌊T / unit⌋``, or one more where the quotient is within :data:`EPSILON` of a
    whole number (a larger capacity only weakens the proof)."""
    return int(math.floor(T / unit * (1 + EPSILON)))


def bound(own: np.ndarray, allowed: np.ndarray, top: float, floor: float | None = None,
          deadline: float | None = None, stop=None) -> PackingBound:
    """The packing bound within ``deadline`` (``time.time()``), climbing from the
    highest value proven (``floor`` to start) toward ``top`` (the best value known,
    less :data:`~mapping.search.cpsat.FIRST_TRIAL`): the step doubles after each proof
    of infeasibility, and a packing found or a decision left undecided sets a ceiling,
    below which the trials bisect.  Each decision is given at most :data:`DECISION_SHARE` of the time left:
    one near the packing's optimum may take minutes where one a little below it takes a
    fraction of a second.  ``stop()`` (another thread's request) ends it within
    :data:`~mapping.search.bins.POLL` s."""
    usable = allowed & np.isfinite(own)
    unit = top * PRECISION
    w = integer_sizes(own, usable, unit)
    groups = classes(own, usable)
    lo, hi, packed = floor or 0.0, top * (1 - FIRST_TRIAL), top
    ceiling, tried = hi, False
    proven, decisions, best = None, [], None
    step = (hi - lo) / 16
    while hi - lo > RESOLUTION * top and step > 0.1 * RESOLUTION * top:
        now = time.time()
        if stopped(deadline, stop):
            break
        T = lo + step
        if T >= hi:         # the best value itself first, then halfway to the ceiling
            T = hi if hi == ceiling and not tried else 0.5 * (lo + hi)
            tried = tried or T == ceiling
        status, row = decide(w, usable, groups, capacity(T, unit), None if deadline is None
                             else now + DECISION_SHARE * (deadline - now), stop)
        decisions.append((T, status, round(time.time() - now, 3)))
        if status == "infeasible":
            proven = lo = T
            step *= 2
            continue
        if status == "feasible":
            # the real packing may lie above T where rounding down made it fit
            load = own_bottleneck(own, row)
            if load < packed:
                packed, best = load, row
            hi = min(T, packed)
        else:
            hi = T
        step = 0.5 * (hi - lo)
    return PackingBound(proven, packed if packed < top else None, tuple(decisions), best)


def prove(own: np.ndarray, allowed: np.ndarray, row, deadline: float | None = None,
          stop=None, better=None, charges=None, improved=None) -> PackingBound:
    """The proof of the best packing known: the decision just below the own loads'
    bottleneck of ``row`` (a mapping: ``T`` = that bottleneck less
    :data:`~mapping.search.cpsat.FIRST_TRIAL`), again from each better packing it finds,
    until one is infeasible (``value`` = its ``T``: that packing is optimal within
    that share), undecided, past ``deadline`` or ``stop()``.  The bisection of :func:`bound` spends its decisions
    between the highest value proven and the optimum, each of them hard near it; the
    proof needs only the one at the optimum, and a feasible decision above it returns
    a better packing in seconds (the research notes, issue 43: 30 x 8 at ``--comm
    0.1``, where the PEs' own loads set the bottleneck).  ``packed`` and ``row``: the
    least packing found (``row`` None where none beat ``row``).  Each decision goes to
    branch and price first (:mod:`~mapping.search.packing_price`, for the share of
    :func:`~mapping.search.packing_price.until`; not with ``charges``), then to
    :func:`decide`, hinted with the best packing known, which :func:`reoptimize` improves first, and
    each packing found is improved by :func:`descend` (a decision alone finds packings
    only a little below its ``T``: the research notes); the decisions share one unit
    while the best packing stays above :data:`UNIT_FLOOR` of the first, and each
    starts with the cuts of those before.  ``better()`` returns
    the best mapping found meanwhile elsewhere (or None): where its own loads'
    bottleneck is less than the best packing's, it answers the decision under way
    (ended within :data:`~mapping.search.bins.POLL` s) and the proof goes on from it.  With ``charges``
    (:class:`~mapping.search.packing_cn.Charges`) the decisions charge the CNs too and
    a packing is measured by its mapping's value, without the local searches (they
    see the PEs' own loads only).  ``improved(row)`` is called with each better
    packing the decisions find."""
    usable = allowed & np.isfinite(own)
    A = own.shape[0]
    row = np.asarray(row, dtype=np.intp)

    def measure(row) -> float:
        return own_bottleneck(own, row) if charges is None else charges.value(row)

    best = measure(row)
    terms = A if charges is None else A + charges.terms
    groups = classes(own, usable)
    found, proven, decisions = None, None, []
    unit, cuts = 0.0, []

    def ahead(value):
        """The mapping ``better()`` gives where its measure is below ``value``, else
        None."""
        other = None if better is None else better()
        return None if other is None or measure(other) >= value else \
            np.asarray(other, dtype=np.intp)

    while math.isfinite(best) and best > 0:
        now = time.time()
        if stopped(deadline, stop):
            break
        other = ahead(best)
        if other is not None:
            found, best = other, measure(other)
        if charges is None:
            polished = reoptimize(own, usable, row if found is None else found,
                                  deadline=deadline, stop=stop)
            if measure(polished) < best:
                found, best = polished, measure(polished)
        T = best * (1 - FIRST_TRIAL)
        # rounding down loses less than a unit per actor: below FIRST_TRIAL·best on any PE,
        # so a packing that fits is below best; one unit (and sizes) for the decisions
        # from here down to UNIT_FLOOR of this best, so that each keeps the cuts of the
        # ones before (their capacities are larger)
        if not unit or (terms + 1) * unit >= best * FIRST_TRIAL:
            unit, cuts = UNIT_FLOOR * best * FIRST_TRIAL / (terms + 1), []
            w = integer_sizes(own, usable, unit)
            cn = None if charges is None else charges.at(unit, EPSILON)

        def elsewhere():
            return (stop is not None and stop()) or ahead(best) is not None

        status, packing = "unknown", None
        if charges is None:     # branch and price first, CP-SAT where it runs out
            status, packing = packing_price.decide(w, usable, groups, capacity(T, unit),
                                                   packing_price.until(deadline), elsewhere)
        if status == "unknown" and not elsewhere():
            status, packing = decide(
                w, usable, groups, capacity(T, unit), deadline, elsewhere,
                cuts=cuts, hint=row if found is None else found, known=list(cuts), cn=cn)
        decisions.append((T, status, round(time.time() - now, 3)))
        if status == "infeasible":
            proven = T
            break
        if status != "feasible":
            if ahead(best) is not None:     # answered elsewhere: a better one is known
                continue
            break
        if charges is None:
            packing = descend(own, usable, packing)
        load = measure(packing)
        if load >= best:        # rounding let it fit: no better packing to go on from
            break
        best, found = load, packing
        if improved is not None:
            improved(packing)
    return PackingBound(proven, best if found is not None else None, tuple(decisions),
                        found)


def descend(own: np.ndarray, usable: np.ndarray, row, steps: int = LOCAL_STEPS) -> np.ndarray:
    """``row`` improved by descent on its own loads' bottleneck: the move of one actor
    off the busiest PE, else the exchange of one of its actors with another PE's, that
    leaves both PEs below the bottleneck and the higher of the two least, until none does
    (or after ``steps``).  Each step lowers the bottleneck or the number of PEs at it."""
    A, P = own.shape
    row = np.array(row, dtype=np.intp)
    size = np.where(usable, own, np.inf)
    loads = np.bincount(row, own[np.arange(A), row], minlength=P)
    for _ in range(steps):
        b = int(np.argmax(loads))
        top = loads[b]
        on, off = np.flatnonzero(row == b), np.flatnonzero(row != b)
        moved = loads[None, :] + size[on]
        moved[:, b] = np.inf
        worst = np.maximum(moved, (top - own[on, b])[:, None])
        i, q = np.unravel_index(np.argmin(worst), worst.shape)
        if worst[i, q] < top:
            a = on[i]
            loads[b] -= own[a, b]
            loads[q] += size[a, q]
            row[a] = q
            continue
        if not len(off):
            break
        qs = row[off]
        to_b = top - own[on, b][:, None] + size[off, b][None, :]
        to_q = loads[qs][None, :] - own[off, qs][None, :] + size[on][:, qs]
        worst = np.maximum(to_b, to_q)
        i, j = np.unravel_index(np.argmin(worst), worst.shape)
        if not worst[i, j] < top:
            break
        a, c, q = on[i], off[j], qs[j]
        loads[b] += size[c, b] - own[a, b]
        loads[q] += size[a, q] - own[c, q]
        row[a], row[c] = q, b
    return row


def reoptimize(own: np.ndarray, usable: np.ndarray, row, width: int = None,
               deadline: float | None = None, stop=None) -> np.ndarray:
    """``row`` improved on its own loads' bottleneck by :func:`descend`, then by
    placing anew, exactly, the actors of the busiest PE and of up to ``width − 1``
    others (CP-SAT on the least of their largest load, the others tried least loaded
    first, pairs before triples): the first such set that lowers the busiest PE's load
    is taken, then the descent again, until no set does, ``deadline`` or ``stop()``.
    A decision finds a packing only a little below its ``T``; these neighbourhoods
    reach the optimal packing or near it in seconds (the research notes, h56prove)."""
    import itertools
    from ortools.sat.python import cp_model
    A, P = own.shape
    width = REOPTIMIZE_WIDTH if width is None else width
    row = descend(own, usable, row)
    while True:
        loads = np.bincount(row, own[np.arange(A), row], minlength=P)
        b = int(np.argmax(loads))
        top = float(loads[b])
        unit = top * PRECISION
        others = [int(q) for q in np.argsort(loads, kind="stable") if q != b]
        sets = (s for k in range(1, width) for s in itertools.combinations(others, k))
        for rest in sets:
            if stopped(deadline, stop):
                return row
            pes = [b, *rest]
            on = np.flatnonzero(np.isin(row, pes))
            model = cp_model.CpModel()
            z = model.new_int_var(0, int(top / unit), "")
            x = {(a, j): model.new_bool_var("") for a in on for j, p in enumerate(pes)
                 if usable[a, p] and own[a, p] <= top}
            for a in on:
                model.add_exactly_one([x[a, j] for j in range(len(pes)) if (a, j) in x])
                model.add_hint(x[a, pes.index(int(row[a]))], True)
            for j, p in enumerate(pes):
                model.add(sum(int(round(own[a, p] / unit)) * x[a, j] for a in on
                              if (a, j) in x) <= z)
            model.minimize(z)
            solver = cp_model.CpSolver()
            solver.parameters.num_workers = 1
            solver.parameters.max_time_in_seconds = 1.0
            if solver.solve(model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                continue
            new = row.copy()
            for (a, j), v in x.items():
                if solver.boolean_value(v):
                    new[a] = pes[j]
            # the real loads decide (the model's are rounded)
            if np.bincount(new, own[np.arange(A), new], minlength=P)[pes].max() < top:
                row = descend(own, usable, new)
                break
        else:
            return row


def kicked(own: np.ndarray, usable: np.ndarray, row, deadline: float | None,
           rng: np.random.Generator, stop=None) -> np.ndarray:
    """:func:`reoptimize` from ``row``, then, until ``deadline``, again from the best
    packing found with :data:`KICK` actors moved to PEs drawn at random (an iterated
    local search): the best packing, by its own loads' bottleneck.  Without a deadline,
    :func:`reoptimize` alone (the kicks would never end).  ``stop()`` ends it early."""
    A = own.shape[0]
    best = reoptimize(own, usable, row, deadline=deadline, stop=stop)
    top = own_bottleneck(own, best)
    while deadline is not None and time.time() < deadline and not (stop and stop()):
        new = best.copy()
        for a in rng.choice(A, min(KICK, A), replace=False):
            new[a] = rng.choice(np.flatnonzero(usable[a]))
        new = reoptimize(own, usable, new, deadline=deadline, stop=stop)
        if own_bottleneck(own, new) < top:
            best, top = new, own_bottleneck(own, new)
    return best


def floor(setup, deadline: float | None = None, lower: float | None = None, best=None,
          stop=None) -> PackingBound:
    """:func:`bound` of ``setup``'s ``max`` objective from its best mapping (``best``,
    a row of PEs, else ``setup.info["incumbent"]``); ``lower``: the highest bound
    proven so far.  Nothing where no mapping is known or its bottleneck is not a PE
    (the packing ignores the CNs, so it cannot reach a bound set by one)."""
    from mapping.search.exact import mapping_value
    ev = setup.objectives.evaluators[0]
    row = setup.info.get("incumbent") if best is None else best
    if row is None or not linear_bottleneck(ev):
        return PackingBound(None, None)
    row = np.asarray(row, dtype=np.intp)
    value = mapping_value(ev, row)
    own = element_tables(ev)[0]
    packed = own_bottleneck(own, row)
    if not math.isfinite(value) or not pe_bottleneck(ev, row, value):
        return PackingBound(None, None)
    return bound(own, setup.space.allowed, min(value, packed), lower, deadline, stop)


def proof(setup, rows, deadline: float | None = None, stop=None,
          better=None, improved=None, charged: bool = False) -> PackingBound:
    """:func:`prove` on ``setup``'s ``max`` objective from the mapping of ``rows`` (the
    mappings known) whose own loads' bottleneck is least; nothing where the bottleneck
    of the best of them is not a PE (as :func:`floor`: the packing cannot reach a value
    set by a CN); ``better``, ``improved``: as :func:`prove`'s.  With ``charged`` (the
    caller's word that a CN carries nearly the bottleneck:
    :func:`~mapping.search.partition_bound.heavy`) the decisions charge the CNs
    (:mod:`~mapping.search.packing_cn`), from the best of them."""
    from mapping.search.exact import mapping_value
    ev = setup.objectives.evaluators[0]
    rows = [np.asarray(r, dtype=np.intp) for r in rows if r is not None]
    if not rows or not linear_bottleneck(ev):
        return PackingBound(None, None)
    values = [mapping_value(ev, r) for r in rows]
    best = int(np.argmin(values))
    if not math.isfinite(values[best]) or not pe_bottleneck(ev, rows[best], values[best]):
        return PackingBound(None, None)
    own = element_tables(ev)[0]
    if charged:
        from mapping.search.packing_cn import Charges
        return prove(own, setup.space.allowed, rows[best], deadline, stop, better,
                     Charges(ev, setup.space.allowed), improved)
    row = min(rows, key=lambda r: own_bottleneck(own, r))
    return prove(own, setup.space.allowed, row, deadline, stop, better, None, improved)


def pe_bottleneck(ev, row, value: float) -> bool:
    """Whether the bottleneck of the mapping ``row`` (of ``value``) is a PE."""
    loads = ev.loads(row[None, :])[0]
    pes = [i for i, e in enumerate(ev.elements) if e in ev.pe_index]
    return bool(pes) and float(loads[pes].max()) >= value * (1 - 1e-9)


#: the share of the time limit that ``both`` (:mod:`mapping.search.engine`) gives the
#: packing bound, after the cluster relaxation and before the partition bound: its
#: decisions take 0.03-2.4 s on 30 x 8 and 45 x 12 (``--comm 0.1`` of
#: ``tests/perf/bench_exact_max.py``) and a bisection a dozen of them; where the
#: packing is harder (80 x 16) a decision is left undecided when the share ends
SHARE = 0.15
#: the packing bound's seconds in ``both`` where there is no time limit (a decision
#: may not end)
SECONDS = 60.0


def within_share(setup, time_limit: float | None, deadline: float | None,
                 lower: float | None, stop=None) -> PackingBound:
    """:func:`floor` from ``setup``'s starting mapping within :data:`SHARE` of the
    time limit (:data:`SECONDS` without one), above ``lower``: ``both``'s packing
    bound."""
    end = time.time() + (SECONDS if time_limit is None else SHARE * time_limit)
    if deadline is not None:
        end = min(end, deadline)
    return floor(setup, end, lower, stop=stop)


def proves_start(setup, bound: float | None) -> bool:
    """Whether ``bound`` proves ``setup``'s starting mapping optimal (within CP-SAT's
    tolerance)."""
    from mapping.search import cpsat, exact
    start = setup.info.get("incumbent")
    return bool(bound) and start is not None and proves_optimal(
        exact.mapping_value(setup.objectives.evaluators[0], start), bound, cpsat.TOLERANCE)
