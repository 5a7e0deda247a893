"""Interchange with SDF3's XML format (Stuijk et al.'s SDF For Free tool set).

Read: actors; ports and their rates (a channel's ``prod``/``cons`` are the rates of its
source and destination ports); channels with ``initialTokens`` (``delay``); token sizes
from ``sdfProperties/channelProperties/tokenSize@sz`` (``size``); and per processor
type the execution time ``actorProperties/processor@type/executionTime@time``, which
becomes the actor attribute ``exec_<type>``, while ``quanta`` is the execution time on
the default processor (``default="true"``, or the only one listed).  Other properties
(buffer sizes, state sizes, throughput constraints) are not part of the SDF model of
mapeval and are ignored.

Write: the reverse, for a graph whose values are numbers (a parametric graph is bound
to its parameter defaults first).  Attributes ``exec_<type>`` become processors;
without any, the actor gets one processor ``default`` whose time is ``quanta``.
"""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from dsl.errors import ParseError
from moc.graph import SDFGraph

EXEC_PREFIX = "exec_"


def _num(text: str, what: str, origin):
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ParseError(f"{what}: not a number: {text!r}", origin) from None
    if math.isfinite(value) and value == int(value) and re.fullmatch(r"\s*[+-]?\d+\s*", text):
        return int(value)
    return value


def _identifier(text: str) -> str:
    ident = re.sub(r"\W", "_", text)
    return ident if ident and not ident[0].isdigit() else "_" + ident


def read_sdf3(path) -> "SDFGraph":
    """The SDF graph of an SDF3 XML file."""
    path = str(path)
    origin = (path, None, None)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        line, col = exc.position
        raise ParseError(f"malformed XML: {exc.msg if hasattr(exc, 'msg') else exc}",
                         (path, line, col + 1)) from None
    except OSError as exc:
        raise ParseError(f"cannot read {path}: {exc.strerror}", origin) from None
    _strip_namespaces(root)
    app = root if root.tag == "applicationGraph" else root.find("applicationGraph")
    sdf = app.find("sdf") if app is not None else None
    if sdf is None:
        raise ParseError("not an SDF3 file: no applicationGraph/sdf element", origin)
    name = sdf.get("name") or (app.get("name") if app is not None else None) or \
        Path(path).name.split(".")[0]
    graph = SDFGraph(name, origin=origin)

    props = app.find("sdfProperties")
    exec_times: dict[str, dict[str, object]] = {}
    quanta: dict[str, object] = {}
    sizes: dict[str, object] = {}
    if props is not None:
        for ap in props.findall("actorProperties"):
            actor = ap.get("actor")
            processors = ap.findall("processor")
            for proc in processors:
                et = proc.find("executionTime")
                if et is None or et.get("time") is None:
                    continue
                ptype = proc.get("type") or "default"
                time = _num(et.get("time"), f"actor '{actor}', processor '{ptype}'", origin)
                exec_times.setdefault(actor, {})[EXEC_PREFIX + _identifier(ptype)] = time
                if proc.get("default", "").lower() == "true" or len(processors) == 1:
                    quanta.setdefault(actor, time)
        for cp in props.findall("channelProperties"):
            ts = cp.find("tokenSize")
            if ts is not None and ts.get("sz") is not None:
                sizes[cp.get("channel")] = _num(ts.get("sz"), f"channel '{cp.get('channel')}'",
                                                origin)

    rates: dict[tuple[str, str], tuple[str, object]] = {}
    for actor in sdf.findall("actor"):
        aname = actor.get("name")
        if aname is None:
            raise ParseError("an actor has no name", origin)
        for port in actor.findall("port"):
            rate = _num(port.get("rate", "1"), f"actor '{aname}', port '{port.get('name')}'",
                        origin)
            rates[(aname, port.get("name"))] = (port.get("type", ""), rate)
        attrs = {}
        if aname in quanta:
            attrs["quanta"] = quanta[aname]
        attrs.update(exec_times.get(aname, {}))
        graph.add_actor(aname, origin=origin, **attrs)

    for ch in sdf.findall("channel"):
        cname = ch.get("name")
        src, dst = ch.get("srcActor"), ch.get("dstActor")
        prod = _port_rate(rates, src, ch.get("srcPort"), cname, origin)
        cons = _port_rate(rates, dst, ch.get("dstPort"), cname, origin)
        delay = _num(ch.get("initialTokens", "0"), f"channel '{cname}'", origin)
        fields = {"prod": prod, "cons": cons, "delay": delay}
        if cname in sizes:
            fields["size"] = sizes[cname]
        graph.add_channel(src, dst, cname, origin=origin, **fields)
    return graph


def _port_rate(rates, actor, port, channel, origin):
    entry = rates.get((actor, port))
    if entry is None:
        raise ParseError(f"channel '{channel}': actor '{actor}' has no port '{port}'", origin)
    return entry[1]


def _strip_namespaces(root):
    for el in root.iter():
        if isinstance(el.tag, str) and "}" in el.tag:
            el.tag = el.tag.split("}", 1)[1]


def _text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def write_sdf3(graph: "SDFGraph", path) -> None:
    """Write ``graph`` as an SDF3 XML file (rates, initial tokens, token sizes and
    per-processor execution times)."""
    bound = graph.bind() if _parametric(graph) else graph
    root = ET.Element("sdf3", {"type": "sdf", "version": "1.0"})
    app = ET.SubElement(root, "applicationGraph", {"name": bound.name})
    sdf = ET.SubElement(app, "sdf", {"name": bound.name, "type": _identifier(bound.name)})
    ports: dict[str, list[tuple[str, str, object]]] = {a: [] for a in bound.actors}
    channel_ports = {}
    for i, ch in enumerate(bound.channels.values()):
        out_port, in_port = f"out{i}", f"in{i}"
        ports[ch.src].append((out_port, "out", ch.prod))
        ports[ch.dst].append((in_port, "in", ch.cons))
        channel_ports[ch.name] = (out_port, in_port)
    for actor in bound.actors.values():
        el = ET.SubElement(sdf, "actor", {"name": actor.name, "type": _identifier(actor.name)})
        for pname, ptype, rate in ports[actor.name]:
            ET.SubElement(el, "port", {"name": pname, "type": ptype, "rate": _text(rate)})
    for ch in bound.channels.values():
        out_port, in_port = channel_ports[ch.name]
        attrs = {"name": ch.name, "srcActor": ch.src, "srcPort": out_port,
                 "dstActor": ch.dst, "dstPort": in_port}
        if ch.delay:
            attrs["initialTokens"] = _text(ch.delay)
        ET.SubElement(sdf, "channel", attrs)
    props = ET.SubElement(app, "sdfProperties")
    for actor in bound.actors.values():
        procs = [(k[len(EXEC_PREFIX):], v) for k, v in actor.attrs.items()
                 if k.startswith(EXEC_PREFIX)]
        if not procs:
            if "quanta" not in actor.attrs:
                continue
            procs = [("default", actor.quanta)]
        ap = ET.SubElement(props, "actorProperties", {"actor": actor.name})
        default_done = False
        for ptype, time in procs:
            attrs = {"type": ptype}
            if not default_done and time == actor.quanta:
                attrs["default"] = "true"
                default_done = True
            proc = ET.SubElement(ap, "processor", attrs)
            ET.SubElement(proc, "executionTime", {"time": _text(time)})
    for ch in bound.channels.values():
        cp = ET.SubElement(props, "channelProperties", {"channel": ch.name})
        ET.SubElement(cp, "tokenSize", {"sz": _text(ch.size)})
    ET.indent(root, space="  ")
    data = ET.tostring(root, encoding="unicode")
    Path(path).write_text('<?xml version="1.0"?>\n' + data + "\n", encoding="utf-8")


def _parametric(graph) -> bool:
    values = list(graph.params.values())
    for a in graph.actors.values():
        values += a.attrs.values()
    for ch in graph.channels.values():
        values += [ch.prod, ch.cons, ch.delay, ch.size, *ch.attrs.values()]
    return any(hasattr(v, "evaluate") for v in values)
