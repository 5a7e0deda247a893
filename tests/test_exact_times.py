"""Firing times as exact numbers: one rule for the timing of a graph alone and of a
mapped graph."""
from fractions import Fraction

from hypothesis import given, strategies as st

from moc.exact_times import exact_time
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


@given(st.floats(min_value=0, max_value=1e12, allow_nan=False))
def test_reads_back_as_the_float(x):
    assert float(exact_time(x)) == x
