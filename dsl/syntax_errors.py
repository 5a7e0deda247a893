"""Syntax errors of the text formats: a lark exception turned into a
:class:`~dsl.errors.ParseError` at ``(file, line, column)`` whose message says what was
found and what may come next (``unexpected ']'; expected one of: ',', newline``).

What may come next is what the parser accepts at the point of failure, asked of the
interactive parser that lark attaches to its errors (``choices``, ``copy``,
``feed_token``): the terminals it could shift after the reductions each would trigger,
narrower than the table's lookaheads under LALR.
"""
from __future__ import annotations

from copy import copy

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from dsl.errors import ParseError
from dsl.lexer import LexError

#: readable text for the named terminals in error messages
TERMINAL_TEXT = {
    "NAME": "a name", "NUMBER": "a number", "STRING": "a quoted string",
    "_NL": "newline", "$END": "end of input", "LAMBDA": "'lambda'",
    "AGGREGATE": "'aggregate'", "PE": "'pe'", "CN": "'cn'", "ATTRS": "'['",
}


def _terminal_text(lark: Lark, name: str) -> str:
    if name in TERMINAL_TEXT:
        return TERMINAL_TEXT[name]
    try:
        pattern = lark.get_terminal(name).pattern
    except KeyError:
        return name.lower()
    if pattern.type == "str":
        return f"'{pattern.value}'"
    return name.lower()


def _token_text(tok) -> str:
    if tok.type == "$END":
        return "end of input"
    if tok.type == "_NL":
        return "newline"
    if tok.type == "NAME":
        return f"'{tok.value}'"
    if tok.type == "NUMBER":
        return f"number {tok.value}"
    if tok.type == "STRING":
        return f"string {tok.value}"
    return f"'{tok.value}'"


def _accepted(exc: UnexpectedInput, terminals) -> set[str]:
    """The ``terminals`` the parser accepts where ``exc`` stopped it (empty if unknown).

    As :meth:`InteractiveParser.accepts`, which lark attaches to the error: each
    terminal the parser's state has an action for is fed to a copy of the parser (with
    no transformer callbacks), and those it shifts after their reductions are accepted.
    ``accepts`` itself keeps only upper-case names, which drops the terminals our
    grammars import under the ``common`` namespace (``common__PLUS``)."""
    parser = getattr(exc, "interactive_parser", None)
    if parser is None:
        return set()
    quiet = copy(parser.parser_state.parse_conf)
    quiet.callbacks = {}
    out = set()
    for name in parser.choices():
        if name not in terminals:
            continue
        trial = parser.copy(deepcopy_values=False)
        trial.parser_state.parse_conf = quiet
        try:
            trial.feed_token(Token(name, ""))
        except UnexpectedToken:
            continue
        out.add(name)
    return out


def _terminals(lark: Lark) -> set[str]:
    return {str(t.name) for t in lark.terminals} | {"$END"}


def _expected(lark: Lark, names) -> str:
    terminals = _terminals(lark)
    names = [n for n in names if n in terminals]
    texts = sorted({_terminal_text(lark, n) for n in names if n not in ("COMMENT", "WS")},
                   key=lambda t: (t[0] != "'", t))
    if not texts:
        return ""
    if len(texts) == 1:
        return f"; expected {texts[0]}"
    return "; expected one of: " + ", ".join(texts)


def _end_position(text: str) -> tuple[int, int]:
    stripped = text.rstrip()
    line = stripped.count("\n") + 1
    col = len(stripped) - (stripped.rfind("\n") + 1) + 1
    return line, col


def _character(text: str, pos: int) -> str:
    char = text[pos] if pos < len(text) else ""
    return "unterminated string" if char == '"' else f"unexpected character {char!r}"


def syntax_error(exc: UnexpectedInput, lark: Lark, text: str, filename: str) -> ParseError:
    """The :class:`ParseError` of lark's ``exc`` (or the lexer's :class:`LexError`)
    raised while parsing ``text``."""
    if isinstance(exc, LexError):
        expected = _expected(lark, _accepted(exc, _terminals(lark)))
        return ParseError(f"{_character(text, exc.pos)}{expected}",
                          (filename, exc.line, exc.column))
    if isinstance(exc, UnexpectedCharacters):
        return ParseError(f"{_character(text, exc.pos_in_stream)}"
                          f"{_expected(lark, exc.allowed or ())}", (filename, exc.line, exc.column))
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        if tok.type == "$END":
            line, col = _end_position(text)
        elif tok.type == "_NL":
            # point just after the last character of code before the new line
            line, col = tok.line, tok.column
            lines = text.splitlines()
            prefix = lines[line - 1][:col - 1].rstrip() if line - 1 < len(lines) else ""
            if prefix:
                col = len(prefix) + 1
        else:
            line, col = tok.line, tok.column
        expected = _accepted(exc, _terminals(lark)) or exc.expected
        return ParseError(f"unexpected {_token_text(tok)}{_expected(lark, expected)}",
                          (filename, line, col))
    if isinstance(exc, UnexpectedEOF):
        line, col = _end_position(text)
        return ParseError(f"unexpected end of input{_expected(lark, exc.expected)}",
                          (filename, line, col))
    return ParseError(str(exc), (filename, getattr(exc, "line", None),
                                 getattr(exc, "column", None)))
