"""The registry of cost models by name, open to third parties through entry points.

A package registers a model by exposing its class in the ``mapeval.cost_models``
entry-point group, e.g. in its ``pyproject.toml``::

    [project.entry-points."mapeval.cost_models"]
    my_model = "my_package.models:MyModel"
"""
from __future__ import annotations

from importlib.metadata import entry_points
from typing import Mapping

from pydantic import ValidationError

from moa.cost_models.base import CostModel
from moa.errors import CostModelError

ENTRY_POINT_GROUP = "mapeval.cost_models"

_registry: dict[str, type[CostModel]] = {}
_entry_points_loaded = False


def register(cls: type[CostModel]) -> type[CostModel]:
    """Class decorator: make ``cls`` usable as ``cls.name(...)`` in ``.moa`` files."""
    existing = _registry.get(cls.name)
    if existing is not None and existing is not cls:
        raise CostModelError(f"cost model '{cls.name}' is registered twice "
                             f"({existing.__module__} and {cls.__module__})")
    _registry[cls.name] = cls
    return cls


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        cls = ep.load()
        if not getattr(cls, "name", None):
            cls.name = ep.name
        register(cls)


def available_models() -> list[str]:
    _load_entry_points()
    return sorted(_registry)


def model_class(name: str, where: str = "") -> type[CostModel]:
    cls = _registry.get(name)
    if cls is None:
        _load_entry_points()
        cls = _registry.get(name)
    if cls is None:
        raise CostModelError(f"{where}unknown cost model '{name}' "
                             f"(known: {', '.join(available_models())})")
    return cls


def make_model(name: str, args: Mapping[str, float], where: str = "", origin=None) -> CostModel:
    """Instantiate model ``name`` with validated ``args``; ``where`` prefixes errors
    (e.g. ``"element 'gpu', metric 'time': "``)."""
    try:
        cls = model_class(name, where)
    except CostModelError as exc:
        exc.origin = origin
        raise
    try:
        return cls(cls.Parameters(**args))
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            param = ".".join(str(p) for p in err["loc"]) or "?"
            kind = err["type"]
            if kind == "missing":
                problems.append(f"missing parameter '{param}'")
            elif kind == "extra_forbidden":
                known = ", ".join(cls.Parameters.model_fields)
                problems.append(f"unknown parameter '{param}' (known: {known})")
            else:
                problems.append(f"parameter '{param}' = {err.get('input')!r}: {err['msg'].lower()}")
        raise CostModelError(f"{where}model '{name}': " + "; ".join(problems), origin) from None
