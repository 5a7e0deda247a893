"""The array core of measured rows (:class:`mapping.evaluation.row_batch.RowBatch`,
through :meth:`mapping.calibration.row_model.RowModel.predict`) against the reference
evaluator (:func:`mapping.evaluation.reference.evaluate`, row by row), value for value to
1e-12, on drawn problems: every registered cost model (lsla, gsla, gsla_power,
gsla_power4, logca, roofline with and without cache levels and a memory CN, bandwidth,
lookup, gpu), every aggregation (sum, max, exclusive, and schedule and period through
the one explicit path of timed rows), a system metric (its time term under any of them,
or an aggregation asked for it: the reference's error), CNs with ``charge =
self|ends|both`` under any aggregation, memory traffic, a CN without a model for
energy, mapping rows (an application with per-row parameters) and per-element activity
rows, one element's part alone (the per-element fit), and free values of a model's
argument, of a parameter of the .moa and of one of the application that no row gives.  The batch is built without its own first-rows
check, so that a difference fails here instead of sending the rows the reference
way."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, event, given, settings, strategies as st

import dsl
from mapping.calibration.free import parse_free
from mapping.calibration.measurements import read_measurements
from mapping.calibration.parameter_vector import ParameterVector
from mapping.calibration.row_model import RowModel
from mapping.evaluation.activity import evaluate_activity
from mapping.evaluation.reference import evaluate
from mapping.evaluation.row_batch import RowBatch
from moa.cost_models.registry import available_models, model_class

ACTORS = ["a0", "a1", "a2", "a3"]
PES = ["p0", "p1", "p2"]
CNS = ["bus", "link"]

SDF = """sdf app {
    param S = 1000
    param G = 1
    param k = 1
    actor a0 [quanta = k * S, S = S, gamma = G, g = S, C = 2, beta = 1, ops = 3 * S, bytes = 64 * S, exec = 0.001, grid = 64 * G, block = 128, l2_bytes = 256 * S, partial_sectors = 1, store_bytes = S / 8, l2_store_bytes = S / 2]
    actor a1 [quanta = 2 * S, S = 2 * S, gamma = 2 * G, g = 2 * S, C = 1, beta = 0.5, ops = S, bytes = k * S, exec = 0.002, grid = 8, block = 256, regs = 32, l2_bytes = 3 * k * S]
    actor a2 [quanta = S / 2, S = S / 2, gamma = G, g = S / 2, C = 3, beta = 1, ops = S, exec = 0.003, grid = 1000, block = 64, smem = 4096, working_set = 2 * S]
    actor a3 [quanta = S, S = S, gamma = 4, g = S, C = 1, beta = 2, ops = 2 * S, bytes = 10, exec = 0.004, grid = 3, block = 32]
    a0 -> a1 [prod = 2, cons = 1, size = k * S / 10]
    a1 -> a2 [prod = 1, cons = 2, size = S / 4]
    a2 -> a3 [size = S]
    a0 -> a3 [size = 8]
}
"""

positive = st.floats(1e-10, 1e-6)
small = st.floats(0.0, 1e-6)


def roofline(memories):
    """A roofline, with cache levels or not, with a memory CN among ``memories`` or not."""
    return st.builds(
        lambda p, b, memory, miss, levels: (
            f"roofline(peak = {p!r}, bandwidth = {b!r}"
            + (f', memory = "{memory}", miss = {miss!r}' if memory else "")
            + (f", l1_capacity = {levels[0]!r}, l1_bandwidth = {levels[1]!r}, "
               f"l2_capacity = {levels[2]!r}" if levels else "") + ")"),
        st.floats(1e6, 1e9), st.floats(1e6, 1e9), st.sampled_from([None] + 2 * memories),
        st.floats(0.0, 1.0),
        st.one_of(st.none(), st.tuples(st.floats(1e2, 1e4), st.floats(1e9, 1e10),
                                       st.floats(1e4, 1e6))))


def caches_of(low: float, high: float):
    """``(capacity, sharpness)`` of a gpu cache level: none (0) or one around the
    tokens' working sets."""
    return st.tuples(st.one_of(st.just(0.0), st.floats(low, high)), st.floats(1.0, 16.0))


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
    "roofline": roofline(["bus"]),
    "bandwidth": st.builds(lambda b: f"bandwidth(B = {b!r})", st.floats(1e6, 1e9)),
    "lookup": st.builds(lambda s, d: f"lookup(key = exec, scale = {s!r}, default = {d!r})",
                        st.floats(0.1, 10.0), st.floats(1e-4, 1e-2)),
    "gpu": st.builds(
        lambda cc, hide, launch, dispatch, l2, l1: (
            f"gpu(cc = {cc!r}, sms = 40, cores = 2560, clock = 1500, bandwidth = 448, "
            f"hide = {hide!r}, launch = {launch!r}, dispatch = {dispatch!r}, "
            f"l2_capacity = {l2[0]!r}, l2_sharpness = {l2[1]!r}, "
            f"l1_capacity = {l1[0]!r}, l1_sharpness = {l1[1]!r})"),
        st.sampled_from([6.1, 7.5, 8.0, 8.6]), st.floats(0.0, 32.0), st.floats(0.0, 1e-5),
        st.floats(0.0, 200.0), caches_of(1e3, 1e6), caches_of(1e3, 1e5)),
}
#: the models the tokens of counted activity can feed (no launch geometry, no key)
ACTIVITY_MODELS = sorted(set(TIME_MODELS) - {"gpu"})
ENERGY_MODELS = st.sampled_from(["lsla", "gsla", "gsla_power"]).flatmap(
    lambda name: TIME_MODELS[name])
CN_TIME = {"lsla": TIME_MODELS["lsla"], "bandwidth": TIME_MODELS["bandwidth"]}
#: the free argument of each CN time model
CN_FREE = {"lsla": "alpha", "bandwidth": "B"}


def test_every_registered_model_is_drawn():
    """Every model mapeval ships (third-party ones that other tests register are theirs)."""
    shipped = {name for name in available_models()
               if model_class(name).__module__.startswith("moa.")}
    assert set(TIME_MODELS) == shipped


@st.composite
def problems(draw):
    """``(moa text, metric, row kind, aggregation asked, free parameters, element)``:
    ``element`` predicts one element's part alone (the per-element fit)."""
    kind = draw(st.sampled_from(["mapping", "activity"]))
    charge = draw(st.sampled_from(["self", "ends", "both"]))
    aggregate = draw(st.sampled_from(["sum", "max", "exclusive"]))
    timed = draw(st.sampled_from(["max", "max", "schedule", "period"])) \
        if kind == "mapping" else "max"
    lines = ["moa board {", f"    param p = {draw(st.floats(0.0, 5.0))!r}",
             f"    lambda = {draw(st.sampled_from([1.0, 0.5, 2.0]))!r}",
             '    metric time [unit = "s"]', '    metric energy [unit = "J"]',
             f"    metric total = energy[sum] + p * time[{timed}]",
             f"    aggregate = {aggregate}"]
    names = sorted(TIME_MODELS) if kind == "mapping" else ACTIVITY_MODELS
    for pe in PES:
        model = draw(st.sampled_from(names + 2 * ["roofline"]))     # memory traffic
        time = draw(roofline(["bus"] if pe == "p0" else CNS)) if model == "roofline" \
            else draw(TIME_MODELS[model])
        lines.append(f"    pe {pe} [time = {time}, energy = {draw(ENERGY_MODELS)}]")
    free = ["p"] + (["k"] if kind == "mapping" else [])
    for k, cn in enumerate(CNS):
        energy = draw(st.one_of(st.none(), TIME_MODELS["lsla"]))   # None: no model
        model = draw(st.sampled_from(sorted(CN_TIME)))
        models = f"time = {draw(CN_TIME[model])}" + (f", energy = {energy}" if energy else "")
        lines.append(f"    cn {cn} [{models}, charge = {charge if k == 0 else 'self'}]")
        if k == 0:
            free.append(f"{cn}.time.{CN_FREE[model]}")
    lines += ["    p0 -- bus", "    p1 -- bus", "    p2 -- bus", "    p1 -- link", "    p2 -- link",
              "}"]
    metric = draw(st.sampled_from(["time", "energy", "total", "total"]))
    asked = None
    if kind == "mapping" and metric == "time":
        asked = draw(st.sampled_from([None, None, "schedule", "period"]))
    elif metric == "total":
        asked = draw(st.sampled_from([None, None, None, "sum"]))   # refused by both
    element = draw(st.sampled_from([None] * 6 + PES + CNS))
    return "\n".join(lines) + "\n", metric, kind, asked, free, element


def mapping_rows(tmp_path, rng, n, one_set=False):
    """Mapping rows; ``one_set``: all with the same parameters (the timed rows of one
    parameter set then go through the search's batch evaluator)."""
    lines = [",".join([f"pe_{a}" for a in ACTORS] + ["S", "G", "p", "y"])]
    for _ in range(n):
        values = ["1000", "2", "0.5"] if one_set else \
            [str(int(rng.choice([100, 1000, 5000]))), str(int(rng.choice([1, 2, 4]))),
             str(float(rng.choice([0.5, 1.5])))]
        lines.append(",".join([str(rng.choice(PES)) for _ in ACTORS] + values + ["1"]))
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


def reference(model, i, metric, asked):
    """Row ``i`` by the reference evaluator at the files' values (one element's part:
    the reference's value of that element's tokens alone)."""
    if model.element is not None:
        return model.reference_value(i)
    bound, row = model.bound(i), model.rows[i]
    if row.activity is None:
        return evaluate(bound.app, bound.arch, row.mapping, metric=metric, aggregate=asked,
                        problem=bound).value
    return evaluate_activity(bound, row.activity, metric, asked)


@settings(max_examples=100, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(problem=problems(), seed=st.integers(0, 2**16),
       scale=st.tuples(st.floats(0.3, 3.0), st.floats(0.3, 3.0), st.floats(0.3, 3.0)))
def test_the_array_core_equals_the_reference(tmp_path, problem, seed, scale):
    text, metric, kind, asked, free_specs, element = problem
    arch = dsl.parse_moa(text, "board.moa")[0]
    rng = np.random.default_rng(seed)
    model_kind = kind
    if kind == "mapping":
        app = dsl.parse_sdf(SDF, "app.sdf")[0]
        rows = list(mapping_rows(tmp_path, rng, 20, one_set=rng.random() < 0.5))
    else:
        app = None
        rows = list(activity_rows(tmp_path, rng, 12, "exclusive" not in text))
    model = RowModel(arch, rows, metric, asked, app, element=element)
    event(f"{kind} rows, {metric}, asked {asked}")
    event("one element's part" if element else "every element")
    event("memory traffic" if "memory =" in text else "no memory traffic")
    if "exclusive" in text and "charge = self" not in text.split("cn bus")[1].split("\n")[0]:
        event("exclusive with a charging CN")
    try:
        want = [reference(model, i, metric, asked) for i in range(len(rows))]
    except ValueError as exc:            # the reference refuses: so does the core
        with pytest.raises(ValueError) as got:
            model.predict()
        assert str(exc) in str(got.value), (str(exc), str(got.value))
        event("refused by both")
        return
    if model.timed:                      # the one explicit path: firings scheduled
        event("timed")
        assert model.row_batch(range(len(rows))) is None
        ours = model.predict()
    else:
        batch = RowBatch(model, range(len(rows)), check=False)
        with np.errstate(all="ignore"):
            ours = batch.values(model.bound_arch)
        assert np.array_equal(model.predict(), ours)
    for i, value in enumerate(want):
        assert math.isclose(ours[i], value, rel_tol=1e-12, abs_tol=1e-300), \
            (i, ours[i], value, text, metric, model_kind, asked, element)
    # free values of the .moa's parameter, of a CN's model and of the application's ``k``
    free = parse_free(arch, ",".join(free_specs), app)
    vector = ParameterVector(free)
    overrides = vector.overrides(vector.current(model) * np.resize(scale, len(free)))
    some = list(range(1, len(rows), 2))
    ours = model.predict(some, overrides)
    if not model.timed:
        assert model.predict_batch(some, overrides, {}) is not None
    for r, i in enumerate(some):
        value = model.value(i, overrides, {})
        assert math.isclose(ours[r], value, rel_tol=1e-12, abs_tol=1e-300), \
            (i, ours[r], value, text, metric, model_kind, asked, free_specs, element)
