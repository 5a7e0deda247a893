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


# --- positional arguments of cost models ---

def _costs(text):
    arch = dsl.parse_moa(text)[0]
    return {name: dict(e.costs) for name, e in arch.elements.items()}


def test_cost_models_take_positional_arguments_in_declared_order():
    costs = _costs("moa m {\n pe p [time = bandwidth(12)]\n"
                   " pe q [time = lsla(2e-9, 1e-6), energy = lsla(3, beta = 4)]\n}")
    assert dict(costs["p"]["time"].args) == {"B": 12}
    assert dict(costs["q"]["time"].args) == {"alpha": 2e-9, "beta": 1e-6}
    assert dict(costs["q"]["energy"].args) == {"alpha": 3, "beta": 4}
    bound = dsl.parse_moa("moa m { param f = 2; type T [time = lsla(1 / f)]; pe p : T }")[0]
    assert bound.bind().elements["p"].costs["time"].params.alpha == 0.5


@pytest.mark.parametrize("call, message", [
    ("lsla(1, alpha = 2)", "parameter 'alpha' is given twice"),
    ("lsla(1, 2, 3)", "takes at most 2 positional arguments (alpha, beta), got 3"),
    ("lsla(beta = 1, 2)", "a positional argument follows a keyword argument"),
    ("bandwdith(1)", "unknown cost model 'bandwdith'"),
    ("2 * lsla(2)", "cost model 'lsla' can only be the whole value"),
])
def test_bad_cost_model_calls_are_positioned_errors(call, message):
    e = error_of(dsl.parse_moa, f"moa m {{\n  pe p [time = {call}]\n}}")
    assert message in str(e)
    assert e.origin[:2] == ("f.txt", 2)


def test_a_mistyped_model_name_says_cost_model_and_suggests():
    arch = dsl.parse_moa("moa m { pe p [time = bandwdith(B = 1)] }", "f.txt")[0]
    with pytest.raises(INPUT_ERRORS) as info:
        arch.bind()
    msg = str(info.value)
    assert "unknown cost model 'bandwdith'" in msg and "lsla" in msg
    assert "did you mean 'bandwidth'?" in msg


def test_functions_of_expressions_refuse_keywords_and_suggest_names():
    e = error_of(dsl.parse_sdf, "sdf g {\n  param z = min(a = 1)\n}")
    assert "function 'min' takes no keyword arguments" in str(e)
    e = error_of(dsl.parse_sdf, "sdf g {\n  actor a [q = mx(1)]\n}")
    assert "unknown function 'mx'" in str(e) and "did you mean 'max'?" in str(e)
    assert e.origin == ("f.txt", 2, 16)
