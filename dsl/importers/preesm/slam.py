"""An S-LAM architecture (``.slam``, IP-XACT with PREESM's vendor extensions) as a
``.moa``: each operator instance (component type ``Operator``, ``CPU``, ``GPU`` or
``FPGA``) a PE whose type is its component; each communication node
(``parallelComNode``, ``contentionComNode``) a CN whose time per byte is
``1/speed`` (PREESM's transfer time ``bytes / speed``); each data link an edge.
PE types price actors with ``lookup()`` from the scenario's timings (``exec_<type>``),
and an actor without a timing costs PREESM's default of 100.

Refused by name: DMAs and memories, hierarchical components (a refinement), control
links, directed links, and a link between two operators (mapeval routes through CNs)."""
from __future__ import annotations

from dataclasses import dataclass, field

from dsl.errors import ParseError
from dsl.importers.preesm.xml import children, child_text, read_xml
from dsl.names import identifier

OPERATOR_KINDS = ("Operator", "CPU", "GPU", "FPGA")
COM_NODE_KINDS = ("parallelComNode", "contentionComNode")
#: PREESM's time of an actor without a timing on an operator type
DEFAULT_TIME = 100


@dataclass
class Slam:
    name: str
    #: instance -> component (type) name
    operators: dict = field(default_factory=dict)
    #: instance -> (component, kind, speed)
    com_nodes: dict = field(default_factory=dict)
    links: list = field(default_factory=list)


def read_slam(path) -> Slam:
    root, where = read_xml(path)
    if root.tag != "design":
        raise ParseError("not an S-LAM architecture: the root element is not "
                         "<spirit:design>", where(root))
    slam = Slam(child_text(root, "name") or "arch")
    descriptions = {}
    for ext in children(root, "vendorExtensions"):
        for descs in children(ext, "componentDescriptions"):
            for d in children(descs, "componentDescription"):
                descriptions[d.get("componentRef")] = d
    links = {}
    for ext in children(root, "vendorExtensions"):
        for descs in children(ext, "linkDescriptions"):
            for d in children(descs, "linkDescription"):
                links[d.get("referenceId")] = d
    for insts in children(root, "componentInstances"):
        for inst in children(insts, "componentInstance"):
            name = child_text(inst, "instanceName")
            ref = inst.find("componentRef")
            comp = None if ref is None else ref.get("name")
            d = descriptions.get(comp)
            if name is None or d is None:
                raise ParseError(f"component instance '{name}': no component description "
                                 f"for '{comp}'", where(inst))
            kind = d.get("componentType")
            if d.get("refinement"):
                raise ParseError(f"component '{comp}' is refined by '{d.get('refinement')}' "
                                 "(a hierarchical S-LAM): flatten it in PREESM first",
                                 where(d))
            if kind in OPERATOR_KINDS:
                slam.operators[name] = comp
            elif kind in COM_NODE_KINDS:
                try:
                    speed = float(d.get("speed"))
                except (TypeError, ValueError):
                    raise ParseError(f"communication node '{comp}': speed "
                                     f"{d.get('speed')!r} is not a number", where(d)) from None
                if speed <= 0:
                    raise ParseError(f"communication node '{comp}': speed must be positive",
                                     where(d))
                slam.com_nodes[name] = (comp, kind, speed)
            else:
                raise ParseError(f"component '{comp}' of instance '{name}' is a {kind}; "
                                 "mapeval imports operators and communication nodes only",
                                 where(d))
    for conns in children(root, "interconnections"):
        for conn in children(conns, "interconnection"):
            cname = child_text(conn, "name")
            ends = [a.get("componentRef") for a in children(conn, "activeInterface")]
            d = links.get(cname)
            if d is not None and d.get("linkType") != "DataLink":
                raise ParseError(f"link '{cname}' is a {d.get('linkType')}; mapeval "
                                 "imports data links only", where(d))
            if d is not None and d.get("directedLink") == "directed":
                raise ParseError(f"link '{cname}' is directed; mapeval's links carry data "
                                 "both ways", where(d))
            if len(ends) != 2 or any(e not in slam.operators and e not in slam.com_nodes
                                     for e in ends):
                raise ParseError(f"link '{cname}' does not join two known component "
                                 f"instances: {ends}", where(conn))
            if all(e in slam.operators for e in ends):
                raise ParseError(f"link '{cname}' joins two operators ({ends[0]}, "
                                 f"{ends[1]}) without a communication node", where(conn))
            slam.links.append(tuple(ends))
    if not slam.operators:
        raise ParseError("the architecture has no operator", where(root))
    return slam


def format_moa(slam: Slam, note: str = "") -> str:
    """The ``.moa`` text of ``slam``."""
    lines = [note] if note else []
    lines.append(f"moa {identifier(slam.name)} {{")
    for comp in dict.fromkeys(slam.operators.values()):
        lines.append(f"    type {identifier(comp)} [time = lookup(default = {DEFAULT_TIME})]")
    for name, comp in slam.operators.items():
        lines.append(f"    pe {identifier(name)} : {identifier(comp)}")
    for name, (comp, kind, speed) in slam.com_nodes.items():
        lines.append(f"    cn {identifier(name)} [time = lsla(alpha = {1 / speed!r})]"
                     f"   # {kind} {comp}, speed {speed:g} B per time unit")
    for a, b in slam.links:
        lines.append(f"    {identifier(a)} -- {identifier(b)}")
    lines.append("}")
    return "\n".join(lines) + "\n"
