"""The registry of cost models by name, open to third parties through entry points.

A package registers a model by exposing its class in the ``mapeval.cost_models``
entry-point group, e.g. in its ``pyproject.toml``::

    [project.entry-points."mapeval.cost_models"]
    my_model = "my_package.models:MyModel"
"""
from __future__ import annotations

import difflib
from importlib.metadata import entry_points
from typing import Any, Mapping, Sequence

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
        known = available_models()
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise CostModelError(f"{where}unknown cost model '{name}' "
                             f"(known: {', '.join(known)}){hint}")
    return cls


def call_arguments(name: str, positional: Sequence[Any], keywords: Mapping[str, Any],
                   where: str = "") -> dict[str, Any]:
    """The keyword arguments of the call ``name(*positional, **keywords)``: as Python
    binds a call, positional arguments take the model's parameters in their declared
    order (the fields of its ``Parameters``), and no parameter may be given twice."""
    names = list(model_class(name, where).Parameters.model_fields)
    if len(positional) > len(names):
        raise CostModelError(f"{where}model '{name}' takes at most {len(names)} positional "
                             f"argument{'' if len(names) == 1 else 's'} "
                             f"({', '.join(names)}), got {len(positional)}")
    args = dict(zip(names, positional))
    for key, value in keywords.items():
        if key in args:
            raise CostModelError(f"{where}model '{name}': parameter '{key}' is given twice "
                                 f"(by position and by keyword)")
        args[key] = value
    return args


def make_model(name: str, args: Mapping[str, float], where: str = "", origin=None) -> CostModel:
    """Instantiate model ``name`` with validated ``args``; ``where`` prefixes errors
    (e.g. ``"element 'gpu', metric 'time': "``)."""
    cls = _checked_class(name, where, origin)
    try:
        return cls(cls.Parameters(**args))
    except ValidationError as exc:
        raise CostModelError(f"{where}model '{name}': " + "; ".join(_problems(cls, exc)),
                             origin) from None


def check_arguments(name: str, args: Mapping[str, Any], where: str = "", origin=None) -> None:
    """Check the arguments of ``name(**args)`` that are known now, as :func:`make_model`
    will: an unknown model or parameter, or a value out of its parameter's range, is a
    :class:`CostModelError` prefixed by ``where``.  Arguments that are expressions
    (objects with ``evaluate``) and missing ones wait for :func:`make_model`."""
    cls = _checked_class(name, where, origin)
    known = {k: v for k, v in args.items() if getattr(v, "evaluate", None) is None}
    try:
        cls.Parameters(**known)
    except ValidationError as exc:
        problems = _problems(cls, exc, missing=False)
        if problems:
            raise CostModelError(f"{where}model '{name}': " + "; ".join(problems),
                                 origin) from None


def _checked_class(name, where, origin) -> type[CostModel]:
    try:
        return model_class(name, where)
    except CostModelError as exc:
        exc.origin = origin
        raise


def _problems(cls, exc: ValidationError, missing: bool = True) -> list[str]:
    """The problems of a validation error, one phrase each (``missing`` ones too)."""
    problems = []
    for err in exc.errors():
        param = ".".join(str(p) for p in err["loc"]) or "?"
        kind = err["type"]
        if kind == "missing":
            if missing:
                problems.append(f"missing parameter '{param}'")
        elif kind == "extra_forbidden":
            known = ", ".join(cls.Parameters.model_fields)
            problems.append(f"unknown parameter '{param}' (known: {known})")
        else:
            problems.append(f"parameter '{param}' = {_shown(err.get('input'))}: "
                            f"{err['msg'].lower()}")
    return problems


def _shown(value) -> str:
    """``value`` for a message: an integer too long to read is given by its length
    (``repr`` of one beyond 4,300 digits even raises)."""
    if isinstance(value, int) and abs(value) >= 10 ** 21:
        return f"an integer of about {value.bit_length() * 30103 // 100000 + 1} digits"
    return repr(value)
