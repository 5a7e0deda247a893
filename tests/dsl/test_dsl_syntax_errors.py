"""Every class of syntax error, with the line and column it is reported at."""
import pytest

import dsl
from dsl.diagnostics import format_diagnostic
from dsl.errors import INPUT_ERRORS, ParseError


def err(parse, text):
    with pytest.raises(ParseError) as info:
        parse(text, "f.txt")
    return info.value


def test_missing_closing_bracket_reports_the_end_of_its_line():
    text = "sdf g {\n    actor a [quanta = 1\n    actor b\n}\n"
    e = err(dsl.parse_sdf, text)
    assert e.origin == ("f.txt", 2, 24)
    assert str(e) == "unexpected newline; expected one of: ',', ']'"


def test_missing_closing_bracket_before_a_comment():
    e = err(dsl.parse_sdf, "sdf g {\n  actor a [q = 1   # comment\n}")
    assert e.origin == ("f.txt", 2, 17)


def test_missing_closing_parenthesis():
    e = err(dsl.parse_moa, "moa m {\n  pe a [time = lsla(alpha = 1]\n}")
    assert e.origin == ("f.txt", 2, 30)
    assert str(e) == "unexpected ']'; expected one of: ')', ','"


def test_missing_closing_brace_is_end_of_input():
    e = err(dsl.parse_sdf, "sdf g {\n  actor a\n")
    assert e.origin == ("f.txt", 2, 10)
    assert str(e).startswith("unexpected end of input; expected one of:")
    assert "'}'" in str(e) and "newline" in str(e)


def test_unexpected_character():
    e = err(dsl.parse_sdf, "sdf g {\n  actor a @\n}")
    assert e.origin == ("f.txt", 2, 11)
    assert str(e).startswith("unexpected character '@'; expected one of: ")
    assert "'['" in str(e)


def test_unterminated_string():
    e = err(dsl.parse_sdf, 'sdf g {\n  actor "a\n}')
    assert e.origin == ("f.txt", 2, 9)
    assert str(e).startswith("unterminated string")


def test_unexpected_token():
    e = err(dsl.parse_sdf, "sdf g {\n  a -> -> b\n}")
    assert e.origin == ("f.txt", 2, 8)
    assert str(e) == "unexpected '->'; expected one of: a name, a quoted string"


def test_missing_value():
    e = err(dsl.parse_sdf, "sdf g { actor a [q = ] }")
    assert e.origin == ("f.txt", 1, 22)
    assert "expected one of: '(', '+', '-', '[', a name, a number" in str(e)


def test_two_statements_on_a_line_need_a_separator():
    e = err(dsl.parse_sdf, "sdf g { actor a actor b }")
    assert e.origin == ("f.txt", 1, 17)
    assert "';'" in str(e) and "newline" in str(e)


def test_statement_outside_a_block():
    e = err(dsl.parse_sdf, "actor a")
    assert e.origin == ("f.txt", 1, 1)
    assert "expected one of: ';', 'sdf', newline" in str(e) or "'sdf'" in str(e)


def test_unknown_statement_in_moa():
    e = err(dsl.parse_moa, "moa m {\n  pe a\n  bogus a\n}")
    assert e.origin == ("f.txt", 3, 9)


def test_bad_range_and_index():
    assert err(dsl.parse_moa, "moa m { pe a[0..x] }").origin == ("f.txt", 1, 17)
    assert err(dsl.parse_moa, "moa m { pe a[1.5..2] }").origin == ("f.txt", 1, 14)


def test_newline_continues_after_comma_and_before_closing_bracket():
    (g,) = dsl.parse_sdf("sdf g {\n actor a [\n  q = 1,\n  r = 2 +\n 3\n ]\n}")
    assert dict(g.actors["a"].attrs) == {"q": 1, "r": 5}


def test_input_errors_tuple():
    assert ParseError in INPUT_ERRORS
    with pytest.raises(INPUT_ERRORS):
        dsl.parse_sdf("sdf g { actor a; actor a }")


def test_format_diagnostic_reads_the_file(tmp_path):
    path = tmp_path / "app.sdf"
    path.write_text("sdf g {\n    actor a [quanta = 1\n}\n")
    with pytest.raises(ParseError) as info:
        dsl.load_sdf(path)
    e = info.value
    text = format_diagnostic(str(e), e.origin)
    assert text == (f"{path}:2:24: error: unexpected newline; expected one of: ',', ']'\n"
                    "        actor a [quanta = 1\n"
                    "                           ^")


def test_format_diagnostic_with_source_text_and_tabs():
    text = format_diagnostic("boom", ("<string>", 1, 3), source="\tab c")
    assert text == "<string>:1:3: error: boom\n    \tab c\n    \t ^"


def test_format_diagnostic_without_origin():
    assert format_diagnostic("something failed") == "mapeval: error: something failed"
    assert format_diagnostic("x", (None, None, None)) == "mapeval: error: x"
    assert format_diagnostic("x", ("f.sdf", None, None)) == "f.sdf: error: x"
    assert format_diagnostic("x", ("missing.sdf", 3, 4)) == "missing.sdf:3:4: error: x"


def test_load_errors(tmp_path):
    with pytest.raises(ParseError, match="no such file"):
        dsl.load_sdf(tmp_path / "nope.sdf")
    with pytest.raises(ParseError, match="unknown file kind"):
        dsl.load(tmp_path / "x.txt")


@pytest.mark.parametrize("col", [1, 40, 51, 52, 2500, 4950, 4951, 4999, 5000, 5001])
def test_a_minified_line_is_shown_around_its_column(col):
    """SDF3's XML often comes as one line of thousands of characters: the diagnostic
    shows 100 of them around the column, cut with '...', and the caret stays under the
    character the column names (or one past the end)."""
    line = "".join(chr(ord("a") + i % 26) for i in range(5000))
    shown, caret = format_diagnostic("m", ("f.xml", 1, col), source=line).split("\n")[1:]
    shown, caret = shown[4:], caret[4:]
    assert len(shown) <= 106 and caret.strip() == "^"
    under = caret.index("^")
    if col <= len(line):
        assert shown[under] == line[col - 1]
        assert shown[max(0, under - 3):under + 4] in line
    else:
        assert under == len(shown)
    assert shown.startswith("...") == (col > 51) and shown.endswith("...") == (col <= 4950)
