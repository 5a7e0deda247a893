"""The cost-model library: import registers the built-in models."""
from moa.cost_models.base import (FACT, NON_NEGATIVE, Bounds, CostModel, MemoryTraffic,
                                  Parameters, attribute, fittable_parameters,
                                  parameter_bounds, parameter_start_scale, start_scale)
from moa.cost_models.registry import (ENTRY_POINT_GROUP, available_models, check_arguments,
                                      make_model, model_class, register)
from moa.cost_models import linear  # noqa: F401  (registers lsla, gsla, gsla_power)
from moa.cost_models import roofline  # noqa: F401  (registers roofline, bandwidth)
from moa.cost_models import logca  # noqa: F401  (registers logca)
from moa.cost_models import lookup  # noqa: F401  (registers lookup)
from moa.cost_models import gpu  # noqa: F401  (registers gpu)

__all__ = ["FACT", "NON_NEGATIVE", "Bounds", "CostModel", "MemoryTraffic", "Parameters",
           "attribute", "fittable_parameters", "parameter_bounds", "parameter_start_scale",
           "start_scale", "ENTRY_POINT_GROUP",
           "available_models", "check_arguments", "make_model", "model_class", "register"]
