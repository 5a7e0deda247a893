"""The array core of measured rows (:class:`mapping.evaluation.row_batch.RowBatch`)
against the reference evaluator (:func:`mapping.evaluation.reference.evaluate`, row by
row), value for value to 1e-12, on drawn problems: every cost model (lsla, gsla,
gsla_power, gsla_power4, logca, roofline, bandwidth, lookup), every aggregation without
a timing (sum, max, exclusive), a system metric, CNs with ``charge = self|ends|both``,
a CN without a model for energy, mapping rows (an application with per-row parameters)
and per-element activity rows.  The batch is built without its own first-rows check, so
that a difference fails here instead of sending the rows the reference way."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

import dsl
from mapping.calibration.measurements import read_measurements
from mapping.calibration.row_model import RowModel
from mapping.evaluation.activity import evaluate_activity
from mapping.evaluation.reference import evaluate
from mapping.evaluation.row_batch import RowBatch

ACTORS = ["a0", "a1", "a2", "a3"]
PES = ["p0", "p1", "p2"]
CNS = ["bus", "link"]

SDF = """sdf app {
    param S = 1000
    param G = 1
    actor a0 [quanta = S, S = S, gamma = G, g = S, C = 2, beta = 1, ops = 3 * S, bytes = S / 2, exec = 0.001]
    actor a1 [quanta = 2 * S, S = 2 * S, gamma = 2 * G, g = 2 * S, C = 1, beta = 0.5, ops = S, bytes = S, exec = 0.002]
    actor a2 [quanta = S / 2, S = S / 2, gamma = G, g = S / 2, C = 3, beta = 1, ops = S, exec = 0.003]
    actor a3 [quanta = S, S = S, gamma = 4, g = S, C = 1, beta = 2, ops = 2 * S, bytes = 10, exec = 0.004]
    a0 -> a1 [prod = 2, cons = 1, size = S / 10]
    a1 -> a2 [prod = 1, cons = 2, size = S / 4]
    a2 -> a3 [size = S]
    a0 -> a3 [size = 8]
}
"""

positive = st.floats(1e-10, 1e-6)
small = st.floats(0.0, 1e-6)

TIME_MODELS = {
    "lsla": st.builds(lambda a, b: f"lsla(alpha = {a!r}, beta = {b!r})", positive, small),
    "gsla": st.builds(lambda a, b: f"gsla(alpha = {a!r}, beta = {b!r})", positive, small),
    "gsla_power": st.builds(lambda a, b, c: f"gsla_power(a = {a!r}, b = {b!r}, c = {c!r})",
                            small, positive, small),
    "gsla_power4": st.builds(
        lambda a, b, c, d: f"gsla_power4(a = {a!r}, b = {b!r}, c = {c!r}, d = {d!r})",
        small, positive, small, small),
    "logca": st.builds(lambda A, o, L: f"logca(A = {A!r}, o = {o!r}, L = {L!r})",
                       st.floats(0.5, 20.0), st.floats(0.0, 10.0), st.floats(0.0, 1e-3)),
    "roofline": st.builds(lambda p, b: f"roofline(peak = {p!r}, bandwidth = {b!r})",
                          st.floats(1e6, 1e9), st.floats(1e6, 1e9)),
    "bandwidth": st.builds(lambda b: f"bandwidth(B = {b!r})", st.floats(1e6, 1e9)),
    "lookup": st.builds(lambda s, d: f"lookup(key = exec, scale = {s!r}, default = {d!r})",
                        st.floats(0.1, 10.0), st.floats(1e-4, 1e-2)),
}
ENERGY_MODELS = st.sampled_from(["lsla", "gsla", "gsla_power"]).flatmap(
    lambda name: TIME_MODELS[name])
CN_TIME = st.one_of(TIME_MODELS["lsla"], TIME_MODELS["bandwidth"])


@st.composite
def problems(draw):
    """``(moa text, metric, row kind, aggregate)``."""
    charge = draw(st.sampled_from(["self", "ends", "both"]))
    charging = charge != "self"
    aggregates = ["sum", "max"] + ([] if charging else ["exclusive"])
    aggregate = draw(st.sampled_from(aggregates))
    lines = ["moa board {", f"    param p = {draw(st.floats(0.0, 5.0))!r}",
             f"    lambda = {draw(st.sampled_from([1.0, 0.5, 2.0]))!r}",
             '    metric time [unit = "s"]', '    metric energy [unit = "J"]',
             "    metric total = energy[sum] + p * time[max]", f"    aggregate = {aggregate}"]
    for pe in PES:
        model = draw(st.sampled_from(sorted(TIME_MODELS)))
        lines.append(f"    pe {pe} [time = {draw(TIME_MODELS[model])}, "
                     f"energy = {draw(ENERGY_MODELS)}]")
    for k, cn in enumerate(CNS):
        energy = draw(st.one_of(st.none(), TIME_MODELS["lsla"]))   # None: no model
        models = f"time = {draw(CN_TIME)}" + (f", energy = {energy}" if energy else "")
        lines.append(f"    cn {cn} [{models}, charge = {charge if k == 0 else 'self'}]")
    lines += ["    p0 -- bus", "    p1 -- bus", "    p2 -- bus", "    p1 -- link", "    p2 -- link",
              "}"]
    metric = draw(st.sampled_from(["time", "energy", "total"]))
    kind = draw(st.sampled_from(["mapping", "activity"]))
    return "\n".join(lines) + "\n", metric, kind, aggregate


def mapping_rows(tmp_path, rng, n):
    lines = [",".join([f"pe_{a}" for a in ACTORS] + ["S", "G", "p", "y"])]
    for _ in range(n):
        lines.append(",".join([str(rng.choice(PES)) for _ in ACTORS]
                              + [str(int(rng.choice([100, 1000, 5000]))),
                                 str(int(rng.choice([1, 2, 4]))),
                                 str(float(rng.choice([0.5, 1.5]))), "1"]))
    (tmp_path / "rows.csv").write_text("\n".join(lines) + "\n")
    return read_measurements(tmp_path / "rows.csv", "y", params=["S", "G", "p"],
                             actor_column="pe_{actor}", actors=ACTORS, pes=PES).rows


def activity_rows(tmp_path, rng, n, cns_busy=True):
    """Per-element activity rows; without ``cns_busy`` the CNs have none (``exclusive``
    asks which PE owns a CN's tokens, and counted activity does not say)."""
    names = PES + CNS
    lines = [",".join([f"quanta_{e}" for e in names] + [f"tokens_{e}" for e in names]
                      + ["p", "y"])]
    for _ in range(n):
        quanta = rng.integers(1, 10**5, len(names)) * (rng.random(len(names)) < 0.7)
        quanta[0] = max(quanta[0], 1)                     # a modelled PE is busy
        quanta[len(PES):] *= cns_busy
        tokens = [int(q > 0) * int(rng.integers(1, 5)) for q in quanta]
        lines.append(",".join([str(q) for q in quanta] + [str(t) for t in tokens]
                              + [str(float(rng.choice([0.5, 1.5]))), "1"]))
    (tmp_path / "rows.csv").write_text("\n".join(lines) + "\n")
    return read_measurements(tmp_path / "rows.csv", "y", quanta_column="quanta_{element}",
                             tokens_column="tokens_{element}", params=["p"],
                             elements=names).rows


@settings(max_examples=60, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(problem=problems(), seed=st.integers(0, 2**16))
def test_the_array_core_equals_the_reference(tmp_path, problem, seed):
    text, metric, kind, aggregate = problem
    arch = dsl.parse_moa(text, "board.moa")[0]
    rng = np.random.default_rng(seed)
    if kind == "mapping":
        app = dsl.parse_sdf(SDF, "app.sdf")[0]
        rows = list(mapping_rows(tmp_path, rng, 12))
    else:
        app, rows = None, list(activity_rows(tmp_path, rng, 12, aggregate != "exclusive"))
    model = RowModel(arch, rows, metric, None, app)
    batch = RowBatch(model, range(len(rows)), check=False)
    with np.errstate(all="ignore"):
        ours = batch.values(model.bound_arch)
    for i, row in enumerate(rows):
        bound = model.bound(i)
        if kind == "mapping":
            want = evaluate(bound.app, bound.arch, row.mapping, metric=metric,
                            problem=bound).value
        else:
            want = evaluate_activity(bound, row.activity, metric)
        assert math.isclose(ours[i], want, rel_tol=1e-12, abs_tol=1e-300), \
            (i, ours[i], want, text, metric, kind)
