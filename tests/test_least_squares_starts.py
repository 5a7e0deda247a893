"""Which start a fit names as the one that won: the first that reached the least cost
to the solver's own tolerance, so that starts which reach one optimum name the same
start on every platform, whatever their last bits."""
import pytest

from mapping.calibration.starts import SAME_OPTIMUM_RTOL, first_at_optimum


def test_last_bit_differences_name_the_first_start():
    # the big.LITTLE fit's nine starts end at these costs, apart in the 16th digit
    costs = [0.34316073280281445, 0.34316073280281445, 0.34316073280281434,
             0.34316073280281434, 0.34316073280281434, 0.34316073280281428,
             0.34316073280281445, 0.34316073280281428, 0.34316073280281445]
    assert first_at_optimum(costs) == 0


def test_a_lower_optimum_is_named():
    assert first_at_optimum([0.6185, 0.0238, 0.6185, 0.0238 * (1 - SAME_OPTIMUM_RTOL / 2)]) == 1
    assert first_at_optimum([1.0, 1.0 - 2 * SAME_OPTIMUM_RTOL]) == 1


def test_failed_starts_are_passed_over():
    assert first_at_optimum([None, 2.0, None, 1.0]) == 3
    with pytest.raises(ValueError):
        first_at_optimum([None, None])
