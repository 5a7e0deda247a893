"""Issue 43: HiGHS programs stopped from another thread (``mapping/search/highs.py``)
— what an interrupted program proves is a lower bound (checked against scipy's own
``milp`` and against exhaustive enumeration), the stop ends it at HiGHS's next check,
and without highspy the programs run to their end as before."""
from __future__ import annotations

import sys
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from scipy.optimize import Bounds, LinearConstraint, milp as scipy_milp

from mapping.semantics.problem import bind_problem
from mapping.search import exact, highs, search
from mapping.search.engine import prepare
from search_instances import instance
from test_exact_max import OPTIMA, stored

needs_highspy = pytest.mark.skipif(not highs.available(), reason="needs highspy")


def knapsacks(seed: int, n: int = 40, m: int = 12):
    """A random multi-dimensional knapsack (minimize the negated profit): hard enough
    for HiGHS to branch."""
    rng = np.random.default_rng(seed)
    A = rng.integers(5, 100, size=(m, n)).astype(float)
    c = -rng.integers(5, 100, size=n).astype(float)
    return c, np.ones(n), Bounds(0, 1), LinearConstraint(A, -np.inf, A.sum(axis=1) / 3)


class After:
    """A ``stop`` true from its ``k``-th call on (0: at once), counting its calls."""

    def __init__(self, k: int):
        self.k, self.calls, self.fired = k, 0, None

    def __call__(self) -> bool:
        self.calls += 1
        if self.calls > self.k and self.fired is None:
            self.fired = time.monotonic()
        return self.fired is not None


@needs_highspy
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 1000), k=st.integers(0, 40))
def test_interrupted_program_bounds_the_optimum(seed, k):
    """highspy's result equals scipy's ``milp`` (the same solver, bundled) when never
    stopped; stopped at HiGHS's ``k``-th check, its dual bound ≤ that optimum ≤ the
    value of the solution it returns (if any), and the solution is feasible."""
    c, integrality, bounds, cons = knapsacks(seed)
    ref = scipy_milp(c, integrality=integrality, bounds=bounds, constraints=cons)
    full = highs.milp(c, integrality, bounds, cons, stop=lambda: False)
    assert ref.status == full.status == 0 and not full.stopped
    assert full.fun == pytest.approx(ref.fun, rel=1e-9)
    stop = After(k)
    res = highs.milp(c, integrality, bounds, cons, stop=stop)
    if stop.fired is None:                    # solved before its k-th check
        assert res.status == 0 and res.fun == pytest.approx(ref.fun, rel=1e-9)
        return
    assert res.stopped and res.status == 1 and stop.calls == k + 1   # never asked again
    if res.mip_dual_bound is not None and np.isfinite(res.mip_dual_bound):
        assert res.mip_dual_bound <= ref.fun + 1e-6
    if res.x is not None:
        assert res.fun >= ref.fun - 1e-6
        row = cons.A @ res.x
        assert (row <= cons.ub + 1e-6).all()
        assert np.allclose(res.x, np.round(res.x), atol=1e-6)


@needs_highspy
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(6, 8), P=st.integers(4, 5), seed=st.integers(0, 40),
       k=st.integers(0, 60))
def test_stopped_cluster_relaxation_never_exceeds_the_exhaustive_optimum(n, P, seed, k):
    """The cluster relaxation stopped at HiGHS's ``k``-th check: what it returns is at
    most exhaustive's optimum, and at most what the unstopped relaxation proves
    where that proof is HiGHS's optimum (a stopped branch and bound is never ahead of
    a finished one's bound)."""
    problem = bind_problem(*instance(n, P, seed))
    best = search(problem, "time", "max", strategy="exhaustive").value
    setup = prepare(problem, "time", "max")
    start = setup.space.random(np.random.default_rng(seed), 1)[0]
    full = exact.cluster_floor(setup, incumbent=start)
    stop = After(k)
    got = exact.cluster_floor(setup, incumbent=start, stop=stop)
    assert full is None or full <= best * (1 + 1e-9)
    if got is not None:
        assert got <= best * (1 + 1e-9)
        assert full is not None and got <= full * (1 + 1e-6)
    if stop.fired is not None:
        assert stop.calls == k + 1


@needs_highspy
def test_stop_ends_the_cluster_relaxation_at_once():
    """On the stored ``a50_p12_s4`` the cluster relaxation takes seconds; stopped at
    HiGHS's third check, it returns at once (HiGHS asks nothing after the stop), with a
    bound at most the best known value."""
    setup = prepare(stored("a50_p12_s4"), "time", "max")
    start = setup.space.random(np.random.default_rng(0), 1)[0]
    stop = After(3)
    began = time.monotonic()
    got = exact.cluster_floor(setup, 600.0, incumbent=start, stop=stop)
    assert stop.fired is not None and stop.calls == 4
    assert time.monotonic() - stop.fired < 2.0
    assert stop.fired - began < 30.0
    assert got is None or got <= OPTIMA["a50_p12_s4"]["value"]


def test_without_highspy_the_program_runs_to_its_end(monkeypatch):
    """Without highspy ``stop`` is never asked: scipy's ``milp`` solves the program to
    its end, and the cluster relaxation proves what it proves unstopped."""
    for name in [m for m in sys.modules if m == "highspy" or m.startswith("highspy.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "highspy", None)        # import fails
    assert not highs.available()
    c, integrality, bounds, cons = knapsacks(3, n=20, m=5)
    stop = After(0)
    res = highs.milp(c, integrality, bounds, cons, stop=stop)
    ref = scipy_milp(c, integrality=integrality, bounds=bounds, constraints=cons)
    assert stop.calls == 0 and not res.stopped and res.status == 0
    assert res.fun == pytest.approx(ref.fun, rel=1e-12)
    problem = bind_problem(*instance(8, 4, 2))
    setup = prepare(problem, "time", "max")
    start = setup.space.random(np.random.default_rng(2), 1)[0]
    assert exact.cluster_floor(setup, incumbent=start, stop=After(0)) == \
        exact.cluster_floor(setup, incumbent=start)


def test_what_highs_prints_on_stdout_goes_to_stderr(monkeypatch, capfd):
    """HiGHS's MIP solver prints some lines with C's ``printf`` whatever its options
    (``HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();``,
    which once opened a ``search --json`` document): a solver writing to descriptor 1
    while :func:`highs.milp` runs writes to standard error, by either path, and the
    descriptor is back afterwards."""
    import os
    import scipy.optimize
    noise = b"HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();\n"
    c, integrality, bounds, cons = knapsacks(3, n=12, m=4)

    def noisy(*args, **kwargs):
        os.write(1, noise)
        return scipy_milp(*args, **kwargs)

    monkeypatch.setattr(scipy.optimize, "milp", noisy)
    res = highs.milp(c, integrality, bounds, cons)            # scipy's path
    os.write(1, b"after\n")
    out, err = capfd.readouterr()
    assert res.status == 0 and out == "after\n" and err == noise.decode()


def test_stdout_goes_back_when_the_last_thread_leaves(capfd):
    """Two threads inside at once (the bounds and a search beside them): descriptor 1
    points at standard error until both have left, whichever leaves first."""
    import os
    import threading
    inside, leave = threading.Barrier(2), threading.Event()

    def first():
        with highs.stdout_to_stderr():
            inside.wait()
            os.write(1, b"a\n")
        leave.set()

    worker = threading.Thread(target=first)
    worker.start()
    with highs.stdout_to_stderr():
        inside.wait()
        leave.wait()                    # the other has left
        os.write(1, b"b\n")
    worker.join()
    os.write(1, b"c\n")
    out, err = capfd.readouterr()
    assert out == "c\n" and sorted(err.split()) == ["a", "b"]
