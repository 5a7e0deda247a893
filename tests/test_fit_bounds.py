"""Fits that mean something (issue 32, item 4): every cost-model parameter carries the
bounds of its meaning, declared once on its model's pydantic ``Parameters`` and read by
fitting; no fit returns a value outside them; a value on its bound is reported;
``--fit`` takes patterns; parameters that cannot be told apart come with a remedy."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from pydantic import Field

import dsl
from dsl.mappings import Mapping
from mapping.cli.main import main
from mapping.errors import InputError
from mapping.evaluation.reference import evaluate
from mapping.calibration.assessment import assess
from mapping.calibration.free import expand_free, free_bounds, parse_free
from mapping.calibration.measurements import MeasurementRow
from moa.cost_models import (Bounds, CostModel, Parameters, available_models,
                             fittable_parameters, model_class, parameter_bounds)

APP = ("sdf k {\n    param n = 1000\n    actor k [quanta = n, grid = n / 100, block = 128, "
       "bytes = 8 * n, flops = 2 * n, ops = 2 * n, exec_p = n * 1e-6, S = n, gamma = 4]\n}\n")
#: one call of every built-in model with a fittable parameter, on one PE ``p``
CALLS = {
    "lsla": "lsla(alpha = 1e-6, beta = 1e-5)",
    "gsla": "gsla(alpha = 1e-6, beta = 1e-7)",
    "gsla_power": "gsla_power(a = 1, b = 1e-3, c = 1e-3)",
    "gsla_power4": "gsla_power4(a = 1, b = 1e-3, c = 1e-3, d = 1e-3)",
    "gpu": "gpu(cc = 3.5, sms = 13, cores = 2496, clock = 706, bandwidth = 208, "
           "efficiency = 0.7, compute_efficiency = 0.5, hide = 16, l2 = 64, l2_slices = 8, launch = 5e-6)",
    "logca": "logca(A = 4, o = 10, L = 1e-3)",
    "roofline": "roofline(peak = 1e9, bandwidth = 1e9, miss = 0.5)",
    "bandwidth": "bandwidth(B = 1e9)",
    "lookup": "lookup()",
}
SIZES = (1e3, 1e4, 1e5, 1e6)


def one_pe(call):
    return dsl.parse_moa(f"moa m {{\n    pe p [time = {call}]\n}}\n")[0]


def rows_of(values, sizes=SIZES):
    m = Mapping("m", {"k": "p"})
    return [MeasurementRow(i + 2, i + 1, {"n": n}, float(v), m)
            for i, (n, v) in enumerate(zip(sizes, values))]


# --------------------------------------------------------------------------- declared

def test_bounds_are_read_from_the_pydantic_declarations():
    gpu = model_class("gpu").Parameters
    assert parameter_bounds(gpu, "efficiency") == Bounds(0.0, 1.0, True, False)
    assert str(parameter_bounds(gpu, "compute_efficiency")) == "(0, 1]"
    assert str(parameter_bounds(gpu, "hide")) == "[0, 64]"   # warps per SM: at most an SM's 64
    assert str(parameter_bounds(gpu, "l2")) == "[32, 128]"   # bytes per cycle and slice
    assert str(parameter_bounds(gpu, "l2_sharpness")) == "[1, 16]"
    assert parameter_bounds(gpu, "l2_slices") is None          # a data-sheet count
    assert parameter_bounds(gpu, "cc") is None                      # a key: never fitted
    assert parameter_bounds(gpu, "sms") is None                     # an integer
    assert "cc" not in fittable_parameters(gpu) and "efficiency" in fittable_parameters(gpu)
    assert str(parameter_bounds(model_class("logca").Parameters, "A")) == "(0, inf)"
    assert str(parameter_bounds(model_class("lsla").Parameters, "alpha")) == "[0, inf)"
    assert str(parameter_bounds(model_class("roofline").Parameters, "miss")) == "[0, 1]"
    assert parameter_bounds(model_class("lookup").Parameters, "key") is None
    assert parameter_bounds(model_class("logca").Parameters, "latency") is None
    b = Bounds(0.0, 1.0, True, False)
    assert 1.0 in b and 0.0 not in b and 0.5 in b and 1.5 not in b


def test_every_registered_model_states_bounds_for_its_fittable_parameters():
    """Every built-in model with a numeric parameter has a call above, so the property
    test below covers it (models other tests register are not built in)."""
    for name in available_models():
        cls = model_class(name)
        if cls.__module__.startswith("moa.") and fittable_parameters(cls.Parameters):
            assert name in CALLS, name


def test_a_bare_param_takes_the_bounds_of_the_argument_it_is():
    arch = dsl.parse_moa("moa m {\n    param ceff = 0.5\n    param h = 16\n"
                         "    pe p [time = gpu(cc = 3.5, sms = 13, cores = 2496, clock = 706, "
                         "bandwidth = 208, compute_efficiency = ceff, hide = h * 2)]\n}\n")[0]
    b = free_bounds(arch, parse_free(arch, "ceff,h"))
    assert str(b[0]) == "(0, 1]"              # compute_efficiency = ceff
    assert str(b[1]) == "[0, inf)"            # h * 2 is not h alone: non-negative


# --------------------------------------------------------------------------- never outside

def _gpu_rows(efficiency_needed):
    """Rows that a gpu model can meet only with ``efficiency = efficiency_needed``:
    memory-bound launches timed at data-sheet bandwidth x that efficiency."""
    truth = one_pe("gpu(cc = 3.5, sms = 13, cores = 2496, clock = 706, bandwidth = 208, "
                   "efficiency = 1)")
    app = dsl.parse_sdf(APP)[0]
    m = Mapping("m", {"k": "p"})
    return app, [MeasurementRow(i + 2, i + 1, {"n": n},
                                evaluate(app, truth, m, params={"n": n}).value
                                / efficiency_needed, m)
                 for i, n in enumerate((1e5, 1e6, 1e7))]


def test_an_efficiency_the_data_push_past_1_stops_at_1_and_says_so(tmp_path, capsys):
    """The issue's "efficiency of 943": measurements 3x faster than the data sheet's
    bandwidth allows; unbounded, the fit returned efficiency 3."""
    app, rows = _gpu_rows(3.0)
    arch = one_pe("gpu(cc = 3.5, sms = 13, cores = 2496, clock = 706, bandwidth = 208, "
                  "efficiency = 0.5)")
    a = assess(arch, rows, app=app, free="p.time.efficiency", test_fraction=0, starts=2)
    assert a.fit.values["p.time.efficiency"] == 1.0
    assert a.fit.at_bound == (("p.time.efficiency", "upper"),)
    assert any("sits on its upper bound" in w and "(0, 1]" in w for w in a.fit.warnings)
    doc = a.fit.to_dict()
    assert doc["at_bound"] == {"p.time.efficiency": "upper"}
    assert doc["bounds"] == {"p.time.efficiency": "(0, 1]"}


def test_within_bounds_the_efficiency_is_recovered():
    app, rows = _gpu_rows(0.62)
    arch = one_pe("gpu(cc = 3.5, sms = 13, cores = 2496, clock = 706, bandwidth = 208, "
                  "efficiency = 0.9)")
    a = assess(arch, rows, app=app, free="p.time.efficiency", test_fraction=0, starts=0)
    assert a.fit.values["p.time.efficiency"] == pytest.approx(0.62, rel=1e-6)
    assert a.fit.at_bound == ()


class _Capped(CostModel):
    """A linear model whose parameter means a fraction (for the bounded linear path)."""

    name = "test_capped_share"
    linear_parameters = ("share", "rest")

    class Parameters(Parameters):
        share: float = Field(default=0.5, ge=0, le=1)
        rest: float = Field(default=0.0, ge=0)

    def token_cost(self, token):
        return self.params.share * token.quanta + self.params.rest

    def linear_terms(self, token):
        return {"share": token.quanta, "rest": 1.0}


@pytest.fixture
def capped(monkeypatch):
    from moa.cost_models import registry
    monkeypatch.setitem(registry._registry, _Capped.name, _Capped)


def test_the_linear_path_respects_an_upper_bound_too(capped):
    """NNLS knows only >= 0: a fraction the data put at 2.5 stays at 1 (bounded
    variable least squares), and the other parameter absorbs what it can."""
    app = dsl.parse_sdf(APP)[0]
    arch = one_pe("test_capped_share(share = 0.5)")
    a = assess(arch, rows_of([2.5 * n + 7 for n in SIZES]), app=app,
               free="p.time.share,p.time.rest", test_fraction=0)
    assert a.fit.method == "lsq_linear"
    assert a.fit.values["p.time.share"] == 1.0
    assert dict(a.fit.at_bound) == {"p.time.share": "upper"}
    inside = assess(arch, rows_of([0.25 * n + 7 for n in SIZES]), app=app,
                    free="p.time.share,p.time.rest", test_fraction=0)
    assert inside.fit.values["p.time.share"] == pytest.approx(0.25, rel=1e-9)
    assert inside.fit.values["p.time.rest"] == pytest.approx(7, rel=1e-6)


@pytest.mark.parametrize("name", sorted(CALLS))
@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(logs=st.lists(st.floats(-7, 3), min_size=4, max_size=4),
       relative=st.booleans())
def test_no_fit_returns_a_parameter_outside_its_bounds(name, logs, relative):
    """Property over every model: whatever the measurements (any positive values, most
    of them inconsistent with the model), every fitted value lies within its declared
    bounds, and one reported on a bound is within 1e-6 of it."""
    app = dsl.parse_sdf(APP)[0]
    arch = one_pe(CALLS[name])
    rows = rows_of([10.0 ** v for v in logs])
    try:
        a = assess(arch, rows, app=app, free="p.time.*", test_fraction=0, starts=1,
                   residuals="relative" if relative else "absolute")
    except InputError as exc:               # a region where the model cannot evaluate
        assert "row" in str(exc)
        return
    params = model_class(name).Parameters
    for fp in a.fit.free:
        value = a.fit.values[fp.spec]
        assert value in parameter_bounds(params, fp.param), (fp.spec, value)
    for spec, side in a.fit.at_bound:
        b = parameter_bounds(params, spec.rsplit(".", 1)[1])
        end = b.low if side == "lower" else b.high
        assert abs(a.fit.values[spec] - end) <= 1e-6 * max(1.0, abs(end), 1e9)


# --------------------------------------------------------------------------- patterns

GPUS = ("moa g {\n    param hide_kepler = 16\n    param hide_maxwell = 16\n"
        "    param launch = 5e-6\n"
        "    pe k20 [time = gpu(cc = 3.5, sms = 13, cores = 2496, clock = 706, bandwidth = 208, "
        "efficiency = 0.7, hide = hide_kepler, launch = launch)]\n"
        "    pe k40 [time = gpu(cc = 3.5, sms = 15, cores = 2880, clock = 745, bandwidth = 288, "
        "efficiency = 0.7, hide = hide_kepler, launch = launch)]\n"
        "    pe m980 [time = gpu(cc = 5.2, sms = 16, cores = 2048, clock = 1216, "
        "bandwidth = 224, efficiency = 0.7, hide = hide_maxwell, launch = launch)]\n}\n")


def test_patterns_expand_over_element_metric_param_and_bare_names():
    arch = dsl.parse_moa(GPUS)[0]
    assert expand_free(arch, ["*.time.efficiency"]) == [
        "k20.time.efficiency", "k40.time.efficiency", "m980.time.efficiency"]
    assert expand_free(arch, ["hide_*", "launch"]) == ["hide_kepler", "hide_maxwell", "launch"]
    assert expand_free(arch, ["k4?.time.eff*"]) == ["k40.time.efficiency"]
    assert expand_free(arch, ["k20.time.*ffic*"]) == [
        "k20.time.efficiency", "k20.time.compute_efficiency"]
    # cc is a key, never fitted: a wildcard over the parameter does not reach it
    assert "k20.time.cc" not in expand_free(arch, ["k20.time.*"])
    free = parse_free(arch, "hide_*,*.time.efficiency")
    assert [fp.spec for fp in free] == ["hide_kepler", "hide_maxwell", "k20.time.efficiency",
                                        "k40.time.efficiency", "m980.time.efficiency"]


def test_a_pattern_that_matches_nothing_is_a_clear_error():
    arch = dsl.parse_moa(GPUS)[0]
    with pytest.raises(InputError, match=r"pattern '\*\.time\.eficiency' matches nothing"):
        parse_free(arch, "*.time.eficiency")
    with pytest.raises(InputError, match="k20.time.efficiency"):   # it lists what exists
        parse_free(arch, "sync_*")


def test_brackets_are_themselves_so_array_members_match():
    arch = dsl.parse_moa("moa a {\n    pe big[0..1] [time = lsla(alpha = 1)]\n}\n")[0]
    assert [fp.spec for fp in parse_free(arch, "big[0].time.alpha")] == ["big[0].time.alpha"]
    assert [fp.spec for fp in parse_free(arch, "big[*].time.alpha")] == [
        "big[0].time.alpha", "big[1].time.alpha"]


def test_a_non_number_parameter_is_refused_by_name():
    arch = one_pe("logca(A = 4)")
    with pytest.raises(InputError, match="'latency' of model 'logca' is not a quantity"):
        parse_free(arch, "p.time.latency")


def test_fit_command_takes_patterns_and_marks_values_on_a_bound(tmp_path, capsys):
    app, rows = _gpu_rows(3.0)
    (tmp_path / "k.sdf").write_text(APP)
    (tmp_path / "g.moa").write_text(
        "moa g {\n    pe p [time = gpu(cc = 3.5, sms = 13, cores = 2496, clock = 706, "
        "bandwidth = 208, efficiency = 0.5)]\n}\n")
    (tmp_path / "m.map").write_text("mapping m {\n    k -> p\n}\n")
    (tmp_path / "t.csv").write_text("n,time\n" + "".join(
        f"{r.params['n']},{r.measured!r}\n" for r in rows))
    files = [str(tmp_path / f) for f in ("k.sdf", "g.moa", "m.map", "t.csv")]
    assert main(["fit", *files, "--measured", "time", "--fit", "*.time.efficiency",
                 "--test-fraction", "0", "--starts", "0"]) == 0
    captured = capsys.readouterr()
    assert "p.time.efficiency  1.0  (on its upper bound: (0, 1])" in captured.out
    assert "sits on its upper bound" in captured.err
    assert main(["fit", *files, "--measured", "time", "--fit", "*.time.efficiency",
                 "--test-fraction", "0", "--starts", "0", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["at_bound"] == {"p.time.efficiency": "upper"}
    assert main(["fit", *files, "--measured", "time", "--fit", "*.time.nothing"]) == 2
    err = capsys.readouterr().err
    assert "matches nothing" in err and "Traceback" not in err


def test_parameters_that_cannot_be_told_apart_come_with_a_remedy():
    """Two parameters of one element that only act as a product (bandwidth x
    efficiency): the warning names both and says to fix one."""
    app, rows = _gpu_rows(0.5)
    arch = one_pe("gpu(cc = 3.5, sms = 13, cores = 2496, clock = 706, bandwidth = 208, "
                  "efficiency = 0.7)")
    a = assess(arch, rows, app=app, free="p.time.bandwidth,p.time.efficiency",
               test_fraction=0, starts=0)
    assert a.fit.indistinguishable == (("p.time.bandwidth", "p.time.efficiency"),)
    text = " ".join(a.fit.warnings)
    assert "cannot tell apart p.time.bandwidth, p.time.efficiency" in text
    assert "fix all but one (leave e.g. p.time.efficiency out of --fit)" in text
    # only their product matters: no row of any n tells them apart, and it says so
    assert "other values of n alone would not tell them apart" in text


def test_a_column_that_would_tell_them_apart_is_named():
    """alpha·n + beta measured at one n only: alpha and beta are one number there; rows
    at other values of n tell them apart, and the warning says to add those."""
    app = dsl.parse_sdf(APP)[0]
    arch = one_pe("lsla(alpha = 1e-6, beta = 1e-5)")
    a = assess(arch, rows_of([0.5, 0.5, 0.5], sizes=(1e3, 1e3, 1e3)), app=app,
               free="p.time.alpha,p.time.beta", test_fraction=0)
    assert a.fit.indistinguishable == (("p.time.alpha", "p.time.beta"),)
    assert "add rows that vary n (other values there tell them apart)" in \
        " ".join(a.fit.warnings)


def test_the_same_parameter_of_several_elements_suggests_sharing():
    lsla = ("moa s {\n    pe a [time = lsla(alpha = 1)]\n    pe b [time = lsla(alpha = 1)]\n"
            "    cn bus [time = lsla(alpha = 0)]\n    a -- bus\n    b -- bus\n}\n")
    arch = dsl.parse_moa(lsla)[0]
    app = dsl.parse_sdf("sdf k {\n    param n = 1\n    actor x [quanta = n]\n"
                        "    actor y [quanta = n]\n    x -> y [size = 0]\n}\n")[0]
    m = Mapping("m", {"x": "a", "y": "b"})
    rows = [MeasurementRow(i + 2, i + 1, {"n": n}, 3.0 * n, m)
            for i, n in enumerate((1.0, 2.0, 5.0))]
    a = assess(arch, rows, app=app, free="*.time.alpha", test_fraction=0)
    assert a.fit.method == "nnls"
    text = " ".join(a.fit.warnings)
    assert "cannot tell apart a.time.alpha, b.time.alpha" in text
    assert "share one value across a, b" in text
    assert "add rows of other mappings or workloads (other values of n alone" in text
    assert math.isclose(sum(a.fit.values[k] for k in ("a.time.alpha", "b.time.alpha")), 3.0)


def test_patterns_match_type_and_array_names_as_written_out():
    arch = dsl.parse_moa(
        "moa b {\n    type A7 [energy = lsla(alpha = 1), time = lsla(alpha = 2)]\n"
        "    type A15 [energy = lsla(alpha = 3), time = lsla(alpha = 4)]\n"
        "    pe little[0..1] : A7\n    pe big[0..1] : A15\n"
        "    cn bus [time = lsla(alpha = 1)]\n"
        "    little[*] -- bus; big[*] -- bus\n}\n")[0]
    # the type's names, as `--fit A15.energy.alpha,A15.time.alpha` spells them out
    assert expand_free(arch, ["A15.*"]) == ["A15.energy.alpha", "A15.energy.beta",
                                            "A15.time.alpha", "A15.time.beta"]
    assert expand_free(arch, ["A*.energy.alpha"]) == ["A7.energy.alpha", "A15.energy.alpha"]
    assert expand_free(arch, ["big.time.*"]) == ["big.time.alpha", "big.time.beta"]  # array
    # where the pattern reaches the members themselves, each keeps its own value
    assert expand_free(arch, ["*.energy.alpha"]) == [
        "little[0].energy.alpha", "little[1].energy.alpha", "big[0].energy.alpha",
        "big[1].energy.alpha"]
    assert [fp.spec for fp in parse_free(arch, "A15.*.alpha")] == ["A15.energy.alpha",
                                                                   "A15.time.alpha"]
    assert [fp.elements for fp in parse_free(arch, "A15.e*.alpha")] == [("big[0]", "big[1]")]
