"""The ``.sdf`` builder: an :class:`~moc.graph.SDFGraph` from the statements of an ``sdf``
block, in an order that lets a statement use a name declared further down (parameters,
then actors, then channels).  The graph checks its own rules; this module folds values,
checks names and points the graph's errors at the file.

A value ``[a, ...; b, ...]`` gives the phases fired once before the periodic ones
(:class:`~moc.phases.InitialPhases`): every ``prod`` and ``cons`` of an actor that has
them gives the same number of them, as do its attributes that give any.
"""
from __future__ import annotations

from dsl.declarations import attribute_dict, folded, origin_of, parameters, pointed
from dsl.errors import ExpressionError, ParseError
from dsl.expression import Expression
from dsl.transformer import Initialised
from moc.errors import SDFError
from moc.graph import CHANNEL_FIELDS, SDFGraph, default_channel_name
from moc.phases import InitialCounter, InitialPhases, Phases

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
    initial = _Initial(known, filename)
    actors, channels = [], []
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
            if isinstance(value, Initialised):
                value = initial.take(tok.value, "attrs", key, value,
                                     f"attribute '{key}' of {what}", ktok)
            attrs[key] = _each(value, lambda v: folded(v, known))
            tokens[key] = ktok
        actors.append((tok, attrs, tokens))
    for st in stmts:
        if st[0] != "channel":
            continue
        _, name_tok_c, src, dst, attr_list = st
        origin = origin_of(filename, name_tok_c if name_tok_c is not None else src)
        label = name_tok_c.value if name_tok_c is not None else \
            default_channel_name(src.value, dst.value)
        what = f"channel '{label}'"
        fields, attrs, tokens = {}, {}, {"src": src, "dst": dst}
        given = attribute_dict(attr_list, filename, what)
        for key, (ktok, value) in given.items():
            if key in RESERVED_CHANNEL:
                raise ParseError(f"{what}: '{key}' cannot be an attribute name",
                                 origin_of(filename, ktok))
            if isinstance(value, Initialised) and key not in ("prod", "cons"):
                raise ParseError(f"{what}: '{key}' cannot have initialisation phases "
                                 "(';'): only prod, cons and actor attributes can",
                                 origin_of(filename, ktok))
            (fields if key in CHANNEL_FIELDS else attrs)[key] = value
            tokens[key] = ktok
        for key, end in (("prod", src), ("cons", dst)):
            ktok, value = given.get(key, (None, None))
            fields[key] = initial.take(end.value, key, label, value, f"{key} of {what}",
                                       ktok if ktok is not None else end)
            if fields[key] is None:
                del fields[key]
        fields = {k: _each(v, lambda v: folded(v, known)) for k, v in fields.items()}
        attrs = {k: _each(v, lambda v: folded(v, known)) for k, v in attrs.items()}
        channels.append((name_tok_c, src, dst, origin, fields, attrs, tokens))
    for tok, attrs, tokens in actors:
        try:
            graph.add_actor(tok.value, origin=origin_of(filename, tok),
                            initial_phases=initial.phases(tok.value), **attrs)
        except SDFError as exc:
            raise pointed(exc, tokens, filename)
    for name_tok_c, src, dst, origin, fields, attrs, tokens in channels:
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


class _Initial(InitialCounter):
    """The initialisation phases of the actors as the values of a block give them:
    their number per actor (a ``prod`` or ``cons`` without ``;`` giving none) and their
    values, numbers once folded."""

    def __init__(self, known, filename):
        super().__init__(ParseError)
        self.known, self.filename = known, filename
        self.parts: dict[str, dict[str, dict[str, tuple]]] = {}

    def take(self, actor, kind, key, value, telling, tok):
        """The periodic part of ``value`` (``kind``: ``attrs``, ``prod`` or ``cons``),
        its initialisation phases kept under ``key``."""
        origin = origin_of(self.filename, tok)
        if not isinstance(value, Initialised):
            self.see(actor, 0, telling, origin)
            return value
        first, periodic = value
        numbers = []
        for v in first:
            number = folded(v, self.known)
            if isinstance(number, Expression):
                raise ExpressionError(f"{telling}: the values of initialisation phases "
                                      "must be numbers (they cannot use parameters)",
                                      v.origin)
            numbers.append(number)
        try:       # InitialPhases checks the values (non-negative integer rates...)
            InitialPhases(len(numbers), **{kind: {key: numbers}})
        except SDFError as exc:
            raise ParseError(f"actor '{actor}': {exc}", origin) from None
        self.see(actor, len(numbers), telling, origin)
        self.parts.setdefault(actor, {}).setdefault(kind, {})[key] = tuple(numbers)
        return periodic[0] if len(periodic) == 1 else periodic

    def phases(self, actor):
        """The :class:`InitialPhases` of ``actor``, or None."""
        count = self.count(actor)
        return InitialPhases(count, **self.parts[actor]) if count else None
