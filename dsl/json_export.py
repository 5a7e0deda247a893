"""JSON-ready dictionaries of graphs, architectures and mappings, and the one JSON
convention of every document mapeval writes.

Numbers stay numbers; the non-finite ones, which strict JSON cannot hold, become the
strings ``"inf"``, ``"-inf"`` and ``"nan"`` (which ``float()`` reads back), so that
``null`` keeps meaning "not defined"; parametric values become the source text of their
expression."""
from __future__ import annotations

import math
from typing import Any


def json_number(v: float) -> float | str:
    """``v``, or ``"inf"``/``"-inf"``/``"nan"`` where it is not finite."""
    if math.isfinite(v):
        return v
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def json_safe(obj) -> Any:
    """``obj`` with every non-finite float spelled as :func:`json_number` does, numpy
    scalars and arrays as Python numbers and lists, tuples as lists, keys as strings."""
    if isinstance(obj, float):
        return json_number(obj)
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if hasattr(obj, "tolist") and callable(obj.tolist):     # numpy scalars and arrays
        return json_safe(obj.tolist())
    return obj


def _value(v) -> Any:
    if isinstance(v, tuple):            # per phase (moc.phases.Phases): a list
        return [_value(x) for x in v]
    if hasattr(v, "evaluate"):
        return str(v)
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return v
    if isinstance(v, float):
        return json_number(v)
    if hasattr(v, "numerator") and hasattr(v, "denominator"):
        return v.numerator if v.denominator == 1 else float(v)
    try:
        return _value(float(v))
    except (TypeError, ValueError):
        return str(v)


def _dict(d) -> dict:
    return {str(k): _value(v) for k, v in d.items()}


def _cost(spec) -> dict:
    if hasattr(spec, "args"):
        return {"model": spec.model, "args": _dict(spec.args)}
    return {"model": spec.name, "args": _dict(spec.params.model_dump())}


def to_json(obj) -> Any:
    """A dict (or a list of dicts, for a list) describing ``obj``: an
    :class:`~moc.graph.SDFGraph`, an :class:`~moa.architecture.Architecture` or a
    :class:`~dsl.mappings.Mapping`."""
    if isinstance(obj, (list, tuple)):
        return [to_json(o) for o in obj]
    if hasattr(obj, "actors") and hasattr(obj, "channels"):
        return {
            "kind": "sdf", "name": obj.name, "params": _dict(obj.params),
            "actors": [{"name": a.name, "attrs": _dict(a.attrs)} for a in obj.actors.values()],
            "channels": [{"name": c.name, "src": c.src, "dst": c.dst, "prod": _value(c.prod),
                          "cons": _value(c.cons), "delay": _value(c.delay),
                          "size": _value(c.size), "attrs": _dict(c.attrs)}
                         for c in obj.channels.values()],
        }
    if hasattr(obj, "elements") and hasattr(obj, "links"):
        return {
            "kind": "moa", "name": obj.name, "params": _dict(obj.params),
            "lambda": _value(obj.lambda_), "aggregate": obj.aggregate,
            "types": [{"name": t.name, "costs": {m: _cost(s) for m, s in t.costs.items()},
                       "attrs": _dict(t.attrs), "local": t.local}
                      for t in obj.types.values()],
            "elements": [{"name": e.name, "kind": e.kind, "type": e.type_name,
                          "array": list(e.array) if e.array else None,
                          "costs": {m: _cost(s) for m, s in e.costs.items()},
                          "attrs": _dict(e.attrs), "local": e.local}
                         for e in obj.elements.values()],
            "links": [[a, b] for a, b in obj.links],
            "metrics": {name: str(m.expr)
                        for name, m in getattr(obj, "system_metrics", {}).items()},
            "units": dict(getattr(obj, "units", {})),
        }
    if hasattr(obj, "assignment"):
        return {"kind": "map", "name": obj.name, "assignment": dict(obj.assignment),
                "routes": {k: list(v) for k, v in obj.routes.items()}}
    raise TypeError(f"to_json: cannot describe a {type(obj).__name__}")
