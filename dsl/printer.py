"""Printing graphs, architectures and mappings back to the text formats.

``parse(format(x))`` gives objects equal to ``x``: names, parameters, attributes,
channel fields, element costs, arrays, links and routes survive; numbers are written
``repr``-exact and parametric values as the source text of their expression.
"""
from __future__ import annotations

import re
from typing import Iterable

from dsl.expression import CONSTANTS, format_number, format_value, quote
from dsl.names import MAP_KEYWORDS, MOA_KEYWORDS, NAME, SDF_KEYWORDS, is_identifier
from moa.architecture import DEFAULT_AGGREGATE, DEFAULT_LAMBDA
from moa.names import member_name
from moc.graph import CHANNEL_DEFAULTS, default_channel_name

_MEMBER = re.compile(rf"({NAME})\[(\d+)\]\Z")

INDENT = "    "


def _as_list(objs) -> list:
    if objs is None:
        return []
    if isinstance(objs, (list, tuple)):
        return list(objs)
    return [objs]


def format_name(name: str, keywords: Iterable[str] = ()) -> str:
    """``name`` as written in a file: bare when it is an identifier, else quoted."""
    return name if is_identifier(name, keywords) else quote(name)


def _key(key: str) -> str:
    if not is_identifier(key):
        raise ValueError(f"attribute name '{key}' is not an identifier and cannot be written")
    return key


def _attr_list(items: list[tuple[str, str]]) -> str:
    if not items:
        return ""
    return " [" + ", ".join(f"{_key(k)} = {v}" for k, v in items) + "]"


def is_default(value, default) -> bool:
    """``value`` is the plain number ``default``: an expression (anything with
    ``evaluate``: an :class:`~dsl.expression.Expression`, per-phase values) or text
    never is, so a file writes it."""
    return not isinstance(value, str) and not hasattr(value, "evaluate") and \
        value == default


# ---------------------------------------------------------------------------------------
# .sdf


def format_sdf(graphs) -> str:
    """The ``.sdf`` text of one graph or a list of graphs."""
    return "\n".join(_format_graph(g) for g in _as_list(graphs))


def _format_graph(graph) -> str:
    kw = SDF_KEYWORDS
    lines = [f"sdf {format_name(graph.name, kw)} {{"]
    for name, value in graph.params.items():
        lines.append(f"{INDENT}param {_key(name)} = {format_value(value)}")
    for actor in graph.actors.values():
        attrs = [(k, format_value(v)) for k, v in actor.attrs.items()]
        init = actor.initial_phases
        if init is not None:
            missing = set(init.attrs) - set(actor.attrs)
            if missing:
                raise ValueError(f"actor '{actor.name}': its initialisation phases give "
                                 f"'{min(missing)}', which it has no periodic value of, "
                                 "and cannot be written as .sdf")
            attrs = [(k, initialised(init.attrs[k], actor.attrs[k]) if k in init.attrs
                      else text) for k, text in attrs]
        lines.append(f"{INDENT}actor {format_name(actor.name, kw)}{_attr_list(attrs)}")
    for ch in graph.channels.values():
        items = []
        for field, default in CHANNEL_DEFAULTS.items():
            value = getattr(ch, field)
            init = graph.actors[ch.src if field == "prod" else ch.dst].initial_phases \
                if field in ("prod", "cons") else None
            if init is not None:
                items.append((field, initialised(init.rates(field, ch.name), value)))
            elif not is_default(value, default):
                items.append((field, format_value(value)))
        items += [(k, format_value(v)) for k, v in ch.attrs.items()]
        ends = f"{format_name(ch.src, kw)} -> {format_name(ch.dst, kw)}"
        if ch.name == default_channel_name(ch.src, ch.dst):
            lines.append(f"{INDENT}{ends}{_attr_list(items)}")
        else:
            lines.append(f"{INDENT}channel {format_name(ch.name, kw)} : {ends}"
                         f"{_attr_list(items)}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def initialised(initial, value) -> str:
    """``[a, ...; b, ...]``: the values of the initialisation phases, then ``value``
    (per phase or not) of the periodic ones."""
    periodic = format_value(value)
    if isinstance(value, tuple):
        periodic = periodic[1:-1]
    return f"[{', '.join(map(format_value, initial))}; {periodic}]"


# ---------------------------------------------------------------------------------------
# .moa


def format_moa(archs) -> str:
    """The ``.moa`` text of one architecture or a list of them."""
    return "\n".join(_format_arch(a) for a in _as_list(archs))


def _arg_text(value, params) -> str:
    if isinstance(value, str):
        if is_identifier(value) and value not in params and value not in CONSTANTS:
            return value  # a bare word: latency = independent
        return quote(value)
    return format_value(value)


def _cost_text(spec, params) -> str:
    """``model(k = v, ...)`` of a CostSpec or of an instantiated cost model."""
    if hasattr(spec, "args"):
        name, args = spec.model, dict(spec.args)
    else:  # a bound CostModel (e.g. after fitting): its validated parameters
        name, args = spec.name, spec.params.model_dump(exclude_none=True)  # None: unset
    inner = ", ".join(f"{_key(k)} = {_arg_text(v, params)}" for k, v in args.items())
    return f"{name}({inner})"


def _element_items(costs, local, attrs, params) -> list[tuple[str, str]]:
    items = [(metric, _cost_text(spec, params)) for metric, spec in costs.items()]
    if local is not None:
        items.append(("local", format_name(local, ())))
    items += [(k, format_value(v)) for k, v in attrs.items()]
    return items


def _own(element):
    """The costs, local and attributes written on the element itself."""
    if element.type_name is None:
        return element.costs, element.local, element.attrs
    return element.own_costs, element.own_local, element.own_attrs


def _ref(name: str) -> str:
    if is_identifier(name, MOA_KEYWORDS):
        return name
    m = _MEMBER.match(name)
    if m and m.group(1) not in MOA_KEYWORDS:
        return name
    return quote(name)


def _unit(units, name: str) -> str:
    """`` [unit = "..."]`` when ``name`` has a declared unit."""
    return f" [unit = {quote(units[name])}]" if name in units else ""


def _format_arch(arch) -> str:
    kw = MOA_KEYWORDS
    params = arch.params
    lines = [f"moa {format_name(arch.name, kw)} {{"]
    units = getattr(arch, "units", {})
    for name, value in params.items():
        lines.append(f"{INDENT}param {_key(name)} = {format_value(value)}{_unit(units, name)}")
    if not is_default(arch.lambda_, DEFAULT_LAMBDA):
        lines.append(f"{INDENT}lambda = {format_value(arch.lambda_)}")
    if arch.aggregate != DEFAULT_AGGREGATE:
        lines.append(f"{INDENT}aggregate = {arch.aggregate}")
    system = getattr(arch, "system_metrics", {})
    for name in units:
        if name not in params and name not in system:       # a metric's unit alone
            lines.append(f"{INDENT}metric {_key(name)}{_unit(units, name)}")
    for m in system.values():
        lines.append(f"{INDENT}metric {_key(m.name)} = {m.expr}{_unit(units, m.name)}")
    for t in arch.types.values():
        items = _element_items(t.costs, t.local, t.attrs, params)
        lines.append(f"{INDENT}type {format_name(t.name, kw)}{_attr_list(items)}")
    elements = list(arch.elements.values())
    i = 0
    while i < len(elements):
        e = elements[i]
        costs, local, attrs = _own(e)
        items = _element_items(costs, local, attrs, params)
        typ = f" : {format_name(e.type_name, kw)}" if e.type_name is not None else ""
        if e.array is not None and e.name == member_name(*e.array):
            base, lo = e.array
            j = i + 1
            while j < len(elements) and _same_array_member(elements[j], e, lo + (j - i)):
                j += 1
            hi = lo + (j - i) - 1
            lines.append(f"{INDENT}{e.kind} {format_name(base, kw)}[{lo}..{hi}]{typ}"
                         f"{_attr_list(items)}")
            i = j
            continue
        lines.append(f"{INDENT}{e.kind} {format_name(e.name, kw)}{typ}{_attr_list(items)}")
        i += 1
    for a, b in _compress_links(arch):
        lines.append(f"{INDENT}{a} -- {b}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _same_array_member(e, first, index) -> bool:
    return (e.array == (first.array[0], index) and e.name == member_name(first.array[0], index)
            and e.kind == first.kind and e.type_name == first.type_name
            and _own(e) == _own(first))


def _compress_links(arch) -> list[tuple[str, str]]:
    """The links as printed: runs that are the expansion of ``X[*]`` are folded back."""
    arrays = arch.arrays()
    links = list(arch.links)
    out = []
    i = 0

    def members_of(name):
        e = arch.elements.get(name)
        if e is None or e.array is None:
            return None
        members = arrays.get(e.array[0])
        return members if members and members[0] == name else None

    while i < len(links):
        a, b = links[i]
        ma, mb = members_of(a), members_of(b)
        if ma and mb:
            run = [(x, y) for x in ma for y in mb]
            if links[i:i + len(run)] == run:
                out.append((f"{_ref_base(a)}[*]", f"{_ref_base(b)}[*]"))
                i += len(run)
                continue
        if ma:
            run = [(x, b) for x in ma]
            if links[i:i + len(run)] == run:
                out.append((f"{_ref_base(a)}[*]", _ref(b)))
                i += len(run)
                continue
        if mb:
            run = [(a, y) for y in mb]
            if links[i:i + len(run)] == run:
                out.append((_ref(a), f"{_ref_base(b)}[*]"))
                i += len(run)
                continue
        out.append((_ref(a), _ref(b)))
        i += 1
    return out


def _ref_base(member: str) -> str:
    base = member.rsplit("[", 1)[0]
    return format_name(base, MOA_KEYWORDS)


# ---------------------------------------------------------------------------------------
# .map


def format_map(mappings) -> str:
    """The ``.map`` text of one mapping or a list of them."""
    return "\n".join(_format_mapping(m) for m in _as_list(mappings))


def _pe_ref(name: str) -> str:
    if is_identifier(name) or _MEMBER.match(name):
        return name
    return quote(name)


def _channel_ref(name: str) -> str:
    if is_identifier(name, MAP_KEYWORDS):
        return name
    src, sep, dst = name.partition("->")
    if sep and is_identifier(src, MAP_KEYWORDS) and is_identifier(dst):
        return f"{src} -> {dst}"
    return quote(name)


def _format_mapping(m) -> str:
    kw = MAP_KEYWORDS
    lines = [f"mapping {format_name(m.name, kw)} {{"]
    for actor, pe in m.assignment.items():
        lines.append(f"{INDENT}{format_name(actor, kw)} -> {_pe_ref(pe)}")
    for channel, via in m.routes.items():
        lines.append(f"{INDENT}channel {_channel_ref(channel)} via "
                     f"{', '.join(_pe_ref(cn) for cn in via)}")
    lines.append("}")
    return "\n".join(lines) + "\n"


__all__ = ["format_sdf", "format_moa", "format_map", "format_name", "format_number",
           "format_value"]
