"""The search strategies, by name: what ``--strategy`` offers.

Each entry is ``"module:function"`` and is imported when a search runs, so that listing
the strategies (``mapeval search --help``) imports nothing.  A heuristic (and
``exhaustive``) is ``run(task, tracker, rng)`` on one shard (see
:mod:`mapping.search.anneal`); adding a heuristic is that module plus one line here.
``exact`` is ``solve(setup, time_limit)`` and ``auto`` is ``choose_strategy(setup)``,
which names the strategy to run; ``portfolio`` runs the heuristics side by side, one per
shard.
"""
from __future__ import annotations

from mapping.registry import Registry
from mapping.errors import MappingError

STRATEGIES: Registry = Registry("strategy", MappingError)
STRATEGIES.add("auto", "mapping.search.engine:choose_strategy",
               "exhaustive when the canonical enumeration fits the budget (default "
               "1,000,000 mappings), else exact for sum of per-token costs (up to "
               "200,000 channel-pair variables), else portfolio with the budget")
STRATEGIES.add("exhaustive", "mapping.search.exhaustive:run",
               "every mapping up to interchangeable PEs (optimal)")
STRATEGIES.add("exact", "mapping.search.exact:solve",
               "mixed-integer program (HiGHS) or CP-SAT (--engine) for sum/max of "
               "per-token costs: optimal, or at --time-limit the best mapping with its "
               "proven bound and gap; max starts from a portfolio run of --budget "
               "evaluations (default 200,000)")
STRATEGIES.add("greedy", "mapping.search.greedy:run", "steepest descent with restarts")
STRATEGIES.add("multilevel", "mapping.search.multilevel:run",
               "greedy on coarsened graphs (channels' ends joined), coarsest first, then "
               "V-cycles within the PEs of the best mapping")
STRATEGIES.add("anneal", "mapping.search.anneal:run", "simulated annealing, parallel chains")
STRATEGIES.add("genetic", "mapping.search.genetic:run", "genetic algorithm")
STRATEGIES.add("tabu", "mapping.search.tabu:run", "tabu search")
STRATEGIES.add("nsga2", "mapping.search.nsga2:run", "NSGA-II: Pareto fronts, non-convex parts too")
STRATEGIES.add("portfolio", "mapping.search.portfolio:run",
               "multilevel, greedy, tabu and anneal side by side, one per island, as many "
               "islands (up to 4) as the budget affords 100 descents each; genetic where an "
               "island cannot afford two")

#: the engines of ``exact`` (``--engine``): ``solve(setup, time_limit)`` each, or the rule
#: that names one (``auto``)
ENGINES: Registry = Registry("engine", MappingError)
ENGINES.add("auto", "mapping.search.engine:choose_engine",
            "sum: milp; max: cpsat then milp when OR-Tools is installed (both gaps "
            "reported), else milp")
ENGINES.add("milp", "mapping.search.exact:solve",
            "mixed-integer program (HiGHS, with scipy): strong bounds")
ENGINES.add("cpsat", "mapping.search.cpsat:solve",
            "constraint programming (OR-Tools CP-SAT, the 'cpsat' extra), max only: "
            "good mappings early")
ENGINES.add("both", "mapping.search.both:solve_both",
            "the cluster relaxation's bound, then cpsat for 3/4 of the time left, then "
            "milp from its best mapping")

#: strategies that are not heuristics (every other one spends a seeded budget)
NOT_HEURISTICS = ("auto", "exhaustive", "exact")


def heuristics() -> list[str]:
    """The strategies that take a seed and an evaluation budget."""
    return [name for name in STRATEGIES if name not in NOT_HEURISTICS]
