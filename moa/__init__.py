"""Models of Architecture: PEs, CNs, links and the cost-model library.

``moa`` knows nothing of SDF beyond the tokens it is handed.
"""
from moa.errors import ArchitectureError, CostModelError, NoRouteError
from moa.architecture import AGGREGATES, Architecture, CostSpec, Element, ElementType
from moa.cost_models import CostModel, Parameters, available_models, make_model, register

__all__ = ["ArchitectureError", "CostModelError", "NoRouteError", "AGGREGATES", "Architecture",
           "CostSpec", "Element", "ElementType", "CostModel", "Parameters", "available_models",
           "make_model", "register"]
