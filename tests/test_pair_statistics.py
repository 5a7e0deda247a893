"""The O(n log n) pair statistics (Knight's method) against an O(n²) reference of SPEC
§8's definitions: tau-b, the fraction of agreeing pairs (a tie in one but not the other
disagrees, a tie in both agrees) and the figures within groups."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mapping.calibration.fidelity import fidelity, pair_counts, pairwise_fidelity, within_groups


def reference(p, m):
    """(pairs, agreeing, tau-b) of one group by comparing every pair."""
    pairs = agree = conc = disc = tie_p = tie_m = 0
    for i, j in itertools.combinations(range(len(p)), 2):
        sp, sm = np.sign(p[i] - p[j]), np.sign(m[i] - m[j])
        pairs += 1
        agree += sp == sm
        conc += sp * sm > 0
        disc += sp * sm < 0
        tie_p += sp == 0
        tie_m += sm == 0
    if pairs - tie_p and pairs - tie_m:
        tau = (conc - disc) / math.sqrt((pairs - tie_p) * (pairs - tie_m))
    else:
        tau = math.nan
    return pairs, agree, tau


def reference_within(p, m, groups):
    pairs = agree = 0
    weighted = 0.0
    for label in set(groups):
        rows = [i for i, g in enumerate(groups) if g == label]
        k, a, tau = reference([p[i] for i in rows], [m[i] for i in rows])
        pairs, agree = pairs + k, agree + a
        weighted += k * (0.0 if math.isnan(tau) else tau)
    return (agree / pairs, weighted / pairs) if pairs else (math.nan, math.nan)


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_against_every_pair(data):
    # few distinct values: ties in both, in either and in neither
    n = data.draw(st.integers(0, 40))
    p = data.draw(st.lists(st.sampled_from([0.0, 1.0, 1.5, 2.0, 3.0, -1.0]),
                           min_size=n, max_size=n))
    m = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 7.0]), min_size=n, max_size=n))
    groups = data.draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
    pairs, agree, tau = reference(p, m)
    if n >= 2:
        assert pairwise_fidelity(p, m) == pytest.approx(agree / pairs, abs=1e-15)
        r = fidelity(p, m)
        assert same(r.tau, tau) and r.fidelity == pytest.approx(agree / pairs, abs=1e-15)
        counts = pair_counts(p, m)
        assert same(float(counts.tau_b()[0]), tau)
    else:
        assert math.isnan(pairwise_fidelity(p, m))
    want = reference_within(p, m, groups)
    got = within_groups(p, m, groups)
    assert same(got[0], want[0]) and same(got[1], want[1])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=60),
       st.integers(0, 2**32 - 1))
def test_distinct_floats_and_per_group_counts(p, seed):
    rng = np.random.default_rng(seed)
    m = list(np.round(rng.normal(size=len(p)), 1))
    groups = list(rng.integers(0, 4, len(p)))
    counts = pair_counts(p, m, groups)
    for g, label in enumerate(dict.fromkeys(groups)):      # in order of appearance
        rows = [i for i, x in enumerate(groups) if x == label]
        pairs, agree, tau = reference([p[i] for i in rows], [m[i] for i in rows])
        assert (int(counts.pairs[g]), int(counts.agreeing[g])) == (pairs, agree)
        assert same(float(counts.tau_b()[g]), tau)


def test_rounding_applies_before_ranking():
    # 0.1 + 0.2 and 0.3 tie after rounding to 12 significant digits, as SPEC §8 says
    assert within_groups([0.1 + 0.2, 0.3, 1.0], [1.0, 1.0, 2.0], ["g"] * 3) == (1.0, 1.0)
