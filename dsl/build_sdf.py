"""The ``.sdf`` builder: an :class:`~moc.graph.SDFGraph` from the statements of an ``sdf``
block, in an order that lets a statement use a name declared further down (parameters,
then actors, then channels).  The graph checks its own rules; this module folds values,
checks names and points the graph's errors at the file.
"""
from __future__ import annotations

from dsl.declarations import attribute_dict, folded, origin_of, parameters, pointed
from dsl.errors import ParseError
from moc.errors import SDFError
from moc.graph import CHANNEL_FIELDS, SDFGraph
from moc.phases import Phases

#: names that cannot be attributes (they are fields of the objects)
RESERVED_ACTOR = frozenset({"name", "origin"})
RESERVED_CHANNEL = frozenset({"name", "origin", "src", "dst"})


def build_graph(block, filename) -> SDFGraph:
    """The graph of an ``sdf`` block: the statements fold their values and check their
    names here; the graph checks its own rules (:mod:`moc.graph`) and the error it
    raises is pointed at the token of the attribute it names."""
    name_tok, stmts = block
    params = parameters(stmts, filename)
    known = set(params)
    graph = SDFGraph(name_tok.value, params, origin=origin_of(filename, name_tok))
    for st in stmts:
        if st[0] != "actor":
            continue
        tok = st[1]
        what = f"actor '{tok.value}'"
        attrs, tokens = {}, {}
        for key, (ktok, value) in attribute_dict(st[2], filename, what).items():
            if key in RESERVED_ACTOR:
                raise ParseError(f"{what}: '{key}' cannot be an attribute name",
                                 origin_of(filename, ktok))
            attrs[key] = _each(value, lambda v: folded(v, known))
            tokens[key] = ktok
        try:
            graph.add_actor(tok.value, origin=origin_of(filename, tok), **attrs)
        except SDFError as exc:
            raise pointed(exc, tokens, filename)
    for st in stmts:
        if st[0] != "channel":
            continue
        _, name_tok_c, src, dst, attr_list = st
        origin = origin_of(filename, name_tok_c if name_tok_c is not None else src)
        label = name_tok_c.value if name_tok_c is not None else f"{src.value}->{dst.value}"
        what = f"channel '{label}'"
        fields, attrs, tokens = {}, {}, {"src": src, "dst": dst}
        for key, (ktok, value) in attribute_dict(attr_list, filename, what).items():
            if key in RESERVED_CHANNEL:
                raise ParseError(f"{what}: '{key}' cannot be an attribute name",
                                 origin_of(filename, ktok))
            (fields if key in CHANNEL_FIELDS else attrs)[key] = \
                _each(value, lambda v: folded(v, known))
            tokens[key] = ktok
        try:
            graph.add_channel(src.value, dst.value,
                              name_tok_c.value if name_tok_c is not None else None,
                              origin=origin, **fields, **attrs)
        except SDFError as exc:
            raise pointed(exc, tokens, filename)
    return graph


def _each(value, check):
    """``check`` of ``value``, entry by entry for a per-phase value."""
    return Phases(check(v) for v in value) if isinstance(value, Phases) else check(value)
