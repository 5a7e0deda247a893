"""Firing times as exact numbers: one rule for the timing of a graph alone and of a
mapped graph, and one for counting them in integer ticks."""
from fractions import Fraction

import numpy as np
from hypothesis import given, settings, strategies as st

from moc import SDFGraph
from moc.exact_times import exact_time, ticks
from moc.kperiodic import kperiodic_throughput
from moc.phases import Phases


def test_a_written_decimal_is_itself():
    assert exact_time(0.1) == Fraction(1, 10)
    assert exact_time(2.675) == Fraction(107, 40)       # the float is below 2.675
    # the decimals' sum ties with 0.3; the floats' own does not
    assert exact_time(0.1) + exact_time(0.2) == exact_time(0.3)
    assert 0.1 + 0.2 != 0.3


def test_other_numbers_and_phases():
    assert exact_time(3) == 3 and isinstance(exact_time(3), int)
    assert exact_time(Fraction(1, 3)) == Fraction(1, 3)
    phased = exact_time((0.5, 2, 0.25))
    assert isinstance(phased, Phases)
    assert tuple(phased) == (Fraction(1, 2), 2, Fraction(1, 4))


@settings(deadline=None)
@given(st.floats(min_value=0, max_value=1e12, allow_nan=False))
def test_reads_back_as_the_float(x):
    assert float(exact_time(x)) == x


def test_ticks_count_every_time_in_the_least_common_unit():
    # denominators 2, 3 (a phase) and 1: the unit is 6, each time 6 times itself
    unit, times = ticks({"a": Fraction(1, 2), "b": (Fraction(1, 3), 2), "c": 5})
    assert unit == 6
    assert times == {"a": 3, "b": (2, 12), "c": 30}
    assert all(type(t) is int for t in (times["a"], *times["b"], times["c"]))
    assert ticks([Phases([Fraction(3, 4), 1]), np.int64(2)]) == (4, [Phases([3, 4]), 8])
    assert ticks(0.1) == (2 ** 55, 3602879701896397)        # the float's binary value
    assert ticks({}) == (1, {})


def test_kperiodic_weights_are_exact_where_a_float_meets_a_third():
    # a float time with a non-dyadic one: the unit is 3·2**55, and 0.1 in it passes
    # the float's 53 bits; its ticks were a float product, rounded
    g = SDFGraph("ring")
    g.add_actor("a", exec=0.1)
    g.add_actor("b", exec=Fraction(1, 3))
    g.add_channel("a", "b", prod=1, cons=1)
    g.add_channel("b", "a", prod=1, cons=1, delay=1)
    found = kperiodic_throughput(g, {"a": 0.1, "b": Fraction(1, 3)}, {"a": 1, "b": 1})
    assert found.period == Fraction(0.1) + Fraction(1, 3)


def test_exact_results_written_for_json_and_for_people():
    from moc.exact_times import as_float, exact_string, exact_text
    assert as_float(Fraction(1, 8)) == 0.125 and as_float(3) == 3 and as_float(None) is None
    assert exact_string(Fraction(1, 6)) == "1/6" and exact_string(6) == "6"
    assert exact_string(0.5) is None and exact_string(True) is None
    assert exact_text(Fraction(1, 6)) == "1/6 (0.166667)"
    assert exact_text(Fraction(12, 2)) == "6" and exact_text(0.125) == "0.125"
    assert exact_text(None) == "-"


def test_a_throughput_is_the_inverse_of_its_period():
    from moc.exact_times import throughput_of
    import math
    # exact where the period is
    assert throughput_of(6) == Fraction(1, 6) and isinstance(throughput_of(6), Fraction)
    assert throughput_of(Fraction(2, 3)) == Fraction(3, 2)
    assert throughput_of(0.25) == 4.0 and type(throughput_of(0.25)) is float
    # period 0: no cycle bounds the execution; infinite: it never repeats
    for zero in (0, Fraction(0), 0.0, np.float64(0)):
        assert throughput_of(zero) == math.inf
    assert throughput_of(math.inf) == 0 and throughput_of(np.inf) == 0
    # no period, or none that is a duration
    assert throughput_of(None) is None and throughput_of(-2.0) is None
    assert throughput_of(math.nan) is None
