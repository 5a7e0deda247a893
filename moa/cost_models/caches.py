"""The working-set term: the bandwidth a token sees, from its working set against caches.

A memory hierarchy of cache levels ``(capacity c_i, bandwidth b_i)``, fastest first,
above a last level of bandwidth ``B`` (DRAM): a token of working set ``ws`` bytes has
its bytes served by the fastest level that holds them.  Let ``h_i(ws)`` be the share of
the bytes that level ``i`` or a faster one holds::

    h_i(ws) = min(1, (c_i / ws)^s)        (made non-decreasing in i; h_0 = 0)

and each byte pays the time of the level that serves it (a hierarchical roofline in
which the level is chosen by size)::

    seconds per byte  τ(ws) = Σ_i (h_i - h_{i-1}) / b_i + (1 - h_n) / B

``s`` is the ``sharpness`` of the transition.  With ``s = 1``, ``c / ws`` is the hit
ratio of a cache of ``c`` bytes when references are spread uniformly over ``ws`` bytes
(the share of the working set it holds); as ``s`` grows the transition approaches the
step of a least-recently-used cache swept in order (every byte hits while ``ws <= c``,
none after: the cliff streaming kernels show).  Measured bandwidth-against-working-set
curves (the Empirical Roofline Toolkit's, Lo et al., "Roofline Model Toolkit", PMBS
2014) show plateaus at each level's bandwidth joined by transitions of that kind; ``s``
is fitted with the rest.  Below every capacity the token sees ``b_1``; past the last, ``B``.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["LEVELS", "hit_share", "levels_of", "seconds_per_byte", "sharpness_of"]

#: the cache levels a model may name, fastest first (``l1_capacity``, ``l1_bandwidth``, ...)
LEVELS = ("l1", "l2", "l3")


def levels_of(params, scale: float = 1.0) -> tuple[tuple[float, float], ...]:
    """``((capacity, bandwidth · scale), ...)`` of the levels a model's parameters give
    (``lN_capacity > 0``), fastest first; () when none."""
    out = []
    for name in LEVELS:
        c = getattr(params, f"{name}_capacity", 0.0)
        if c > 0:
            out.append((c, getattr(params, f"{name}_bandwidth") * scale))
    return tuple(out)


def sharpness_of(params) -> tuple[float, ...]:
    """The ``lN_sharpness`` of each level :func:`levels_of` gives."""
    return tuple(getattr(params, f"{name}_sharpness") for name in LEVELS
                 if getattr(params, f"{name}_capacity", 0.0) > 0)


def hit_share(ws, capacity: float, sharpness: float = 1.0):
    """``min(1, (capacity / ws)^s)``: the share of a working set of ``ws`` bytes (a
    float or an array, as ``capacity`` with it) a level of ``capacity`` bytes holds (1
    for an empty one)."""
    if np.ndim(ws) == 0:
        return 1.0 if ws <= capacity else (capacity / ws) ** sharpness
    ws = np.asarray(ws, dtype=float)
    # where ws and capacity are both 0 the quotient is 0/0, a NaN the mask leaves out
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return np.where(ws > capacity, (capacity / np.maximum(ws, capacity)) ** sharpness, 1.0)


def seconds_per_byte(ws, levels, bandwidth: float, sharpness: float = 1.0):
    """``τ(ws)`` of the module: seconds per byte of a working set of ``ws`` bytes
    (a float or an array) over ``levels`` ``((capacity, bandwidth), ...)`` fastest first
    and a last level of ``bandwidth``; infinite bandwidths cost nothing.  ``sharpness``:
    one for every level, or one per level."""
    ws = np.asarray(ws, dtype=float)
    total = np.zeros_like(ws)
    before = np.zeros_like(ws)
    each = np.broadcast_to(np.asarray(sharpness, dtype=float), (len(levels),))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for (capacity, b), sharpness in zip(levels, each):
            held = np.maximum(hit_share(ws, capacity, sharpness), before)
            if not math.isinf(b):
                total = total + (held - before) / b
            before = held
        if not math.isinf(bandwidth):
            total = total + (1.0 - before) / bandwidth
    return total if total.ndim else float(total)
