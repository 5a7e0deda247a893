"""Mappings of SDF applications onto MoA architectures, and their evaluation."""
from mapping.mapping import Mapping, MappingError
from mapping.evaluate import Evaluation, ElementValue, evaluate

__all__ = ["Mapping", "MappingError", "Evaluation", "ElementValue", "evaluate"]
