"""Sums along a policy (a functional graph ``succ``: each node's chosen edge) from every
node to the root of the cycle it reaches, by pointer doubling: Howard's potentials
(:mod:`moc.cycle_ratio`) in floats or integers, and exactly past int64 in two limbs.
"""
from __future__ import annotations

import numpy as np

#: bits of the low limb of an exact sum past int64 (:func:`limb_path_sums`)
LOW_BITS = 32
LOW_MASK = (1 << LOW_BITS) - 1


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
    Each value is split into its :func:`limbs`, each limb summed apart: sums of fewer
    than ``2**29`` nodes stay within int64 in both (:func:`carried` brings a result's
    low limb back into its range)."""
    (high, low), _ = sums_to_roots(succ, limbs(value), roots)
    return high, low


def limbs(value):
    """``(high, low)`` of int64 ``value``: ``value = high·2**LOW_BITS + low`` with
    ``low`` in ``[0, 2**LOW_BITS)`` (``high`` a floor, for negative values too)."""
    return value >> LOW_BITS, value & LOW_MASK


def carried(high, low):
    """``(high, low)`` of the number ``high·2**LOW_BITS + low`` with ``low`` brought
    back into ``[0, 2**LOW_BITS)``, in place: the number's sign is then ``high``'s, and
    it is 0 where both are."""
    high += low >> LOW_BITS
    low &= LOW_MASK
    return high, low
