"""Mappings of SDF applications onto MoA architectures, and their evaluation.

Names are loaded on first use: the command line starts without numpy, pydantic or
networkx until a command needs them.
"""
from __future__ import annotations

import importlib

__all__ = ["Mapping", "MappingError", "Evaluation", "ElementValue", "evaluate", "Problem",
           "bind_problem"]

_LAZY = {"Mapping": "dsl.mappings", "MappingError": "mapping.errors",
         "Evaluation": "mapping.evaluation.reference", "ElementValue": "mapping.evaluation.reference",
         "evaluate": "mapping.evaluation.reference", "Problem": "mapping.semantics.problem",
         "bind_problem": "mapping.semantics.problem"}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mapping' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
