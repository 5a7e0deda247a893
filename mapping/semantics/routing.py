"""Where a mapping sends each channel: the CNs its communication tokens cross, and who
pays for them (a CN's ``charge``)."""
from __future__ import annotations

from moa import Architecture, NoRouteError
from moc import SDFGraph
from dsl.mappings import Mapping
from mapping.errors import MappingError
from mapping.semantics.traffic import charged_copy, place_memory_traffic


def validate_mapping(app: SDFGraph, arch: Architecture, mapping: Mapping) -> None:
    """Every actor on a known PE; no unknown actors; ``via`` routes name known CNs."""
    where = f"mapping '{mapping.name}'"
    for actor in mapping.assignment:
        if actor not in app.actors:
            raise MappingError(f"{where} maps unknown actor '{actor}' (actors of "
                               f"'{app.name}': {', '.join(app.actors)})",
                               mapping.origins.get(actor, mapping.origin))
    for actor, pe in mapping.assignment.items():
        element = arch.elements.get(pe)
        if element is None or not element.is_pe:
            what = "a communication node, not a PE" if element is not None else "an unknown PE"
            raise MappingError(f"{where} puts actor '{actor}' on '{pe}', {what} "
                               f"(PEs of '{arch.name}': {', '.join(arch.pes)})",
                               mapping.origins.get(actor, mapping.origin))
    missing = [a for a in app.actors if a not in mapping.assignment]
    if missing:
        raise MappingError(f"{where} does not map actor{'s' if len(missing) > 1 else ''} "
                           f"{', '.join(repr(a) for a in missing)}; every actor needs a PE",
                           mapping.origin)
    for channel, cns in mapping.routes.items():
        if channel not in app.channels:
            raise MappingError(f"{where} routes unknown channel '{channel}'", mapping.origin)
        for cn in cns:
            element = arch.elements.get(cn)
            if element is None or element.is_pe:
                raise MappingError(f"{where}: route of channel '{channel}' goes via '{cn}', "
                                   "which is not a communication node", mapping.origin)


def pe_route(arch: Architecture, src_pe: str, dst_pe: str) -> tuple[str, ...]:
    """The CNs a channel from PE ``src_pe`` to PE ``dst_pe`` crosses when the mapping
    gives no ``via`` route: on one PE its ``local`` CN if it has one, else none; between
    PEs the fewest-hop route (:meth:`moa.Architecture.route`, which raises
    :class:`~moa.errors.NoRouteError` when there is none)."""
    if src_pe == dst_pe:
        local = arch.elements[src_pe].local
        return (local,) if local else ()
    return arch.route(src_pe, dst_pe)


def channel_route(app: SDFGraph, arch: Architecture, mapping: Mapping, channel: str
                  ) -> tuple[str, ...]:
    """The CNs that channel ``channel`` crosses under ``mapping``: the mapping's ``via``
    route if given (checked link by link), else :func:`pe_route`."""
    ch = app.channels[channel]
    src, dst = mapping.assignment[ch.src], mapping.assignment[ch.dst]
    fixed = mapping.routes.get(channel)
    if fixed is not None:
        hops = (src, *fixed, dst) if src != dst else (src, *fixed, src)
        graph = arch.graph()
        for a, b in zip(hops, hops[1:]):
            if not graph.has_edge(a, b):
                raise MappingError(f"mapping '{mapping.name}': route of channel '{channel}' "
                                   f"needs a link {a} -- {b}, which the architecture lacks",
                                   mapping.origin)
        return tuple(fixed)
    try:
        return pe_route(arch, src, dst)
    except NoRouteError as exc:
        raise NoRouteError(f"mapping '{mapping.name}': channel '{channel}' ({ch.src} on "
                           f"{src} -> {ch.dst} on {dst}): {exc}",
                           ch.origin or mapping.origin) from None


def place_tokens(app: SDFGraph, arch: Architecture, mapping: Mapping, activity,
                 metric: str | None = None, charge: bool = True) -> dict[str, list]:
    """Element name → the token groups it handles under ``mapping`` (every element
    present, idle ones with an empty list).  With ``metric``, the memory traffic of
    ``roofline`` PEs is placed on the CNs too (:func:`mapping.semantics.traffic.place_memory_traffic`);
    without it, only the tokens of the SDF iteration.

    A channel's tokens go to every CN of its route whose ``charge`` is ``self`` or
    ``both``; for a CN whose charge is ``ends`` or ``both`` a :class:`ChargedToken` copy
    goes to the producer's PE and one to the consumer's (two to the same PE when both
    ends share it).  ``charge=False`` places as if every CN were ``self`` (intensive
    metrics).  Memory traffic is not SDF communication and is never charged."""
    placed: dict[str, list] = {name: [] for name in arch.elements}
    for actor, tokens in activity.processing.items():
        placed[mapping.assignment[actor]].append(tokens)
    elements = arch.elements
    charging = charge and arch.charging
    for channel, tokens in activity.communication.items():
        route = channel_route(app, arch, mapping, channel)
        if not charging:
            for cn in route:
                placed[cn].append(tokens)
            continue
        ch = app.channels[channel]
        ends = mapping.assignment[ch.src], mapping.assignment[ch.dst]
        for cn in route:
            element = elements[cn]
            if element.keeps_tokens:
                placed[cn].append(tokens)
            if element.charges_ends:
                copy = charged_copy(tokens, cn)
                for pe in ends:
                    placed[pe].append(copy)
    if metric is not None:
        place_memory_traffic(arch, placed, metric)
    return placed
