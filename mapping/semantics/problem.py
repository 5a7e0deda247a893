"""A problem: an application and an architecture bound to one set of parameter values."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from moc import Activity, SDFGraph, activity, check_deadlock, repetition_vector
from moc.initial_phases import after_initial_phases
from mapping.overrides import check_overrides

if TYPE_CHECKING:
    from moa import Architecture


@dataclass(frozen=True)
class Problem:
    """``app`` and ``arch`` with every expression evaluated, the repetition vector checked
    for deadlock, and the activity of one iteration counted.

    ``Problem(app, arch, params=None)`` binds the two with ``params`` overriding their
    defaults (as :func:`bind_problem`); :func:`mapping.evaluation.reference.evaluate` and
    :func:`mapping.search.search` take the result directly.  ``params`` then holds every
    parameter's value."""

    app: SDFGraph
    arch: Architecture
    params: Mapping[str, Any] | None = None
    repetitions: Mapping[str, int] | None = None
    activity: Activity | None = None

    def __post_init__(self):
        if self.repetitions is None or self.activity is None:
            bound = bind_problem(self.app, self.arch, self.params)
            for name in ("app", "arch", "params", "repetitions", "activity"):
                object.__setattr__(self, name, getattr(bound, name))

    def __repr__(self):
        return (f"Problem(app={self.app.name!r}, arch={self.arch.name!r}, "
                f"actors={len(self.app.actors)}, pes={len(self.arch.pes)})")


def bind_problem(app: SDFGraph, arch: Architecture,
                 params: Mapping[str, Any] | None = None, *,
                 cache: dict | None = None) -> Problem:
    """Bind ``app`` and ``arch`` with ``params`` overriding their defaults.

    A parameter declared in both files is set in both by one override; an override that
    neither file declares is an error, so that a typo never goes unnoticed.  ``cache``
    (a dict the caller keeps for one ``app`` and ``arch``) reuses the bound application
    (with its repetition vector and activity) and the bound architecture of earlier
    calls that gave their own parameters the same values: each binds from its own
    parameters only, and many measurement rows share one of the two.  An application
    with initialisation phases is taken as it stands once they have fired
    (:func:`moc.initial_phases.after_initial_phases`): a mapping is costed on the
    periodic regime, the one-off initialisation firings left unmapped.
    """
    params = dict(params or {})
    check_overrides(params, app.params, arch.params)
    cache = {} if cache is None else cache
    key = ("app", tuple(sorted((k, v) for k, v in params.items() if k in app.params)))
    got = cache.get(key)
    if got is None:
        # an actor's initialisation phases run once: a mapping is costed on the periodic
        # regime they lead to (the deadlock of an initialisation that cannot end raised)
        bound_app = after_initial_phases(app.bind(params))
        # the repetition vector and the deadlock check read the rates and delays only
        rates = ("rates", tuple((c.src, c.dst, c.prod, c.cons, c.delay)
                                for c in bound_app.channels.values()))
        q = cache.get(rates)
        if q is None:
            q = repetition_vector(bound_app)
            check_deadlock(bound_app, q)
            cache[rates] = q
        got = cache[key] = (bound_app, q, activity(bound_app, q))
    bound_app, q, act = got
    key = ("arch", tuple(sorted((k, v) for k, v in params.items() if k in arch.params)))
    bound_arch = cache.get(key)
    if bound_arch is None:
        bound_arch = cache[key] = arch.bind(params)
    values = {**bound_app.params, **bound_arch.params}
    return Problem(bound_app, bound_arch, values, q, act)
