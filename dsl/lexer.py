"""The lexer of the ``.sdf``, ``.moa`` and ``.map`` grammars, built from the grammars' own
terminal definitions (``dsl/grammars/*.lark``).

Why a lexer of its own rather than one of lark's: the languages need three rules that
depend on where the parser stands, and speed.

- keywords (``actor``, ``pe``, ``lambda``...) are keywords only where the parser
  accepts them, and names elsewhere (``actor type`` declares an actor ``type``);
- a new line inside ``[...]`` or ``(...)`` continues the statement when it follows
  ``,``, an opening bracket or an operator, or precedes a closing bracket; elsewhere
  it stays, so that a forgotten ``]`` is reported at the end of its own line;
- ``--`` is split into two minus signs where the parser does not accept a link;
- one regular expression over all terminals and a light token class (:class:`Tok`)
  make a 10,000-actor ``.sdf`` parse in well under the two seconds the format
  promises (lark's ``Token`` is a ``str`` subclass and several times slower to create).

What the parser accepts next is read from the state the LALR parser hands the lexer
(``parser_state.position`` in its parse table), as lark's own contextual lexer does.
"""
from __future__ import annotations

import re

from lark.exceptions import UnexpectedInput
from lark.lexer import Lexer


class LexError(UnexpectedInput):
    """No terminal matches at ``pos`` (``line``, ``column``).  An ``UnexpectedInput``, so
    that lark attaches the parser at that point (``interactive_parser``), which says what
    it accepts there."""

    def __init__(self, pos, line, column):
        super().__init__(pos)
        self.pos = self.pos_in_stream = pos
        self.line, self.column = line, column


class Tok:
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


class FastLexer(Lexer):
    """The lexer of the module's docstring, given to lark as ``lexer=FastLexer``."""

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
        Token = Tok
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
                raise LexError(pos, line, pos - line_start + 1)
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
