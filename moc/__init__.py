"""Models of Computation: Synchronous Dataflow graphs and their analyses.

``moc`` knows nothing of architectures; it hands tokens to whoever evaluates them.
"""
from moc.errors import SDFError, InconsistentGraphError, DeadlockError, ExpansionTooLargeError, \
    LimitError
from moc.graph import Actor, Channel, SDFGraph
from moc.repetition import repetition_vector
from moc.deadlock import (check_deadlock, firing_sequence, iteration_firings,
                          strongly_connected_components)
from moc.activity import Activity, TokenGroup, activity
from moc.hsdf import hsdf_expansion
from moc.cycle_ratio import CycleRatio, UnboundedCycleError, max_cycle_ratio
from moc.self_timed import Firing
from moc.timing import ThroughputResult, TimingAnalysis, analyse, check_live, throughput
from moc.phases import Phases
from moc.tradeoff import StoragePoint, TradeOff, tradeoff

__all__ = [
    "Actor", "Channel", "SDFGraph", "SDFError", "InconsistentGraphError", "DeadlockError",
    "ExpansionTooLargeError", "LimitError", "repetition_vector", "check_deadlock",
    "firing_sequence", "iteration_firings", "strongly_connected_components",
    "Activity", "TokenGroup", "activity", "hsdf_expansion", "CycleRatio",
    "UnboundedCycleError", "max_cycle_ratio", "Firing", "ThroughputResult", "TimingAnalysis",
    "analyse", "check_live", "throughput", "Phases", "StoragePoint", "TradeOff", "tradeoff",
]
