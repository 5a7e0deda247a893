"""Graphviz DOT text of SDF graphs (actors and rated channels), architectures (PEs as
boxes, CNs as ellipses, links as undirected edges, ``local`` stores dashed, cost models
in the labels) and mappings (actors grouped by PE, channels drawn over their CNs, the
bottleneck highlighted).  Render with ``dot -Tsvg FILE.dot -o FILE.svg``."""
from __future__ import annotations

from typing import Mapping as MappingT

from dsl.expression import format_value
from dsl.printer import initialised, is_default
from moa.architecture import DEFAULT_AGGREGATE, DEFAULT_LAMBDA, cost_text
from moc.graph import CHANNEL_DEFAULTS, default_channel_name

#: the highlight of a bottleneck element (Okabe-Ito vermillion: tells apart from black
#: and from the greys for colour-blind readers too)
HIGHLIGHT = "#D55E00"


def _q(text) -> str:
    # Backslashes and quotes are escaped; a newline becomes DOT's own "\n" line break.
    escaped = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + escaped + '"'


def _v(value) -> str:
    try:
        return format_value(value) if not isinstance(value, str) else value
    except ValueError:
        return str(value)


def to_dot(obj) -> str:
    """DOT text of an :class:`~moc.graph.SDFGraph` or an
    :class:`~moa.architecture.Architecture`."""
    if hasattr(obj, "actors") and hasattr(obj, "channels"):
        return _sdf_dot(obj)
    if hasattr(obj, "elements") and hasattr(obj, "links"):
        return _moa_dot(obj)
    raise TypeError(f"to_dot: expected an SDF graph or an architecture, got {type(obj).__name__}")


def _channel_label(ch, loop: bool, actors) -> tuple[list[str], str]:
    """The rate attributes and the label text of channel ``ch``.  Rates of 1 are not
    written; on a self-loop the rates join the label, which Graphviz sets beside the
    loop, since head and tail labels of a loop sit on its arrowheads.  A rate with
    initialisation phases is written as in ``.sdf`` (``[1; 3, 1]``)."""
    label = [ch.name] if ch.name != default_channel_name(ch.src, ch.dst) else []
    attrs = []
    rates = []
    for what, end, v in (("prod", ch.src, ch.prod), ("cons", ch.dst, ch.cons)):
        init = actors[end].initial_phases
        if init is not None:
            rates.append((what, initialised(init.rates(what, ch.name), v)))
        elif not is_default(v, CHANNEL_DEFAULTS[what]):
            rates.append((what, _v(v)))
    if loop:
        label += [f"{what}={text}" for what, text in rates]
    else:
        ends = {"prod": "taillabel", "cons": "headlabel"}
        attrs += [f"{ends[what]}={_q(text)}" for what, text in rates]
    if not is_default(ch.delay, CHANNEL_DEFAULTS["delay"]):
        label.append(f"delay={_v(ch.delay)}")
    return attrs, "\n".join(label)


def _sdf_dot(graph) -> str:
    lines = [f"digraph {_q(graph.name)} {{", "    rankdir=LR;", "    node [shape=circle];"]
    for actor in graph.actors.values():
        label = actor.name
        if "quanta" in actor.attrs:
            quanta, init = actor.attrs["quanta"], actor.initial_phases
            label += "\nquanta=" + (initialised(init.attrs["quanta"], quanta)
                                    if init is not None and "quanta" in init.attrs
                                    else _v(quanta))
        lines.append(f"    {_q(actor.name)} [label={_q(label)}];")
    for ch in graph.channels.values():
        attrs, label = _channel_label(ch, ch.src == ch.dst, graph.actors)
        if label:
            attrs.append(f"label={_q(label)}")
        tail = f" [{', '.join(attrs)}]" if attrs else ""
        lines.append(f"    {_q(ch.src)} -> {_q(ch.dst)}{tail};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _element_label(e) -> str:
    """Name, type, attributes and one ``metric: model(args)`` line per cost model."""
    lines = [e.name + (f" : {e.type_name}" if e.type_name else "")]
    lines += [f"{k}={_v(v)}" for k, v in e.attrs.items()]
    lines += [f"{m}: {_cost(spec)}" for m, spec in e.costs.items()]
    return "\n".join(lines)


def _cost(spec) -> str:
    text = cost_text(spec)
    return text.replace("()", "") if text.endswith("()") else text


def _moa_dot(arch) -> str:
    lines = [f"graph {_q(arch.name)} {{"]
    facts = [f"{k} = {_v(v)}" for k, v in arch.params.items()]
    if not is_default(arch.lambda_, DEFAULT_LAMBDA):
        facts.append(f"lambda = {_v(arch.lambda_)}")
    if arch.aggregate != DEFAULT_AGGREGATE:
        facts.append(f"aggregate = {arch.aggregate}")
    facts += [str(m) for m in getattr(arch, "system_metrics", {}).values()]
    lines.append(f"    label={_q(chr(10).join([arch.name, *facts]))}; labelloc=t;")
    for e in arch.elements.values():
        shape = "box" if e.kind == "pe" else "ellipse"
        lines.append(f"    {_q(e.name)} [shape={shape}, label={_q(_element_label(e))}];")
    # a PE's local store: its link labelled "local", or a dashed edge without a link
    local = {(e.name, e.local) for e in arch.elements.values() if e.local is not None}
    for a, b in arch.links:
        mark = (a, b) in local or (b, a) in local
        local -= {(a, b), (b, a)}
        lines.append(f"    {_q(a)} -- {_q(b)}" + (' [label="local"];' if mark else ";"))
    for pe, cn in sorted(local):
        lines.append(f'    {_q(pe)} -- {_q(cn)} [style=dashed, label="local", constraint=false];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def mapping_dot(app, arch, mapping, routes: MappingT[str, tuple[str, ...]],
                values: MappingT[str, float] | None = None, bottleneck: str | None = None,
                caption: str = "", unit: str | None = None) -> str:
    """DOT text of ``mapping`` of ``app`` onto ``arch``: one cluster per PE holding its
    actors (idle PEs as dashed boxes), the CNs as ellipses, and each channel drawn from
    its source actor over the CNs of ``routes[channel]`` to its sink actor (a named
    channel labelled on its first segment).  ``values`` (element → value) join the
    element labels; ``bottleneck`` is drawn in :data:`HIGHLIGHT` with a thick border;
    ``caption`` follows the title; ``unit`` follows every value."""
    values = values or {}
    suffix = f" {unit}" if unit else ""

    def label(name):
        value = values.get(name)
        return name if value is None else f"{name}\n{float(value):.6g}{suffix}"

    def marked(name):
        return [f"color={_q(HIGHLIGHT)}", f"fontcolor={_q(HIGHLIGHT)}", "penwidth=3"] \
            if name == bottleneck else []

    on_pe: dict[str, list[str]] = {pe: [] for pe in arch.pes}
    for actor in app.actors:
        on_pe.setdefault(mapping.assignment[actor], []).append(actor)
    title = f"{app.name} on {arch.name}: mapping {mapping.name}"
    lines = [f"digraph {_q(mapping.name)} {{", "    rankdir=LR; compound=true;",
             f"    label={_q(title + (chr(10) + caption if caption else ''))}; labelloc=t;",
             "    node [shape=circle];"]
    for i, (pe, actors) in enumerate(on_pe.items()):
        if not actors:
            attrs = ["shape=box", "style=dashed", f"label={_q(label(pe) + chr(10) + '(idle)')}"]
            lines.append(f"    {_q('pe:' + pe)} [{', '.join(attrs + marked(pe))}];")
            continue
        lines.append(f"    subgraph {_q(f'cluster_{i}')} {{")
        lines.append(f"        label={_q(label(pe))}; style=rounded;"
                     + "".join(f" {a};" for a in marked(pe)))
        lines += [f"        {_q('actor:' + a)} [label={_q(a)}];" for a in actors]
        lines.append("    }")
    for cn in arch.cns:
        attrs = ["shape=ellipse", f"label={_q(label(cn))}"]
        if not any(cn in r for r in routes.values()) and cn != bottleneck:
            attrs += ["color=gray60", "fontcolor=gray40"]
        lines.append(f"    {_q('cn:' + cn)} [{', '.join(attrs + marked(cn))}];")
    for ch in app.channels.values():
        hops = [f"actor:{ch.src}", *(f"cn:{c}" for c in routes.get(ch.name, ())),
                f"actor:{ch.dst}"]
        for k, (a, b) in enumerate(zip(hops, hops[1:])):
            named = ch.name != default_channel_name(ch.src, ch.dst)
            attrs = [f"label={_q(ch.name)}"] if k == 0 and named else []
            if b != hops[-1]:
                attrs.append("arrowhead=none")
            tail = f" [{', '.join(attrs)}]" if attrs else ""
            lines.append(f"    {_q(a)} -> {_q(b)}{tail};")
    lines.append("}")
    return "\n".join(lines) + "\n"
