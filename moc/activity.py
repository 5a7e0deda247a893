"""The activity of one graph iteration, as LSLA counts it: tokens handed to a MoA.

Actor ``a`` contributes ``q(a)`` processing tokens carrying its ``quanta`` and attributes.
Channel ``e`` contributes ``q(src(e))`` communication tokens, one per producer firing,
of ``prod(e)·size(e)`` bytes each; their ``gamma`` defaults to the producer's
(Pelcat et al., TCAD 2018; Payvar et al., DAES 2021, §3).

A cyclo-static actor's firings are its phases (``q`` counts them): a value given per
phase enters its tokens as its mean over a cycle, which a cost linear in it (LSLA,
GSLA) prices as the sum over the phases.
"""
from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from moc.graph import SDFGraph
from moc.phases import mean, phase_counts
from moc.record import field, record
from moc.repetition import repetition_vector


@record
class TokenGroup:
    """``count`` identical tokens of ``quanta`` with ``attrs``, from actor or channel ``source``."""

    source: str
    count: int
    quanta: float
    attrs: Mapping[str, float] = field(default_factory=dict)

    def get(self, key, default=None):
        if key == "quanta":
            return self.quanta
        return self.attrs.get(key, default)


@record
class Activity:
    repetitions: Mapping[str, int]
    processing: Mapping[str, TokenGroup]
    communication: Mapping[str, TokenGroup]

    @property
    def token_counts(self) -> dict[str, int]:
        return {"processing": sum(t.count for t in self.processing.values()),
                "communication": sum(t.count for t in self.communication.values())}


def activity(graph: SDFGraph, q: Mapping[str, int] | None = None) -> Activity:
    """Processing tokens per actor and communication tokens per channel of one iteration."""
    q = repetition_vector(graph) if q is None else q
    n = phase_counts(graph)
    processing = {}
    for actor in graph.actors.values():
        attrs = {k: mean(v, n[actor.name]) for k, v in actor.attrs.items()}
        quanta = attrs.pop("quanta", 1)
        processing[actor.name] = TokenGroup(actor.name, q[actor.name], quanta, MappingProxyType(attrs))
    communication = {}
    for ch in graph.channels.values():
        attrs = dict(ch.attrs)
        producer = graph.actors[ch.src].attrs
        if "gamma" not in attrs and "gamma" in producer:
            attrs["gamma"] = mean(producer["gamma"], n[ch.src])
        quanta = mean(ch.prod, n[ch.src]) * ch.size
        attrs.setdefault("bytes", quanta)
        communication[ch.name] = TokenGroup(ch.name, q[ch.src], quanta, MappingProxyType(attrs))
    return Activity(MappingProxyType(dict(q)), MappingProxyType(processing),
                    MappingProxyType(communication))
