"""HiGHS's mixed-integer solver, stoppable from another thread (issue 43).

:func:`milp` takes the arguments of :func:`scipy.optimize.milp` and returns the fields
of its result that ``exact`` reads (``status`` in scipy's codes, ``x``, ``fun``,
``mip_dual_bound``, ``message``), plus ``stopped``: whether ``stop()`` ended the solve.
Given a ``stop`` and with highspy, HiGHS's own Python interface (an optional extra,
installed with ``pip install 'mapeval[cpsat]'`` beside CP-SAT, the engine that runs
the bounds beside a search that may end first), the program is solved by a ``Highs``
object whose interrupt callbacks (``kCallbackMipInterrupt``, and the simplex's and
interior point's for a linear program) ask ``stop()`` at every check HiGHS makes and
interrupt the solve when it is true.  Otherwise :func:`scipy.optimize.milp` solves it
(the same solver, bundled with scipy), which has no callback and runs to its end or
its time limit.  Inside a MIP, HiGHS checks at its nodes, not inside its primal
heuristics: a stop takes effect within about a second (the research notes).

HiGHS's MIP solver writes some lines straight to the C library's standard output,
whatever ``output_flag`` says (``HighsMipSolverData::transformNewIntegerFeasibleSolution
tmpSolver.run();``, seen on a loaded 45 x 12 instance), which would break the JSON a
command prints there; :func:`milp` sends the process's standard output to its standard
error while HiGHS runs (:func:`stdout_to_stderr`).

What an interrupted solve proves is what a solve stopped at its time limit proves: the
dual bound HiGHS reports (``mip_dual_bound``, the least over the open nodes of their
LP bounds, or the root's while it is being solved) is a lower bound on the program's
optimum, and the best solution found so far, if any, is feasible.  Unlike scipy, this
reports the dual bound also when no solution was found.
"""
from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from types import SimpleNamespace

import numpy as np
from scipy.sparse import csc_matrix

#: scipy's status codes (:func:`scipy.optimize.milp`) of HiGHS's model statuses; an
#: interrupted solve is reported as a limit (1) with ``stopped`` set
_STATUS = {"kOptimal": 0, "kTimeLimit": 1, "kIterationLimit": 1, "kInterrupt": 1,
           "kInfeasible": 2, "kUnbounded": 3}


def available() -> bool:
    """Whether highspy, with the interrupt callbacks used here, can be imported."""
    try:
        import highspy
        from highspy import _core
    except ImportError:
        return False
    return hasattr(getattr(highspy, "cb", None), "HighsCallbackType") \
        and hasattr(highspy.cb.HighsCallbackType, "kCallbackMipInterrupt") \
        and hasattr(_core._Highs, "setCallback")


_redirect_lock = threading.Lock()
_redirected = {"depth": 0, "saved": None}


@contextmanager
def stdout_to_stderr():
    """File descriptor 1 pointed at descriptor 2 meanwhile (what C code prints there
    lands on standard error), for every thread until the last one inside leaves; as is
    where either descriptor cannot be duplicated."""
    with _redirect_lock:
        if _redirected["depth"] == 0:
            try:
                sys.stdout.flush()
                saved = os.dup(1)
                os.dup2(2, 1)
            except (OSError, ValueError):
                saved = None
            _redirected["saved"] = saved
        _redirected["depth"] += 1
    try:
        yield
    finally:
        with _redirect_lock:
            _redirected["depth"] -= 1
            saved = _redirected["saved"]
            if _redirected["depth"] == 0 and saved is not None:
                os.dup2(saved, 1)
                os.close(saved)
                _redirected["saved"] = None


def milp(c, integrality=None, bounds=None, constraints=None, options=None, stop=None):
    """``scipy.optimize.milp(c, integrality=..., bounds=..., constraints=...,
    options=...)`` (one :class:`~scipy.optimize.LinearConstraint`; options ``disp``,
    ``mip_rel_gap``, ``time_limit``, ``node_limit``), interrupted once ``stop()`` is
    true where highspy is installed (see the module)."""
    options = dict(options or {})
    if stop is None or not available():
        from scipy.optimize import milp as scipy_milp
        with stdout_to_stderr():
            res = scipy_milp(c, integrality=integrality, bounds=bounds,
                             constraints=constraints, options=options)
        return SimpleNamespace(status=res.status, x=res.x, fun=res.fun, message=res.message,
                               mip_dual_bound=getattr(res, "mip_dual_bound", None),
                               stopped=False)
    return _interruptible(np.asarray(c, dtype=float), integrality, bounds, constraints,
                          options, stop)


def _interruptible(c, integrality, bounds, constraints, options, stop):
    import highspy
    from highspy import _core
    n = len(c)
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.col_cost_ = c
    lower = np.zeros(n) if bounds is None else np.broadcast_to(bounds.lb, n)
    upper = np.full(n, np.inf) if bounds is None else np.broadcast_to(bounds.ub, n)
    lp.col_lower_ = np.asarray(lower, dtype=float)
    lp.col_upper_ = np.asarray(upper, dtype=float)
    if constraints is not None:
        m = csc_matrix(constraints.A)
        lp.num_row_ = m.shape[0]
        lp.row_lower_ = np.broadcast_to(np.asarray(constraints.lb, float), m.shape[0]).copy()
        lp.row_upper_ = np.broadcast_to(np.asarray(constraints.ub, float), m.shape[0]).copy()
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, m.shape[0]
        lp.a_matrix_.start_ = m.indptr
        lp.a_matrix_.index_ = m.indices
        lp.a_matrix_.value_ = m.data
    mip = integrality is not None and np.any(integrality)
    if mip:
        kinds = (highspy.HighsVarType.kContinuous, highspy.HighsVarType.kInteger)
        lp.integrality_ = [kinds[int(bool(i))] for i in np.broadcast_to(integrality, n)]
    # the bare core object: highspy's ``Highs`` prints its banner on stdout when made
    h = _core._Highs()
    h.setOptionValue("output_flag", bool(options.get("disp", False)))
    if "mip_rel_gap" in options:
        h.setOptionValue("mip_rel_gap", float(options["mip_rel_gap"]))
    if options.get("time_limit") is not None:
        h.setOptionValue("time_limit", float(options["time_limit"]))
    if options.get("node_limit") is not None:
        h.setOptionValue("mip_max_nodes", int(options["node_limit"]))
    h.passModel(lp)
    asked = []

    def check(kind, message, out, into, data):
        if into is not None and (asked or stop()):
            asked.append(True)
            into.user_interrupt = True

    h.setCallback(check, None)
    kinds = highspy.cb.HighsCallbackType
    for kind in (kinds.kCallbackMipInterrupt, kinds.kCallbackSimplexInterrupt,
                 kinds.kCallbackIpmInterrupt):
        h.startCallback(kind)
    with stdout_to_stderr():
        h.run()
    model = h.getModelStatus()
    name = model.name
    info = h.getInfo()
    status = _STATUS.get(name, 4)
    feasible = int(info.primal_solution_status) == 2          # kSolutionStatusFeasible
    x = np.array(h.getSolution().col_value) if feasible and status in (0, 1, 4) else None
    fun = float(info.objective_function_value) if x is not None else None
    dual = None
    if mip and status in (0, 1, 4) and np.isfinite(info.mip_dual_bound):
        dual = float(info.mip_dual_bound)               # -inf: none proven yet
    elif not mip and status == 0:
        dual = fun
    return SimpleNamespace(status=status, x=x, fun=fun, mip_dual_bound=dual,
                           message=f"{h.modelStatusToString(model)} (HiGHS status {name})",
                           stopped=bool(asked) or name == "kInterrupt")
