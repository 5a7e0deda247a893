"""Items of integer sizes into identical bins of one capacity: first fit decreasing
and a local search, then CP-SAT (:func:`pack_bins`), and the CP-SAT solve that the
packing decisions share (:func:`solve`)."""
from __future__ import annotations

import threading
import time

import numpy as np

from mapping.search.common import solver_seconds, stopped

#: steps of a local search: of one class's packing (:func:`local_packing`), of a
#: packing's bottleneck (:func:`mapping.search.packing.descend`)
LOCAL_STEPS = 3000
#: how often (seconds) a solve under way asks ``stop()``
POLL = 0.05


def first_fit_decreasing(w, m: int, C: int):
    loads = np.zeros(m, dtype=np.int64)
    bins = np.empty(len(w), dtype=np.intp)
    for i in np.argsort(-w, kind="stable"):
        room = np.flatnonzero(loads + w[i] <= C)
        if not len(room):
            return None
        bins[i] = room[0]
        loads[room[0]] += w[i]
    return bins


def local_packing(w, m: int, C: int, steps: int, seed: int = 0):
    """A packing by descent on the total overflow: from the items spread largest
    first onto the least loaded bin, the best move or exchange out of the most
    overflowing bin, a random exchange where none improves; None after
    ``steps``."""
    rng = np.random.default_rng(seed)
    bins = np.empty(len(w), dtype=np.intp)
    loads = np.zeros(m, dtype=np.int64)
    for i in np.argsort(-w, kind="stable"):
        b = int(np.argmin(loads))
        bins[i] = b
        loads[b] += w[i]
    for _ in range(steps):
        over = np.maximum(loads - C, 0)
        if not over.any():
            return bins
        src = int(np.argmax(over + rng.random(m) * (over > 0)))
        I, J = np.flatnonzero(bins == src), np.flatnonzero(bins != src)
        if not len(J):
            return None

        def gain(leave, to):
            return (over[src] + over[to] - np.maximum(loads[src] - leave - C, 0)
                    - np.maximum(loads[to] + leave - C, 0)).astype(float)

        swap = gain(w[I][:, None] - w[J][None, :], bins[J][None, :])
        move = gain(w[I][:, None], np.arange(m)[None, :])
        move[:, src] = -np.inf
        swap += rng.random(swap.shape) * 1e-3
        move += rng.random(move.shape) * 1e-3
        s = np.unravel_index(np.argmax(swap), swap.shape)
        v = np.unravel_index(np.argmax(move), move.shape)
        if swap[s] >= move[v] and swap[s] > 0.5:
            i, j = I[s[0]], J[s[1]]
        elif move[v] > 0.5:
            i, to = I[v[0]], int(v[1])
            loads[src] -= w[i]
            loads[to] += w[i]
            bins[i] = to
            continue
        else:
            i, j = rng.choice(I), rng.choice(J)
        to = bins[j]
        loads[src] += w[j] - w[i]
        loads[to] += w[i] - w[j]
        bins[i], bins[j] = to, src
    return None


def pack_bins(w, m: int, C: int, deadline: float | None = None, stop=None):
    """Whether integer sizes ``w`` pack into ``m`` identical bins of ``C``:
    ``("feasible", bin of each item) | ("infeasible", None) | ("unknown", None)`` by
    first fit decreasing, then :func:`~mapping.search.bins.local_packing`, then CP-SAT
    (loads ordered)."""
    w = np.asarray(w, dtype=np.int64)
    if len(w) == 0:
        return "feasible", np.zeros(0, dtype=np.intp)
    if w.max() > C or w.sum() > m * C:
        return "infeasible", None
    if stopped(deadline, stop):
        return "unknown", None
    bins = first_fit_decreasing(w, m, C)
    if bins is None:
        bins = local_packing(w, m, C, LOCAL_STEPS)
    if bins is not None:
        return "feasible", bins
    from ortools.sat.python import cp_model
    model = cp_model.CpModel()
    y = [[model.new_bool_var("") for _ in range(m)] for _ in w]
    for ys in y:
        model.add_exactly_one(ys)
    loads = [sum(int(w[i]) * y[i][b] for i in range(len(w))) for b in range(m)]
    for b in range(m):
        model.add(loads[b] <= C)
    for b in range(m - 1):
        model.add(loads[b] >= loads[b + 1])
    status, solver = solve(model, None if deadline is None else
                           deadline - time.time(), stop)
    if status != "feasible":
        return status, None
    return "feasible", np.array([next(b for b in range(m) if solver.boolean_value(v[b]))
                                 for v in y], dtype=np.intp)


def solve(model, left: float | None, stop, settle: float | None = None):
    """CP-SAT (one worker) on ``model`` for at most ``left`` seconds, stopped within
    :data:`POLL` s of ``stop()`` or ``settle`` seconds after its first solution:
    ``("infeasible" | "feasible" | "unknown", solver)``."""
    from ortools.sat.python import cp_model
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    if left is not None:
        solver.parameters.max_time_in_seconds = solver_seconds(left)
    done = threading.Event()
    first: list[float] = []

    class Found(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self):
            if not first:
                first.append(time.time())

    def watch():
        while not done.wait(POLL):
            if (stop is not None and stop()) or \
                    (first and time.time() > first[0] + settle):
                solver.stop_search()
                return

    watcher = None if stop is None and settle is None else \
        threading.Thread(target=watch, daemon=True)
    if watcher is not None:
        watcher.start()
    try:
        status = solver.solve(model, Found()) if settle is not None else \
            solver.solve(model)
    finally:
        done.set()
        if watcher is not None:
            watcher.join()
    if status == cp_model.INFEASIBLE:
        return "infeasible", solver
    if status in (cp_model.FEASIBLE, cp_model.OPTIMAL):
        return "feasible", solver
    return "unknown", solver
