"""What the builders of every format share: positions of tokens, the parameters of a
block, values folded where they are known, attribute lists, names unique in a file, and
pointing an error that a type raised at the token of the attribute it names.
"""
from __future__ import annotations

from dsl.errors import ExpressionError, ParseError
from dsl.expression import CONSTANTS, BinOp, Call, Expression, Name, Neg, Num, Pos


def origin_of(filename, tok):
    return (filename, tok.line, tok.column)


def check_names(expr, known, what="parameter", terms=False):
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


def folded(expr, known):
    """A folded number, or the expression itself when it uses parameters."""
    if not isinstance(expr, Expression):
        return expr
    if isinstance(expr, Num):
        return expr.value
    check_names(expr, known)
    if not expr.names.isdisjoint(known):
        return expr
    return expr.evaluate({})        # numbers and constants (inf, pi) only


def _deps(value):
    return sorted(value.names) if isinstance(value, Expression) else ()


def parameters(stmts, filename):
    """Ordered ``{name: value}`` of the ``param`` statements, checked for duplicates,
    unknown names and cycles."""
    decls = {}
    for st in stmts:
        if st[0] == "param":
            tok = st[1]
            if tok.value in decls:
                first = decls[tok.value][0]
                raise ParseError(f"duplicate parameter '{tok.value}' (first declared on line "
                                 f"{first.line})", origin_of(filename, tok))
            decls[tok.value] = (tok, st[2])
    known = set(decls)
    params = {name: folded(expr, known) for name, (tok, expr) in decls.items()}
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
                                      origin_of(filename, decls[dep][0]))
            state[dep] = 1
            path.append(dep)
            stack.append(iter(_deps(params[dep])))
    return params


def attribute_dict(attrs, filename, what):
    out = {}
    for key, value in attrs:
        if key.value in out:
            raise ParseError(f"{what}: duplicate attribute '{key.value}'", origin_of(filename, key))
        out[key.value] = (key, value)
    return out


def pointed(exc, tokens, filename):
    """``exc``, raised by a type, pointed at the token of the attribute it names."""
    tok = tokens.get(getattr(exc, "attribute", None))
    if tok is not None:
        exc.origin = origin_of(filename, tok)
    return exc


def unique_blocks(blocks: list, filename: str, what: str, error: type) -> list:
    """``blocks`` (each led by its name token), refusing a name used twice in one file."""
    first_line: dict[str, int] = {}
    for block in blocks:
        tok = block[0]
        if tok.value in first_line:
            raise error(f"duplicate {what} '{tok.value}' (first on line {first_line[tok.value]})",
                        origin_of(filename, tok))
        first_line[tok.value] = tok.line
    return blocks
