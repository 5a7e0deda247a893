"""Models of Computation: Synchronous Dataflow graphs and their analyses.

``moc`` knows nothing of architectures; it hands tokens to whoever evaluates them.
Names are loaded on first use, so that ``moc.errors`` or the graph alone do not import
numpy, scipy or networkx.
"""
from __future__ import annotations

import sys
import types

from moc.lazy_names import lazy_getattr

__all__ = [
    "Actor", "Channel", "SDFGraph", "SDFError", "InconsistentGraphError", "DeadlockError",
    "ExpansionTooLargeError", "LimitError", "repetition_vector", "check_deadlock",
    "firing_sequence", "iteration_firings", "strongly_connected_components",
    "Activity", "TokenGroup", "activity", "hsdf_expansion", "CycleRatio",
    "UnboundedCycleError", "max_cycle_ratio", "Firing", "Firings", "ThroughputResult",
    "TimingAnalysis",
    "analyse", "check_live", "throughput", "Phases", "InitialPhases", "StoragePoint",
    "TradeOff", "tradeoff",
]

#: name -> the module that defines it
_LAZY = {
    **dict.fromkeys(("SDFError", "InconsistentGraphError", "DeadlockError",
                     "ExpansionTooLargeError", "LimitError", "UnboundedCycleError"),
                    "moc.errors"),
    **dict.fromkeys(("Actor", "Channel", "SDFGraph"), "moc.graph"),
    "repetition_vector": "moc.repetition",
    **dict.fromkeys(("check_deadlock", "firing_sequence", "iteration_firings",
                     "strongly_connected_components"), "moc.deadlock"),
    "check_live": "moc.liveness",
    **dict.fromkeys(("Activity", "TokenGroup", "activity"), "moc.activity"),
    "hsdf_expansion": "moc.hsdf",
    **dict.fromkeys(("CycleRatio", "max_cycle_ratio"), "moc.cycle_ratio"),
    **dict.fromkeys(("Firing", "Firings"), "moc.self_timed"),
    **dict.fromkeys(("ThroughputResult", "TimingAnalysis", "analyse", "throughput"),
                    "moc.timing"),
    **dict.fromkeys(("Phases", "InitialPhases"), "moc.phases"),
    **dict.fromkeys(("StoragePoint", "TradeOff", "tradeoff"), "moc.tradeoff"),
}


__getattr__ = lazy_getattr(__name__, _LAZY)


class _Package(types.ModuleType):
    """The package, whose names ``activity`` and ``tradeoff`` stay the functions when
    the modules of the same names are imported (the import system then sets the
    module as the package's attribute)."""

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and _LAZY.get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
