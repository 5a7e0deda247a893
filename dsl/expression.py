"""Parametric expressions of the text formats: a small immutable AST.

Every node has ``evaluate(env)``, where ``env`` maps parameter names to numbers or to
further expressions (resolved lazily, with cycle detection), a ``names`` property (the
parameters it uses) and a ``__str__`` that prints valid source text with the fewest
parentheses that keep the tree unchanged, so that ``parse(str(e)) == e``.

Integer arithmetic stays integer: ``2*3`` is ``6`` (an ``int``), ``6/2`` is ``3`` and
``2**3`` is ``8``; ``7/2`` is ``3.5``.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from dsl.errors import ExpressionError

__all__ = ["Expression", "Num", "Name", "Neg", "Pos", "BinOp", "Call", "FUNCTIONS",
           "CONSTANTS", "format_number", "format_value", "fold", "evaluate"]

#: names that evaluate to a constant unless a parameter of that name exists
CONSTANTS = {"inf": math.inf, "pi": math.pi}


def _int_if_exact(x):
    return int(x) if isinstance(x, float) and math.isfinite(x) and x == int(x) else x


def _log(x, base=None):
    if x <= 0 or (base is not None and (base <= 0 or base == 1)):
        raise ValueError("log of a non-positive number" if x <= 0 else f"log base {base}")
    return math.log(x) if base is None else math.log(x, base)


def _log2(x):
    if x <= 0:
        raise ValueError("log2 of a non-positive number")
    return math.log2(x)


def _sqrt(x):
    if x < 0:
        raise ValueError("sqrt of a negative number")
    return _int_if_exact(math.sqrt(x)) if isinstance(x, int) and math.isqrt(x) ** 2 == x \
        else math.sqrt(x)


def _ceil(x):
    return math.ceil(x) if math.isfinite(x) else x


def _floor(x):
    return math.floor(x) if math.isfinite(x) else x


#: function name -> (implementation, minimum arity, maximum arity or None)
FUNCTIONS: dict[str, tuple[Callable, int, int | None]] = {
    "min": (min, 1, None),
    "max": (max, 1, None),
    "abs": (abs, 1, 1),
    "sqrt": (_sqrt, 1, 1),
    "log": (_log, 1, 2),
    "log2": (_log2, 1, 1),
    "exp": (math.exp, 1, 1),
    "ceil": (_ceil, 1, 1),
    "floor": (_floor, 1, 1),
}

# Precedence levels used by the printer.
_ADD, _MUL, _UNARY, _POW, _ATOM = 1, 2, 3, 4, 5
_BINARY_PREC = {"+": _ADD, "-": _ADD, "*": _MUL, "/": _MUL, "**": _POW}


def format_number(value) -> str:
    """Source text of a number: ``repr``-exact for floats, ``inf`` for infinity."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if math.isnan(value):
            raise ValueError("NaN cannot be written in a mapeval file")
        return repr(value)
    if hasattr(value, "numerator") and hasattr(value, "denominator"):  # Fraction
        if value.denominator == 1:
            return str(value.numerator)
        return f"{value.numerator} / {value.denominator}"
    try:
        return format_number(float(value))  # numpy scalars and the like
    except (TypeError, ValueError):
        raise ValueError(f"not a number: {value!r}") from None


def format_value(value) -> str:
    """Source text of an attribute value: a number, an expression or a string."""
    if isinstance(value, Expression):
        return str(value)
    if isinstance(value, str):
        return quote(value)
    return format_number(value)


def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Expression:
    """Base of the expression nodes.  Nodes are immutable and compare structurally
    (their ``origin`` is ignored)."""

    __slots__ = ("origin",)
    precedence = _ATOM

    def __setattr__(self, key, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _init(self, **fields):
        for key, value in fields.items():
            object.__setattr__(self, key, value)

    def _key(self):
        raise NotImplementedError

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self):
        return hash((type(self).__name__, self._key()))

    def __repr__(self):
        return f"{type(self).__name__}({str(self)!r})"

    def __reduce__(self):
        return (_rebuild, (type(self), self._key(), self.origin))

    @property
    def names(self) -> frozenset[str]:
        """The parameter names this expression uses."""
        out: set[str] = set()
        self._collect(out)
        return frozenset(out)

    def _collect(self, out: set) -> None:
        pass

    def evaluate(self, env: Mapping[str, Any] | None = None, _active: tuple = ()):
        """The value in ``env`` (names to numbers or expressions, resolved lazily)."""
        raise NotImplementedError

    def _paren(self, child: "Expression", needs: bool) -> str:
        return f"({child})" if needs else str(child)


def _rebuild(cls, key, origin):
    obj = cls.__new__(cls)
    for slot, value in zip(cls._fields, key):
        object.__setattr__(obj, slot, value)
    object.__setattr__(obj, "origin", origin)
    return obj


class Num(Expression):
    """A number literal (``int`` or ``float``)."""

    __slots__ = ("value",)
    _fields = ("value",)

    def __init__(self, value, origin=None):
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "origin", origin)

    @property
    def precedence(self):
        return _UNARY if self.value < 0 else _ATOM

    def _key(self):
        return (self.value,)

    def evaluate(self, env=None, _active=()):
        return self.value

    def __str__(self):
        return format_number(self.value)


class Name(Expression):
    """A parameter reference."""

    __slots__ = ("name",)
    _fields = ("name",)

    def __init__(self, name: str, origin=None):
        object.__setattr__(self, "name", str(name))
        object.__setattr__(self, "origin", origin)

    def _key(self):
        return (self.name,)

    def _collect(self, out):
        out.add(self.name)

    def evaluate(self, env=None, _active=()):
        env = env if env is not None else {}
        if self.name not in env:
            if self.name in CONSTANTS:
                return CONSTANTS[self.name]
            known = ", ".join(sorted(env)) or "none"
            raise ExpressionError(f"unknown parameter '{self.name}' (known: {known})",
                                  self.origin)
        value = env[self.name]
        evaluate = getattr(value, "evaluate", None)
        if evaluate is None:
            if isinstance(value, str) or value is None:
                raise ExpressionError(f"parameter '{self.name}' is not a number: {value!r}",
                                      self.origin)
            return value
        if self.name in _active:
            cycle = " -> ".join(_active[_active.index(self.name):] + (self.name,))
            raise ExpressionError(f"parameters depend on each other in a cycle: {cycle}",
                                  getattr(value, "origin", None) or self.origin)
        if isinstance(value, Expression):
            return value.evaluate(env, _active + (self.name,))
        return evaluate(env)

    def __str__(self):
        return self.name


class _Unary(Expression):
    """A signed operand; ``sign`` is ``"-"`` or ``"+"``."""

    __slots__ = ("operand",)
    _fields = ("operand",)
    precedence = _UNARY
    sign = ""

    def __init__(self, operand: Expression, origin=None):
        self._init(operand=operand, origin=origin)

    def _key(self):
        return (self.operand,)

    def _collect(self, out):
        self.operand._collect(out)

    def __str__(self):
        op = self.operand
        # "--x" would read as a link in a .moa file: keep nested signs apart.
        needs = op.precedence < _UNARY or isinstance(op, _Unary) or \
            (isinstance(op, Num) and op.value < 0)
        return self.sign + self._paren(op, needs)


class Neg(_Unary):
    """Unary minus."""

    __slots__ = ()
    sign = "-"

    def evaluate(self, env=None, _active=()):
        return -self.operand.evaluate(env, _active)


class Pos(_Unary):
    """Unary plus (kept so that the printed text matches the source)."""

    __slots__ = ()
    sign = "+"

    def evaluate(self, env=None, _active=()):
        return +self.operand.evaluate(env, _active)


class BinOp(Expression):
    """``left op right`` for ``op`` in ``+ - * / **``."""

    __slots__ = ("op", "left", "right")
    _fields = ("op", "left", "right")

    def __init__(self, op: str, left: Expression, right: Expression, origin=None):
        if op not in _BINARY_PREC:
            raise ValueError(f"unknown operator {op!r}")
        setattr_ = object.__setattr__
        setattr_(self, "op", op)
        setattr_(self, "left", left)
        setattr_(self, "right", right)
        setattr_(self, "origin", origin if origin is not None else left.origin)

    @property
    def precedence(self):
        return _BINARY_PREC[self.op]

    def _key(self):
        return (self.op, self.left, self.right)

    def _collect(self, out):
        self.left._collect(out)
        self.right._collect(out)

    def evaluate(self, env=None, _active=()):
        a = self.left.evaluate(env, _active)
        b = self.right.evaluate(env, _active)
        op = self.op
        try:
            if op == "+":
                return a + b
            if op == "-":
                return a - b
            if op == "*":
                return a * b
            if op == "/":
                if b == 0:
                    raise ExpressionError(f"division by zero in '{self}'", self.origin)
                if isinstance(a, int) and isinstance(b, int) and a % b == 0:
                    return a // b
                return a / b
            # op == "**"
            if isinstance(a, int) and isinstance(b, int) and b >= 0 and b < 4096:
                return a ** b
            if a == 0 and b < 0:
                raise ExpressionError(f"division by zero in '{self}'", self.origin)
            result = float(a) ** float(b)
            if isinstance(result, complex):
                raise ExpressionError(f"'{self}': a negative number to a fractional power",
                                      self.origin)
            return result
        except OverflowError:
            raise ExpressionError(f"'{self}' overflows", self.origin) from None
        except TypeError as exc:
            raise ExpressionError(f"'{self}': {exc}", self.origin) from None

    def __str__(self):
        prec = self.precedence
        if self.op == "**":
            left = self._paren(self.left, self.left.precedence <= _POW)
            right = self._paren(self.right, self.right.precedence < _UNARY)
        else:
            left = self._paren(self.left, self.left.precedence < prec)
            right = self._paren(self.right, self.right.precedence <= prec)
        return f"{left} {self.op} {right}"


class Call(Expression):
    """A call of one of :data:`FUNCTIONS`."""

    __slots__ = ("func", "args")
    _fields = ("func", "args")

    def __init__(self, func: str, args, origin=None):
        args = tuple(args)
        if func not in FUNCTIONS:
            raise ExpressionError(f"unknown function '{func}' (known: "
                                  f"{', '.join(FUNCTIONS)})", origin)
        _, lo, hi = FUNCTIONS[func]
        if len(args) < lo or (hi is not None and len(args) > hi):
            want = str(lo) if lo == hi else (f"at least {lo}" if hi is None else f"{lo} to {hi}")
            raise ExpressionError(f"function '{func}' takes {want} argument"
                                  f"{'' if want == '1' else 's'}, got {len(args)}", origin)
        self._init(func=str(func), args=args, origin=origin)

    def _key(self):
        return (self.func, self.args)

    def _collect(self, out):
        for a in self.args:
            a._collect(out)

    def evaluate(self, env=None, _active=()):
        values = [a.evaluate(env, _active) for a in self.args]
        try:
            return FUNCTIONS[self.func][0](*values)
        except (ValueError, OverflowError, TypeError) as exc:
            raise ExpressionError(f"'{self}': {exc}", self.origin) from None

    def __str__(self):
        return f"{self.func}({', '.join(str(a) for a in self.args)})"


def fold(expr: Expression):
    """A plain number for an expression without parameters, else ``expr`` itself."""
    if isinstance(expr, Num):
        return expr.value
    if isinstance(expr, Expression) and not expr.names:
        return expr.evaluate({})
    return expr


def evaluate(value, env: Mapping[str, Any] | None = None):
    """A number for ``value``: itself, or the evaluation of an expression in ``env``."""
    ev = getattr(value, "evaluate", None)
    return ev(env or {}) if ev is not None else value
