"""The ``.moa`` builder: an :class:`~moa.architecture.Architecture` from the statements of a
``moa`` block, in an order that lets a statement use a name declared further down
(parameters, then types and system metrics, then elements, then links).  The
architecture checks its own rules; this module folds values, checks names, expands array
references and limits, and points the architecture's errors at the file.
"""
from __future__ import annotations

from types import MappingProxyType

from lark import Token

from dsl import limits
from dsl.declarations import (attribute_dict, check_names, folded, origin_of, parameters,
                              pointed)
from dsl.errors import ParseError
from dsl.expression import CONSTANTS, Name
from dsl.transformer import CostCall, parse_index
from moa.architecture import DEFAULT_AGGREGATE, DEFAULT_LAMBDA, Architecture, CostSpec, \
    member_name
from moa.cost_models.registry import call_arguments
from moa.errors import ArchitectureError, CostModelError
from moc.limits import exceeded


def _argument(value, known):
    """The value of a cost-model argument: a bare word that names no parameter is a
    string (``latency = independent``)."""
    if isinstance(value, Name) and value.name not in known and value.name not in CONSTANTS:
        return value.name
    return folded(value, known)


def _split_attrs(attr_list, known, filename, what):
    """``(costs, attrs, local, tokens)`` of an element or type attribute list; ``tokens``
    maps each key to its token (where an error of the element points)."""
    costs, attrs, local, tokens = {}, {}, None, {}
    for key, (ktok, value) in attribute_dict(attr_list, filename, what).items():
        tokens[key] = ktok
        if isinstance(value, CostCall):
            model_tok, kwargs, positional = value
            origin = origin_of(filename, model_tok)
            args = {}
            where = f"{what}, {key} = {model_tok.value}(...)"
            for akey, (atok, aval) in attribute_dict(kwargs, filename, where).items():
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
            attrs[key] = folded(value, known)
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
                                 origin_of(filename, key))
            if not isinstance(value, str) or not value.strip():
                raise ParseError(f"{what} '{tok.value}': unit must be a non-empty string, "
                                 f"as in unit = \"s\"", origin_of(filename, key))
            if tok.value in first:
                raise ParseError(f"{what} '{tok.value}': its unit is given twice (first on "
                                 f"line {first[tok.value].line})", origin_of(filename, key))
            first[tok.value] = key
            arch.units[tok.value] = value.strip()


def build_architecture(block, filename) -> Architecture:
    """The architecture of a ``moa`` block: the statements fold their values and check
    their names here; the architecture checks its own rules (:mod:`moa.architecture`)
    and the error it raises is pointed at the token of the attribute it names."""
    name_tok, stmts = block
    params = parameters(stmts, filename)
    known = set(params)
    lambda_, aggregate = DEFAULT_LAMBDA, DEFAULT_AGGREGATE
    seen_single: dict[str, Token] = {}
    for st in stmts:
        if st[0] in ("lambda", "aggregate"):
            kw = st[1]
            if st[0] in seen_single:
                raise ParseError(f"'{st[0]}' is set twice (first on line "
                                 f"{seen_single[st[0]].line})", origin_of(filename, kw))
            seen_single[st[0]] = kw
            if st[0] == "lambda":
                lambda_ = folded(st[2], known)
            else:
                aggregate = st[2]
    try:
        # the aggregation's name is checked against the registry where mapping uses it
        arch = Architecture(name_tok.value, params, lambda_,
                            aggregate if isinstance(aggregate, str) else aggregate.value,
                            origin=origin_of(filename, name_tok),
                            aggregate_origin=None if isinstance(aggregate, str)
                            else origin_of(filename, aggregate))
    except ArchitectureError as exc:
        raise pointed(exc, seen_single, filename)
    metrics = [st for st in stmts if st[0] == "metric"]
    names = known | {st[1].value for st in metrics}
    for _, tok, expr, _units in metrics:
        # bare names: parameters or other system metrics; terms are checked when evaluated
        check_names(expr, names, "parameter or metric", terms=True)
        arch.add_metric(tok.value, expr, origin_of(filename, tok))
    _set_units(arch, stmts, filename)
    for st in stmts:
        if st[0] == "type":
            tok = st[1]
            costs, attrs, local, tokens = _split_attrs(st[2], known, filename,
                                                       f"type '{tok.value}'")
            try:
                arch.add_type(tok.value, costs, attrs, local, origin=origin_of(filename, tok))
            except ArchitectureError as exc:
                raise pointed(exc, tokens, filename)
    for st in stmts:
        if st[0] != "element":
            continue
        _, kind_tok, tok, rng, type_tok, attr_list = st
        kind = kind_tok.value
        origin = origin_of(filename, tok)
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
            lo, hi = (parse_index(t, filename) for t in rng)
            size = hi - lo + 1
            if size > limits.MAX_ARRAY_MEMBERS:
                raise ArchitectureError(exceeded(
                    f"{kind} '{tok.value}[{lo}..{hi}]' has {size} members", "array",
                    limits.MAX_ARRAY_MEMBERS), origin, "range")
            if len(arch.elements) + size > limits.MAX_ELEMENTS:
                raise ArchitectureError(exceeded(
                    f"{kind} '{tok.value}[{lo}..{hi}]' brings the elements of "
                    f"'{arch.name}' to {len(arch.elements) + size}", "elements",
                    limits.MAX_ELEMENTS), origin, "range")
            arch.add_array(tok.value, lo, hi, kind, costs, attrs, local, type_name,
                           origin=origin)
        except ArchitectureError as exc:
            raise pointed(exc, tokens, filename)
    arch.check_locals()
    arrays = None
    expanded = 0
    for st in stmts:
        if st[0] != "link":
            continue
        if arrays is None:
            arrays = arch.arrays()
        ends = [_expand_ref(ref, arch, arrays, filename) for ref in (st[1], st[2])]
        origin = origin_of(filename, st[1][1])
        expanded += len(ends[0]) * len(ends[1])
        if expanded > limits.MAX_LINKS:
            raise ArchitectureError(exceeded(
                f"this link expands to {len(ends[0])} x {len(ends[1])} links ({expanded} "
                f"in '{arch.name}' counting those before it)", "links", limits.MAX_LINKS),
                origin)
        for a in ends[0]:
            for b in ends[1]:
                arch.add_link(a, b, origin=origin)
    return arch


def _expand_ref(ref, arch, arrays, filename):
    how, tok, index = ref
    origin = origin_of(filename, tok)
    if how == "all":
        members = arrays.get(tok.value)
        if not members:
            raise ArchitectureError(f"'{tok.value}[*]': no array named '{tok.value}' "
                                    f"(arrays: {', '.join(arrays) or 'none'})", origin)
        return members
    name = tok.value if how == "one" else member_name(tok.value, parse_index(index, filename))
    if name not in arch.elements:
        hint = ""
        if how == "one" and tok.value in arrays:
            hint = f"; '{tok.value}' is an array, write {tok.value}[*] or {tok.value}[i]"
        raise ArchitectureError(f"link uses unknown element '{name}'{hint}", origin)
    return [name]
