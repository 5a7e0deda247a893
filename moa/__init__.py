"""Models of Architecture: PEs, CNs, links and the cost-model library.

``moa`` knows nothing of SDF beyond the tokens it is handed.  Names are loaded on first
use, so that ``moa.errors`` costs nothing to import.
"""
from __future__ import annotations

import importlib

__all__ = ["ArchitectureError", "CostModelError", "NoRouteError", "Architecture",
           "CostSpec", "Element", "ElementType", "CostModel", "Parameters", "available_models",
           "make_model", "register"]

_LAZY = {
    **dict.fromkeys(("ArchitectureError", "CostModelError", "NoRouteError"), "moa.errors"),
    **dict.fromkeys(("Architecture", "CostSpec", "Element", "ElementType"),
                    "moa.architecture"),
    **dict.fromkeys(("CostModel", "Parameters", "available_models", "make_model", "register"),
                    "moa.cost_models"),
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'moa' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
