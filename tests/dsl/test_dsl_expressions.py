import math
import pickle

import pytest

import dsl
from dsl.expression import BinOp, Call, Name, Neg, Num
from dsl.errors import ExpressionError, ParseError


def ev(text, env=None):
    e = dsl.parse_expression(text)
    return e.evaluate(env or {})


@pytest.mark.parametrize("text, value", [
    ("1", 1), ("0x10", 16), ("0X1f", 31), ("1_000", 1000), ("0b101", 5), ("0o17", 15),
    ("2.5", 2.5), ("1e-9", 1e-9), ("2.0E+3", 2000.0), ("1_000.5", 1000.5),
])
def test_number_literals(text, value):
    result = ev(text)
    assert result == value
    assert type(result) is type(value)


@pytest.mark.parametrize("text, value", [
    ("1 + 2 * 3", 7), ("(1 + 2) * 3", 9), ("10 - 4 - 3", 3), ("2 * 3 / 4", 1.5),
    ("2 ** 3 ** 2", 512), ("(2 ** 3) ** 2", 64), ("-2 ** 2", -4), ("(-2) ** 2", 4),
    ("2 ** -1", 0.5), ("-3 * 2", -6), ("- -3", 3), ("+3", 3), ("2 * -3", -6),
    ("8 / 2 / 2", 2), ("1 - -1", 2), ("2 ** 2 * 3", 12), ("-2 ** 2 * 3", -12),
])
def test_precedence_and_associativity(text, value):
    assert ev(text) == value


def test_integers_stay_integers():
    assert type(ev("2 * 3")) is int
    assert type(ev("6 / 2")) is int and ev("6 / 2") == 3
    assert ev("7 / 2") == 3.5
    assert type(ev("2 ** 10")) is int
    assert type(ev("ceil(2.5)")) is int and ev("floor(2.5)") == 2


@pytest.mark.parametrize("text, value", [
    ("min(3, 1, 2)", 1), ("max(3, 1, 2)", 3), ("abs(-4)", 4), ("sqrt(16)", 4),
    ("log(1)", 0.0), ("log2(8)", 3.0), ("exp(0)", 1.0), ("ceil(1.2)", 2), ("floor(-1.2)", -2),
    ("log(8, 2)", 3.0), ("sqrt(2)", math.sqrt(2)),
])
def test_functions(text, value):
    assert ev(text) == pytest.approx(value)


def test_names_and_lazy_environment():
    e = dsl.parse_expression("a * b + 1")
    assert e.names == {"a", "b"}
    env = {"a": 2, "b": dsl.parse_expression("a + 1")}
    assert e.evaluate(env) == 7
    assert ev("inf") == math.inf
    assert ev("inf", {"inf": 3}) == 3


def test_unknown_name_has_origin():
    e = dsl.parse_expression("1 + foo", "x.txt")
    with pytest.raises(ExpressionError) as err:
        e.evaluate({"bar": 1})
    assert "foo" in str(err.value)
    assert err.value.origin == ("x.txt", 1, 5)
    assert isinstance(err.value, ParseError)


def test_cycle_detected():
    env = {"a": dsl.parse_expression("b + 1"), "b": dsl.parse_expression("a * 2")}
    with pytest.raises(ExpressionError, match="cycle"):
        Name("a").evaluate(env)


@pytest.mark.parametrize("text, message", [
    ("1 / 0", "division by zero"), ("sqrt(-1)", "sqrt"), ("log(0)", "log"),
])
def test_evaluation_errors(text, message):
    with pytest.raises(ExpressionError, match=message):
        ev(text)


def test_unknown_function_and_arity_are_parse_errors():
    with pytest.raises(ExpressionError, match="unknown function 'foo'"):
        dsl.parse_expression("foo(1)")
    with pytest.raises(ExpressionError, match="takes 1 argument"):
        dsl.parse_expression("abs(1, 2)")


@pytest.mark.parametrize("text", [
    "a + b * c", "(a + b) * c", "a - (b - c)", "a - b - c", "a / (b * c)", "a ** b ** c",
    "(a ** b) ** c", "-a ** 2", "(-a) ** 2", "-(a + b)", "a ** -b", "min(a, b + 1) * 2",
    "-(-a)", "2 * -a", "1e-09 * x", "+a",
])
def test_printing_is_valid_source_and_round_trips(text):
    e = dsl.parse_expression(text)
    again = dsl.parse_expression(str(e))
    assert again == e
    assert str(again) == str(e)
    env = {"a": 2, "b": 3, "c": 5, "x": 7}
    assert again.evaluate(env) == e.evaluate(env)


def test_structural_equality_ignores_origin_and_objects_are_immutable():
    assert Num(1, ("a", 1, 1)) == Num(1)
    assert BinOp("+", Name("a"), Num(1)) == dsl.parse_expression("a + 1")
    assert hash(Call("min", [Num(1), Num(2)])) == hash(dsl.parse_expression("min(1, 2)"))
    with pytest.raises(AttributeError):
        Num(1).value = 2


def test_pickle():
    e = dsl.parse_expression("-min(a, 2) ** 2 / b", "f.sdf")
    e2 = pickle.loads(pickle.dumps(e))
    assert e2 == e and e2.origin == e.origin
    assert isinstance(e2, BinOp) and isinstance(e2.left, Neg)


def test_expression_syntax_error():
    with pytest.raises(ParseError) as err:
        dsl.parse_expression("1 + * 2")
    assert err.value.origin[1:] == (1, 5)
