"""Open sets of named things (aggregations, metrics rules, strategies, plots, formats).

A :class:`Registry` maps a name to an object and a one-line help text.  An entry may be
given as ``"module:attribute"`` and is imported on first :meth:`Registry.get`, so that the
command line can list names and help (``--aggregate {sum,max,...}``) without importing
what they need (matplotlib, scipy).  Adding a member is one module plus one registry line.
"""
from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import GenericAlias

from mapping.errors import InputError


class Registry:
    """Named members of one kind; ``what`` names the kind in errors (``"aggregation"``).
    ``Registry[Kind]`` says the kind in an annotation, as ``list[int]`` does (without
    :mod:`typing`, about 2 ms of every command's start-up)."""

    __class_getitem__ = classmethod(GenericAlias)

    def __init__(self, what: str, error: type[Exception] = InputError):
        self.what = what
        self.error = error
        self._entries: dict[str, object] = {}
        self._help: dict[str, str] = {}

    def add(self, name: str, member: object, help: str = "") -> None:
        """Register ``member`` (or its ``"module:attribute"`` path) under ``name``."""
        if name in self._entries and self._entries[name] is not member:
            raise ValueError(f"{self.what} '{name}' is registered twice")
        self._entries[name] = member
        self._help[name] = help

    def register(self, name: str | None = None, help: str | None = None):
        """Class or function decorator: ``@REGISTRY.register()`` uses ``obj.name`` and the
        first line of its docstring unless given."""
        def decorate(obj):
            key = name or getattr(obj, "name")
            text = help if help is not None else (obj.__doc__ or "").strip().split("\n")[0]
            self.add(key, obj, text)
            return obj
        return decorate

    def get(self, name: str):
        try:
            member = self._entries[name]
        except KeyError:
            raise self.error(f"unknown {self.what} '{name}' "
                             f"(known: {', '.join(self.names())})") from None
        if isinstance(member, str):
            module, _, attribute = member.partition(":")
            member = getattr(importlib.import_module(module), attribute)
            self._entries[name] = member
        return member

    def names(self) -> list[str]:
        return list(self._entries)

    def help(self, name: str) -> str:
        return self._help[name]

    def describe(self, separator: str = "; ") -> str:
        """``name: help`` of every member, for a command's ``--help``."""
        return separator.join(f"{n}: {h}" if h else n for n, h in self._help.items())

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.what!r}: {', '.join(self._entries)})"
