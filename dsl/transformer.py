"""The inline transformer that lark calls on each reduction while it parses: statements
become small tuples ``(kind, ...)`` with their tokens kept for positions, expressions
become :mod:`dsl.expression` nodes.  No parse tree is built, which keeps a 10,000-actor
file well under a second; the builders (:mod:`dsl.build_sdf`, :mod:`dsl.build_moa`,
:mod:`dsl.build_map`) then create the objects.
"""
from __future__ import annotations

import re

from lark import Token

from dsl.errors import ExpressionError, ParseError
from dsl.expression import FUNCTIONS, BinOp, Call, Name, Num
from dsl.lexer import Tok
from dsl.precedence import Precedence, Signed
from moa.names import member_name, term_name
from moc.graph import default_channel_name
from moc.phases import Phases


def unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


# `key = value` in an ATTRS token (already checked by its terminal): a string, or
# anything up to the next `,` or `]`
_SIMPLE_ATTR = re.compile(r'([A-Za-z_]\w*)\s*=\s*("(?:[^"\\\n]|\\.)*"|[^,\]]*[^\s,\]])')


class _Keyword(tuple):
    """``(name_token, value)`` of a keyword argument ``NAME = value`` of a call."""


class ModelCall:
    """A call that is no function of expressions (it has keyword arguments, or its name
    is not a function): only the whole value of a ``.moa`` attribute may be one, a
    cost model ``METRIC = model(v, ..., k = v, ...)``."""

    __slots__ = ("tok", "positional", "keywords", "origin")

    def __init__(self, tok, positional, keywords, origin):
        self.tok, self.positional, self.keywords, self.origin = tok, positional, keywords, origin

    def error(self) -> ExpressionError:
        name = self.tok.value
        if name in FUNCTIONS:
            return ExpressionError(f"function '{name}' takes no keyword arguments", self.origin)
        from moa.cost_models import available_models
        if name in available_models():
            return ExpressionError(f"cost model '{name}' can only be the whole value of an "
                                   f"attribute of a .moa element or type", self.origin)
        import difflib                  # an error's hint only
        close = difflib.get_close_matches(name, list(FUNCTIONS), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        return ExpressionError(f"unknown function '{name}' (known: {', '.join(FUNCTIONS)})"
                               f"{hint}", self.origin)


def strict(value):
    """``value``, refusing a cost-model call where an expression must stand."""
    if isinstance(value, ModelCall):
        raise value.error()
    return value


class CostCall(tuple):
    """``(name_token, [(key_token, value)], [positional values])`` of a
    ``METRIC = model(...)`` attribute."""


class Initialised(tuple):
    """``(initial, periodic)`` of a value ``[a, ...; b, ...]``: the values of the
    phases fired once before the periodic ones (a tuple) and of the periodic phases (a
    :class:`~moc.phases.Phases`)."""


class Builder:
    """Inline transformer: statements become tuples ``(kind, ...)`` with tokens kept for
    their positions; expressions become :mod:`dsl.expression` nodes."""

    def __init__(self, models=False):
        self.filename = "<string>"
        self.models = models        # whether an attribute may be a cost-model call

    def _o(self, tok):
        return (self.filename, tok.line, tok.column)

    # --- common: names and expressions ---
    def name(self, c):
        tok = c[0]
        if tok.type == "STRING":
            return Token.new_borrow_pos("NAME", unquote(tok.value), tok)
        return tok

    def common__number(self, c):
        tok = c[0]
        origin = self._o(tok)
        return Num(_number(tok.value, origin), origin)

    def common__var(self, c):
        return Name(c[0].value, self._o(c[0]))

    def common__term(self, c):
        # M[AGG] of a system metric: a name that no parameter can have (checked by
        # check_names outside `metric` statements)
        return Name(term_name(c[0].value, c[1].value), self._o(c[0]))

    def common__func(self, c):
        tok, origin = c[0], self._o(c[0])
        positional, keywords = [], []
        for arg in c[1:]:
            if isinstance(arg, _Keyword):
                keywords.append(arg)
            elif arg is not None:
                if isinstance(arg, Tok):   # a quoted text: only cost models take one
                    if tok.value in FUNCTIONS:
                        raise ExpressionError(f"{tok.value}() takes numbers, not the text "
                                              f"{arg.value}", self._o(arg))
                    arg = unquote(arg.value)
                if keywords:
                    raise ExpressionError("a positional argument follows a keyword argument",
                                          getattr(arg, "origin", None) or origin)
                positional.append(arg)
        if keywords or tok.value not in FUNCTIONS:
            return ModelCall(tok, positional, keywords, origin)
        return Call(tok.value, [strict(a) for a in positional], origin)

    def common__kwarg(self, c):
        key, value = c
        if isinstance(value, Tok):  # STRING
            value = unquote(value.value)
        return _Keyword((key, strict(value)))

    def common__signed(self, c):
        return Signed(c[0].value, strict(c[1]), self._o(c[0]))

    def expr(self, c):
        if len(c) == 1:
            e = c[0]
            return e.resolve() if isinstance(e, Signed) else e
        for item in c:
            strict(item)
        return Precedence(c).parse()

    # --- attributes (all formats) ---
    def attrs(self, c):
        if len(c) == 1 and isinstance(c[0], Tok) and c[0].type == "ATTRS":
            return self._simple_attrs(c[0])
        return [a for a in c if a is not None]

    def _simple_attrs(self, tok):
        """The attributes of an ``ATTRS`` token (``[k = v, ...]`` whose values are strings
        or binary operations between lone numbers and names)."""
        text, out, filename = tok.value, [], self.filename
        flat = "\n" not in text                 # positions by column arithmetic alone
        line, column, start = tok.line, tok.column, tok.start_pos
        for m in _SIMPLE_ATTR.finditer(text):
            key, value = m.group(1, 2)
            kpos, vpos = m.start(1), m.start(2)
            if flat:
                key_tok = Tok("NAME", key, start + kpos, line, column + kpos)
                origin = (filename, line, column + vpos)
            else:
                key_tok = Tok("NAME", key, start + kpos, *self._offset(tok, kpos))
                origin = (filename,) + self._offset(tok, vpos)
            first = value[0]
            if first == '"':
                out.append((key_tok, unquote(value)))
            elif value.isidentifier():
                out.append((key_tok, Name(value, origin)))
            elif first.isdigit() and self.number_re.fullmatch(value):
                out.append((key_tok, Num(_number(value, origin), origin)))
            else:
                out.append((key_tok, self._simple_expr(tok, value, vpos)))
        return out

    def _simple_expr(self, tok, value, vpos):
        """``operand (op operand)*`` of an ``ATTRS`` token, as the ``expr`` rule builds it."""
        items, pos, end, filename = [], 0, len(value), self.filename
        flat = "\n" not in tok.value
        match = self.operand_re.match
        while pos < end:
            m = match(value, pos)
            kind = m.lastgroup
            start, pos = m.start(kind), m.end()
            text = m.group(kind)
            if kind == "op":
                items.append(Tok(text, text, 0, 0, 0))
                continue
            if flat:
                origin = (filename, tok.line, tok.column + vpos + start)
            else:
                origin = (filename,) + self._offset(tok, vpos + start)
            items.append(Num(_number(text, origin), origin) if kind == "num"
                         else Name(text, origin))
        if len(items) == 3:                     # the common `a op b`
            return BinOp(items[1].value, items[0], items[2])
        return Precedence(items).parse()

    def set_number(self, pattern: str) -> None:
        """The regular expression of the grammar's ``NUMBER`` terminal."""
        self.number_re = re.compile(pattern)
        self.operand_re = re.compile(
            rf"\s*(?:(?P<num>{pattern})|(?P<name>[A-Za-z_]\w*)|(?P<op>\*\*|[-+*/]))")

    @staticmethod
    def _offset(tok, offset):
        """(line, column) of ``offset`` characters into token ``tok``."""
        text = tok.value
        nl = text.rfind("\n", 0, offset)
        if nl < 0:
            return tok.line, tok.column + offset
        return tok.line + text.count("\n", 0, offset), offset - nl

    def values(self, c):
        return [strict(v) for v in c]

    def phases(self, c):
        # c: "[", values or None, then (";", values or None) each, "]"
        values, seps = c[1:-1:2], c[2:-1:2]
        if len(seps) > 1:
            raise ParseError("a second ';' in a list of phases: the values before the "
                             "';' are the initialisation phases, those after it the "
                             "periodic ones", self._o(seps[1]))
        if seps and values[0] is None:
            raise ParseError("an initialisation part needs at least one value before "
                             "';'", self._o(seps[0]))
        if seps and values[1] is None:
            raise ParseError("the periodic phases need at least one value after ';'",
                             self._o(seps[0]))
        if values[0] is None:
            raise ParseError("a list of phases needs at least one value", self._o(c[0]))
        if not seps:
            return Phases(values[0])
        return Initialised((tuple(values[0]), Phases(values[1])))

    def attr(self, c):
        key, value = c
        if isinstance(value, Tok):  # STRING
            value = unquote(value.value)
        elif isinstance(value, ModelCall):
            if not self.models:
                raise value.error()
            value = CostCall((value.tok, value.keywords, value.positional))
        return (key, value)

    # --- .sdf ---
    def param(self, c):
        # a .moa parameter may carry a unit: ("param", NAME, expr, [(key, value)...] | None)
        units = self._simple_attrs(c[2]) if len(c) > 2 and c[2] is not None else None
        return ("param", c[0], strict(c[1]), units)

    def actor(self, c):
        return ("actor", c[0], c[1] or [])

    def edge(self, c):
        return ("channel", None, c[0], c[1], c[2] or [])

    def channel(self, c):
        return ("channel", c[0], c[1], c[2], c[3] or [])

    def graph(self, c):
        return (c[0], c[1:])

    def start(self, c):
        return c

    # --- .moa ---
    def lambda_(self, c):
        return ("lambda", c[0], strict(c[1]))

    def aggregate(self, c):
        return ("aggregate", c[0], c[1])

    def metric_def(self, c):
        units = self._simple_attrs(c[2]) if c[2] is not None else None
        return ("metric", c[0], strict(c[1]), units)

    def metric_unit(self, c):
        return ("unit", c[0], self._simple_attrs(c[1]))

    def type_decl(self, c):
        return ("type", c[0], c[1] or [])

    def element(self, c):
        kind, name, rng, type_name, attrs = c
        return ("element", kind, name, rng, type_name, attrs or [])

    def range(self, c):
        return (c[0], c[1])

    def link(self, c):
        return ("link", c[0], c[1])

    def ref_one(self, c):
        return ("one", c[0], None)

    def ref_index(self, c):
        return ("index", c[0], c[1])

    def ref_all(self, c):
        return ("all", c[0], None)

    arch = graph

    # --- .map ---
    def assign(self, c):
        return ("assign", c[0], c[1])

    def route(self, c):
        return ("route", c[0], c[1:])

    def element_ref(self, c):
        name, index = c
        if index is None:
            return name
        idx = parse_index(index, self.filename)
        return Token.new_borrow_pos("NAME", member_name(name.value, idx), name)

    def channel_ref(self, c):
        src, dst = c
        if dst is None:
            return src
        return Token.new_borrow_pos("NAME", default_channel_name(src.value, dst.value), src)

    mapping = graph


_FLOAT_CHARS = re.compile(r"[.eE]")


def _number(text, origin):
    try:
        if text.isdigit():
            return int(text)
        if text[:2] in ("0x", "0X", "0b", "0B", "0o", "0O"):
            return int(text, 0)
        if _FLOAT_CHARS.search(text):
            return float(text)
        return int(text)
    except ValueError:
        raise ParseError(f"malformed number '{text}'", origin) from None


def parse_index(tok, filename):
    value = _number(tok.value, (filename, tok.line, tok.column))
    if not isinstance(value, int) or value < 0:
        raise ParseError(f"an index must be a non-negative integer, got '{tok.value}'",
                         (filename, tok.line, tok.column))
    return value
