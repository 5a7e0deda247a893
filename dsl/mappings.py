"""The object a ``.map`` file describes: each actor on a PE, with optional fixed routes.

It is a plain record of names (no lark, no evaluation), so every layer can hold one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping as MappingT

from dsl.errors import ParseError


@dataclass(frozen=True)
class Mapping:
    """``assignment``: actor → PE.  ``routes``: channel → CNs it must cross (``via``).
    ``origins`` keeps the source position of each actor's line for error messages."""

    name: str
    assignment: MappingT[str, str]
    routes: MappingT[str, tuple[str, ...]] = field(default_factory=dict)
    origin: tuple | None = field(default=None, compare=False, repr=False)
    origins: MappingT[str, tuple] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "assignment", MappingProxyType(dict(self.assignment)))
        object.__setattr__(self, "routes", MappingProxyType(
            {k: tuple(v) for k, v in self.routes.items()}))

    @classmethod
    def from_text(cls, text: str, name: str = "inline") -> "Mapping":
        """Parse the inline form ``a=pe0,b=pe1[2]`` of ``--map``."""
        assignment = {}
        for item in filter(None, (part.strip() for part in _split_top_level(text))):
            actor, sep, pe = item.partition("=")
            if not sep or not actor.strip() or not pe.strip():
                raise ParseError(f"--map: expected ACTOR=PE, got '{item}'")
            if actor.strip() in assignment:
                raise ParseError(f"--map: actor '{actor.strip()}' is mapped twice")
            assignment[actor.strip()] = pe.strip()
        return cls(name, assignment)


def _split_top_level(text):
    """Split on commas outside brackets (``b=pe1[2]`` keeps its index)."""
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            yield text[start:i]
            start = i + 1
    yield text[start:]
