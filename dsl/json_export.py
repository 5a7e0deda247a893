"""JSON-ready dictionaries of graphs, architectures and mappings, and the one JSON
convention of every document mapeval writes.

Numbers stay numbers (an exact fraction becomes an int when whole, else a float); the
non-finite ones, which strict JSON cannot hold, become the strings ``"inf"``, ``"-inf"``
and ``"nan"`` (which ``float()`` reads back), so that ``null`` keeps meaning "not
defined"; parametric values become the source text of their expression.

:func:`json_text` writes a document.  Its layout: an object has a member per line,
indented two spaces a level; an array of numbers, strings, ``true``, ``false`` and
``null`` is on one line; an array holding objects or arrays has an item per line, an
item on one line when it holds no object or array (a firing of a schedule).  The lines
of large arrays come from :mod:`json`'s C encoder in one call, which its ``indent``
(a pure-Python encoder) would take seconds over for a schedule of 10^5 firings."""
from __future__ import annotations

import json
import math
from fractions import Fraction

TYPE_CHECKING = False       # typing's constant, without importing typing at start-up
if TYPE_CHECKING:
    from typing import Any


def json_number(v: float) -> float | str:
    """``v``, or ``"inf"``/``"-inf"``/``"nan"`` where it is not finite."""
    if math.isfinite(v):
        return v
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def json_key(k) -> str:
    """The text of a key as JSON writes it (``true``, ``null``, a number by its
    ``repr``), a non-finite float as :func:`json_number` spells it, anything else by
    ``str``."""
    if isinstance(k, str):
        return k
    if isinstance(k, float):
        return float.__repr__(k) if math.isfinite(k) else json_number(k)
    if k is True or k is False or k is None:
        return json.dumps(k)
    return int.__repr__(k) if isinstance(k, int) else str(k)


def json_safe(obj) -> Any:
    """``obj`` with every non-finite float spelled as :func:`json_number` does, numpy
    scalars and arrays as Python numbers and lists, fractions as numbers, tuples as
    lists, keys as :func:`json_key` writes them."""
    if isinstance(obj, float):
        return json_number(obj)
    if isinstance(obj, dict):
        return {json_key(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if hasattr(obj, "tolist") and callable(obj.tolist):     # numpy scalars and arrays
        return json_safe(obj.tolist())
    if isinstance(obj, Fraction):
        return json_safe(_fraction(obj))
    return obj


def _fraction(v) -> int | float:
    """A rational number (a :class:`~fractions.Fraction`) as JSON holds it: an int when
    whole, else a float."""
    return v.numerator if v.denominator == 1 else float(v)


def _default(obj):
    """What :func:`json_safe` makes of what the C encoder does not know; a non-finite
    float it returns stops the encoder (``allow_nan=False``), which then takes
    :func:`json_safe`'s copy."""
    if hasattr(obj, "tolist") and callable(obj.tolist):
        return obj.tolist()
    if isinstance(obj, Fraction):
        return _fraction(obj)
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


# a document is a tree (made by to_dict methods): no check for circular references,
# a quarter of the encoder's time on a schedule's rows
_encode = json.JSONEncoder(allow_nan=False, default=_default, check_circular=False).encode


def _one_line(obj) -> str:
    """``obj`` on one line (``", "`` and ``": "`` between items) by the C encoder; where
    it meets a non-finite float or a key JSON has no form for, a container's items each
    so (only the parts that hold one are copied: a schedule's rows beside a buffer of
    ``inf`` are not), anything else as :func:`json_safe`'s copy."""
    try:
        return _encode(obj)
    except (ValueError, TypeError):
        if isinstance(obj, dict):
            # keys alike once written are one key, as in json_safe's copy
            items = {json_key(k): v for k, v in obj.items()}
            return "{" + ", ".join(_encode(k) + ": " + _one_line(v)
                                   for k, v in items.items()) + "}"
        if isinstance(obj, (list, tuple)):
            return "[" + ", ".join(map(_one_line, obj)) + "]"
        return _encode(json_safe(obj))


def _flat(obj) -> bool:
    """Whether the container ``obj`` holds no object or array."""
    values = obj.values() if isinstance(obj, dict) else obj
    return not any(isinstance(v, (dict, list, tuple)) for v in values)


def _rows(items: list, pad: str) -> str | None:
    """The items of a list of flat objects (or of flat arrays), one a line after ``pad``,
    from one call of the C encoder: where its one-line text holds no brace or bracket
    but the items' own and the outer ones, the items are the pieces between ``}, {``
    (``], [``).  None where it holds more (a nested container, or a brace in a string):
    the caller goes item by item."""
    text = _one_line(items)
    n = len(items)
    objects = isinstance(items[0], dict)
    braces, brackets = (n, 1) if objects else (0, n + 1)
    if text.count("{") != braces or text.count("}") != braces or \
            text.count("[") != brackets or text.count("]") != brackets:
        return None
    between = "}, {" if objects else "], ["
    return text[1:-1].replace(between, f"{between[0]},\n{pad}{between[-1]}")


def _write(obj, pad: str, out: list) -> None:
    if isinstance(obj, dict):
        if not obj:
            out.append("{}")
            return
        inner = pad + "  "
        out.append("{")
        first = True
        for k, v in obj.items():
            out.append(f"\n{inner}" if first else f",\n{inner}")
            first = False
            out.append(_one_line(json_key(k)) + ": ")
            _write(v, inner, out)
        out.append(f"\n{pad}}}")
    elif isinstance(obj, (list, tuple)):
        if _flat(obj):
            out.append(_one_line(obj))
            return
        inner = pad + "  "
        kind = type(obj[0])
        rows = _rows(obj, inner) if kind in (dict, list) and \
            set(map(type, obj)) == {kind} else None
        if rows is not None:
            out.append(f"[\n{inner}{rows}\n{pad}]")
            return
        out.append("[")
        for j, v in enumerate(obj):
            out.append(f"\n{inner}" if j == 0 else f",\n{inner}")
            if isinstance(v, (dict, list, tuple)) and _flat(v):
                out.append(_one_line(v))
            else:
                _write(v, inner, out)
        out.append(f"\n{pad}]")
    else:
        out.append(_one_line(obj))


def json_text(document, indent: bool = True) -> str:
    """``document`` as strict JSON text by the convention above; on one line (as
    ``json.dumps`` writes it) without ``indent``."""
    if not indent:
        return _one_line(document)
    out: list[str] = []
    _write(document, "", out)
    return "".join(out)


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
        return _fraction(v)
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


def _actor(actor) -> dict:
    """An actor's name and attributes, and its initialisation phases where it has
    some: their ``count`` and, per attribute and per channel it writes (``prod``) or
    reads (``cons``), one value per phase."""
    out = {"name": actor.name, "attrs": _dict(actor.attrs)}
    init = actor.initial_phases
    if init is not None:
        out["initial_phases"] = {"count": init.count, "attrs": _dict(init.attrs),
                                 "prod": _dict(init.prod), "cons": _dict(init.cons)}
    return out


def to_json(obj) -> Any:
    """A dict (or a list of dicts, for a list) describing ``obj``: an
    :class:`~moc.graph.SDFGraph`, an :class:`~moa.architecture.Architecture` or a
    :class:`~dsl.mappings.Mapping`."""
    if isinstance(obj, (list, tuple)):
        return [to_json(o) for o in obj]
    if hasattr(obj, "actors") and hasattr(obj, "channels"):
        return {
            "kind": "sdf", "name": obj.name, "params": _dict(obj.params),
            "actors": [_actor(a) for a in obj.actors.values()],
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
