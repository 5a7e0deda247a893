"""Graphviz DOT text of SDF graphs (actors and rated channels) and architectures (PEs as
boxes, CNs as ellipses, links as undirected edges)."""
from __future__ import annotations

from dsl.expression import format_value


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


def _sdf_dot(graph) -> str:
    lines = [f"digraph {_q(graph.name)} {{", "    rankdir=LR;", "    node [shape=circle];"]
    for actor in graph.actors.values():
        label = actor.name
        if "quanta" in actor.attrs:
            label += f"\nquanta={_v(actor.attrs['quanta'])}"
        lines.append(f"    {_q(actor.name)} [label={_q(label)}];")
    for ch in graph.channels.values():
        attrs = [f"taillabel={_q(_v(ch.prod))}", f"headlabel={_q(_v(ch.cons))}"]
        label = ch.name if ch.name != f"{ch.src}->{ch.dst}" else ""
        if not (not hasattr(ch.delay, "evaluate") and ch.delay == 0):
            label = (label + "\n" if label else "") + f"delay={_v(ch.delay)}"
        if label:
            attrs.append(f"label={_q(label)}")
        lines.append(f"    {_q(ch.src)} -> {_q(ch.dst)} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _moa_dot(arch) -> str:
    lines = [f"graph {_q(arch.name)} {{"]
    for e in arch.elements.values():
        shape = "box" if e.kind == "pe" else "ellipse"
        models = ", ".join(f"{m}={getattr(spec, 'model', getattr(spec, 'name', '?'))}"
                           for m, spec in e.costs.items())
        label = e.name + (f"\n{models}" if models else "")
        lines.append(f"    {_q(e.name)} [shape={shape}, label={_q(label)}];")
    for a, b in arch.links:
        lines.append(f"    {_q(a)} -- {_q(b)};")
    lines.append("}")
    return "\n".join(lines) + "\n"
