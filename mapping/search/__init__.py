"""Mapping search: exhaustive up to interchangeable PEs, exact MILP, and seeded
heuristics with an evaluation budget, all evaluating candidates in numpy batches.

The names below load on first use, so that the strategy registry
(:mod:`mapping.search.strategies`) can be read without numpy.
"""
from __future__ import annotations

import importlib

_HOMES = {
    "Archive": "common", "Progress": "common", "SearchError": "common",
    "SearchResult": "common", "Space": "common", "build_space": "common",
    "nondominated": "common", "parse_pins": "common", "hypervolume": "common",
    "search": "engine", "choose_strategy": "engine",
    "STRATEGIES": "strategies", "heuristics": "strategies",
}

__all__ = list(_HOMES)


def __getattr__(name):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'mapping.search' has no attribute '{name}'")
    return getattr(importlib.import_module(f"mapping.search.{home}"), name)
