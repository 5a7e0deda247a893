"""Names of a package served on first use (PEP 562's module ``__getattr__``).

``moc``, ``dsl`` and ``mapping`` declare which module defines each public name; the
module is imported only when the name is first read, so that a command loads only what
it uses.  (``moa`` keeps its own few lines: it may not import ``moc``.)
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable


def lazy_getattr(package: str, defined_in: dict[str, str]) -> Callable[[str], object]:
    """The ``__getattr__`` of ``package``: ``name`` imported from ``defined_in[name]``
    and kept in the package's namespace, so that later reads cost nothing."""
    def __getattr__(name: str) -> object:
        module = defined_in.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value
    return __getattr__
