"""PREESM's PiSDF graphs (``.pi``, GraphML) flattened into one static SDF graph.

PiSDF is Desnos et al.'s parameterized and interfaced dataflow (PiMM, SAMOS 2013) over
Piat et al.'s interface-based hierarchy (IBSDF, 2009); the rules below are PREESM's.

Parameters (``param``, ``moldable_param`` at its current ``expr``) are evaluated from
the parameters their dependencies connect (names are the setters' names); a
configuration input interface (``cfg_in_iface``) takes the value of the parameter that
the parent graph connects to the hierarchical actor's configuration port of the same
name (at the top level: the scenario's value, else its ``defaultValue``, else 0).
A port's rate names the *actor's* configuration ports, which take the values of the
parameters connected to them; delays and interfaces name the parameters connected to
them.  Values are doubles; rates and delays are rounded half up (``Math.round``).

Hierarchy (an actor whose refinement is a ``.pi``), by PREESM's rules (``LCMBasedBRV``,
``PiSDFFlattener``): in each graph, the repetition vector of each connected component
without interfaces is scaled by ``max(1, ceil(p / (c·q(t))))`` over its input interfaces
(rate ``p``, read ``c`` per firing by actor ``t``) and likewise over its output
interfaces; a subgraph's actors fire that many times per firing of the hierarchical
actor.  An interface whose rate equals what its inner actor reads (writes) per parent
firing joins the outer channel to the inner actor; otherwise it becomes a broadcast
(input, inner rate ``c·q(t)``) or round buffer (output) actor, as PREESM inserts.  Flat
names are ``H_A`` (hierarchical actor ``H``, inner actor ``A``); scenario paths
``top/H/A``.

Special actors (``broadcast``, ``fork``, ``join``, ``roundbuffer``, ``init``, ``end``)
are actors with ``special = "<kind>"`` and their ports' rates; fork and join must move
as many tokens in as out, a broadcast and a round buffer have one input (output).  A
delay is the channel's initial tokens; a delay with a setter or a getter actor becomes
an actor ``special = "delay"`` between them, firing once per firing of its graph (the
setter writes the delay's initial tokens, the getter reads its last ones), as PREESM's
delay actor.  Refused by name: a parameter set at run time (a dependency from an actor's
configuration output port, or a ``cfg_out_iface``), a non-persistent (``level="none"``)
delay in a subgraph fired more than once, rates that are not positive."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from dsl.errors import ParseError
from dsl.importers.preesm.jep import evaluate, rounded
from dsl.importers.preesm.scenario import Scenario
from dsl.importers.preesm.xml import children, read_xml
from dsl.names import identifier
from moc.graph import SDFGraph
from moc.repetition import repetition_vector

SPECIAL = ("broadcast", "fork", "join", "roundbuffer", "init", "end")
PARAMS = ("param", "moldable_param", "cfg_in_iface")
INTERFACES = ("src", "snk")


@dataclass
class _Node:
    id: str
    kind: str
    el: object
    ports: dict = field(default_factory=dict)      # name -> (kind, expr, element)
    refinement: str | None = None


@dataclass
class _Pi:
    path: Path
    name: str
    nodes: dict
    fifos: list            # (element, source, sourceport, target, targetport, type, delay id)
    deps: dict             # target id -> [(source id, source port, target port, element)]
    where: object
    name_origin: tuple     # where the graph's name is written


def _read_pi(path: Path) -> _Pi:
    root, where = read_xml(path)
    graph = root.find("graph")
    if root.tag != "graphml" or graph is None:
        raise ParseError("not a PiSDF graph: no graphml/graph element", where(root))
    for el in [graph, *children(graph, "node")]:
        period = (el.get("period") or "0").strip()
        if period not in ("0", "0.0", ""):
            what = "the graph" if el is graph else f"actor '{el.get('id')}'"
            raise ParseError(f"{what} has period {period}: mapeval's graphs have no "
                             "periodic actors; remove the period (0 = aperiodic)", where(el))
    name, name_origin = None, where(graph)
    for d in children(graph, "data"):
        if d.get("key") == "name":
            name, name_origin = (d.text or "").strip(), where(d)
    nodes: dict[str, _Node] = {}
    for el in children(graph, "node"):
        nid, kind = el.get("id"), el.get("kind")
        if not nid or not kind:
            raise ParseError("a <node> needs an id and a kind", where(el))
        if nid in nodes:
            raise ParseError(f"duplicate node '{nid}'", where(el))
        node = _Node(nid, kind, el)
        for p in children(el, "port"):
            node.ports[p.get("name")] = (p.get("kind"), p.get("expr"), p)
        for d in children(el, "data"):
            if d.get("key") == "graph_desc" and (d.text or "").strip().endswith(".pi"):
                node.refinement = d.text.strip()
        if kind == "cfg_out_iface":
            raise ParseError(f"configuration output interface '{nid}': it sets a parameter "
                             "at run time (a dynamic parameter), which mapeval's static "
                             "graphs cannot express", where(el))
        known = PARAMS + INTERFACES + SPECIAL + ("actor", "delay")
        if kind not in known:
            raise ParseError(f"node '{nid}' has unknown kind '{kind}'", where(el))
        nodes[nid] = node
    fifos, deps = [], {}
    for el in children(graph, "edge"):
        kind = el.get("kind")
        if kind == "fifo":
            delay = None
            for d in children(el, "data"):
                if d.get("key") == "delay":
                    delay = (d.text or "").strip() or ("", el.get("expr"))
            fifos.append((el, el.get("source"), el.get("sourceport"), el.get("target"),
                          el.get("targetport"), el.get("type") or "void", delay))
        elif kind == "dependency":
            deps.setdefault(el.get("target"), []).append(
                (el.get("source"), el.get("sourceport"), el.get("targetport"), el))
        else:
            raise ParseError(f"edge of unknown kind '{kind}'", where(el))
    for el, src, sp, dst, dp, _, _ in fifos:
        for end, port, want in ((src, sp, "output"), (dst, dp, "input")):
            if end not in nodes:
                raise ParseError(f"fifo {src}.{sp} -> {dst}.{dp}: no node '{end}'", where(el))
            node = nodes[end]
            if node.kind not in INTERFACES + ("delay",) and \
                    (node.ports.get(port) or (None,))[0] != want:
                raise ParseError(f"fifo {src}.{sp} -> {dst}.{dp}: '{end}' has no {want} "
                                 f"port '{port}'", where(el))
    fifo_ids = {f"{src}.{sp}-{dst}.{dp}" for _, src, sp, dst, dp, _, _ in fifos}
    for target, items in deps.items():
        for src, _, tport, el in items:
            node = nodes.get(target)
            if node is None and target not in fifo_ids:
                raise ParseError(f"dependency from '{src}' to unknown '{target}'", where(el))
            if node is not None and node.kind in ("actor",) + SPECIAL and \
                    (node.ports.get(tport) or (None,))[0] != "cfg_input":
                raise ParseError(f"dependency from '{src}': '{target}' has no configuration "
                                 f"input port '{tport}'", where(el))
    return _Pi(Path(path), name or Path(path).stem, nodes, fifos, deps, where, name_origin)


def _refinement(ref: str, parent: Path, origin) -> Path:
    """The file of a refinement: PREESM writes it relative to its project's root (an
    ancestor of the parent graph's directory), or from the workspace (``/proj/...``)."""
    rel = ref.lstrip("/")
    for base in [parent.parent, *parent.parent.parents]:
        if (base / rel).is_file():
            return base / rel
    raise ParseError(f"refinement '{ref}' not found next to '{parent}' or in any folder "
                     "above it", origin)


@dataclass
class Flat:
    """The flattened graph: actors ``name -> (attrs, origin, path)`` and channels."""
    name: str
    params: dict = field(default_factory=dict)
    actors: dict = field(default_factory=dict)
    #: dicts of src, dst, prod, cons, delay, type, origin, name and skipped interfaces
    channels: list = field(default_factory=list)
    #: flat actor -> firings per iteration by PREESM's hierarchical rule
    firings: dict = field(default_factory=dict)
    #: (graph path, parameter) of the scenario's values that were used
    used_values: set = field(default_factory=set)
    #: where the top graph's name is written
    origin: tuple | None = None


class _Ports(dict):
    """The values of a hierarchical actor's connected configuration ports; ``declared``
    names all of them."""
    declared: set = frozenset()


class _Level:
    """One graph of the hierarchy, its parameters resolved."""

    def __init__(self, pi: _Pi, vpath: str, iface_values: dict, scenario: Scenario | None,
                 top: bool):
        self.pi, self.vpath, self.top = pi, vpath, top
        self.values: dict[str, float] = {}
        self.iface_values, self.scenario = iface_values, scenario
        self._busy: set[str] = set()
        self.used: set = set()
        for nid, node in pi.nodes.items():
            if node.kind in PARAMS:
                self.value(nid)

    def _inputs(self, target: str, origin) -> dict:
        """Parameters connected to ``target``: name (or the target port) -> value."""
        env = {}
        for src, sport, tport, el in self.pi.deps.get(target, []):
            node = self.pi.nodes.get(src)
            if node is None:
                raise ParseError(f"dependency from unknown node '{src}'", self.pi.where(el))
            if node.kind not in PARAMS:
                raise ParseError(f"'{target}' is set at run time by {node.kind} '{src}'"
                                 f"{' port ' + repr(sport) if sport else ''} (a dynamic "
                                 "parameter), which mapeval's static graphs cannot express",
                                 self.pi.where(el))
            env[tport or src] = self.value(src)
        return env

    def value(self, nid: str) -> float:
        if nid in self.values:
            return self.values[nid]
        node = self.pi.nodes[nid]
        where = self.pi.where(node.el)
        if nid in self._busy:
            raise ParseError(f"parameter '{nid}' depends on itself", where)
        self._busy.add(nid)
        # the scenario names a parameter by its graph's name: a subgraph takes the name
        # of the hierarchical actor it refines (PREESM's RefinementResolver)
        key = (self.vpath.rsplit("/", 1)[-1], nid)
        given = self.scenario.parameters.get(key) if self.scenario else None
        env = self._inputs(nid, where)
        if node.kind == "cfg_in_iface" and not self.top and nid in self.iface_values:
            value = self.iface_values[nid]
        elif node.kind == "cfg_in_iface" and not self.top and \
                nid not in self.iface_values.declared:
            raise ParseError(f"configuration interface '{nid}' of '{self.vpath}': the "
                             "hierarchical actor has no configuration port of that name",
                             where)
        elif given is not None:
            self.used.add(key)
            value = evaluate(given[0], env, f"value of parameter '{nid}' of '{self.vpath}' "
                             "in the scenario", given[1])
        elif node.kind == "cfg_in_iface":       # its port left unconnected: the default
            value = evaluate(node.el.get("defaultValue") or "0", env,
                             f"configuration interface '{nid}'", where)
        else:
            value = evaluate(node.el.get("expr"), env, f"parameter '{nid}'", where)
        self._busy.discard(nid)
        self.values[nid] = value
        return value

    def actor_env(self, nid: str) -> dict:
        node = self.pi.nodes[nid]
        return self._inputs(nid, self.pi.where(node.el))

    def rate(self, nid: str, port: str, fifo_el) -> int:
        node = self.pi.nodes[nid]
        if node.kind == "delay":        # its setter writes, its getter reads, its tokens
            size = self.delay_size(nid)
            if size <= 0:
                raise ParseError(f"delay '{self.vpath}/{nid}' has a setter or getter but "
                                 f"{size} tokens", self.pi.where(node.el))
            return size
        if node.kind in INTERFACES:
            expr, el = next(((e, p) for _, e, p in node.ports.values()), (None, node.el))
        else:
            _, expr, el = node.ports[port]
        what = f"rate of port '{port}' of '{self.vpath}/{nid}'" if node.kind not in \
            INTERFACES else f"rate of interface '{self.vpath}/{nid}'"
        value = rounded(evaluate(expr, self.actor_env(nid), what, self.pi.where(el)))
        if value <= 0:
            raise ParseError(f"{what} is {value}: mapeval's rates are positive (PREESM "
                             "removes actors that never fire)", self.pi.where(el))
        return value

    def delay_size(self, did: str) -> int:
        node = self.pi.nodes[did]
        env = self._inputs(did, self.pi.where(node.el))
        for _, src, sp, dst, dp, _, delay in self.pi.fifos:
            if delay == did:     # PREESM also connects a delay's parameters to its fifo
                env.update(self._inputs(f"{src}.{sp}-{dst}.{dp}", self.pi.where(node.el)))
        value = rounded(evaluate(node.el.get("expr"), env,
                                 f"delay '{self.vpath}/{did}'", self.pi.where(node.el)))
        if value < 0:
            raise ParseError(f"delay '{did}' is negative ({value})", self.pi.where(node.el))
        return value


def _local_rv(actors: list[str], edges: list[tuple]) -> dict[str, int]:
    """The smallest positive integer solution of ``prod·q(src) = cons·q(dst)`` per
    connected component (PREESM's ``LCMBasedBRV``, the balance equations that
    :func:`moc.repetition.repetition_vector` solves); edges ``(src, dst, prod, cons,
    origin, name)``."""
    graph = SDFGraph("level")
    for actor in actors:
        graph.add_actor(actor)
    for src, dst, prod, cons, origin, name in edges:
        graph.add_channel(src, dst, name, prod=prod, cons=cons, origin=origin)
    return repetition_vector(graph)


def flatten(path, scenario: Scenario | None = None) -> Flat:
    """The flat SDF description of the PiSDF graph in ``path``."""
    pi = _read_pi(Path(path))
    flat = Flat(identifier(pi.name), origin=pi.name_origin)
    top = _Level(pi, pi.name, {}, scenario, True)
    for nid, node in pi.nodes.items():
        if node.kind in ("param", "moldable_param", "cfg_in_iface"):
            flat.params[identifier(nid)] = top.values[nid]
    _flatten(top, flat, "", 1, scenario, [Path(path).resolve()])
    _anchor(flat)
    for entry in flat.actors.values():
        flat.used_values |= entry[4].used
    flat.used_values |= top.used
    return flat


def _flatten(level: _Level, flat: Flat, prefix: str, outer: int, scenario, stack,
             interfaces=None) -> dict:
    """Add ``level``'s actors (fired ``outer`` times per iteration in all) to ``flat``;
    returns interface name -> (flat actor, its rate there) for the parent to connect."""
    pi, where = level.pi, level.pi.where
    actors = [n for n, node in pi.nodes.items()
              if node.kind in ("actor", "delay") + SPECIAL
              or (node.kind in INTERFACES and level.top)]
    actors = [a for a in actors if pi.nodes[a].kind != "delay" or _delay_has_actor(pi, a)]
    edges, iface_edges = [], []
    for el, src, sp, dst, dp, dtype, delay in pi.fifos:
        if not level.top and (pi.nodes[src].kind in INTERFACES or
                              pi.nodes[dst].kind in INTERFACES):
            iface_edges.append((el, src, sp, dst, dp, dtype))
            continue
        edges.append((src, dst, level.rate(src, sp, el), level.rate(dst, dp, el), where(el),
                      f"{level.vpath}/{src}.{sp}-{dst}.{dp}"))
    for a in actors:
        if pi.nodes[a].kind in ("fork", "join", "broadcast", "roundbuffer"):
            _check_special(level, a)
    q = _local_rv(actors, edges)
    _scale_by_interfaces(level, q, actors, edges, iface_edges)
    # flat endpoints of each actor: a hierarchical actor's ports map to inner actors
    inner: dict[str, dict] = {}
    for a in actors:
        node = pi.nodes[a]
        name = identifier(prefix + a)
        vpath = f"{level.vpath}/{a}"
        if node.refinement:
            sub = _refinement(node.refinement, pi.path, where(node.el))
            if sub.resolve() in stack:
                raise ParseError(f"'{a}' refines to '{sub}', which contains it",
                                 where(node.el))
            sub_pi = _read_pi(sub)
            env = _Ports(level.actor_env(a))
            env.declared = {p for p, (kind, _, _) in node.ports.items() if kind == "cfg_input"}
            sub_level = _Level(sub_pi, vpath, env, scenario, False)
            inner[a] = _flatten(sub_level, flat, prefix + a + "_", outer * q[a], scenario,
                                stack + [sub.resolve()])
            continue
        attrs = {"path": vpath}
        if node.kind in SPECIAL:
            attrs["special"] = node.kind
        elif node.kind == "delay":
            attrs["special"] = "delay"
        elif node.kind in INTERFACES:
            attrs["special"] = "interface"
        if name in flat.actors:
            raise ParseError(f"two actors flatten to the name '{name}'", where(node.el))
        flat.actors[name] = (attrs, where(node.el), vpath, a, level)
        flat.firings[name] = outer * q[a]
    for el, src, sp, dst, dp, dtype, delay in pi.fifos:
        if not level.top and (pi.nodes[src].kind in INTERFACES or
                              pi.nodes[dst].kind in INTERFACES):
            continue
        s, prod, out_hops = _end(level, inner, src, sp, el, prefix)
        d, cons, in_hops = _end(level, inner, dst, dp, el, prefix)
        tokens = 0
        if delay is not None:
            tokens = _delay_tokens(level, delay, el, outer, f"{src}.{sp}-{dst}.{dp}")
        flat.channels.append(dict(src=s, dst=d, prod=prod, cons=cons, delay=tokens,
                                  type=dtype, origin=where(el), hops=out_hops[::-1] + in_hops,
                                  at=len(out_hops),
                                  name=identifier(f"{prefix}{src}_{sp}__{dst}_{dp}")))
    return _interfaces(level, flat, prefix, outer, q, iface_edges, inner)


def _check_special(level: _Level, nid: str) -> None:
    """PREESM's special actors: a fork splits its one input over its outputs, a join
    concatenates its inputs into its one output (as many tokens in as out); a broadcast
    copies its one input to every output, a round buffer keeps the last tokens of its
    inputs for its one output."""
    pi, kind = level.pi, level.pi.nodes[nid].kind
    node = pi.nodes[nid]
    ins, outs = [], []
    for el, src, sp, dst, dp, _, _ in pi.fifos:
        if dst == nid:
            ins.append(level.rate(nid, dp, el))
        if src == nid:
            outs.append(level.rate(nid, sp, el))
    where = pi.where(node.el)
    what = f"{kind} '{level.vpath}/{nid}'"
    if kind in ("fork", "broadcast") and len(ins) != 1:
        raise ParseError(f"{what} has {len(ins)} connected inputs; it takes exactly one",
                         where)
    if kind in ("join", "roundbuffer") and len(outs) != 1:
        raise ParseError(f"{what} has {len(outs)} connected outputs; it gives exactly one",
                         where)
    if kind in ("fork", "join") and sum(ins) != sum(outs):
        raise ParseError(f"{what} reads {sum(ins)} tokens and writes {sum(outs)} per firing; "
                         f"a {kind} moves every token once", where)


def _delay_has_actor(pi: _Pi, did: str) -> bool:
    return any(did in (src, dst) for _, src, _, dst, _, _, _ in pi.fifos)


def _delay_tokens(level: _Level, delay, el, outer: int, fifo_id: str) -> int:
    pi = level.pi
    if isinstance(delay, tuple):            # PREESM's old files: the size on the edge
        return rounded(evaluate(delay[1], level._inputs(fifo_id, pi.where(el)),
                                "delay of a fifo", pi.where(el)))
    node = pi.nodes.get(delay)
    if node is None or node.kind != "delay":
        raise ParseError(f"fifo refers to unknown delay '{delay}'", pi.where(el))
    level_name = node.el.get("level") or "permanent"
    if level_name not in ("permanent", "local", "none"):
        raise ParseError(f"delay '{delay}' has unknown persistence level '{level_name}'",
                         pi.where(node.el))
    if level_name == "none" and not level.top and outer > 1:
        raise ParseError(f"delay '{level.vpath}/{delay}' is not persistent (level \"none\"): "
                         f"its tokens are reset at each of the {outer} firings of "
                         f"'{level.vpath}', which one flat SDF channel cannot express",
                         pi.where(node.el))
    return level.delay_size(delay)


def _scale_by_interfaces(level, q, actors, edges, iface_edges) -> None:
    """PREESM's ``updateRVWithInterfaces``: scale each component so that it reads (writes)
    at least what its interfaces carry per firing of the parent."""
    if not iface_edges:
        return
    comp = {a: a for a in actors}

    def find(a):
        while comp[a] != a:
            a = comp[a]
        return a

    for src, dst, *_ in edges:
        comp[find(src)] = find(dst)
    factor: dict[str, int] = {}
    pi = level.pi
    for el, src, sp, dst, dp, _ in iface_edges:
        if pi.nodes[src].kind in INTERFACES and pi.nodes[dst].kind in INTERFACES:
            raise ParseError(f"fifo from interface '{src}' straight to interface '{dst}'",
                             pi.where(el))
        if pi.nodes[src].kind in INTERFACES:
            iface, actor, port = src, dst, dp
        else:
            iface, actor, port = dst, src, sp
        rate = level.rate(iface, None, el)
        total = level.rate(actor, port, el) * q[actor]
        if total < rate:
            root = find(actor)
            factor[root] = max(factor.get(root, 1), -(-rate // total))
    for a in actors:
        q[a] *= factor.get(find(a), 1)


def _interfaces(level, flat, prefix, outer, q, iface_edges, inner) -> dict:
    """Each interface's flat end: the inner actor itself when the interface's rate is
    what it reads (writes) per parent firing, else a broadcast (round buffer).  A
    skipped interface is kept as a possible hop of the channel through it (see
    :func:`_anchor`)."""
    pi, ends = level.pi, {}
    for el, src, sp, dst, dp, dtype in iface_edges:
        is_in = pi.nodes[src].kind in INTERFACES
        iface, actor, port = (src, dst, dp) if is_in else (dst, src, sp)
        rate = level.rate(iface, None, el)
        a_end, a_rate, deeper = _end(level, inner, actor, port, el, prefix)
        per_parent = level.rate(actor, port, el) * q[actor]
        name = identifier(prefix + iface)
        kind = "broadcast" if is_in else "roundbuffer"
        entry = ({"path": f"{level.vpath}/{iface}", "special": kind},
                 pi.where(pi.nodes[iface].el), f"{level.vpath}/{iface}", iface, level)
        if per_parent == rate:
            ends[iface] = (a_end, a_rate, rate,
                           [dict(name=name, rate=rate, firings=outer, entry=entry)] + deeper)
            continue
        flat.actors[name] = entry
        flat.firings[name] = outer
        chan = dict(src=name, dst=a_end, prod=per_parent, cons=a_rate, hops=deeper) \
            if is_in else dict(src=a_end, dst=name, prod=a_rate, cons=per_parent,
                               hops=deeper[::-1])
        flat.channels.append(dict(chan, delay=0, type=dtype, origin=pi.where(el),
                                  name=identifier(f"{prefix}{src}_{sp}__{dst}_{dp}")))
        ends[iface] = (name, rate, rate, [])
    return ends


def _end(level, inner, nid, port, el, prefix):
    """The flat actor and rate at one end of a fifo of ``level``; a hierarchical actor's
    port must carry its interface's rate (PREESM's ``checkInterfaceRate``)."""
    if nid not in inner:
        return identifier(prefix + nid), level.rate(nid, port, el), []
    if port not in inner[nid]:
        raise ParseError(f"hierarchical actor '{level.vpath}/{nid}' has no interface "
                         f"'{port}' in its subgraph", level.pi.where(el))
    end, rate, iface_rate, hops = inner[nid][port]
    outer = level.rate(nid, port, el)
    if outer != iface_rate:
        raise ParseError(f"port '{port}' of '{level.vpath}/{nid}' has rate {outer} but its "
                         f"interface in the subgraph has {iface_rate}", level.pi.where(el))
    return end, rate, hops


def _anchor(flat: Flat) -> None:
    """Keep a skipped interface where the flat graph would otherwise iterate fewer times
    than PREESM's count: a hierarchical actor that fires once while its subgraph's actors
    fire twice per firing of their neighbours leaves a flat component whose smallest
    repetition vector is half PREESM's.  The interface (firing as often as the
    hierarchical actor) restores PREESM's iteration; those of the least-fired
    hierarchical actors are kept first."""
    while True:
        q = _local_rv(list(flat.actors), [(c["src"], c["dst"], c["prod"], c["cons"],
                                           c["origin"], f"{c['name']}#{k}")
                                          for k, c in enumerate(flat.channels)])
        short = {a for a in q if q[a] != flat.firings[a]}
        hops = [(h["firings"], k, i) for k, c in enumerate(flat.channels)
                if c["src"] in short for i, h in enumerate(c["hops"])]
        if not short or not hops:
            break
        _, k, i = min(hops)
        _keep(flat, k, i)


def _keep(flat: Flat, k: int, i: int) -> None:
    """Split channel ``k`` at its hop ``i`` (a skipped interface) into two channels
    through that interface's actor."""
    ch = flat.channels[k]
    hop = ch["hops"][i]
    flat.actors[hop["name"]] = hop["entry"]
    flat.firings[hop["name"]] = hop["firings"]
    at = ch.get("at", 0)        # the segment of the declared fifo, which has the delay
    first = dict(ch, dst=hop["name"], cons=hop["rate"], hops=ch["hops"][:i],
                 delay=ch["delay"] if at <= i else 0)
    second = dict(ch, src=hop["name"], prod=hop["rate"], hops=ch["hops"][i + 1:],
                  delay=ch["delay"] if at > i else 0, at=max(at - i - 1, 0),
                  name=identifier(f"{hop['name']}__{ch['dst']}"))
    flat.channels[k:k + 1] = [first, second]
