"""Liveness: can one iteration of a bound graph complete?  The one place that tells how:
an SDF graph by the symbolic execution of :mod:`moc.deadlock`, a cyclo-static one by
its K-periodic schedules with that execution beside them (:mod:`moc.csdf_kperiodic`,
numpy: imported for such a graph only, so that checking an SDF graph loads no
numerical library)."""
from __future__ import annotations

from collections.abc import Mapping

from moc.deadlock import check_deadlock
from moc.graph import SDFGraph
from moc.initial_phases import after_initial_phases, has_initial_phases
from moc.phases import cyclo_static
from moc.repetition import repetition_vector


def check_live(graph: SDFGraph, q: Mapping[str, int] | None = None) -> None:
    """Raise :class:`DeadlockError` if one iteration of the bound ``graph`` cannot
    complete, naming the actors and the channels they starve on.  An SDF graph by the
    symbolic execution of one iteration (:func:`moc.deadlock.check_deadlock`); a
    cyclo-static one by its K-periodic schedules with every firing taking one time unit
    (:func:`moc.csdf_kperiodic.check_phased_live`: a schedule proves it live, in time
    that follows the periodicity, not the firings of an iteration), with the symbolic
    execution beside them at each ``K`` that admits no schedule, which proves a
    deadlock once it stalls and names a circuit of waits there (where the schedules
    prove it first, the execution goes on to name it: ``NAMING_CHECKS``).  A graph with
    initialisation phases is live where they
    complete and its periodic phases after them are
    (:func:`moc.initial_phases.after_initial_phases`)."""
    if has_initial_phases(graph):
        graph, q = after_initial_phases(graph), None
    q = repetition_vector(graph) if q is None else q
    if not cyclo_static(graph):
        check_deadlock(graph, q)
        return
    from moc.csdf_kperiodic import check_phased_live
    check_phased_live(graph, q)
