"""Mappings of SDF applications onto MoA architectures, and their evaluation."""
from dsl.mappings import Mapping
from mapping.errors import MappingError
from mapping.evaluate import Evaluation, ElementValue, evaluate

__all__ = ["Mapping", "MappingError", "Evaluation", "ElementValue", "evaluate"]
