"""Mapping search (SPEC §9): exhaustive up to interchangeable PEs, exact MILP, and seeded
heuristics with an evaluation budget, all evaluating candidates in numpy batches."""
from mapping.search.common import (Archive, Progress, SearchError, SearchResult, Space,
                                   build_space, nondominated, parse_pins)
from mapping.search.engine import HEURISTICS, STRATEGIES, search

__all__ = ["Archive", "Progress", "SearchError", "SearchResult", "Space", "build_space",
           "nondominated", "parse_pins", "HEURISTICS", "STRATEGIES", "search"]
