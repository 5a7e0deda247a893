"""Memory traffic of element-level models, and which PE each CN token belongs to.

A ``roofline`` PE moves ``D`` bytes to and from its ``memory`` CN.  After the
tokens of the SDF iteration are placed, :func:`place_memory_traffic` adds one synthetic
:class:`TrafficToken` (count 1, ``quanta = bytes``) to every CN on the route from the PE
to its memory CN: ``D`` on the CNs before the memory (Gables eq. 16, Bus[j]) and
``miss·D`` on the memory CN itself (Gables eq. 15, memory-side cache).

:func:`tokens_by_pe` attributes every token on a CN to one PE, as the ``exclusive``
aggregation needs: a traffic token to the PE that causes it, a communication token to
the PE of the channel's producer (the producer writes during its own phase).

A :class:`ChargedToken` is a copy of a channel's tokens on a CN whose ``charge`` is
``ends`` or ``both``, placed on a PE at one end of the channel.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Mapping as MappingT

import numpy as np

from moa import Architecture, ArchitectureError, NoRouteError
from moc import SDFGraph
from moc.activity import TokenGroup
from moc.record import record
from dsl.mappings import Mapping
from mapping.errors import on_element


@record
class TrafficToken(TokenGroup):
    """Memory traffic of PE ``pe`` crossing a CN: ``quanta`` = ``bytes`` = the bytes."""

    pe: str = ""


@record
class ChargedToken(TokenGroup):
    """Communication tokens of CN ``cn`` charged to a PE at one end of their channel: the
    PE's value gains ``lambda`` times their value by ``cn``'s own rule."""

    cn: str = ""


def charged_copy(tokens: TokenGroup, cn: str) -> ChargedToken:
    return ChargedToken(tokens.source, tokens.count, tokens.quanta, tokens.attrs, cn=cn)


def traffic_model(element, metric: str):
    """The model whose memory traffic ``element`` generates: its model for ``metric`` if
    that one has a memory, else its ``time`` model if that one has (the traffic is a
    physical quantity, so e.g. an ``energy`` evaluation sees it on the CNs too)."""
    for m in (metric, "time"):
        model = element.model(m)
        if model is not None and model.memory_route() is not None:
            return model
    return None


def place_memory_traffic(arch: Architecture, placed: dict[str, list], metric: str = "time"
                         ) -> dict[str, list]:
    """Append to ``placed`` (element → token groups, modified in place and returned) the
    memory traffic of every PE whose model has a ``memory`` CN."""
    for name in arch.pes:
        element = arch.elements[name]
        model = traffic_model(element, metric)
        own = [t for t in placed[name] if not isinstance(t, ChargedToken)]    # not traffic
        if model is None or not own:
            continue
        traffic = on_element(element, metric, model, model.memory_traffic, own)
        if traffic is None or traffic.bytes == 0:
            continue
        for cn in traffic_route(arch, name, model, traffic.memory):
            placed[cn].append(traffic_token(name, traffic.memory, traffic.on(cn)))
    return placed


def traffic_route(arch: Architecture, pe: str, model, memory: str) -> list[str]:
    """The CNs the memory traffic of PE ``pe`` (its ``model``'s) crosses to its
    ``memory`` CN, the memory last: every placement of memory traffic routes it here.
    A memory that is no CN, or no route to it, is an error at the PE."""
    element = arch.elements[pe]
    target = arch.elements.get(memory)
    if target is None or target.is_pe:
        what = "a PE" if target is not None else "unknown"
        raise ArchitectureError(
            f"element '{pe}': memory '{memory}' of its {model.name} model is "
            f"{what}; it must name a communication node (CNs: {', '.join(arch.cns)})",
            element.origin)
    try:
        return arch.route_to_cn(pe, memory)
    except NoRouteError as exc:
        raise NoRouteError(f"element '{pe}': memory traffic: {exc}", element.origin) \
            from None


def traffic_token(pe: str, memory: str, size: float) -> TrafficToken:
    """The token of ``size`` bytes of PE ``pe``'s traffic to ``memory`` on one CN:
    count 1, ``quanta = bytes = size``."""
    return TrafficToken(f"{pe}->{memory}", 1, size, MappingProxyType({"bytes": size}), pe=pe)


def token_owner(app: SDFGraph, mapping: Mapping, token) -> str:
    """The PE a token on a CN belongs to (see module docstring)."""
    if isinstance(token, TrafficToken):
        return token.pe
    return mapping.assignment[app.channels[token.source].src]


def tokens_by_pe(app: SDFGraph, arch: Architecture, mapping: Mapping,
                 placed: MappingT[str, list]) -> dict[str, dict[str, list]]:
    """PE → CN → the tokens on that CN attributed to that PE (:func:`token_owner`)."""
    out: dict[str, dict[str, list]] = {pe: {} for pe in arch.pes}
    for cn in arch.cns:
        for token in placed[cn]:
            out[token_owner(app, mapping, token)].setdefault(cn, []).append(token)
    return out


def split_charged(tokens) -> tuple[list, dict[str, list]]:
    """A PE's own tokens, and the copies each CN charges to it (:class:`ChargedToken`)."""
    if not any(type(t) is ChargedToken for t in tokens):
        return tokens, {}
    own: list = []
    charged: dict[str, list] = {}
    for t in tokens:
        (charged.setdefault(t.cn, []) if type(t) is ChargedToken else own).append(t)
    return own, charged


#: the PEs that pay for a channel's charged copies, one copy each: its producer's and
#: its consumer's (one PE pays twice when both ends are on it)
CHARGED_ENDS = 2


def end_counts(P: int) -> np.ndarray:
    """``(P², P)``: how many of a channel's two charged ends are on PE ``p`` when its
    ends are on PEs ``s`` and ``d`` (row ``s·P + d``): 0, 1 or 2, each paying
    :func:`charged_paid`; every row sums to :data:`CHARGED_ENDS`."""
    pair = np.arange(P * P)
    counts = np.zeros((P * P, P))
    for end in (pair // P, pair % P):
        counts[pair, end] += 1.0
    return counts


def charged_paid(lambda_: float, cn_value):
    """What one end PE pays for the copies a CN charges to it (``charge = ends|both``),
    whose value by the CN's own rule is ``cn_value``: ``lambda · cn_value``,
    communication scaled by ``lambda`` as on the CN itself.  Numbers or arrays alike:
    every engine (the reference evaluator, the row batch, the search's tables, the
    delta and exact searches) pays a charged copy here."""
    return lambda_ * cn_value


def channel_cost(lambda_: float, route_cost, charged):
    """A channel's whole contribution to a sum between two PEs: ``lambda`` times its
    route's CN cost ``route_cost`` and its charged copies ``charged`` at both ends
    (:data:`CHARGED_ENDS`, :func:`charged_paid`)."""
    return lambda_ * (route_cost + CHARGED_ENDS * charged)
