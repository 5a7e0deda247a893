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
import sys
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
    # the least (greatest) of one or more numbers: min(x) is x
    "min": (lambda *xs: min(xs), 1, None),
    "max": (lambda *xs: max(xs), 1, None),
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
    if isinstance(value, tuple):        # per phase (moc.phases.Phases)
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return format_number(value)


def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


#: an addition or subtraction whose result is within this many ulps of its largest term
#: is rounding noise, and 0 (``1 - 0.8 - 0.2`` is about -5.6e-17 in floating point)
NOISE_ULPS = 4
_NOISE = NOISE_ULPS * sys.float_info.epsilon


class Expression:
    """Base of the expression nodes.  Nodes are immutable and compare structurally
    (their ``origin`` is ignored).

    Every walk over a tree (evaluation, printing, comparison, pickling) runs over its
    nodes in post-order, computed once without recursion, so that a sum of 100,000 terms
    or 10,000 nested signs needs no deep Python stack."""

    __slots__ = ("origin", "_walk", "_uses")
    precedence = _ATOM
    arity = 0

    def __setattr__(self, key, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _init(self, **fields):
        for key, value in fields.items():
            object.__setattr__(self, key, value)

    def _key(self):
        """The fields of this node alone (not its children)."""
        return ()

    @classmethod
    def _arity_of(cls, key):
        """How many children a node with fields ``key`` has."""
        return cls.arity

    @classmethod
    def _make(cls, key, children, origin):
        """The node with fields ``key`` over ``children``."""
        return cls(*key, *children, origin)

    def _children(self) -> tuple:
        return ()

    def postorder(self) -> tuple:
        """The nodes of this tree, children before their parent, left to right."""
        try:
            return self._walk
        except AttributeError:
            pass
        out, stack = [], [self]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(node._children())
        out.reverse()
        walk = tuple(out)
        object.__setattr__(self, "_walk", walk)
        return walk

    def _shape(self) -> tuple:
        return tuple((type(n), n._key()) for n in self.postorder())

    def __eq__(self, other):
        if type(self) is not type(other):
            return False
        a, b = self.postorder(), other.postorder()
        return len(a) == len(b) and all(type(x) is type(y) and x._key() == y._key()
                                        for x, y in zip(a, b))

    def __hash__(self):
        return hash(tuple((type(n).__name__,) + n._key() for n in self.postorder()))

    def __repr__(self):
        return f"{type(self).__name__}({str(self)!r})"

    def __reduce__(self):
        return (_rebuild, (tuple((type(n), n._key(), n.origin) for n in self.postorder()),))

    @property
    def names(self) -> frozenset[str]:
        """The parameter names this expression uses."""
        return frozenset(self._name_nodes())

    def _name_nodes(self) -> dict:
        """The first :class:`Name` node of each parameter this expression uses."""
        try:
            return self._uses
        except AttributeError:
            pass
        out: dict = {}
        for node in self.postorder():
            if type(node) is Name and node.name not in out:
                out[node.name] = node
        object.__setattr__(self, "_uses", out)
        return out

    def evaluate(self, env: Mapping[str, Any] | None = None, _active: tuple = ()):
        """The value in ``env`` (names to numbers or expressions, resolved lazily)."""
        names = self._name_nodes()
        if not names:
            return self._compute(names)
        values = {}
        if env is not None:
            for name in names:          # the common case: every name is a number
                value = env.get(name)
                if type(value) is not float and type(value) is not int:
                    break
                values[name] = value
            else:
                return self._compute(values)
        return self._compute(_parameter_values(names, env))

    def _compute(self, values: Mapping[str, Any]):
        """The value, with ``values`` the numbers of the parameters it uses.  Each node
        takes its operands from the top of a stack; beside each value rides its scale,
        the magnitude of the largest term of the sum it belongs to (for
        :data:`NOISE_ULPS`)."""
        stack: list = []
        scales: list = []
        for node in self.postorder():
            node._step(stack, scales, values)
        return stack[0]

    def _step(self, stack, scales, values):
        raise NotImplementedError

    def _format(self, texts) -> str:
        raise NotImplementedError

    def __str__(self):
        texts: list = []
        for node in self.postorder():
            n = node.arity
            if n:
                args = texts[-n:]
                del texts[-n:]
            else:
                args = ()
            texts.append(node._format(args))
        return _flatten(texts[0])

    @staticmethod
    def _paren(text, needs: bool):
        return ("(", text, ")") if needs else text


def _flatten(rope) -> str:
    """The text of a rope (a string, or a tuple of ropes): printing builds ropes so that
    a long sum prints in linear time."""
    out, stack = [], [rope]
    while stack:
        part = stack.pop()
        if type(part) is str:
            out.append(part)
        else:
            stack.extend(reversed(part))
    return "".join(out)


def _rebuild(nodes):
    """An expression from its post-order ``(class, fields, origin)`` triples."""
    stack: list = []
    for cls, key, origin in nodes:
        n = cls._arity_of(key)
        children = stack[len(stack) - n:] if n else []
        if n:
            del stack[-n:]
        stack.append(cls._make(key, children, origin))
    return stack[0]


def _parameter_values(names: Mapping[str, "Name"], env) -> dict:
    """``{name: number}`` of the parameters ``names`` and of those their expressions use
    in ``env``, each evaluated once, dependencies first (an explicit stack: a chain of
    10,000 parameters is fine), refusing unknown names and cycles."""
    env = env if env is not None else {}
    values: dict = {}
    for root, root_node in names.items():
        if root in values:
            continue
        path: list[str] = []           # parameters being resolved, outermost first
        on_path: set[str] = set()
        stack = [[root, root_node, None]]
        while stack:
            frame = stack[-1]
            name, node, deps = frame
            if deps is None:
                if name in values:
                    stack.pop()
                    continue
                if name not in env:
                    if name in CONSTANTS:
                        values[name] = CONSTANTS[name]
                        stack.pop()
                        continue
                    known = ", ".join(sorted(env)) or "none"
                    raise ExpressionError(f"unknown parameter '{name}' (known: {known})",
                                          node.origin)
                value = env[name]
                if not isinstance(value, Expression):
                    evaluate = getattr(value, "evaluate", None)
                    if evaluate is not None:
                        value = evaluate(env)
                    elif isinstance(value, str) or value is None:
                        raise ExpressionError(f"parameter '{name}' is not a number: "
                                              f"{value!r}", node.origin)
                    values[name] = value
                    stack.pop()
                    continue
                path.append(name)
                on_path.add(name)
                frame[2] = deps = iter(value._name_nodes().items())
            step = next(deps, None)
            if step is None:
                values[name] = env[name]._compute(values)
                on_path.discard(path.pop())
                stack.pop()
                continue
            dep, dep_node = step
            if dep in on_path:
                cycle = " -> ".join(path[path.index(dep):] + [dep])
                raise ExpressionError(f"parameters depend on each other in a cycle: {cycle}",
                                      getattr(env[dep], "origin", None) or dep_node.origin)
            if dep not in values:
                stack.append([dep, dep_node, None])
    return values


class Num(Expression):
    """A number literal (``int`` or ``float``)."""

    __slots__ = ("value",)

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

    def _step(self, stack, scales, values):
        stack.append(self.value)
        scales.append(abs(self.value))

    def _format(self, texts):
        return format_number(self.value)


class Name(Expression):
    """A parameter reference."""

    __slots__ = ("name",)

    def __init__(self, name: str, origin=None):
        object.__setattr__(self, "name", str(name))
        object.__setattr__(self, "origin", origin)

    def _key(self):
        return (self.name,)

    def _step(self, stack, scales, values):
        value = values[self.name]
        stack.append(value)
        scales.append(abs(value))

    def _format(self, texts):
        return self.name


class _Unary(Expression):
    """A signed operand; ``sign`` is ``"-"`` or ``"+"``."""

    __slots__ = ("operand",)
    precedence = _UNARY
    arity = 1
    sign = ""

    def __init__(self, operand: Expression, origin=None):
        self._init(operand=operand, origin=origin)

    def _children(self):
        return (self.operand,)

    def _format(self, texts):
        op = self.operand
        # "--x" would read as a link in a .moa file: keep nested signs apart.
        needs = op.precedence < _UNARY or isinstance(op, _Unary) or \
            (isinstance(op, Num) and op.value < 0)
        return (self.sign, self._paren(texts[0], needs))


class Neg(_Unary):
    """Unary minus."""

    __slots__ = ()
    sign = "-"

    def _step(self, stack, scales, values):
        stack[-1] = -stack[-1]


class Pos(_Unary):
    """Unary plus (kept so that the printed text matches the source)."""

    __slots__ = ()
    sign = "+"

    def _step(self, stack, scales, values):
        stack[-1] = +stack[-1]


class BinOp(Expression):
    """``left op right`` for ``op`` in ``+ - * / **``."""

    __slots__ = ("op", "left", "right")
    arity = 2

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
        return (self.op,)

    def _children(self):
        return (self.left, self.right)

    def _step(self, stack, scales, values):
        b = stack.pop()
        b_scale = scales.pop()
        a = stack[-1]
        op = self.op
        if op == "+" or op == "-":
            try:
                result = a + b if op == "+" else a - b
                # integer arithmetic is exact: only floating-point terms leave noise
                scale = abs(result) if type(result) is int else \
                    scales[-1] if scales[-1] > b_scale else b_scale
                # rounding noise of a sum (Goldberg 1991: each operation errs by half an ulp)
                if type(result) is float and result and abs(result) / _NOISE <= scale:
                    result = 0.0
            except OverflowError:       # an integer beyond the range of floats
                raise ExpressionError(f"'{self}' overflows", self.origin) from None
            stack[-1] = result
            scales[-1] = scale
            return
        result = self._apply(a, b)
        stack[-1] = result
        scales[-1] = abs(result)

    def _apply(self, a, b):
        op = self.op
        try:
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

    def _format(self, texts):
        prec = self.precedence
        left, right = texts
        if self.op == "**":
            left = self._paren(left, self.left.precedence <= _POW)
            right = self._paren(right, self.right.precedence < _UNARY)
        else:
            left = self._paren(left, self.left.precedence < prec)
            right = self._paren(right, self.right.precedence <= prec)
        return (left, f" {self.op} ", right)


class Call(Expression):
    """A call of one of :data:`FUNCTIONS`."""

    __slots__ = ("func", "args", "arity")

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
        self._init(func=str(func), args=args, arity=len(args), origin=origin)

    @classmethod
    def _arity_of(cls, key):
        return key[1]

    @classmethod
    def _make(cls, key, children, origin):
        return cls(key[0], children, origin)

    def _key(self):
        return (self.func, len(self.args))

    def _children(self):
        return self.args

    def _step(self, stack, scales, values):
        n = self.arity
        args = stack[-n:]
        del stack[-n:]
        del scales[-n:]
        try:
            result = FUNCTIONS[self.func][0](*args)
        except (ValueError, OverflowError, TypeError) as exc:
            raise ExpressionError(f"'{self}': {exc}", self.origin) from None
        stack.append(result)
        scales.append(abs(result))

    def _format(self, texts):
        parts = [self.func, "("]
        for i, text in enumerate(texts):
            parts += (", ", text) if i else (text,)
        parts.append(")")
        return tuple(parts)


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
