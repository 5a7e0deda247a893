"""Units of metrics and parameters (``metric time [unit = "s"]``, ``param S = 1024
[unit = "B"]``): a declared unit wins; else a metric takes the unit its cost models'
paper states, when every element that prices the metric with a model of known unit
agrees on it.

Where two units meet (a measured column's unit and its metric's), :func:`scale` converts
with pint, imported only then: ``ms`` to ``s`` is 0.001, ``J`` to ``s`` an error naming
both.  Besides pint's own units, ``ops`` (also ``op``, ``FLOP``, ``flop``) counts
operations."""
from __future__ import annotations

import re
from functools import lru_cache

#: the units of the quantities whose unit follows from the formats themselves
#: (a channel's ``bytes``, an actor's ``ops``; LogCA's granularity g is in bytes)
BYTES, OPS = "B", "ops"


#: the binary prefixes of sizes in bytes, largest first: mapeval reads and writes sizes
#: in binary units, as LogCA's power-of-two granularities (its "KB" is 1024 bytes)
BINARY_PREFIXES = (("T", 2 ** 40), ("G", 2 ** 30), ("M", 2 ** 20), ("K", 2 ** 10))


def binary_size(value: float) -> str:
    """A size in bytes with a binary (IEC) prefix: ``512 B``, ``4 KiB``, ``1.5 MiB``
    (:data:`BINARY_PREFIXES`; KiB says so where "KB" or "kB" would not)."""
    for prefix, size in BINARY_PREFIXES:
        if abs(value) >= size:
            return f"{value / size:.3g} {prefix}i{BYTES}"
    return f"{value:.4g} {BYTES}"


def default_unit(metric: str, elements) -> str | None:
    """The unit the cost models pricing ``metric`` on ``elements`` (objects with a
    ``costs`` mapping of metric -> cost spec or model) state for it (their ``units``):
    the one unit every model of known unit agrees on, else None."""
    from moa.cost_models import model_class
    from moa.errors import CostModelError

    found = set()
    for element in elements:
        spec = element.costs.get(metric)
        model = getattr(spec, "model", None) if spec is not None else None
        name = model if isinstance(model, str) else getattr(spec, "name", None)
        if name is None:
            continue
        try:
            unit = model_class(name).units.get(metric)
        except CostModelError:
            continue
        if unit is not None:
            found.add(unit)
    return found.pop() if len(found) == 1 else None


def per(numerator: str | None, denominator: str | None) -> str | None:
    """The unit of a ratio, ``ops/s``; None when the denominator's unit is unknown."""
    if not denominator:
        return None
    return f"{numerator or '1'}/{denominator}"



class UnitError(ValueError):
    """Two units that do not convert, or a unit pint does not know."""


#: ``NAME [UNIT]``: a unit in a measurement table's header (``time [ms]``); a space
#: before the bracket, so that ``quanta_big[0]`` stays a name
HEADER_UNIT = re.compile(r"^(?P<name>.*\S)\s+\[(?P<unit>[^\[\]]+)\]\s*$")


def split_unit(header: str) -> tuple[str, str | None]:
    """``'time [ms]'`` -> ``('time', 'ms')``; a header without a unit -> ``(header, None)``."""
    m = HEADER_UNIT.match(header)
    return (m["name"], m["unit"].strip()) if m else (header, None)


@lru_cache(maxsize=1)
def _registry():
    import pint
    # no disk cache: pint's shared one (":auto:") keeps the paths of the installation
    # that wrote it and fails once that installation is removed (a deleted virtual
    # environment); parsing the definitions costs about 0.2 s once per process
    registry = pint.UnitRegistry(cache_folder=None)
    registry.define("operation = [operation] = op = ops = FLOP = flop")
    return registry


def scale(unit: str, to: str) -> float:
    """The factor that turns a value in ``unit`` into one in ``to`` (``scale('ms', 's')``
    is 0.001); equal spellings are 1 without asking pint.  Raises :class:`UnitError`
    naming both when they measure different things or one is unknown."""
    if unit.strip() == to.strip():
        return 1.0
    import pint
    registry = _registry()
    try:
        return float(registry.Quantity(1.0, unit).to(to).magnitude)
    except pint.DimensionalityError:
        raise UnitError(f"'{unit}' does not convert to '{to}' ({_dimension(unit)} against "
                        f"{_dimension(to)})") from None
    except (pint.UndefinedUnitError, pint.errors.DefinitionSyntaxError, AttributeError,
            TypeError, ValueError) as exc:
        raise UnitError(f"'{unit}' or '{to}' is not a unit ({exc})") from None


def _dimension(unit: str) -> str:
    dimension = str(_registry().Quantity(1.0, unit).dimensionality)
    return "a pure number" if dimension == "dimensionless" else dimension
