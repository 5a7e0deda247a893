"""Communication charged to the cores: a CN's ``charge = self | ends | both`` (SPEC §12).

The hand-computed problem (``lambda = 0.5``, every model ``lsla(alpha)``, cost = alpha ·
quanta per token, one firing of each actor per iteration):

  actors a (quanta 2), b (3), c (7); channels a -> b (size 4), b -> c (size 2);
  mapping a, b on p0 and c on p1.  PEs cost 1 per quanta: p0 = 2 + 3 = 5, p1 = 7.
  a -> b stays on p0 and crosses its local CN l0 (alpha 3):  3 · 4 = 12;
  b -> c crosses the bus (alpha 10):                        10 · 2 = 20.

- all ``self`` (LSLA): sum = 5 + 7 + 0.5 · (12 + 20) = 28;  max = max(5, 7, 6, 10) = 10
  (the bus); exclusive: both CN shares belong to p0 (producers a, b on p0), phases
  p0 = max(5, 0.5·12, 0.5·20) = 10, p1 = 7, total 17.
- all ``ends``: l0's 12 is charged to p0 twice (both ends on p0), 0.5 · 12 each; the
  bus's 20 to p0 and to p1, 0.5 · 20 each: p0 = 5 + 6 + 6 + 10 = 27, p1 = 7 + 10 = 17,
  CNs 0.  sum = 44, max = 27 (p0), exclusive = 27 + 17 = 44.
- all ``both``: the PEs as with ``ends`` and the CNs as with ``self``:
  sum = 44 + 0.5 · 32 = 60, max = max(27, 17, 6, 10) = 27,
  exclusive = max(27, 6, 10) + 17 = 44.
- bus ``ends``, l0 ``self``: p0 = 5 + 10 = 15, p1 = 17, l0 = 12:
  sum = 32 + 6 = 38, max = max(15, 17, 6) = 17, exclusive = max(15, 6) + 17 = 32.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from dsl import parse_map, parse_moa, parse_sdf
from mapping.evaluation.batch import BatchEvaluator
from mapping.cli.main import main
from mapping.evaluation.reference import evaluate
from mapping.semantics.problem import bind_problem
from mapping.semantics.traffic import CHARGED_ENDS, end_counts
from mapping.search import search
from moa import Architecture, ArchitectureError
from search_problems import bench_arch, random_app, roofline_arch

SDF = """sdf chain {
    actor a [quanta = 2]
    actor b [quanta = 3]
    actor c [quanta = 7]
    a -> b [size = 4]
    b -> c [size = 2]
}"""

MAP = "mapping m { a -> p0; b -> p0; c -> p1 }"


def moa_text(bus="self", local="self"):
    return f"""moa board {{
    lambda = 0.5
    pe p0 [time = lsla(alpha = 1), energy = lsla(alpha = 1), local = l0]
    pe p1 [time = lsla(alpha = 1), energy = lsla(alpha = 1)]
    cn l0 [time = lsla(alpha = 3), energy = lsla(alpha = 3), charge = "{local}"]
    cn bus [time = lsla(alpha = 10), energy = lsla(alpha = 10), charge = "{bus}"]
    p0 -- l0; p0 -- bus; p1 -- bus
}}"""


#: (bus, l0) charges → aggregate → (value, element values) computed by hand above
CASES = {
    ("self", "self"): {"sum": 28, "max": 10, "exclusive": 17,
                       "elements": {"p0": 5, "p1": 7, "l0": 12, "bus": 20}},
    ("ends", "ends"): {"sum": 44, "max": 27, "exclusive": 44,
                       "elements": {"p0": 27, "p1": 17, "l0": 0, "bus": 0}},
    ("both", "both"): {"sum": 60, "max": 27, "exclusive": 44,
                       "elements": {"p0": 27, "p1": 17, "l0": 12, "bus": 20}},
    ("ends", "self"): {"sum": 38, "max": 17, "exclusive": 32,
                       "elements": {"p0": 15, "p1": 17, "l0": 12, "bus": 0}},
}
BOTTLENECK = {("self", "self"): "bus", ("ends", "ends"): "p0", ("both", "both"): "p0",
              ("ends", "self"): "p1"}


def problem(bus, local):
    app, = parse_sdf(SDF)
    arch, = parse_moa(moa_text(bus, local))
    mapping, = parse_map(MAP)
    return app, arch, mapping, bind_problem(app, arch)


@pytest.mark.parametrize("aggregate", ["sum", "max", "exclusive"])
@pytest.mark.parametrize("charges", list(CASES))
@pytest.mark.parametrize("metric", ["time", "energy"])
def test_reference_and_batch_by_hand(charges, aggregate, metric):
    app, arch, mapping, prob = problem(*charges)
    want = CASES[charges]
    ev = evaluate(app, arch, mapping, metric, aggregate, problem=prob)
    assert ev.value == pytest.approx(want[aggregate], rel=1e-12)
    assert {e.name: e.value for e in ev.elements} == pytest.approx(want["elements"])
    if aggregate == "max":
        assert ev.bottleneck == BOTTLENECK[charges]
    plans = [None, True, False] if aggregate == "max" else [None]
    for max_plan in plans:
        batch = BatchEvaluator(prob, metric, aggregate, max_plan=max_plan)
        assert batch.vectorized
        row = batch.encode(mapping)
        assert batch.evaluate(row)[0] == pytest.approx(want[aggregate], rel=1e-12)
        assert batch.value(mapping) == pytest.approx(want[aggregate], rel=1e-12)
        loads = dict(zip(batch.elements, batch.loads(row)[0]))
        assert loads == pytest.approx(want["elements"])
    if aggregate in ("sum", "max"):
        assert BatchEvaluator(prob, metric, aggregate, max_plan=True).plan == "groups"


def test_power_is_not_charged():
    """``power`` is intensive (a mean of the tokens' power): charging moves costs that
    accrue, so every CN keeps its tokens for ``power`` whatever its charge.  With power
    models lsla(alpha = 1) everywhere and no time weights, each element's power is the
    plain mean of alpha · quanta over its token groups: p0 (2 + 3)/2 = 2.5, p1 7,
    l0 4, bus 2; sum = 2.5 + 7 + 0.5 · (4 + 2) = 12.5."""
    text = moa_text("ends", "both").replace("energy = lsla(alpha = 1)",
                                             "power = lsla(alpha = 1)")
    text = text.replace("energy = lsla(alpha = 3)", "power = lsla(alpha = 1)")
    text = text.replace("energy = lsla(alpha = 10)", "power = lsla(alpha = 1)")
    text = text.replace("time = lsla(alpha = 1), ", "").replace("time = lsla(alpha = 3), ", "")
    text = text.replace("time = lsla(alpha = 10), ", "")
    app, = parse_sdf(SDF)
    arch, = parse_moa(text)
    mapping, = parse_map(MAP)
    prob = bind_problem(app, arch)
    ev = evaluate(app, arch, mapping, "power", "sum", problem=prob)
    assert {e.name: e.value for e in ev.elements} == pytest.approx(
        {"p0": 2.5, "p1": 7, "l0": 4, "bus": 2})
    assert ev.value == pytest.approx(12.5)
    batch = BatchEvaluator(prob, "power", "sum")
    assert batch.evaluate(batch.encode(mapping))[0] == pytest.approx(12.5)


def test_cli_eval_json(tmp_path, capsys):
    files = []
    for name, text in (("a.sdf", SDF), ("b.moa", moa_text("ends", "ends")), ("m.map", MAP)):
        (tmp_path / name).write_text(text)
        files.append(str(tmp_path / name))
    code = main(["eval", *files, "--aggregate", "max", "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    r = json.loads(out)
    assert r["value"] == pytest.approx(27) and r["bottleneck"] == "p0"


def test_bad_charge_is_an_error_with_position(tmp_path, capsys):
    path = tmp_path / "b.moa"
    path.write_text(moa_text("both", "nowhere"))
    with pytest.raises(ArchitectureError, match="charge must be one of self, ends, both, "
                                                "got 'nowhere'"):
        parse_moa(path.read_text())
    (tmp_path / "a.sdf").write_text(SDF)
    (tmp_path / "m.map").write_text(MAP)
    code = main(["eval", str(tmp_path / "a.sdf"), str(path), str(tmp_path / "m.map")])
    err = capsys.readouterr().err
    assert code == 2 and "b.moa:5:" in err and "charge" in err and "Traceback" not in err
    with pytest.raises(ArchitectureError, match="attribute of communication nodes"):
        Architecture("x").add_pe("p", attrs={"charge": "ends"})


def test_default_self_is_lsla():
    """No ``charge`` and ``charge = self`` give the same values (the oracle's LSLA)."""
    app = random_app(8, 12, seed=4)
    plain, marked = charged_arch(None), charged_arch("self")
    X = np.random.default_rng(0).integers(0, 8, (200, 8))
    for agg in ("sum", "max", "exclusive"):
        a = BatchEvaluator(bind_problem(app, plain), "time", agg).evaluate(X)
        b = BatchEvaluator(bind_problem(app, marked), "time", agg).evaluate(X)
        np.testing.assert_array_equal(a, b)


def charged_arch(charge, lambda_=0.7, aggregate="sum", base=None):
    """The benchmark board (or ``base``) with every CN charged ``charge`` (None: no
    attribute); on the board l2_big is the big cores' local CN."""
    base = base or bench_arch(lambda_, aggregate, gsla_gpu=False)
    a = Architecture("charged", lambda_=base.lambda_, aggregate=base.aggregate)
    for t in base.types.values():
        a.add_type(t.name, costs=t.costs)
    for e in base.elements.values():
        attrs = {"charge": charge} if charge is not None and not e.is_pe else {}
        a.add_element(e.name, e.kind, costs=e.own_costs, attrs=attrs, local=e.own_local,
                      type_name=e.type_name, array=e.array)
    for x, y in base.links:
        a.add_link(x, y)
    return a


@pytest.mark.parametrize("charge", ["ends", "both"])
@pytest.mark.parametrize("aggregate", ["sum", "max", "exclusive"])
def test_batch_paths_equal_the_reference(charge, aggregate):
    """Group tables, generic tables and the one-mapping fast path against the reference
    evaluator on random mappings of a 10-actor graph on the 8-PE board."""
    app = random_app(10, 16, seed=7)
    prob = bind_problem(app, charged_arch(charge))
    X = np.random.default_rng(1).integers(0, 8, (60, 10))
    for metric in ("time", "energy"):
        evs = [BatchEvaluator(prob, metric, aggregate, max_plan=m) for m in (True, False)]
        if aggregate in ("sum", "max"):
            assert evs[0].plan == "groups"
        assert evs[1].plan in ("groups", "tables") and evs[0].vectorized
        got = [ev.evaluate(X) for ev in evs]
        for i, row in enumerate(X):
            m = evs[0].to_mapping(row)
            ref = evaluate(prob.app, prob.arch, m, metric, aggregate, problem=prob).value
            for g in got:
                assert g[i] == pytest.approx(ref, rel=1e-12)
            assert evs[0].value(row) == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("aggregate", ["sum", "max"])
def test_exact_equals_exhaustive_with_ends(aggregate):
    """The MILP charges each end PE: its optimum is exhaustive enumeration's, and not the
    optimum of the same problem without charge (the charge matters here)."""
    app = random_app(7, 10, seed=11)
    prob = bind_problem(app, charged_arch("ends", lambda_=2.0))
    ex = search(prob, "time", aggregate, strategy="exhaustive")
    milp = search(prob, "time", aggregate, strategy="exact")
    assert ex.optimal and milp.optimal
    assert milp.value == pytest.approx(ex.value, rel=1e-7)
    plain = search(bind_problem(app, charged_arch(None, lambda_=2.0)), "time", aggregate,
                   strategy="exhaustive")
    assert plain.value != pytest.approx(ex.value, rel=1e-6)


@pytest.mark.parametrize("aggregate", ["sum", "max"])
def test_fit_recovers_charged_cn_parameters(aggregate):
    """Measurements generated with the hand problem's bus alpha 10 and l0 alpha 3 (both
    ``ends``) over all 8 mappings; fitting both from 1 recovers them."""
    import itertools
    from dsl.mappings import Mapping
    from mapping.calibration.free import parse_free
    from mapping.calibration.row_model import RowModel
    from mapping.calibration.solvers import fit_parameters
    from mapping.calibration.measurements import MeasurementRow
    app, arch, _, prob = problem("ends", "ends")
    rows = []
    for i, pes in enumerate(itertools.product(("p0", "p1"), repeat=3)):
        m = Mapping(f"m{i}", dict(zip("abc", pes)))
        value = evaluate(app, arch, m, "time", aggregate, problem=prob).value
        rows.append(MeasurementRow(i + 2, i + 1, {}, value, m))
    start, = parse_moa(moa_text("ends", "ends").replace("alpha = 10", "alpha = 1")
                       .replace("time = lsla(alpha = 3)", "time = lsla(alpha = 1)"))
    model = RowModel(start, rows, "time", aggregate, app=app)
    free = parse_free(start, ["bus.time.alpha", "l0.time.alpha"])
    fit = fit_parameters(model, free, list(range(len(rows))))
    assert fit.method == ("nnls" if aggregate == "sum" else "least_squares"), fit.warnings
    assert fit.values["bus.time.alpha"] == pytest.approx(10, rel=1e-6)
    assert fit.values["l0.time.alpha"] == pytest.approx(3, rel=1e-6)


@pytest.mark.parametrize("charge", ["ends", "both"])
@pytest.mark.parametrize("aggregate", ["sum", "max", "exclusive"])
def test_roofline_pes_with_memory_traffic(charge, aggregate):
    """Roofline PEs (non-additive, memory traffic on the CNs, never charged) with charged
    channel tokens: the batch tables equal the reference evaluator."""
    app = random_app(6, 8, seed=5)
    prob = bind_problem(app, charged_arch(charge, base=roofline_arch(0.5, aggregate)))
    ev = BatchEvaluator(prob, "time", aggregate)
    assert ev.vectorized
    X = np.random.default_rng(2).integers(0, ev.n_pes, (40, 6))
    got = ev.evaluate(X)
    for i, row in enumerate(X):
        ref = evaluate(prob.app, prob.arch, ev.to_mapping(row), "time", aggregate,
                       problem=prob).value
        assert got[i] == pytest.approx(ref, rel=1e-12)


def test_charge_from_a_type_and_printed_back():
    from dsl.printer import format_moa
    text = """moa b {
    type T [charge = "both"]
    pe p [time = lsla(alpha = 1)]
    cn bus : T [time = lsla(alpha = 1), charge = "ends"]
    cn x : T
    p -- bus
    bus -- x
}"""
    arch, = parse_moa(text)
    assert [arch.elements[k].charge for k in ("bus", "x")] == ["ends", "both"]
    again, = parse_moa(format_moa(arch))
    assert [again.elements[k].charge for k in ("bus", "x")] == ["ends", "both"]
    assert again.bind().elements["bus"].charge == "ends"


def test_the_ends_of_each_pair_of_pes_pay_every_charged_copy():
    # row s·P + d counts the ends on each PE: both on s when s = d, else one on each
    counts = end_counts(3)
    assert (counts.sum(axis=1) == CHARGED_ENDS).all()
    assert counts[0].tolist() == [2.0, 0.0, 0.0]
    assert counts[0 * 3 + 2].tolist() == counts[2 * 3 + 0].tolist() == [1.0, 0.0, 1.0]
    # each PE is an end of the pairs it is in: as producer and as consumer, P each
    assert counts.sum(axis=0).tolist() == [2.0 * 3] * 3
