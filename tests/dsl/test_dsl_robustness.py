"""Defects of issue 8 in the text formats: positions after multi-line attribute lists,
array limits, deep expressions, positional cost-model arguments, rounding noise and
non-finite values."""
import pytest

import dsl
from dsl import limits
from dsl.errors import INPUT_ERRORS, ParseError
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
    assert f"limit array = {limits.MAX_ARRAY_MEMBERS}" in str(e)
    assert "raise it with --limit array=N" in str(e)


def test_the_array_limit_is_read_when_checked(monkeypatch):
    monkeypatch.setattr(limits, "MAX_ARRAY_MEMBERS", 3)
    with pytest.raises(ArchitectureError, match="limit array = 3"):
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
    with pytest.raises(INPUT_ERRORS) as info:
        dsl.parse_moa("moa m { pe p [time = bandwdith(B = 1)] }", "f.txt")
    msg = str(info.value)
    assert "unknown cost model 'bandwdith'" in msg and "lsla" in msg
    assert "did you mean 'bandwidth'?" in msg


def test_functions_of_expressions_refuse_keywords_and_suggest_names():
    e = error_of(dsl.parse_sdf, "sdf g {\n  param z = min(a = 1)\n}")
    assert "function 'min' takes no keyword arguments" in str(e)
    e = error_of(dsl.parse_sdf, "sdf g {\n  actor a [q = mx(1)]\n}")
    assert "unknown function 'mx'" in str(e) and "did you mean 'max'?" in str(e)
    assert e.origin == ("f.txt", 2, 16)


# --- deep expressions: no recursion in parsing, evaluation, printing, comparison ---

@pytest.mark.parametrize("text, value", [
    (" + ".join(["1"] * 5000), 5000),
    ("-" * 5000 + "1", 1),
    ("- " * 5001 + "1", -1),
    ("(" * 3000 + "2" + ")" * 3000, 2),
    ("1 + (" * 3000 + "1" + ")" * 3000, 3001),
    ("1 ** " * 3000 + "0", 1),
    ("min(" * 2000 + "1" + ", 2)" * 2000, 1),
], ids=["sum", "signs", "spaced-signs", "parentheses", "right-sum", "powers", "calls"])
def test_deep_expressions_parse_evaluate_print_and_pickle(text, value):
    import pickle
    e = dsl.parse_expression(text)
    assert e.evaluate({}) == value
    again = dsl.parse_expression(str(e))
    assert again == e and hash(again) == hash(e)
    assert pickle.loads(pickle.dumps(e)) == e


def test_deep_expressions_in_a_file_and_a_long_parameter_chain():
    terms = " + ".join(["x"] * 2000)
    text = f"sdf g {{\n param x = 1\n param y = {terms}\n actor a [quanta = {'-' * 2000}y]\n}}"
    graph = dsl.parse_sdf(text)[0]
    assert graph.bind().actors["a"].attrs["quanta"] == 2000
    n = 600
    chain = "".join(f" param p{i} = p{i - 1} + 1\n" for i in range(1, n))
    graph = dsl.parse_sdf(f"sdf g {{\n param p0 = 0\n{chain} actor a [quanta = p{n - 1}]\n}}")[0]
    assert graph.bind().actors["a"].attrs["quanta"] == n - 1
    cycle = "".join(f" param p{i} = p{i + 1}\n" for i in range(n)) + f" param p{n} = p0\n"
    with pytest.raises(dsl.ExpressionError, match="cycle"):
        dsl.parse_sdf(f"sdf g {{\n{cycle}}}")


# --- rounding noise ---

def test_rounding_noise_of_a_sum_is_zero():
    e = dsl.parse_expression("1 - f_gpu - f_dsp")
    assert e.evaluate({"f_gpu": 0.8, "f_dsp": 0.2}) == 0
    assert dsl.parse_expression("0.1 + 0.2 - 0.3").evaluate() == 0
    # a genuinely small difference of small terms stays
    assert dsl.parse_expression("3e-17 - 1e-17").evaluate() == pytest.approx(2e-17)
    assert dsl.parse_expression("1 - 0.999").evaluate() == pytest.approx(1e-3)


def test_zero_work_on_a_core_is_accepted():
    text = ("sdf g {\n param f_gpu = 0.8\n param f_dsp = 0.2\n"
            " actor cpu [quanta = 1, ops = 1 - f_gpu - f_dsp]\n}")
    assert dsl.parse_sdf(text)[0].bind().actors["cpu"].attrs["ops"] == 0


# --- NaN and infinities ---

@pytest.mark.parametrize("text, where, message", [
    ("sdf g {\n actor a [quanta = -1]\n}", (2, 11), "quanta must be a finite non-negative"),
    ("sdf g {\n actor a [quanta = inf]\n}", (2, 11), "got inf"),
    ("sdf g {\n actor a [quanta = inf - inf]\n}", (2, 11), "got nan"),
    ("sdf g {\n actor a [x = 2 * inf - inf]\n}", (2, 11), "x is not a number (nan)"),
    ("sdf g {\n actor a\n a -> a [size = inf, delay = 1]\n}", (3, 10), "size must be"),
    ("sdf g {\n actor a\n a -> a [w = 0 * inf, delay = 1]\n}", (3, 10), "w is not a number (nan)"),
], ids=["negative-quanta", "inf-quanta", "nan-quanta", "nan-attribute", "inf-size", "nan-attr"])
def test_non_finite_actor_and_channel_values_are_positioned_errors(text, where, message):
    e = error_of(dsl.parse_sdf, text)
    assert message in str(e) and e.origin == ("f.txt",) + where


def test_lambda_must_be_finite_at_parse_and_at_bind_time():
    e = error_of(dsl.parse_moa, "moa m {\n  lambda = inf - inf\n}")
    assert "lambda must be a finite non-negative number, got nan" in str(e)
    assert e.origin == ("f.txt", 2, 3)
    arch = dsl.parse_moa("moa m {\n param l = 1\n lambda = 2 * l\n}", "f.txt")[0]
    for bad in (float("nan"), float("inf"), -1):
        with pytest.raises(ArchitectureError, match=r"lambda must be a finite non-negative "
                           r"number, got .* \(lambda = 2 \* l with l = "):
            arch.bind({"l": bad})
    assert arch.bind({"l": 0.5}).lambda_ == 1.0
    # found by the fuzzer: OverflowError (exit 1) on an integer beyond the float range
    with pytest.raises(ArchitectureError, match="lambda must be a finite"):
        arch.bind({"l": 7 ** 1000})


def test_infinity_stays_allowed_where_it_means_something():
    graph = dsl.parse_sdf("sdf g { actor a [intensity = inf] }")[0]
    assert graph.actors["a"].attrs["intensity"] == float("inf")
    arch = dsl.parse_moa("moa m { pe p [time = roofline(peak = 1, bandwidth = inf), x = inf] }")[0]
    p = arch.bind().elements["p"]
    assert p.costs["time"].params.bandwidth == float("inf") and p.attrs["x"] == float("inf")


def test_an_integer_beyond_the_float_range_is_not_a_finite_quanta():
    # found by the fuzzer: OverflowError (exit 1) while checking the value
    e = error_of(dsl.parse_sdf, "sdf g {\n actor a [quanta = 7 ** 1000]\n}")
    assert "quanta must be a finite non-negative number, got an integer of about 846 digits" in str(e)


@pytest.mark.parametrize("text", ["2 ** 2000 - 0.5", "0.5 + 7 ** 1000", "1e-9 + 2 ** 1100"])
def test_a_sum_of_a_huge_integer_and_a_float_is_an_overflow_error(text):
    # found by the fuzzer: OverflowError (exit 1) in the evaluation of a sum
    with pytest.raises(dsl.ExpressionError, match="overflows"):
        dsl.parse_expression(text).evaluate()
    e = error_of(dsl.parse_sdf, f"sdf g {{\n actor a [ops = {text}]\n}}")
    assert "overflows" in str(e) and e.origin[:2] == ("f.txt", 2)


def test_a_huge_integer_that_cancels_leaves_an_exact_sum():
    assert dsl.parse_expression("(7 ** 1000 - 7 ** 1000) + 0.5").evaluate() == 0.5


def test_a_model_parameter_beyond_any_float_is_a_positioned_error():
    # found by the fuzzer: the message's repr of a 7,204-digit integer raised (exit 1)
    from moa.errors import CostModelError
    with pytest.raises(CostModelError, match="parameter 'alpha' = an integer of about 7204 "
                                             "digits: input should be a valid number") as info:
        dsl.parse_moa("moa m {\n  pe p [time = lsla(1_000 ** 7 ** 2 ** 2)]\n}\n", "t.moa")
    assert info.value.origin[:2] == ("t.moa", 2)


def test_a_cost_model_takes_a_quoted_text_positionally():
    # lookup("exec_{type}") as SPEC §12 writes its key: by position, like any argument
    arch = dsl.parse_moa('moa m {\n  type T [time = lookup("exec_{type}", 2)]\n  pe a : T\n}\n')[0]
    model = arch.bind().elements["a"].model("time")
    assert model.params.key == "exec_T" and model.params.scale == 2


def test_a_function_refuses_a_quoted_text():
    with pytest.raises(ParseError, match=r'sqrt\(\) takes numbers, not the text "a"') as info:
        dsl.parse_sdf('sdf g {\n actor x [quanta = sqrt("a")]\n}\n', "t.sdf")
    assert info.value.origin == ("t.sdf", 2, 25)
