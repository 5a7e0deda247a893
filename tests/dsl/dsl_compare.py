"""Structural comparison of parsed objects (expressions compared by printed text)."""
from __future__ import annotations

from dsl.expression import Expression


def value_key(v):
    if isinstance(v, Expression):
        return ("expr", str(v))
    if isinstance(v, bool):
        return ("num", int(v))
    if isinstance(v, (int, float)):
        return ("num", v)
    if isinstance(v, str):
        return ("str", v)
    if hasattr(v, "model") and hasattr(v, "args"):  # CostSpec
        return ("cost", v.model, dict_key(v.args))
    return ("other", repr(v))


def dict_key(d):
    return tuple((k, value_key(v)) for k, v in d.items())


def graph_key(g):
    return (
        g.name,
        dict_key(g.params),
        tuple((a.name, dict_key(a.attrs)) for a in g.actors.values()),
        tuple((c.name, c.src, c.dst, value_key(c.prod), value_key(c.cons),
               value_key(c.delay), value_key(c.size), dict_key(c.attrs))
              for c in g.channels.values()),
    )


def arch_key(a):
    return (
        a.name,
        dict_key(a.params),
        value_key(a.lambda_),
        a.aggregate,
        tuple((t.name, dict_key(t.costs), dict_key(t.attrs), t.local) for t in a.types.values()),
        tuple((e.name, e.kind, e.type_name, e.array, dict_key(e.costs), dict_key(e.attrs),
               e.local, dict_key(e.own_costs), dict_key(e.own_attrs), e.own_local)
              for e in a.elements.values()),
        tuple(a.links),
    )


def mapping_key(m):
    return (m.name, tuple(m.assignment.items()), tuple(m.routes.items()))


def key(obj):
    if hasattr(obj, "actors"):
        return graph_key(obj)
    if hasattr(obj, "elements"):
        return arch_key(obj)
    return mapping_key(obj)


def assert_same(objs1, objs2):
    assert [key(o) for o in objs1] == [key(o) for o in objs2]
