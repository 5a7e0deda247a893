"""``--limit NAME=N``: the registry of stated limits (mapping/cli/limits.py)."""
import pytest

import dsl.limits
import moc.limits
import mapping.calibration.measurements
import mapping.evaluation.sweep
from mapping.errors import InputError
from mapping.cli.limits import LIMITS, limits_set, parse_limit


def test_every_limit_names_its_constant():
    assert LIMITS.names() == ["array", "elements", "links", "firings", "states", "schedule",
                              "latency", "sweep", "rows"]
    assert LIMITS.get("array").value == dsl.limits.MAX_ARRAY_MEMBERS
    assert LIMITS.get("elements").value == dsl.limits.MAX_ELEMENTS
    assert LIMITS.get("links").value == dsl.limits.MAX_LINKS
    assert LIMITS.get("firings").value == moc.limits.MAX_FIRINGS
    assert LIMITS.get("sweep").value == mapping.evaluation.sweep.MAX_POINTS
    assert LIMITS.get("states").value == moc.limits.MAX_STATES
    assert LIMITS.get("schedule").value == moc.limits.MAX_SCHEDULE == 1_000_000
    assert LIMITS.get("latency").value == moc.limits.MAX_LATENCY == 2_000_000
    assert LIMITS.get("rows").value == mapping.calibration.measurements.MAX_ROWS
    assert all(LIMITS.help(n) for n in LIMITS)


def test_limits_are_set_for_a_block_then_restored():
    before = (dsl.limits.MAX_ARRAY_MEMBERS, moc.limits.MAX_FIRINGS, mapping.evaluation.sweep.MAX_POINTS)
    with limits_set(["array=7", "firings=1e9", "sweep=1_000"]):
        assert dsl.limits.MAX_ARRAY_MEMBERS == 7
        assert moc.limits.MAX_FIRINGS == 10 ** 9
        assert mapping.evaluation.sweep.MAX_POINTS == 1000
    assert (dsl.limits.MAX_ARRAY_MEMBERS, moc.limits.MAX_FIRINGS,
            mapping.evaluation.sweep.MAX_POINTS) == before


@pytest.mark.parametrize("text, needle", [
    ("sweep", "NAME=N"), ("nope=3", "unknown limit 'nope'"), ("sweep=0", "whole number >= 1"),
    ("sweep=2.5", "whole"), ("sweep=x", "whole"), ("sweep=nan", "whole"),
])
def test_bad_limits(text, needle):
    with pytest.raises(InputError, match=needle):
        parse_limit(text)


def test_every_command_takes_limit(capsys):
    from mapping.cli.main import main
    assert main(["logca", "--L", "1", "--o", "1", "--C", "1", "--A", "2",
                 "--limit", "sweep=5"]) == 0
    capsys.readouterr()
    assert main(["check", "--limit", "array=x", "missing.sdf"]) == 2
    assert "--limit array=x" in capsys.readouterr().err


def test_every_limit_error_has_the_same_words():
    # one wording, moc.limits.exceeded
    assert moc.limits.exceeded("x has 5 firings", "firings", 4) == \
        "x has 5 firings, more than the limit firings = 4; raise it with --limit firings=N"
    # where the value that would do is known, it stands for N
    assert moc.limits.exceeded("the sweep grid has 6 points", "sweep", 4, 6).endswith(
        "more than the limit sweep = 4; raise it with --limit sweep=6")
