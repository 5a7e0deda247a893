"""Defects of issue 8 in the text formats: positions after multi-line attribute lists,
array limits, deep expressions, positional cost-model arguments, rounding noise and
non-finite values."""
import pytest

import dsl
from dsl import limits
from dsl.errors import INPUT_ERRORS
from moa.errors import ArchitectureError


def error_of(parse, text):
    with pytest.raises(INPUT_ERRORS) as info:
        parse(text, "f.txt")
    return info.value


# --- positions after an attribute list split over several lines ---

def test_error_after_a_multiline_simple_attribute_list_has_the_right_line():
    text = "sdf g {\n actor a [quanta = 1,\n   x = 2]\n actor b\n a -> c\n}\n"
    assert error_of(dsl.parse_sdf, text).origin == ("f.txt", 5, 7)


def test_error_after_several_multiline_lists_in_a_moa_file():
    text = ("moa m {\n pe a [x = 1,\n\n   y = 2]\n pe b [x = 1,\n y = 2\n ]\n"
            " cn c\n a -- d\n}\n")
    assert error_of(dsl.parse_moa, text).origin == ("f.txt", 9, 7)


# --- arrays ---

def test_an_array_beyond_the_limit_is_refused_with_its_position():
    text = "moa m {\n  pe p[0..1000000000000000000000000000000]\n}\n"
    e = error_of(dsl.parse_moa, text)
    assert isinstance(e, ArchitectureError)
    assert e.origin == ("f.txt", 2, 8)
    assert f"limit of {limits.MAX_ARRAY_MEMBERS}" in str(e)
    assert "raise it with --limit array=N" in str(e)


def test_the_array_limit_is_read_when_checked(monkeypatch):
    monkeypatch.setattr(limits, "MAX_ARRAY_MEMBERS", 3)
    with pytest.raises(ArchitectureError, match="limit of 3"):
        dsl.parse_moa("moa m { pe p[0..3] }")
    assert len(dsl.parse_moa("moa m { pe p[1..3] }")[0].pes) == 3


def test_array_members_share_their_bound_models():
    arch = dsl.parse_moa("moa m {\n pe p[0..9] [time = lsla(alpha = 1), x = 2]\n pe q\n}")[0]
    bound = arch.bind()
    members = [bound.elements[f"p[{i}]"] for i in range(10)]
    assert all(m.costs is members[0].costs for m in members)
    assert members[3].array == ("p", 3) and members[3].attrs["x"] == 2
    assert bound.elements["q"].costs == {}
