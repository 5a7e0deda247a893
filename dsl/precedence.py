"""Operator precedence of expressions, applied after lark has parsed the flat sequence
``operand (op operand)*`` (the grammar leaves precedence out).

Without recursion (a shunting yard), so that neither a sum of 100,000 terms nor 10,000
nested signs needs a deep Python stack: a recursive grammar of precedence levels would
build, and a recursive descent would walk, one frame per term.
"""
from __future__ import annotations

from dsl.expression import BinOp, Neg, Pos

PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "**": 4}
UNARY = 3


class Signed:
    """An operand with a sign in front, before precedences are applied: the sign
    covers the whole power that follows (``-a**b`` is ``-(a**b)``)."""

    __slots__ = ("sign", "operand", "origin")

    def __init__(self, sign, operand, origin):
        self.sign, self.operand, self.origin = sign, operand, origin

    def resolve(self):
        return Precedence([self]).parse()


class Precedence:
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
            if prec == UNARY:
                out.append((Neg if op == "-" else Pos)(out.pop(), origin))
            else:
                right = out.pop()
                out.append(BinOp(op, out.pop(), right))

        for k, item in enumerate(self.items):
            if k % 2:           # a binary operator
                op = item.value
                prec = PRECEDENCE[op]
                # ** is right-associative; a sign binds tighter than * and looser than **
                while ops and (ops[-1][0] > prec or (ops[-1][0] == prec and op != "**")):
                    reduce()
                ops.append((prec, op, None))
                continue
            while isinstance(item, Signed):
                ops.append((UNARY, item.sign, item.origin))
                item = item.operand
            out.append(item)
        while ops:
            reduce()
        return out[0]
