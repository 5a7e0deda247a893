"""Parameter overrides (``-p NAME=VALUE``, a measurement table's columns): each must name
a parameter that the application or the architecture declares, so that a typo never
goes unnoticed.  The rule of :func:`mapping.semantics.problem.bind_problem` and of the
analyses of an application alone, which need no architecture (nor this package's
semantics)."""
from __future__ import annotations

from collections.abc import Mapping

from mapping.errors import MappingError


def check_overrides(params: Mapping[str, object], *declared: Mapping[str, object]) -> None:
    """Refuse an override that none of the ``declared`` parameter sets has (a typo must
    never go unnoticed), listing the declared names."""
    unknown = [k for k in params if not any(k in d for d in declared)]
    if unknown:
        names = sorted(set().union(*declared)) if declared else []
        raise MappingError(f"unknown parameter {', '.join(repr(k) for k in unknown)} "
                           f"(declared: {', '.join(names) or 'none'})")
