"""The ``.map`` builder: a :class:`~dsl.mappings.Mapping` from the statements of a
``mapping`` block (``ACTOR -> PE`` and ``channel C via CN, ...``).  A mapping's own errors
(an actor mapped twice, a channel routed twice) are :class:`~dsl.errors.ParseError`;
whether the names exist is checked where the mapping meets its application and
architecture.
"""
from __future__ import annotations

from dsl.declarations import origin_of
from dsl.errors import ParseError
from dsl.mappings import Mapping


def build_mapping(block, filename) -> Mapping:
    name_tok, stmts = block
    assignment, origins, routes, route_lines = {}, {}, {}, {}
    for st in stmts:
        if st[0] == "assign":
            actor, pe = st[1], st[2]
            origin = origin_of(filename, actor)
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
                                 origin_of(filename, ch))
            routes[ch.value] = tuple(t.value for t in via)
            route_lines[ch.value] = ch.line
    return Mapping(name_tok.value, assignment, routes,
                   origin=origin_of(filename, name_tok), origins=origins)
