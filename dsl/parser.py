"""Parsing of the ``.sdf``, ``.moa`` and ``.map`` formats into domain objects.

The grammars live in ``dsl/grammars/*.lark`` (LALR(1), sharing ``common.lark``).  An
inline transformer turns each statement into a small tuple while lark parses (no parse
tree is built, which keeps a 10,000-actor file well under a second); the builders below
then create the objects, in an order that lets a statement use a name declared further
down the block (parameters, then actors/types, then channels/elements, then links).
"""
from __future__ import annotations

import difflib
import functools
import gc
import os
import re
import threading
from types import MappingProxyType

from lark import Lark, Token
from lark.lexer import Lexer
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from dsl import limits
from dsl.errors import ExpressionError, ParseError
from dsl.mappings import Mapping
from dsl.expression import CONSTANTS, FUNCTIONS, BinOp, Call, Expression, Name, Neg, Num, Pos
from moa.architecture import Architecture, CostSpec, member_name, term_name
from moa.cost_models.registry import available_models, call_arguments
from moa.errors import ArchitectureError, CostModelError
from moc.errors import SDFError
from moc.graph import CHANNEL_FIELDS, SDFGraph
from moc.phases import Phases

GRAMMAR_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grammars")

# ---------------------------------------------------------------------------------------
# Lexing


class _LexError(Exception):
    def __init__(self, pos, line, column, state_stack):
        super().__init__(pos)
        self.pos, self.line, self.column, self.state_stack = pos, line, column, state_stack


class _Tok:
    """A light token (lark's :class:`~lark.Token` is a ``str`` subclass and several
    times slower to create); it has the attributes the LALR parser reads."""

    __slots__ = ("type", "value", "start_pos", "line", "column", "end_line", "end_column",
                 "end_pos")

    def __init__(self, type, value, start_pos, line, column):
        self.type = type
        self.value = value
        self.start_pos = start_pos
        self.line = line
        self.column = column
        self.end_line = self.end_column = self.end_pos = None

    def __repr__(self):
        return f"Token({self.type!r}, {self.value!r})"


class _Lexer(Lexer):
    """A fast lexer built from the grammar's own terminal definitions.

    - keywords (``actor``, ``pe``, ``lambda``...) are keywords only where the parser
      accepts them, and names elsewhere (``actor type`` declares an actor ``type``);
    - a new line inside ``[...]`` or ``(...)`` continues the statement when it follows
      ``,``, an opening bracket or an operator, or precedes a closing bracket; elsewhere
      it stays, so that a forgotten ``]`` is reported at the end of its own line;
    - ``--`` is split into two minus signs where the parser does not accept a link.
    """

    __future_interface__ = 2

    _CONTINUE = frozenset({",", "[", "(", "=", "+", "-", "*", "/", "**", ":", "->", "--"})
    _DEPTH = {"[": 1, "(": 1, "]": -1, ")": -1}

    def __init__(self, lexer_conf):
        regexps, self.literals, self.keywords = {}, {}, {}
        for term in lexer_conf.terminals:
            pattern, name = term.pattern, str(term.name)  # plain str: fast dict lookups
            if pattern.type == "str":
                if re.fullmatch(r"[A-Za-z_]\w*", pattern.value):
                    self.keywords[pattern.value] = name
                else:
                    self.literals[pattern.value] = name
            else:
                regexps[name] = pattern.to_regexp()
        self.ignore = {str(n) for n in lexer_conf.ignore}
        self.nl_type = next(n for n in regexps if n.endswith("_NL"))
        order = [self.nl_type] + sorted(self.ignore) + \
            sorted(n for n in regexps if n != self.nl_type and n not in self.ignore)
        self.group_type = {}
        parts = []
        for i, name in enumerate(order):
            group = f"g{i}"
            self.group_type[group] = name
            parts.append(f"(?P<{group}>{regexps[name]})")
        punct = sorted(self.literals, key=len, reverse=True)
        parts.append("(?P<punct>" + "|".join(re.escape(p) for p in punct) + ")")
        self.regex = re.compile("|".join(parts))
        self.name_type = next((n for n in regexps if n.endswith("NAME")), None)
        self.attrs_type = next((n for n in regexps if n.endswith("ATTRS")), None)
        self.minus = self.literals.get("-")
        self._canonical = None

    def _canonicalize(self, states):
        """Use the very string objects of the parse table as token types: dict lookups
        then succeed on identity, without calling lark's ``Token.__eq__``."""
        canon = {}
        for actions in states.values():
            for key in actions:
                canon.setdefault(str(key), key)

        def fix(d):
            return {k: canon.get(v, v) for k, v in d.items()}

        self.literals, self.keywords = fix(self.literals), fix(self.keywords)
        self.group_type = fix(self.group_type)
        self.nl_type = canon.get(self.nl_type, self.nl_type)
        self.name_type = canon.get(self.name_type, self.name_type)
        self.attrs_type = canon.get(self.attrs_type, self.attrs_type)
        self.ignore = {canon.get(n, n) for n in self.ignore}
        if self.minus is not None:
            self.minus = canon.get(self.minus, self.minus)
        self._canonical = True

    def lex(self, lexer_state, parser_state):
        text = lexer_state.text
        if not isinstance(text, str):
            text = text.text
        states = parser_state.parse_conf.states
        if self._canonical is None:
            self._canonicalize(states)
        Token = _Tok
        match = self.regex.match
        group_type, literals, keywords = self.group_type, self.literals, self.keywords
        ignore, nl_type, name_type = self.ignore, self.nl_type, self.name_type
        attrs_type = self.attrs_type
        cont, depth_of = self._CONTINUE, self._DEPTH
        pos, end, line, line_start = 0, len(text), 1, 0
        depth, last, pending = 0, None, None
        while pos < end:
            m = match(text, pos)
            if m is None:
                raise _LexError(pos, line, pos - line_start + 1, list(parser_state.state_stack))
            group = m.lastgroup
            value = m.group()
            col = pos - line_start + 1
            start = pos
            pos = m.end()
            if group == "punct":
                kind = literals[value]
            else:
                kind = group_type[group]
                if kind == nl_type:
                    tok_line = line
                    line += value.count("\n")
                    line_start = text.rindex("\n", 0, pos) + 1
                    if depth > 0:
                        if pending is None and last not in cont:
                            pending = Token(kind, value, start, tok_line, col)
                        continue
                    last = None
                    yield Token(kind, value, start, tok_line, col)
                    continue
                if kind in ignore:
                    continue
            if pending is not None:
                if value != "]" and value != ")":
                    yield pending
                pending = None
            if group == "punct":
                step = depth_of.get(value)
                if step is not None:
                    depth = depth + step if depth + step > 0 else 0
                elif value == "--" and self.minus is not None and \
                        kind not in states[parser_state.position]:
                    last = "-"
                    yield Token(self.minus, "-", start, line, col)
                    kind, value, start, col = self.minus, "-", start + 1, col + 1
            elif kind == name_type and value in keywords:
                kw = keywords[value]
                if kw in states[parser_state.position]:
                    kind = kw
            last = value
            yield Token(kind, value, start, line, col)
            if kind == attrs_type and "\n" in value:
                # an attribute list split over several lines is one token
                line += value.count("\n")
                line_start = text.rindex("\n", 0, pos) + 1
        if pending is not None:
            yield pending


# ---------------------------------------------------------------------------------------
# The transformer, called by the LALR parser on each reduction


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "**": 4}
_UNARY_PREC = 3


class _Signed:
    """An operand with a sign in front, before precedences are applied: the sign
    covers the whole power that follows (``-a**b`` is ``-(a**b)``)."""

    __slots__ = ("sign", "operand", "origin")

    def __init__(self, sign, operand, origin):
        self.sign, self.operand, self.origin = sign, operand, origin

    def resolve(self):
        return _Precedence([self]).parse()


class _Precedence:
    """Operator precedence over ``operand (op operand)*``, where an operand may carry
    signs; without recursion (shunting yard), so that neither a sum of 100,000 terms nor
    10,000 nested signs needs a deep Python stack."""

    def __init__(self, items):
        self.items = items

    def parse(self):
        out: list = []          # operands built so far
        ops: list = []          # pending operators: (precedence, op, origin or None)

        def reduce():
            prec, op, origin = ops.pop()
            if prec == _UNARY_PREC:
                out.append((Neg if op == "-" else Pos)(out.pop(), origin))
            else:
                right = out.pop()
                out.append(BinOp(op, out.pop(), right))

        for k, item in enumerate(self.items):
            if k % 2:           # a binary operator
                op = item.value
                prec = _PREC[op]
                # ** is right-associative; a sign binds tighter than * and looser than **
                while ops and (ops[-1][0] > prec or (ops[-1][0] == prec and op != "**")):
                    reduce()
                ops.append((prec, op, None))
                continue
            while isinstance(item, _Signed):
                ops.append((_UNARY_PREC, item.sign, item.origin))
                item = item.operand
            out.append(item)
        while ops:
            reduce()
        return out[0]


# `key = value` in an ATTRS token (already checked by its terminal): a string, or
# anything up to the next `,` or `]`
_SIMPLE_ATTR = re.compile(r'([A-Za-z_]\w*)\s*=\s*("(?:[^"\\\n]|\\.)*"|[^,\]]*[^\s,\]])')
_BINARY_OPS = frozenset(_PREC)


class _Keyword(tuple):
    """``(name_token, value)`` of a keyword argument ``NAME = value`` of a call."""


class _ModelCall:
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
        if name in available_models():
            return ExpressionError(f"cost model '{name}' can only be the whole value of an "
                                   f"attribute of a .moa element or type", self.origin)
        close = difflib.get_close_matches(name, list(FUNCTIONS), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        return ExpressionError(f"unknown function '{name}' (known: {', '.join(FUNCTIONS)})"
                               f"{hint}", self.origin)


def _strict(value):
    """``value``, refusing a cost-model call where an expression must stand."""
    if isinstance(value, _ModelCall):
        raise value.error()
    return value


class _Model(tuple):
    """``(name_token, [(key_token, value)], [positional values])`` of a
    ``METRIC = model(...)`` attribute."""


class _Builder:
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
            return Token.new_borrow_pos("NAME", _unquote(tok.value), tok)
        return tok

    def common__number(self, c):
        tok = c[0]
        origin = self._o(tok)
        return Num(_number(tok.value, origin), origin)

    def common__var(self, c):
        return Name(c[0].value, self._o(c[0]))

    def common__term(self, c):
        # M[AGG] of a system metric: a name that no parameter can have (checked by
        # _check_names outside `metric` statements)
        return Name(term_name(c[0].value, c[1].value), self._o(c[0]))

    def common__func(self, c):
        tok, origin = c[0], self._o(c[0])
        positional, keywords = [], []
        for arg in c[1:]:
            if isinstance(arg, _Keyword):
                keywords.append(arg)
            elif arg is not None:
                if isinstance(arg, _Tok):   # a quoted text: only cost models take one
                    if tok.value in FUNCTIONS:
                        raise ExpressionError(f"{tok.value}() takes numbers, not the text "
                                              f"{arg.value}", self._o(arg))
                    arg = _unquote(arg.value)
                if keywords:
                    raise ExpressionError("a positional argument follows a keyword argument",
                                          getattr(arg, "origin", None) or origin)
                positional.append(arg)
        if keywords or tok.value not in FUNCTIONS:
            return _ModelCall(tok, positional, keywords, origin)
        return Call(tok.value, [_strict(a) for a in positional], origin)

    def common__kwarg(self, c):
        key, value = c
        if isinstance(value, _Tok):  # STRING
            value = _unquote(value.value)
        return _Keyword((key, _strict(value)))

    def common__signed(self, c):
        return _Signed(c[0].value, _strict(c[1]), self._o(c[0]))

    def expr(self, c):
        if len(c) == 1:
            e = c[0]
            return e.resolve() if isinstance(e, _Signed) else e
        for item in c:
            _strict(item)
        return _Precedence(c).parse()

    # --- attributes (all formats) ---
    def attrs(self, c):
        if len(c) == 1 and isinstance(c[0], _Tok) and c[0].type == "ATTRS":
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
                key_tok = _Tok("NAME", key, start + kpos, line, column + kpos)
                origin = (filename, line, column + vpos)
            else:
                key_tok = _Tok("NAME", key, start + kpos, *self._offset(tok, kpos))
                origin = (filename,) + self._offset(tok, vpos)
            first = value[0]
            if first == '"':
                out.append((key_tok, _unquote(value)))
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
                items.append(_Tok(text, text, 0, 0, 0))
                continue
            if flat:
                origin = (filename, tok.line, tok.column + vpos + start)
            else:
                origin = (filename,) + self._offset(tok, vpos + start)
            items.append(Num(_number(text, origin), origin) if kind == "num"
                         else Name(text, origin))
        if len(items) == 3:                     # the common `a op b`
            return BinOp(items[1].value, items[0], items[2])
        return _Precedence(items).parse()

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

    def phases(self, c):
        return Phases(_strict(v) for v in c)

    def attr(self, c):
        key, value = c
        if isinstance(value, _Tok):  # STRING
            value = _unquote(value.value)
        elif isinstance(value, _ModelCall):
            if not self.models:
                raise value.error()
            value = _Model((value.tok, value.keywords, value.positional))
        return (key, value)

    # --- .sdf ---
    def param(self, c):
        # a .moa parameter may carry a unit: ("param", NAME, expr, [(key, value)...] | None)
        units = self._simple_attrs(c[2]) if len(c) > 2 and c[2] is not None else None
        return ("param", c[0], _strict(c[1]), units)

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
        return ("lambda", c[0], _strict(c[1]))

    def aggregate(self, c):
        return ("aggregate", c[0], c[1])

    def metric_def(self, c):
        units = self._simple_attrs(c[2]) if c[2] is not None else None
        return ("metric", c[0], _strict(c[1]), units)

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
        idx = _index(index, self.filename)
        return Token.new_borrow_pos("NAME", member_name(name.value, idx), name)

    def channel_ref(self, c):
        src, dst = c
        if dst is None:
            return src
        return Token.new_borrow_pos("NAME", f"{src.value}->{dst.value}", src)

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


def _index(tok, filename):
    value = _number(tok.value, (filename, tok.line, tok.column))
    if not isinstance(value, int) or value < 0:
        raise ParseError(f"an index must be a non-negative integer, got '{tok.value}'",
                         (filename, tok.line, tok.column))
    return value


# ---------------------------------------------------------------------------------------
# Parsers and syntax errors

_parsers: dict[str, tuple[Lark, _Builder]] = {}
_lock = threading.RLock()

#: readable text for the named terminals in error messages
_TERMINAL_TEXT = {
    "NAME": "a name", "NUMBER": "a number", "STRING": "a quoted string",
    "_NL": "newline", "$END": "end of input", "LAMBDA": "'lambda'",
    "AGGREGATE": "'aggregate'", "PE": "'pe'", "CN": "'cn'", "ATTRS": "'['",
}


def _parser(kind: str) -> tuple[Lark, _Builder]:
    with _lock:
        if kind not in _parsers:
            builder = _Builder(models=kind == "moa")
            lark = Lark.open(os.path.join(GRAMMAR_DIR, f"{kind}.lark"), parser="lalr",
                             lexer=_Lexer,
                             transformer=builder, maybe_placeholders=True,
                             propagate_positions=False)
            _speed_up(lark)
            builder.set_number(lark.get_terminal("NUMBER").pattern.to_regexp())
            _parsers[kind] = (lark, builder)
        return _parsers[kind]


def _speed_up(lark: Lark) -> None:
    """Key the parse table by plain ``str`` objects and give its rules the identical
    objects as names: lark uses ``Token`` objects for imported terminals and rules,
    whose ``__eq__`` costs a Python call on every table lookup.  Purely an
    optimisation of lark's internal tables; on any surprise it leaves them alone."""
    try:
        from lark.parsers.lalr_analysis import Reduce
        states = lark.parser.parser.parser.parse_table.states
        canon: dict[str, str] = {}
        for actions in states.values():
            plain = {canon.setdefault(str(k), str(k)): v for k, v in actions.items()}
            actions.clear()
            actions.update(plain)
        for actions in states.values():
            for action, arg in actions.values():
                if action is Reduce and type(arg.origin.name) is not str:
                    arg.origin.name = canon.get(str(arg.origin.name), str(arg.origin.name))
    except Exception:  # pragma: no cover - lark internals changed
        pass


def _terminal_text(lark: Lark, name: str) -> str:
    if name in _TERMINAL_TEXT:
        return _TERMINAL_TEXT[name]
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


def _acceptable(lark: Lark, state_stack) -> set[str]:
    """The terminals the parser can shift next from ``state_stack``, following the
    reductions each would trigger (the table's own lookaheads are wider under LALR)."""
    from lark.parsers.lalr_analysis import Shift
    states = lark.parser.parser.parser.parse_table.states
    out = set()
    terminals = {str(t.name) for t in lark.terminals} | {"$END"}
    for term in {k for k in states[state_stack[-1]] if k in terminals}:
        stack = list(state_stack)
        for _ in range(1000):
            entry = states[stack[-1]].get(term)
            if entry is None:
                break
            action, arg = entry
            if action is Shift:
                out.add(term)
                break
            size = len(arg.expansion)
            if size:
                del stack[-size:]
            goto = states[stack[-1]].get(arg.origin.name)
            if goto is None:
                break
            stack.append(goto[1])
    return out


def _expected(lark: Lark, names) -> str:
    terminals = {str(t.name) for t in lark.terminals} | {"$END"}
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


def _syntax_error(exc: UnexpectedInput, lark: Lark, text: str, filename: str) -> ParseError:
    if isinstance(exc, UnexpectedCharacters):
        char = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else ""
        what = "unterminated string" if char == '"' else f"unexpected character {char!r}"
        return ParseError(f"{what}{_expected(lark, exc.allowed or ())}",
                          (filename, exc.line, exc.column))
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
        expected = exc.expected
        stack = getattr(getattr(exc, "state", None), "state_stack", None)
        if stack:
            expected = _acceptable(lark, stack) or expected
        return ParseError(f"unexpected {_token_text(tok)}{_expected(lark, expected)}",
                          (filename, line, col))
    if isinstance(exc, UnexpectedEOF):
        line, col = _end_position(text)
        return ParseError(f"unexpected end of input{_expected(lark, exc.expected)}",
                          (filename, line, col))
    return ParseError(str(exc), (filename, getattr(exc, "line", None), getattr(exc, "column", None)))


def _gc_paused(fn):
    """Run ``fn`` with the cyclic garbage collector paused: parsing allocates many small
    objects (and no cycles worth collecting), and the collector's passes over them cost
    about a third of the time of a large file.  The previous state is restored."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        enabled = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if enabled:
                gc.enable()
    return wrapper


def _parse(kind: str, text: str, filename: str):
    lark, builder = _parser(kind)
    with _lock:
        builder.filename = filename
        try:
            if not text.endswith("\n"):
                text_in = text + "\n"
            else:
                text_in = text
            return lark.parse(text_in)
        except UnexpectedInput as exc:
            raise _syntax_error(exc, lark, text, filename) from None
        except _LexError as exc:
            char = text[exc.pos] if exc.pos < len(text) else ""
            what = "unterminated string" if char == '"' else f"unexpected character {char!r}"
            raise ParseError(f"{what}{_expected(lark, _acceptable(lark, exc.state_stack))}",
                             (filename, exc.line, exc.column)) from None


# ---------------------------------------------------------------------------------------
# Helpers of the builders


def _origin(filename, tok):
    return (filename, tok.line, tok.column)


def _check_names(expr, known, what="parameter", terms=False):
    """ParseError at the first name of ``expr`` that is not in ``known`` (or that is a
    ``M[AGG]`` term, unless ``terms``)."""
    if not isinstance(expr, Expression):
        return
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Name):
            if "[" in node.name and not terms:
                raise ExpressionError(f"'{node.name}': a term METRIC[AGGREGATION] may only "
                                      "appear in a `metric NAME = EXPR` statement",
                                      node.origin)
            if "[" not in node.name and node.name not in known \
                    and node.name not in CONSTANTS:
                known_txt = ", ".join(sorted(known)) or "none"
                raise ExpressionError(f"unknown {what} '{node.name}' (known: {known_txt})",
                                      node.origin)
        elif isinstance(node, BinOp):
            stack += [node.right, node.left]
        elif isinstance(node, (Neg, Pos)):
            stack.append(node.operand)
        elif isinstance(node, Call):
            stack += reversed(node.args)


def _value(expr, known):
    """A folded number, or the expression itself when it uses parameters."""
    if not isinstance(expr, Expression):
        return expr
    if isinstance(expr, Num):
        return expr.value
    _check_names(expr, known)
    if not expr.names.isdisjoint(known):
        return expr
    return expr.evaluate({})        # numbers and constants (inf, pi) only


def _deps(value):
    return sorted(value.names) if isinstance(value, Expression) else ()


def _params(stmts, filename):
    """Ordered ``{name: value}`` of the ``param`` statements, checked for duplicates,
    unknown names and cycles."""
    decls = {}
    for st in stmts:
        if st[0] == "param":
            tok = st[1]
            if tok.value in decls:
                first = decls[tok.value][0]
                raise ParseError(f"duplicate parameter '{tok.value}' (first declared on line "
                                 f"{first.line})", _origin(filename, tok))
            decls[tok.value] = (tok, st[2])
    known = set(decls)
    params = {name: _value(expr, known) for name, (tok, expr) in decls.items()}
    # cycles between parameters (an explicit stack: chains of any length)
    state: dict[str, int] = {}
    for root in params:
        if root in state:
            continue
        path, stack = [root], [iter(_deps(params[root]))]
        state[root] = 1
        while stack:
            dep = next(stack[-1], None)
            if dep is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            if dep not in params or state.get(dep) == 2:
                continue
            if state.get(dep) == 1:
                cycle = " -> ".join(path[path.index(dep):] + [dep])
                raise ExpressionError(f"parameters depend on each other in a cycle: {cycle}",
                                      _origin(filename, decls[dep][0]))
            state[dep] = 1
            path.append(dep)
            stack.append(iter(_deps(params[dep])))
    return params


def _attr_dict(attrs, filename, what):
    out = {}
    for key, value in attrs:
        if key.value in out:
            raise ParseError(f"{what}: duplicate attribute '{key.value}'", _origin(filename, key))
        out[key.value] = (key, value)
    return out


_RESERVED_ACTOR = frozenset({"name", "origin"})
_RESERVED_CHANNEL = frozenset({"name", "origin", "src", "dst"})


# ---------------------------------------------------------------------------------------
# .sdf


def _build_graph(block, filename) -> SDFGraph:
    """The graph of an ``sdf`` block: the statements fold their values and check their
    names here; the graph checks its own rules (:mod:`moc.graph`) and the error it
    raises is pointed at the token of the attribute it names."""
    name_tok, stmts = block
    params = _params(stmts, filename)
    known = set(params)
    graph = SDFGraph(name_tok.value, params, origin=_origin(filename, name_tok))
    for st in stmts:
        if st[0] != "actor":
            continue
        tok = st[1]
        what = f"actor '{tok.value}'"
        attrs, tokens = {}, {}
        for key, (ktok, value) in _attr_dict(st[2], filename, what).items():
            if key in _RESERVED_ACTOR:
                raise ParseError(f"{what}: '{key}' cannot be an attribute name",
                                 _origin(filename, ktok))
            attrs[key] = _each(value, lambda v: _value(v, known))
            tokens[key] = ktok
        try:
            graph.add_actor(tok.value, origin=_origin(filename, tok), **attrs)
        except SDFError as exc:
            raise _pointed(exc, tokens, filename)
    for st in stmts:
        if st[0] != "channel":
            continue
        _, name_tok_c, src, dst, attr_list = st
        origin = _origin(filename, name_tok_c if name_tok_c is not None else src)
        label = name_tok_c.value if name_tok_c is not None else f"{src.value}->{dst.value}"
        what = f"channel '{label}'"
        fields, attrs, tokens = {}, {}, {"src": src, "dst": dst}
        for key, (ktok, value) in _attr_dict(attr_list, filename, what).items():
            if key in _RESERVED_CHANNEL:
                raise ParseError(f"{what}: '{key}' cannot be an attribute name",
                                 _origin(filename, ktok))
            (fields if key in CHANNEL_FIELDS else attrs)[key] = \
                _each(value, lambda v: _value(v, known))
            tokens[key] = ktok
        try:
            graph.add_channel(src.value, dst.value,
                              name_tok_c.value if name_tok_c is not None else None,
                              origin=origin, **fields, **attrs)
        except SDFError as exc:
            raise _pointed(exc, tokens, filename)
    return graph


def _pointed(exc, tokens, filename):
    """``exc``, raised by a type, pointed at the token of the attribute it names."""
    tok = tokens.get(getattr(exc, "attribute", None))
    if tok is not None:
        exc.origin = _origin(filename, tok)
    return exc


def _each(value, check):
    """``check`` of ``value``, entry by entry for a per-phase value."""
    return Phases(check(v) for v in value) if isinstance(value, Phases) else check(value)


def _unique_blocks(blocks: list, filename: str, what: str, error: type) -> list:
    """``blocks`` (each led by its name token), refusing a name used twice in one file."""
    first_line: dict[str, int] = {}
    for block in blocks:
        tok = block[0]
        if tok.value in first_line:
            raise error(f"duplicate {what} '{tok.value}' (first on line {first_line[tok.value]})",
                        _origin(filename, tok))
        first_line[tok.value] = tok.line
    return blocks


@_gc_paused
def parse_sdf(text: str, filename: str = "<string>") -> list[SDFGraph]:
    """The SDF graphs of the ``sdf NAME { ... }`` blocks of ``text``."""
    blocks = _unique_blocks(_parse("sdf", text, filename), filename, "graph", SDFError)
    return [_build_graph(block, filename) for block in blocks]


# ---------------------------------------------------------------------------------------
# .moa


def _argument(value, known):
    """The value of a cost-model argument: a bare word that names no parameter is a
    string (``latency = independent``)."""
    if isinstance(value, Name) and value.name not in known and value.name not in CONSTANTS:
        return value.name
    return _value(value, known)


def _split_attrs(attr_list, known, filename, what):
    """``(costs, attrs, local, tokens)`` of an element or type attribute list; ``tokens``
    maps each key to its token (where an error of the element points)."""
    costs, attrs, local, tokens = {}, {}, None, {}
    for key, (ktok, value) in _attr_dict(attr_list, filename, what).items():
        tokens[key] = ktok
        if isinstance(value, _Model):
            model_tok, kwargs, positional = value
            origin = _origin(filename, model_tok)
            args = {}
            for akey, (atok, aval) in _attr_dict(kwargs, filename,
                                                 f"{what}, {key} = {model_tok.value}(...)").items():
                args[akey] = _argument(aval, known)
            if positional:
                try:
                    args = call_arguments(model_tok.value,
                                          [_argument(a, known) for a in positional], args,
                                          f"{what}, metric '{key}': ")
                except CostModelError as exc:
                    exc.origin = origin
                    raise
            costs[key] = CostSpec(model_tok.value, MappingProxyType(args), origin)
        elif key in WORD_ATTRIBUTES and isinstance(value, Name) and value.name not in known:
            attrs[key] = value.name         # charge = ends: a bare word is its text
        elif key == "local":
            local = value.name if isinstance(value, Name) else value
        else:
            attrs[key] = _value(value, known)
    return costs, attrs, local, tokens


#: element attributes whose value is a word (``charge = ends``), as ``local`` names a CN
WORD_ATTRIBUTES = frozenset({"charge"})


def _set_units(arch: Architecture, stmts, filename) -> None:
    """``arch.units`` from the ``[unit = "..."]`` of its parameters and metrics (a
    metric's unit declared once; ``unit`` the only attribute, a string)."""
    first: dict[str, Token] = {}
    for st in stmts:
        if st[0] not in ("param", "metric", "unit") or not st[-1]:
            continue
        tok, what = st[1], ("parameter" if st[0] == "param" else "metric")
        for key, value in st[-1]:
            if key.value != "unit":
                raise ParseError(f"{what} '{tok.value}': unknown attribute '{key.value}' "
                                 "(a parameter or metric takes only unit = \"...\")",
                                 _origin(filename, key))
            if not isinstance(value, str) or not value.strip():
                raise ParseError(f"{what} '{tok.value}': unit must be a non-empty string, "
                                 f"as in unit = \"s\"", _origin(filename, key))
            if tok.value in first:
                raise ParseError(f"{what} '{tok.value}': its unit is given twice (first on "
                                 f"line {first[tok.value].line})", _origin(filename, key))
            first[tok.value] = key
            arch.units[tok.value] = value.strip()


def _build_arch(block, filename) -> Architecture:
    """The architecture of a ``moa`` block: the statements fold their values and check
    their names here; the architecture checks its own rules (:mod:`moa.architecture`)
    and the error it raises is pointed at the token of the attribute it names."""
    name_tok, stmts = block
    params = _params(stmts, filename)
    known = set(params)
    lambda_, aggregate = 1.0, "sum"
    seen_single: dict[str, Token] = {}
    for st in stmts:
        if st[0] in ("lambda", "aggregate"):
            kw = st[1]
            if st[0] in seen_single:
                raise ParseError(f"'{st[0]}' is set twice (first on line "
                                 f"{seen_single[st[0]].line})", _origin(filename, kw))
            seen_single[st[0]] = kw
            if st[0] == "lambda":
                lambda_ = _value(st[2], known)
            else:
                aggregate = st[2]
    try:
        # the aggregation's name is checked against the registry where mapping uses it
        arch = Architecture(name_tok.value, params, lambda_,
                            aggregate if isinstance(aggregate, str) else aggregate.value,
                            origin=_origin(filename, name_tok),
                            aggregate_origin=None if isinstance(aggregate, str)
                            else _origin(filename, aggregate))
    except ArchitectureError as exc:
        raise _pointed(exc, seen_single, filename)
    metrics = [st for st in stmts if st[0] == "metric"]
    names = known | {st[1].value for st in metrics}
    for _, tok, expr, _units in metrics:
        # bare names: parameters or other system metrics; terms are checked when evaluated
        _check_names(expr, names, "parameter or metric", terms=True)
        arch.add_metric(tok.value, expr, _origin(filename, tok))
    _set_units(arch, stmts, filename)
    for st in stmts:
        if st[0] == "type":
            tok = st[1]
            costs, attrs, local, tokens = _split_attrs(st[2], known, filename,
                                                       f"type '{tok.value}'")
            try:
                arch.add_type(tok.value, costs, attrs, local, origin=_origin(filename, tok))
            except ArchitectureError as exc:
                raise _pointed(exc, tokens, filename)
    for st in stmts:
        if st[0] != "element":
            continue
        _, kind_tok, tok, rng, type_tok, attr_list = st
        kind = kind_tok.value
        origin = _origin(filename, tok)
        costs, attrs, local, tokens = _split_attrs(attr_list, known, filename,
                                                   f"{kind} '{tok.value}'")
        type_name = type_tok.value if type_tok is not None else None
        tokens["type"] = type_tok
        try:
            if rng is None:
                arch.add_element(tok.value, kind, costs, attrs, local, type_name, None,
                                 origin=origin)
                continue
            tokens["range"] = rng[0]
            lo, hi = (_index(t, filename) for t in rng)
            size = hi - lo + 1
            if size > limits.MAX_ARRAY_MEMBERS:
                raise ArchitectureError(limits.exceeded(
                    f"{kind} '{tok.value}[{lo}..{hi}]' has {size} members", "array",
                    limits.MAX_ARRAY_MEMBERS), origin, "range")
            if len(arch.elements) + size > limits.MAX_ELEMENTS:
                raise ArchitectureError(limits.exceeded(
                    f"{kind} '{tok.value}[{lo}..{hi}]' brings the elements of "
                    f"'{arch.name}' to {len(arch.elements) + size}", "elements",
                    limits.MAX_ELEMENTS), origin, "range")
            arch.add_array(tok.value, lo, hi, kind, costs, attrs, local, type_name,
                           origin=origin)
        except ArchitectureError as exc:
            raise _pointed(exc, tokens, filename)
    arch.check_locals()
    arrays = None
    expanded = 0
    for st in stmts:
        if st[0] != "link":
            continue
        if arrays is None:
            arrays = arch.arrays()
        ends = [_expand_ref(ref, arch, arrays, filename) for ref in (st[1], st[2])]
        origin = _origin(filename, st[1][1])
        expanded += len(ends[0]) * len(ends[1])
        if expanded > limits.MAX_LINKS:
            raise ArchitectureError(limits.exceeded(
                f"this link expands to {len(ends[0])} x {len(ends[1])} links ({expanded} "
                f"in '{arch.name}' counting those before it)", "links", limits.MAX_LINKS),
                origin)
        for a in ends[0]:
            for b in ends[1]:
                arch.add_link(a, b, origin=origin)
    return arch


def _expand_ref(ref, arch, arrays, filename):
    how, tok, index = ref
    origin = _origin(filename, tok)
    if how == "all":
        members = arrays.get(tok.value)
        if not members:
            raise ArchitectureError(f"'{tok.value}[*]': no array named '{tok.value}' "
                                    f"(arrays: {', '.join(arrays) or 'none'})", origin)
        return members
    name = tok.value if how == "one" else member_name(tok.value, _index(index, filename))
    if name not in arch.elements:
        hint = ""
        if how == "one" and tok.value in arrays:
            hint = f"; '{tok.value}' is an array, write {tok.value}[*] or {tok.value}[i]"
        raise ArchitectureError(f"link uses unknown element '{name}'{hint}", origin)
    return [name]


@_gc_paused
def parse_moa(text: str, filename: str = "<string>") -> list[Architecture]:
    """The architectures of the ``moa NAME { ... }`` blocks of ``text``."""
    blocks = _unique_blocks(_parse("moa", text, filename), filename, "architecture",
                            ArchitectureError)
    return [_build_arch(block, filename) for block in blocks]


# ---------------------------------------------------------------------------------------
# .map


@_gc_paused
def parse_map(text: str, filename: str = "<string>") -> list:
    """The mappings (:class:`dsl.mappings.Mapping`) of the ``mapping NAME { ... }``
    blocks of ``text``."""
    blocks = _unique_blocks(_parse("map", text, filename), filename, "mapping", ParseError)
    out = []
    for name_tok, stmts in blocks:
        assignment, origins, routes, route_lines = {}, {}, {}, {}
        for st in stmts:
            if st[0] == "assign":
                actor, pe = st[1], st[2]
                origin = _origin(filename, actor)
                if actor.value in assignment:
                    raise ParseError(f"mapping '{name_tok.value}': actor '{actor.value}' is "
                                       f"mapped twice (first on line "
                                       f"{origins[actor.value][1]})", origin)
                assignment[actor.value] = pe.value
                origins[actor.value] = origin
            else:
                ch, via = st[1], st[2]
                if ch.value in routes:
                    raise ParseError(f"mapping '{name_tok.value}': channel '{ch.value}' has "
                                       f"two routes (first on line {route_lines[ch.value]})",
                                       _origin(filename, ch))
                routes[ch.value] = tuple(t.value for t in via)
                route_lines[ch.value] = ch.line
        out.append(Mapping(name_tok.value, assignment, routes,
                           origin=_origin(filename, name_tok), origins=origins))
    return out


# ---------------------------------------------------------------------------------------
# a lone expression


def parse_expression(text: str, filename: str = "<string>"):
    """An expression (``Expression``) from ``text``, e.g. a command-line value."""
    return _strict(_parse("expr", text, filename)[0])
