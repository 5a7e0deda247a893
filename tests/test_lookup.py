"""``lookup``: per-actor costs per PE type (SPEC §12), with hand-computed values in the
reference and the batch evaluator, templates resolved at bind, errors, search, fitting."""
from __future__ import annotations

import numpy as np
import pytest

import dsl
from dsl.mappings import Mapping
from mapping.evaluation.batch import BatchEvaluator
from mapping.errors import MappingError
from mapping.evaluation.reference import evaluate
from mapping.calibration.assessment import assess
from mapping.calibration.measurements import MeasurementRow
from mapping.semantics.problem import bind_problem
from mapping.search import search
from moa import CostModelError
from moa.cost_models.registry import call_arguments

APP = """sdf chain {
    actor a [exec_A7 = 4, exec_A15 = 1]
    actor b [exec_A7 = 6, exec_A15 = 2]
    actor c [exec_A7 = 3, exec_A15 = 3]
    a -> b [size = 2]
    b -> c [size = 4]
}"""

MOA = """moa bl {
    type A7  [time = lookup()]
    type A15 [time = lookup(scale = 2)]
    pe little[0..1] : A7
    pe big : A15
    cn bus [time = lsla(alpha = 0.5)]
    little[*] -- bus
    big -- bus
}"""

# By hand: a token costs scale·exec_<type>; the bus 0.5 per byte (a->b: 1, b->c: 2).
#   M1 a->big, b->little[0], c->little[1]: big 2·1 = 2, little[0] 6, little[1] 3,
#      bus 1 + 2 = 3; sum 14, max 6
#   M2 all on little[0]: 4 + 6 + 3 = 13 (no local CN); sum 13, max 13
#   M3 a, b -> big, c -> little[1]: big 2·(1 + 2) = 6, little[1] 3, bus 2; sum 11, max 6
CASES = [({"a": "big", "b": "little[0]", "c": "little[1]"}, 14.0, 6.0),
         ({"a": "little[0]", "b": "little[0]", "c": "little[0]"}, 13.0, 13.0),
         ({"a": "big", "b": "big", "c": "little[1]"}, 11.0, 6.0)]


def objects(app=APP, moa=MOA):
    return dsl.parse_sdf(app)[0], dsl.parse_moa(moa)[0]


@pytest.mark.parametrize("aggregate", ["sum", "max"])
def test_values_by_hand_reference_and_batch(aggregate):
    app, arch = objects()
    problem = bind_problem(app, arch)
    ev = BatchEvaluator(problem, "time", aggregate)
    assert ev.vectorized
    want = [s if aggregate == "sum" else m for _, s, m in CASES]
    got = [evaluate(app, arch, Mapping("m", a), aggregate=aggregate).value for a, _, _ in CASES]
    assert got == pytest.approx(want, rel=1e-12)
    X = np.array([ev.encode(Mapping("m", a)) for a, _, _ in CASES])
    assert ev.evaluate(X) == pytest.approx(want, rel=1e-12)
    assert [ev.value(Mapping("m", a)) for a, _, _ in CASES] == pytest.approx(want, rel=1e-12)


def test_templates_are_resolved_per_element_at_bind():
    _, arch = objects(moa="""moa m {
        type A7 [time = lookup()]
        pe little[0..1] : A7
        pe gpu [time = lookup(key = "t_{element}")]
        pe acc[0..2] [time = lookup(key = "t_{array}_{type}")]
        pe dsp [time = lookup(key = "{array}:{type}:{element}")]
        pe cpu[0..1] [time = lookup(key = "t_{element}")]
        cn bus
        little[*] -- bus; gpu -- bus; acc[*] -- bus; dsp -- bus; cpu[*] -- bus
    }""")
    keys = {n: e.costs["time"].params.key for n, e in arch.bind().elements.items()
            if e.is_pe}
    # {type}: the type's name, else the element's own; {array}: the array's base name,
    # else the element's own name; {element}: the full name, index included
    assert keys == {"little[0]": "exec_A7", "little[1]": "exec_A7", "gpu": "t_gpu",
                    "acc[0]": "t_acc_acc[0]", "acc[1]": "t_acc_acc[1]",
                    "acc[2]": "t_acc_acc[2]", "dsp": "dsp:dsp:dsp",
                    "cpu[0]": "t_cpu[0]", "cpu[1]": "t_cpu[1]"}
    # {{ and }} are literal braces, with or without placeholders
    _, braces = objects(moa='moa m { pe p [time = lookup(key = "a{{b}}")]; '
                            'pe q [time = lookup(key = "{{{element}}}")] }')
    assert [e.costs["time"].params.key for e in braces.bind().elements.values()] == \
        ["a{b}", "{q}"]
    # the unbound architecture keeps the template, and prints it back
    text = dsl.format_moa(arch)
    assert 'lookup(key = "t_{element}")' in text
    assert dsl.format_moa(dsl.parse_moa(text)) == text


def test_element_and_array_keys_and_default_by_hand():
    app, arch = objects(
        app="""sdf g {
            actor a [t_gpu = 10, t_acc = 2]
            actor c [t_acc = 5]
            a -> c [size = 2]
        }""",
        moa="""moa m {
            pe gpu [time = lookup(key = "t_{element}", default = 7)]
            pe acc[0..1] [time = lookup(key = "t_{array}", scale = 3)]
            cn bus [time = lsla(alpha = 0.5)]
            gpu -- bus; acc[*] -- bus
        }""")
    # a on acc[0]: 3·2 = 6; c on gpu: no t_gpu, default 7; bus 0.5·2 = 1
    # sum 6 + 7 + 1 = 14, max 7;   a on gpu: 10, c on acc[1]: 3·5 = 15: sum 26, max 15
    problem = bind_problem(app, arch)
    for aggregate, want in (("sum", [14.0, 26.0]), ("max", [7.0, 15.0])):
        maps = [Mapping("m", {"a": "acc[0]", "c": "gpu"}),
                Mapping("m", {"a": "gpu", "c": "acc[1]"})]
        got = [evaluate(app, arch, m, aggregate=aggregate).value for m in maps]
        assert got == pytest.approx(want, rel=1e-12)
        ev = BatchEvaluator(problem, "time", aggregate)
        assert ev.evaluate(np.array([ev.encode(m) for m in maps])) == pytest.approx(want)


def test_positional_arguments():
    assert call_arguments("lookup", ["exec_{type}", 2], {}) == {"key": "exec_{type}",
                                                                "scale": 2}
    # a bare word is text (key = t_dsp), the next argument the scale
    _, arch = objects(moa="moa m { pe dsp [time = lookup(t_dsp, 2, 0)] }")
    model = arch.bind().elements["dsp"].costs["time"]
    assert (model.params.key, model.params.scale, model.params.default) == ("t_dsp", 2, 0)


@pytest.mark.parametrize("aggregate", ["sum", "max"])
def test_missing_attribute_names_actor_element_and_key(aggregate):
    app, arch = objects(app=APP.replace("actor c [exec_A7 = 3, exec_A15 = 3]",
                                        "actor c [exec_A7 = 3]"))
    m = Mapping("m", {"a": "little[0]", "b": "little[0]", "c": "big"})
    with pytest.raises(MappingError) as ref:
        evaluate(app, arch, m, aggregate=aggregate)
    ev = BatchEvaluator(bind_problem(app, arch), "time", aggregate)
    with pytest.raises(MappingError) as batch:
        ev.evaluate(ev.encode(m)[None, :])
    for info in (ref, batch):
        text = str(info.value)
        assert "'c'" in text and "'big'" in text and "'exec_A15'" in text
        assert "no default" in text
    # where the actor never goes to an A15, nothing is missing
    ok = Mapping("m", {"a": "big", "b": "little[0]", "c": "little[1]"})
    assert evaluate(app, arch, ok, aggregate=aggregate).value == \
        pytest.approx(14.0 if aggregate == "sum" else 6.0)
    assert ev.evaluate(ev.encode(ok)[None, :])[0] == pytest.approx(
        14.0 if aggregate == "sum" else 6.0)


def test_bad_templates_and_parameters_are_errors_naming_them():
    for moa, words in [
        ('moa m { pe p [time = lookup(key = "exec_{kind}")] }',
         ["'p'", "'time'", "'lookup'", "'key'", "{kind}", "{type}"]),
        ('moa m { pe p [time = lookup(key = "exec_{type")] }', ["'p'", "'key'", "brace"]),
        ("moa m { pe p [time = lookup(scale = -1)] }", ["'p'", "'scale'"]),
        ("moa m { pe p [time = lookup(default = -2)] }", ["'p'", "'default'"]),
        ("moa m { pe p [time = lookup(key = 3)] }", ["'p'", "'key'"]),
    ]:
        arch = dsl.parse_moa(moa)[0]
        with pytest.raises(CostModelError) as info:
            arch.bind()
        for w in words:
            assert w in str(info.value), (moa, str(info.value))


def test_default_inf_keeps_actors_off_types_they_lack():
    # c has no A15 time: with default = inf it cannot run on big
    app, arch = objects(app=APP.replace("actor c [exec_A7 = 3, exec_A15 = 3]",
                                        "actor c [exec_A7 = 3]"),
                        moa=MOA.replace("lookup(scale = 2)", "lookup(scale = 2, default = inf)"))
    problem = bind_problem(app, arch)
    ev = BatchEvaluator(problem, "time", "sum")
    assert ev.vectorized
    assert ev.value({"a": "big", "b": "big", "c": "big"}) == np.inf
    for aggregate in ("sum", "max"):
        for strategy in ("exhaustive", "exact"):
            res = search(problem, "time", aggregate, strategy=strategy)
            assert res.mapping["c"] != "big"
            assert np.isfinite(res.value)


CHARGED = MOA.replace("cn bus [time = lsla(alpha = 0.5)]",
                      "cn bus [time = lsla(alpha = 0.5), charge = ends]")


# By hand (sum, bus cost on the bus): a on big 2 or A7 4, b 4 or 6, c 6 or 3; a channel
# between two PEs costs 1 (a->b) or 2 (b->c): all on big 12, a, b on big and c on an A7
# 2+4+3+2 = 11, a on big and b, c on one A7 2+6+3+1 = 12, all on one A7 13 -> 11.
# With charge = ends (issue 9) both end cores copy, so a crossing channel costs twice:
# every split mapping gains its bus cost again and all on big (12) is best; under max,
# a on little[0] (4 + copy 1), b on big (4 + copies 1 + 2), c on little[1] (3 + copy 2)
# leaves the busiest core 7.
@pytest.mark.parametrize("moa, aggregate, best", [
    (MOA, "sum", 11.0), (MOA, "max", None), (CHARGED, "sum", 12.0), (CHARGED, "max", 7.0)])
def test_exact_equals_exhaustive(moa, aggregate, best):
    app, arch = objects(moa=moa)
    problem = bind_problem(app, arch)
    ex = search(problem, "time", aggregate, strategy="exhaustive")
    milp = search(problem, "time", aggregate, strategy="exact")
    assert ex.optimal and milp.optimal
    assert milp.value == pytest.approx(ex.value, rel=1e-9)
    if best is not None:
        assert ex.value == pytest.approx(best)


def test_scale_is_fitted_linearly():
    app, _ = objects()
    truth = dsl.parse_moa(MOA.replace("lookup()", "lookup(scale = 0.75)"))[0]
    start = dsl.parse_moa(MOA.replace("lookup()", "lookup(scale = 7.5)")
                          .replace("lookup(scale = 2)", "lookup(scale = 20)"))[0]
    maps = [Mapping(f"m{i}", a) for i, (a, _, _) in enumerate(CASES)] + [
        Mapping("m3", {"a": "little[1]", "b": "big", "c": "big"})]
    rows = [MeasurementRow(i + 2, i + 1, {}, evaluate(app, truth, m).value, m)
            for i, m in enumerate(maps)]
    a = assess(start, rows, app=app, free="A7.time.scale,A15.time.scale", test_fraction=0)
    assert a.fit.method == "nnls"
    assert a.fit.values["A7.time.scale"] == pytest.approx(0.75, rel=1e-9)
    assert a.fit.values["A15.time.scale"] == pytest.approx(2.0, rel=1e-9)


def test_cli_errors_are_positioned_exit_2(tmp_path, capsys):
    from mapping.cli.main import main
    app = tmp_path / "app.sdf"
    app.write_text(APP.replace("actor c [exec_A7 = 3, exec_A15 = 3]", "actor c [exec_A7 = 3]"))
    moa = tmp_path / "arch.moa"
    moa.write_text(MOA)
    code = main(["eval", str(app), str(moa), "--map", "a=big,b=big,c=big"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"{moa}:5:8" in err, err          # the element big
    assert "'c'" in err and "'big'" in err and "'exec_A15'" in err
    moa.write_text(MOA.replace("lookup()", 'lookup(key = "exec_{kind}")'))
    code = main(["eval", str(app), str(moa), "--map", "a=big,b=big,c=big"])
    err = capsys.readouterr().err
    assert code == 2 and f"{moa}:2:" in err and "{kind}" in err


def test_an_inf_attribute_means_cannot_run_whatever_the_scale():
    app, arch = objects(app="sdf g { actor a [exec_A = inf, exec_B = 2] }",
                        moa="moa m { type A [time = lookup(scale = 0)]; "
                            "type B [time = lookup(scale = 3)]; pe p : A; pe q : B }")
    assert evaluate(app, arch, Mapping("m", {"a": "p"})).value == np.inf
    assert evaluate(app, arch, Mapping("m", {"a": "q"})).value == pytest.approx(6.0)
    res = search(bind_problem(app, arch), "time", "sum", strategy="exhaustive")
    assert res.mapping == {"a": "q"} and res.value == pytest.approx(6.0)



def test_a_key_missing_without_default_keeps_the_fast_paths():
    """c has no A15 time and lookup no default: the pair (c, big) is refused, not the
    whole problem.  The batch evaluator stays compiled (before: every mapping went through
    the reference evaluator and exact declined); a mapping that puts c on big is the
    reference's error, naming actor, element and key; with c kept off big by ``allowed``,
    exact and exhaustive agree.  By hand (sum): a, b on big 2 + 4, c on an A7 3, channel
    b->c over the bus 2: 11."""
    app, arch = objects(app=APP.replace("actor c [exec_A7 = 3, exec_A15 = 3]",
                                        'actor c [exec_A7 = 3, allowed = "A7"]'))
    problem = bind_problem(app, arch)
    ev = BatchEvaluator(problem, "time", "sum")
    assert ev.vectorized and ev.plan != "reference"
    with pytest.raises(MappingError) as info:
        ev.evaluate(np.array([ev.encode({"a": "big", "b": "big", "c": "big"}),
                              ev.encode({"a": "big", "b": "big", "c": "little[0]"})]))
    assert "'c'" in str(info.value) and "'exec_A15'" in str(info.value)
    with pytest.raises(MappingError):
        ev.loads(ev.encode({"a": "big", "b": "big", "c": "big"})[None, :])
    assert ev.value({"a": "big", "b": "big", "c": "little[0]"}) == pytest.approx(11.0)
    # max by hand: b alone on big (4), a on little[0] (4), c on little[1] (3), bus 1 + 2
    for aggregate, best in (("sum", 11.0), ("max", 4.0)):
        ex = search(problem, "time", aggregate, strategy="exhaustive")
        milp = search(problem, "time", aggregate, strategy="exact")
        assert ex.value == pytest.approx(best) and milp.value == pytest.approx(best)
        assert milp.optimal
        assert ex.mapping["c"] != "big" and milp.mapping["c"] != "big"
