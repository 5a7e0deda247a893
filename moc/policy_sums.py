"""Sums along a policy (a functional graph ``succ``: each node's chosen edge) from every
node to the root of the cycle it reaches, by pointer doubling: Howard's potentials
(:mod:`moc.cycle_ratio`) in floats or integers, and exactly past int64 in two limbs.
"""
from __future__ import annotations

import numpy as np

#: bits of the low limb of an exact sum past int64 (:func:`limb_path_sums`)
LOW_BITS = 32


def doubling(n):
    """The rounds of pointer doubling that follow any path of ``n`` nodes to its end."""
    return max(1, int(n).bit_length())


def path_sums(succ, value, roots):
    """``Σ value`` along ``succ`` from every node to the root of its cycle (0 at the
    roots, the root's own edge cut), by pointer doubling."""
    return sums_to_roots(succ, (value,), roots)[0][0]


def sums_to_roots(succ, values, roots):
    """:func:`path_sums` of each of ``values`` at once, and per node the root it
    reaches (the values side by side: one gather of rows per step for all)."""
    total = np.stack(values, axis=1) if len(values) > 1 else values[0].copy()
    step = succ.copy()
    total[roots] = 0
    step[roots] = roots
    # a pointer that moved among a few nodes spares the comparison of all (policy trees
    # are deep: nearly every node moves until the last two or three rounds)
    probe = np.arange(0, len(succ), max(1, len(succ) // 64))
    for _ in range(doubling(len(succ))):
        total += total.take(step, axis=0)
        after = step.take(step)
        if np.array_equal(after[probe], step[probe]) and np.array_equal(after, step):
            break                                   # every node reached its root
        step = after
    return (list(total.T) if total.ndim > 1 else [total]), step


def limb_path_sums(succ, value, roots):
    """:func:`path_sums` of int64 ``value`` (each below ``2**62`` in size) where the
    sums may pass int64: ``(high, low)``, the sum being ``high·2**LOW_BITS + low``.
    Each value is split into its high limb (``value >> LOW_BITS``, a floor) and its low
    one (in ``[0, 2**LOW_BITS)``), and each limb is summed apart: sums of fewer than
    ``2**29`` nodes stay within int64 in both."""
    high, low = value >> LOW_BITS, value & ((1 << LOW_BITS) - 1)
    (high, low), _ = sums_to_roots(succ, (high, low), roots)
    return high, low
