"""Mappings of SDF applications onto MoA architectures, and their evaluation.

Names are loaded on first use: the command line starts without numpy, pydantic or
networkx until a command needs them.
"""
from __future__ import annotations

from moc.lazy_names import lazy_getattr

__all__ = ["Mapping", "MappingError", "Evaluation", "ElementValue", "evaluate", "Problem",
           "bind_problem"]

_LAZY = {"Mapping": "dsl.mappings", "MappingError": "mapping.errors",
         "Evaluation": "mapping.evaluation.reference", "ElementValue": "mapping.evaluation.reference",
         "evaluate": "mapping.evaluation.reference", "Problem": "mapping.semantics.problem",
         "bind_problem": "mapping.semantics.problem"}


__getattr__ = lazy_getattr(__name__, _LAZY)
