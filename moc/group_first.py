"""Per group, the position of its largest key: how Howard's iteration
(:mod:`moc.cycle_ratio`) and the spreading of its steps (:mod:`moc.policy_spread`) pick
each node's best edge, of equal ones the first."""
from __future__ import annotations

import numpy as np


def first_per(group, key, slack=0.0):
    """For each distinct ``group`` value the position of its largest ``key`` (of equal
    ones the first, ``slack``: of those within it of the largest, on groups in order),
    in the order of the groups."""
    if not len(group):
        return np.zeros(0, dtype=np.int64)
    if not (group[1:] >= group[:-1]).all():
        assert not slack, "a slack needs the groups in order"
        order = np.lexsort((-key, group))
        first = np.ones(len(order), dtype=bool)
        first[1:] = group[order][1:] != group[order][:-1]
        return order[first]
    # groups in order: each one's maximum over its segment, then its first position
    starts = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))
    top = np.maximum.reduceat(key, starts)
    top = np.repeat(top, np.diff(np.append(starts, len(key))))
    hits = np.flatnonzero(key >= top - slack if slack else key == top)
    return hits[np.concatenate(([True], group[hits[1:]] != group[hits[:-1]]))]
