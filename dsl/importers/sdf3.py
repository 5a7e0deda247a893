"""Interchange with SDF3's XML format (Stuijk et al.'s SDF For Free tool set).

Read: actors; ports and their rates (a channel's ``prod``/``cons`` are the rates of its
source and destination ports); channels with ``initialTokens`` (``delay``); token sizes
from ``sdfProperties/channelProperties/tokenSize@sz`` (``size``); and an actor's
processors ``actorProperties/processor@type``: each execution time
``processor/executionTime@time`` becomes the actor attribute ``exec_<type>``, the list
of processor types its ``allowed`` constraint (type names of the MoA), and the time on
SDF3's own default processor both ``exec`` and ``quanta``.  As SDF3 does, the default
is the *last* processor marked ``default="true"`` (or the only one listed), and an actor
without one, or whose only processor is ``default`` at time 0 (what export writes for an
actor without a time), has ``exec = 0`` (SDF3's time for it; no ``quanta``).  A lone
processor of type ``default`` (what export writes for an actor without per-type
times) constrains nothing.  ``processors="ignore"`` drops the types (no ``allowed``, no
``exec_<type>``: the graph maps onto any architecture), and a renaming maps them onto
the names of a ``.moa``.  Kiter's initialisation phases (``rate="1;3,1"``, ``time=
"2;3,4"``: the values before ``;`` are phases fired once, in order, before the periodic
ones) become the actor's :class:`~moc.phases.InitialPhases`; every port of such an
actor and every execution time it has must give the same number of them.  Other
properties (buffer sizes, state sizes, throughput constraints) are not part of the SDF
model of mapeval and are ignored.

Errors name the file, line and column of the offending element.  SDF3's own
``throughput`` analysis reads nothing else: it has no auto-concurrency setting (firings
of an actor overlap unless a self-loop channel limits them) and ignores buffer sizes.
Unlike SDF3, the only processor of an actor is its default even when not marked (SDF3
would take time 0), and ``default`` must be ``"true"`` (SDF3 accepts any value).

Write: the reverse, for a graph whose values are numbers (a parametric graph is bound
to its parameter defaults first), as XML that SDF3's schema ``sdf3-sdf.xsd`` accepts.
Attributes ``exec_<type>`` become processors, then the names of ``allowed`` that are
not among them (processors without an execution time); the default is a processor
whose time is ``exec`` (else ``quanta``).  Without any, the actor gets one processor
``default`` whose time is ``exec`` or ``quanta``, 0 when it has neither: the time is
always stated (SDF3 reads a missing one as 0, Kiter fails on it), and reads back as
``exec = 0`` alone (:func:`_untimed`).  Numbers are written as ``xs:decimal`` (no exponent); a value that is
not finite is an error.  SDF3 reads times as integers (it truncates ``1.5`` to 1).
Initialisation phases are written in Kiter's ``a;b`` syntax (a ``csdf`` graph).
"""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from decimal import Decimal
from pathlib import Path
from xml.parsers import expat

from dsl.errors import ParseError
from dsl.files import check_readable, read_bytes
from dsl.names import identifier, is_identifier
from moc.graph import SDFGraph
from moc.initial_phases import has_initial_phases
from moc.phases import InitialCounter, InitialPhases, PhaseCounter, Phases, cyclo_static, \
    phase_counts, phase_value

EXEC_PREFIX = "exec_"
#: the attribute of the time on SDF3's default processor
EXEC = "exec"
#: the processor type export writes for an actor without per-type times
DEFAULT_PROCESSOR = "default"


#: digits alone, short enough that ``float`` holds them exactly (below 2**53)
_SHORT = 15
_INTEGER = re.compile(r"\s*[+-]?\d+\s*")


def _num(text: str, what: str, origin):
    """The number ``text``: an int where it is written as one (read through a float, so
    rounded beyond 2**53), else a float."""
    if text.__class__ is str and len(text) <= _SHORT and text.isdigit() and text.isascii():
        return int(text)                # the common case, at once
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ParseError(f"{what}: not a number: {text!r}", origin) from None
    if not math.isfinite(value):
        raise ParseError(f"{what}: not a finite number: {text!r}", origin)
    if value == int(value) and _INTEGER.fullmatch(text):
        return int(value)
    return value


def _phases(text: str, what: str, origin):
    """A rate or time, or per phase of a cyclo-static actor a list of them: SDF3 writes
    ``3,1`` and ``18*32`` for 18 phases of 32."""
    if text is None or "," not in text and "*" not in text:
        return _num(text, what, origin)
    items = text.split(",")
    if text.isascii() and text.replace(",", "").isdigit() and \
            0 < min(map(len, items)) and max(map(len, items)) <= _SHORT:
        return Phases(map(int, items))  # plain integers, at once
    values = []
    for item in items:
        count, star, value = item.partition("*")
        if not star:
            count, value = "1", item
        n = _num(count, f"{what}: a repeat count", origin)
        if not isinstance(n, int) or n < 1:
            raise ParseError(f"{what}: a repeat count must be a positive integer, got "
                             f"{count.strip()!r}", origin)
        values += [_num(value, what, origin)] * n
    return Phases(values)


def _type_name(text: str) -> str:
    """An SDF3 type (a processor's; on export an actor's or graph's) as a name.  A
    keyword stays one: a processor type is only read back as the end of an attribute
    ``exec_<type>`` or a word of ``allowed``, never as a bare name where a keyword is
    read, so ``exec_pe`` goes to SDF3 and back unchanged."""
    return identifier(text, keywords=())


def read_sdf3(path, processors="keep") -> "SDFGraph":
    """The SDF graph of an SDF3 XML file; errors carry ``file:line:col``.

    ``processors`` says what becomes of the actors' processor types: ``"keep"`` (each
    time an attribute ``exec_<type>``, the types the actor's ``allowed``),
    ``"ignore"`` (neither: only the default processor's time, as ``exec`` and
    ``quanta``; the actor may go anywhere), or a dict renaming types (``{"proc_0":
    "A15"}``; types it does not name are kept)."""
    path = str(path)
    rename = _processor_policy(processors)
    root, where = parse_xml(path, text=False)     # SDF3 holds all in attributes
    strip_namespaces(root)
    app = root if root.tag == "applicationGraph" else root.find("applicationGraph")
    sdf = None if app is None else app.find("sdf") if app.find("sdf") is not None else \
        app.find("csdf")
    if sdf is None:
        raise ParseError("not an SDF3 file: no applicationGraph/sdf (or csdf) element",
                         where(root))
    name = sdf.get("name") or (app.get("name") if app is not None else None) or \
        Path(path).name.split(".")[0]
    graph = SDFGraph(name, origin=where(sdf))

    props = app.find("sdfProperties")
    if props is None:
        props = app.find("csdfProperties")
    exec_times: dict[str, dict[str, object]] = {}
    defaults: dict[str, object] = {}
    initial = _Initial()
    processor_types: dict[str, list[str]] = {}
    sizes: dict[str, object] = {}
    read: dict[str, object] = {}    # rates and times by their text: most repeat
    # where each time was written, to name a disagreeing number of phases in the
    # file's own terms (an element, not the attribute it becomes)
    told: dict[tuple[str, str], tuple[str, tuple]] = {}
    if props is not None:
        for ap in props.findall("actorProperties"):
            actor = ap.get("actor")
            processors = ap.findall("processor")
            types = processor_types.setdefault(actor, [])
            if _untimed(processors):
                continue
            for proc in processors:
                ptype = _type_name(proc.get("type") or DEFAULT_PROCESSOR)
                ptype = rename.get(ptype, ptype) if rename is not None else ptype
                if ptype not in types:
                    types.append(ptype)
                et = proc.find("executionTime")
                if et is None or et.get("time") is None:
                    continue
                text = et.get("time")
                time = read.get(text)
                telling = f"execution time '{text}' of processor type '{ptype}' of " \
                    f"actor '{actor}'"
                if time is None:
                    what = f"actor '{actor}', processor '{ptype}'"
                    first, time = initial.read(actor, text, what, telling, where(et), False)
                    if first is None:
                        read[text] = time
                    for values in (time if isinstance(time, Phases) else (time,),
                                   first or ()):
                        if min(values, default=0) < 0:
                            raise ParseError(f"{what}: an execution time must be "
                                             f"non-negative, got {text!r}", where(et))
                    if first is not None:
                        initial.values[(actor, EXEC_PREFIX + ptype)] = first
                else:
                    initial.see(actor, 0, telling, where(et))
                exec_times.setdefault(actor, {})[EXEC_PREFIX + ptype] = time
                told[(actor, EXEC_PREFIX + ptype)] = (telling, where(et))
                # SDF3 keeps the last processor marked default
                if proc.get("default", "").lower() == "true" or len(processors) == 1:
                    defaults[actor] = time
                    told[(actor, EXEC)] = told[(actor, EXEC_PREFIX + ptype)]
                    initial.default[actor] = EXEC_PREFIX + ptype
        for cp in props.findall("channelProperties"):
            ts = cp.find("tokenSize")
            if ts is not None and ts.get("sz") is not None:
                sizes[cp.get("channel")] = _num(ts.get("sz"), f"channel '{cp.get('channel')}'",
                                                where(ts))

    rates: dict[tuple[str, str], object] = {}
    phases = PhaseCounter()
    for actor in sdf.findall("actor"):
        aname = actor.get("name")
        if aname is None:
            raise ParseError("an actor has no name", where(actor))
        for port in actor.findall("port"):
            attrib = port.attrib
            text = attrib.get("rate", "1")
            rate = read.get(text)
            telling = f"rate '{text}' of port '{attrib.get('name')}' of actor '{aname}'"
            if rate is None:
                first, rate = initial.read(
                    aname, text, f"actor '{aname}', port '{attrib.get('name')}'", telling,
                    where(port), True)
                if first is None:
                    read[text] = rate
                else:
                    initial.values[(aname, attrib.get("name"))] = first
            else:
                initial.see(aname, 0, telling, where(port))
            rates[(aname, attrib.get("name"))] = rate
            phases.see(aname, rate, telling, where(port))
        # SDF3 times an actor without a default processor 0 (TimedSDFactor)
        attrs = {EXEC: 0} if aname not in defaults else \
            {"quanta": defaults[aname], EXEC: defaults[aname]}
        types = processor_types.get(aname, []) if rename is not None else []
        if rename is not None:
            attrs.update(exec_times.get(aname, {}))
        if types and types != [DEFAULT_PROCESSOR]:
            attrs["allowed"] = " ".join(types)
        for key, value in attrs.items():
            if (aname, key) in told:
                phases.see(aname, value, *told[(aname, key)])
        graph.add_actor(aname, origin=where(actor),
                        initial_phases=initial.phases(aname, attrs, sdf), **attrs)

    tokens: dict[str, object] = {}     # initial tokens by their text
    for ch in sdf.findall("channel"):
        attrib = ch.attrib
        cname, origin = attrib.get("name"), where(ch)
        src, src_port = attrib.get("srcActor"), attrib.get("srcPort")
        dst, dst_port = attrib.get("dstActor"), attrib.get("dstPort")
        if src is None or src_port is None or dst is None or dst_port is None:
            for end in ("srcActor", "srcPort", "dstActor", "dstPort"):
                if attrib.get(end) is None:
                    raise ParseError(f"channel '{cname}' has no {end}", origin)
        prod, cons = rates.get((src, src_port)), rates.get((dst, dst_port))
        if prod is None or cons is None:
            for actor, port in ((src, src_port), (dst, dst_port)):
                if (actor, port) not in rates:
                    raise ParseError(f"channel '{cname}': actor '{actor}' has no port "
                                     f"'{port}'", origin)
        text = attrib.get("initialTokens", "0")
        delay = tokens.get(text)
        if delay is None:
            delay = tokens[text] = _num(text, f"channel '{cname}'", origin)
        sized = {"size": sizes[cname]} if cname in sizes else {}
        graph.add_channel(src, dst, cname, prod=prod, cons=cons, delay=delay,
                          origin=origin, **sized)
    return graph


def _untimed(processors) -> bool:
    """Whether ``processors`` are what export writes for an actor without a time: one
    processor of type ``default``, its time 0 in every phase.  SDF3 times it 0 as an
    actor without processors, and it reads back as one (``exec = 0``: no ``quanta``,
    no ``exec_default``), so that import, export and import again give the same graph."""
    if len(processors) != 1 or (processors[0].get("type") or DEFAULT_PROCESSOR) != \
            DEFAULT_PROCESSOR:
        return False
    et = processors[0].find("executionTime")
    text = None if et is None else et.get("time")
    if text is None:
        return True
    try:
        return all(Decimal(item.partition("*")[2] or item) == 0 for item in text.split(","))
    except ArithmeticError:
        return False            # not a number: read (and refused) as any time


def _processor_policy(processors) -> dict[str, str] | None:
    """``processors`` of :func:`read_sdf3` as a renaming (None: ignore them)."""
    if processors == "ignore":
        return None
    if processors == "keep":
        return {}
    if isinstance(processors, dict):
        for old, new in processors.items():
            if not is_identifier(str(new)):
                raise ParseError(f"processor type '{old}' renamed to '{new}', which is "
                                 "not a name (letters, digits, _)")
        return {_type_name(str(k)): str(v) for k, v in processors.items()}
    raise ValueError(f"processors must be 'keep', 'ignore' or a dict renaming types, "
                     f"not {processors!r}")


def parse_processors(text: str):
    """The ``processors`` of :func:`read_sdf3` from ``keep``, ``ignore`` or
    ``map:OLD=NEW[,OLD=NEW...]`` (the ``--processors`` option)."""
    if text in ("keep", "ignore"):
        return text
    kind, _, pairs = text.partition(":")
    renaming = {}
    for pair in pairs.split(",") if kind == "map" else ():
        old, eq, new = (part.strip() for part in pair.partition("="))
        if not eq or not old or not new:
            break
        if old in renaming:
            raise ParseError(f"--processors {text}: '{old}' is renamed twice")
        renaming[old] = new
    else:
        if renaming:
            _processor_policy(renaming)
            return renaming
    raise ParseError(f"--processors {text}: expected keep, ignore or "
                     "map:OLD=NEW[,OLD=NEW...]")


class _Initial(InitialCounter):
    """Kiter's initialisation phases as a file gives them: ``a;b`` in a rate or a time
    (``a`` the phases fired once, ``b`` the periodic ones; its SDF3 reader splits the
    attribute there), their number per actor (which every port and time of the actor
    must agree on, a value without ``;`` giving none), and the values read, by
    ``(actor, port)`` or ``(actor, exec_<type>)``."""

    def __init__(self):
        super().__init__(ParseError)
        self.values: dict[tuple[str, str], tuple] = {}
        self.default: dict[str, str] = {}

    def read(self, actor, text, what, telling, origin, rate):
        """``(the initialisation phases' values or None, the periodic value)`` of
        ``text``, a rate (``rate``: non-negative integers) or a time."""
        if text is None or ";" not in text:
            self.see(actor, 0, telling, origin)
            return None, _phases(text, what, origin)
        first, _, periodic = text.partition(";")
        if ";" in periodic:
            raise ParseError(f"{what}: {text!r} has more than one ';' (initialisation "
                             "phases ';' periodic phases)", origin)
        if not first.strip() or not periodic.strip():
            raise ParseError(f"{what}: {text!r} needs values on both sides of ';' "
                             "(initialisation phases ';' periodic phases)", origin)
        values = _phases(first, f"{what}, initialisation phases", origin)
        values = tuple(values) if isinstance(values, Phases) else (values,)
        if rate and any(not isinstance(v, int) or v < 0 for v in values):
            raise ParseError(f"{what}: the rates of initialisation phases must be "
                             f"non-negative integers, got {first.strip()!r}", origin)
        self.see(actor, len(values), telling, origin)
        return values, _phases(periodic, what, origin)

    def phases(self, actor, attrs, sdf):
        """The :class:`~moc.phases.InitialPhases` of ``actor`` (None without):
        its times (``exec`` and ``quanta`` the default processor's, 0 without one), and
        the rates of the ports its channels use."""
        count = self.count(actor)
        if not count:
            return None
        default = self.values.get((actor, self.default.get(actor)), (0,) * count)
        times = {k: self.values.get((actor, k), default) for k in attrs
                 if k in (EXEC, "quanta") or k.startswith(EXEC_PREFIX)}
        prod, cons = {}, {}
        for ch in sdf.findall("channel"):
            for end, port, into in (("srcActor", "srcPort", prod),
                                    ("dstActor", "dstPort", cons)):
                if ch.get(end) == actor and (actor, ch.get(port)) in self.values:
                    into[ch.get("name")] = self.values[(actor, ch.get(port))]
        return InitialPhases(count, times, prod, cons)


def parse_xml(path, text: bool = True):
    """The root element of the XML file ``path`` and a function from an element to its
    origin ``(path, line, column)`` (expat reports where each start tag begins);
    without ``text`` the elements' text and tails are left out (None)."""
    builder = ET.TreeBuilder()
    lines: dict[int, tuple[int, int]] = {}
    parser = expat.ParserCreate(namespace_separator="}")
    open_element = builder.start

    def start(tag, attrs):
        lines[id(open_element(tag, attrs))] = (parser.CurrentLineNumber,
                                               parser.CurrentColumnNumber + 1)

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    if text:
        parser.CharacterDataHandler = builder.data
        parser.buffer_text = True
    data = read_bytes(path)     # its errors are ValueErrors too: not an encoding's
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise ParseError(f"malformed XML: {expat.ErrorString(exc.code)}",
                         (path, exc.lineno, exc.offset + 1)) from None
    except LookupError as exc:      # the XML declaration names an encoding Python lacks
        raise ParseError(f"malformed XML: {exc}", (path, 1, 1)) from None
    except ValueError as exc:       # one expat cannot read (UTF-32, Shift-JIS, ...)
        raise ParseError(f"malformed XML: the declared encoding cannot be read ({exc}); "
                         "write the file in UTF-8", (path, 1, 1)) from None
    root = builder.close()
    return root, lambda el: (path, *lines.get(id(el), (None, None)))


def strip_namespaces(root):
    """Drop the ``{namespace}`` of every tag below ``root``, in place."""
    for el in root.iter():
        if isinstance(el.tag, str) and "}" in el.tag:
            el.tag = el.tag.split("}", 1)[1]


def _text(value, what: str = "a value", origin=None) -> str:
    """``value`` as an ``xs:decimal`` (SDF3's schema types rates, tokens, times and sizes
    so): digits with an optional point, never an exponent, ``inf`` or ``nan``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value):
        raise ParseError(f"cannot write {what} to SDF3: {value!r} is not a finite number",
                         origin)
    if isinstance(value, int) or value.is_integer():
        return str(int(value))
    return format(Decimal(repr(value)), "f")


def write_sdf3(graph: "SDFGraph", path) -> None:
    """Write ``graph`` as an SDF3 XML file (see :func:`format_sdf3`)."""
    Path(path).write_text(format_sdf3(graph), encoding="utf-8")


def format_sdf3(graph: "SDFGraph") -> str:
    """The SDF3 XML text of ``graph``: rates, initial tokens, token sizes and
    per-processor execution times."""
    bound = graph.bind() if _parametric(graph) else graph
    kind = "csdf" if cyclo_static(bound) or has_initial_phases(bound) else "sdf"
    phases = phase_counts(bound)
    root = ET.Element("sdf3", {"type": kind, "version": "1.0"})
    app = ET.SubElement(root, "applicationGraph", {"name": bound.name})
    sdf = ET.SubElement(app, kind, {"name": bound.name, "type": _type_name(bound.name)})
    ports: dict[str, list[tuple[str, str, object, str]]] = {a: [] for a in bound.actors}
    channel_ports = {}
    for i, ch in enumerate(bound.channels.values()):
        out_port, in_port = f"out{i}", f"in{i}"
        ports[ch.src].append((out_port, "out", ch.prod, ch.name))
        ports[ch.dst].append((in_port, "in", ch.cons, ch.name))
        channel_ports[ch.name] = (out_port, in_port)
    for actor in bound.actors.values():
        el = ET.SubElement(sdf, "actor",
                           {"name": actor.name, "type": _type_name(actor.name)})
        init = actor.initial_phases
        for pname, ptype, rate, cname in ports[actor.name]:
            text = _listed(rate, phases[actor.name], f"a rate of '{actor.name}'",
                           actor.origin)
            if init is not None:
                side = "prod" if ptype == "out" else "cons"
                text = _before(init.rates(side, cname)) + text
            ET.SubElement(el, "port", {"name": pname, "type": ptype, "rate": text})
    for ch in bound.channels.values():
        out_port, in_port = channel_ports[ch.name]
        attrs = {"name": ch.name, "srcActor": ch.src, "srcPort": out_port,
                 "dstActor": ch.dst, "dstPort": in_port}
        if ch.delay:
            attrs["initialTokens"] = _text(ch.delay, f"the delay of '{ch.name}'", ch.origin)
        ET.SubElement(sdf, "channel", attrs)
    # SDF3's schema: sdfProperties holds at least one actorProperties, each at least one
    # processor, all before the channelProperties.
    if not bound.actors:
        return _xml(root)
    props = ET.SubElement(app, f"{kind}Properties")
    for actor in bound.actors.values():
        ap = ET.SubElement(props, "actorProperties", {"actor": actor.name})
        init = actor.initial_phases
        for ptype, time, default in _processors(actor):
            attrs = {"type": ptype, "default": "true"} if default else {"type": ptype}
            proc = ET.SubElement(ap, "processor", attrs)
            if time is not None:
                text = _listed(time, phases[actor.name] if kind == "csdf" else 1,
                               f"the time of '{actor.name}' on '{ptype}'", actor.origin)
                if init is not None:
                    first = init.attrs.get(EXEC_PREFIX + ptype) or init.attrs.get(
                        EXEC if default else "", init.attrs.get("quanta", (0,) * init.count))
                    text = _before(first) + text
                ET.SubElement(proc, "executionTime", {"time": text})
    for ch in bound.channels.values():
        cp = ET.SubElement(props, "channelProperties", {"channel": ch.name})
        ET.SubElement(cp, "tokenSize", {"sz": _text(ch.size, f"the size of '{ch.name}'",
                                                    ch.origin)})
    return _xml(root)


def _listed(value, n: int, what: str, origin) -> str:
    """``value`` as SDF3 writes it, per phase (``3,1``) for an actor of ``n`` phases."""
    if n == 1 and not isinstance(value, tuple):
        return _text(value, what, origin)
    return ",".join(_text(phase_value(value, k), what, origin) for k in range(n))


def _before(values) -> str:
    """Kiter's ``a,b;`` before the periodic values: the ``values`` of the
    initialisation phases."""
    return ",".join(map(_text, values)) + ";"


def _xml(root) -> str:
    ET.indent(root, space="  ")
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _processors(actor) -> list[tuple[str, object, bool]]:
    """``(type, time or None, default)`` of each processor of ``actor``: its
    ``exec_<type>`` attributes, then the other names of its ``allowed``; one of them,
    the last whose time is ``exec`` (else ``quanta``), is the default."""
    attrs = actor.attrs
    default_time = attrs.get(EXEC, attrs.get("quanta"))
    procs = [[k[len(EXEC_PREFIX):], v, False] for k, v in attrs.items()
             if k.startswith(EXEC_PREFIX)]
    if not procs:   # a time of 0 stated (Kiter reads no default time for an actor)
        return [(DEFAULT_PROCESSOR, default_time or 0, True)]
    allowed = attrs.get("allowed")
    if isinstance(allowed, str):
        known = {p[0] for p in procs}
        procs += [[name, None, False] for name in allowed.replace(",", " ").split()
                  if name not in known and is_identifier(name)]
    for p in reversed(procs):
        if p[1] is not None and p[1] == default_time:
            p[2] = True
            break
    return [tuple(p) for p in procs]


def _parametric(graph) -> bool:
    values = list(graph.params.values())
    for a in graph.actors.values():
        values += a.attrs.values()
    for ch in graph.channels.values():
        values += [ch.prod, ch.cons, ch.delay, ch.size, *ch.attrs.values()]
    return any(hasattr(v, "evaluate") for v in values)


# --------------------------------------------------------------------------- mapeval import

DESCRIPTION = ("Read an SDF3 XML file (actors, port rates, channels, initial tokens, token "
               "sizes) and write it as .sdf. Execution times become actor attributes "
               "exec_<type> (read by lookup()), the time on SDF3's default processor (the "
               "last marked default) exec and quanta (exec = 0 for an actor without one, as "
               "SDF3 times it), and the processor types the actor's allowed list (see "
               "--processors). Kiter's initialisation phases ('a;b' rates and times) become "
               "'[a; b]' values. Errors point at FILE:LINE:COL.")


def __getattr__(name: str):
    # ``IMPORTER`` (a dsl.importers.Importer) is made when ``mapeval import`` asks for it:
    # reading a file (``mapeval analyse G.xml``) does without the importers' classes
    if name != "IMPORTER":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from dsl.importers import Importer
    importer = globals()[name] = Importer(arguments, convert, DESCRIPTION,
                                          "example: mapeval import sdf3 h263.xml -o h263.sdf")
    return importer


def arguments(p) -> None:
    from dsl.importers import output_option
    p.add_argument("path", metavar="FILE.xml")
    output_option(p)
    p.add_argument("--processors", default="keep", metavar="keep|ignore|map:OLD=NEW,...",
                   help="the actors' processor types: keep (times exec_<type>, types "
                   "allowed), ignore (no allowed; the default processor's time as exec), "
                   "map:OLD=NEW,... (renamed to the .moa's PE or type names, then kept); "
                   "default keep")


def convert(args) -> Imported:
    """The ``.sdf`` text of the SDF3 file ``args.path``."""
    from dsl.importers import Imported
    from dsl.printer import format_sdf

    path = Path(args.path)
    if path.suffix.lower() != ".xml":
        raise ParseError(f"'{path}': expected an SDF3 .xml file")
    check_readable(path)
    graph = read_sdf3(path, parse_processors(args.processors))
    text = f"# Imported by 'mapeval import sdf3' from {path}\n" + format_sdf(graph)
    return Imported(text if text.endswith("\n") else text + "\n", inputs=(path,))
