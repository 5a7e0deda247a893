"""PREESM's expressions (JEP syntax) evaluated as PREESM does: every value is a double;
``/`` divides exactly, ``^`` is a power, ``%`` Java's remainder; functions are JEP's
standard ones plus PREESM's ``floor``, ``ceil``, ``min``, ``max``, ``geo_sum`` and
``pow_div_max``.  A rate or delay is the rounded value (Java's ``Math.round``: half up);
a parameter keeps its exact value, so ``height/nbSlice+2`` may be fractional."""
from __future__ import annotations

import math
import os
from functools import lru_cache

from lark import Lark, Transformer, v_args
from lark.exceptions import LarkError, VisitError

from dsl.errors import ExpressionError

GRAMMAR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "grammars",
                       "jep.lark")


def _geo_sum(a, r, n):
    """``a + a·r + ... + a·r^(n-1)`` (PREESM's ``geo_sum(a, r, n)``, n ≥ 1)."""
    n = int(n)
    if n < 1:
        raise ValueError("the third argument of geo_sum must be a positive integer")
    if r == 1:
        return a * n
    return a * (1 - r ** n) / (1 - r)


def _pow_div_max(x, y):
    """The largest ``k`` with ``x^k`` dividing ``y`` (PREESM's ``pow_div_max``)."""
    x, y = int(x), int(y)
    if x < 2 or y == 0:
        raise ValueError("pow_div_max needs x > 1 and y != 0")
    k = 0
    while y % x == 0:
        y //= x
        k += 1
    return k


def _pow(a, b):
    if a < 0 and b != int(b):
        raise ValueError("a negative number to a fractional power")
    return math.pow(a, b)


def _java_rem(a, b):
    if b == 0:
        raise ZeroDivisionError
    return math.fmod(a, b)


def _log10(x):
    if x <= 0:
        raise ValueError("log of a non-positive number")
    return math.log10(x)


def _ln(x):
    if x <= 0:
        raise ValueError("ln of a non-positive number")
    return math.log(x)


def _sqrt(x):
    if x < 0:
        raise ValueError("sqrt of a negative number")
    return math.sqrt(x)


#: name -> (function, arity or None for any number ≥ 1)
FUNCTIONS = {
    "floor": (math.floor, 1), "ceil": (math.ceil, 1),
    "round": (lambda x: math.floor(x + 0.5), 1),
    "abs": (abs, 1), "sqrt": (_sqrt, 1), "exp": (math.exp, 1), "ln": (_ln, 1),
    "log": (_log10, 1), "pow": (lambda x, y: _pow(x, y), 2), "mod": (_java_rem, 2),
    "min": (min, None), "max": (max, None), "sum": (lambda *xs: sum(xs), None),
    "if": (lambda c, a, b: a if c != 0 else b, 3),
    "sin": (math.sin, 1), "cos": (math.cos, 1), "tan": (math.tan, 1),
    "asin": (math.asin, 1), "acos": (math.acos, 1), "atan": (math.atan, 1),
    "atan2": (math.atan2, 2), "sinh": (math.sinh, 1), "cosh": (math.cosh, 1),
    "tanh": (math.tanh, 1),
    "geo_sum": (_geo_sum, 3), "pow_div_max": (_pow_div_max, 2),
}
CONSTANTS = {"pi": math.pi, "e": math.e}

_CMP = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
        ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b}


@lru_cache(maxsize=1)
def _parser() -> Lark:
    return Lark.open(GRAMMAR, parser="lalr")


@lru_cache(maxsize=4096)
def parse(text: str):
    """The syntax tree of ``text``; a :class:`ValueError` for bad syntax."""
    try:
        return _parser().parse(text)
    except LarkError as exc:
        raise ValueError(f"not a PREESM expression: {text!r}") from exc


@v_args(inline=True)
class _Evaluator(Transformer):
    def __init__(self, env):
        super().__init__()
        self.env = env

    def number(self, tok):
        return float(tok)

    def name(self, tok):
        if str(tok) in self.env:
            return float(self.env[str(tok)])
        if str(tok) in CONSTANTS:
            return CONSTANTS[str(tok)]
        raise NameError(str(tok))

    def call(self, fname, *args):
        args = [a for a in args if a is not None]
        entry = FUNCTIONS.get(str(fname))
        if entry is None:
            raise NameError(f"{fname}()")
        func, arity = entry
        if (arity is None and not args) or (arity is not None and len(args) != arity):
            raise ValueError(f"{fname}() takes {arity or 'one or more'} arguments, "
                             f"got {len(args)}")
        return float(func(*args))

    def pow(self, a, b):
        return _pow(a, b)

    def sign(self, op, a):
        return -a if op == "-" else float(a == 0) if op == "!" else a

    def binary(self, a, op, b):
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b
        return _java_rem(a, b)

    def compare(self, a, op, b):
        return float(_CMP[str(op)](a, b))

    def and_(self, a, b):
        return float(a != 0 and b != 0)

    def or_(self, a, b):
        return float(a != 0 or b != 0)


def evaluate(text: str, env, what: str, origin=None) -> float:
    """The value of the PREESM expression ``text`` with names from ``env``; an
    :class:`ExpressionError` naming ``what`` (and the names it may use) otherwise."""
    text = (text or "").strip() or "0"
    try:
        tree = parse(text)
        value = tree if isinstance(tree, float) else _Evaluator(env).transform(tree)
        value = float(value)
    except ValueError as exc:
        raise ExpressionError(f"{what}: {exc}", origin) from None
    except RecursionError:
        raise ExpressionError(f"{what}: the expression is nested too deeply", origin) from None
    except VisitError as exc:
        inner = exc.orig_exc
        if isinstance(inner, NameError):
            known = ", ".join(sorted(env)) or "none"
            raise ExpressionError(f"{what}: '{text}' uses unknown {inner.args[0]} (known "
                                  f"here: {known})", origin) from None
        if isinstance(inner, OverflowError):
            raise ExpressionError(f"{what}: '{text}' overflows", origin) from None
        if isinstance(inner, ZeroDivisionError):
            raise ExpressionError(f"{what}: '{text}' divides by zero", origin) from None
        raise ExpressionError(f"{what}: cannot evaluate '{text}': {inner}", origin) from None
    if not math.isfinite(value):
        raise ExpressionError(f"{what}: '{text}' is not finite", origin)
    return value


def rounded(value: float) -> int:
    """Java's ``Math.round``: the nearest integer, halves up (PREESM's rates)."""
    return math.floor(value + 0.5)
