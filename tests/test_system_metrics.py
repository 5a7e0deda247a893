"""System metrics: ``metric NAME = EXPR`` with ``M[AGG]`` terms (SPEC §12).

The hand-computed problem (``lambda = 1``, every model ``lsla(alpha)``: a token costs
alpha · quanta; one firing of each actor per iteration):

  actors a (quanta 2), b (quanta 3); channel a -> b (size 4).
  p0: time alpha 1, energy alpha 3;  p1: time alpha 3, energy alpha 1;
  bus: time alpha 0.5, energy alpha 0.25 (a crossing channel costs 2 and 1).
  energy_total = energy[sum] + p_static * time[max], p_static = 1;
  edp = energy_total * time[max].

  mapping        time (p0, p1, bus)  time[max]  energy (p0, p1, bus)  energy[sum]  total  edp
  m1 a>p0 b>p1   2, 9, 2             9          6, 3, 1               10           19     171
  m2 both p0     5, 0, 0             5          15, 0, 0              15           20     100
  m3 both p1     0, 15, 0            15         0, 5, 0               5            20     300
  m4 a>p1 b>p0   3, 6, 2             6          9, 2, 1               12           18     108

  With p_static = 0.5: 14.5, 17.5, 12.5, 15 (best m3).
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from dsl import format_moa, parse_map, parse_moa, parse_sdf
from dsl.errors import ParseError
from mapping.evaluation.batch import BatchEvaluator, evaluate_value
from mapping.cli.main import main
from mapping.errors import MappingError
from mapping.evaluation.reference import evaluate
from mapping.semantics.metrics import check_metric, known_metrics
from mapping.semantics.problem import bind_problem
from mapping.search import search

SDF = """sdf pair {
    actor a [quanta = 2]
    actor b [quanta = 3]
    a -> b [size = 4]
}"""


def moa_text(metrics="""metric energy_total = energy[sum] + p_static * time[max]
    metric edp = energy_total * time[max]"""):
    return f"""moa two {{
    param p_static = 1
    {metrics}
    pe p0 [time = lsla(alpha = 1), energy = lsla(alpha = 3)]
    pe p1 [time = lsla(alpha = 3), energy = lsla(alpha = 1)]
    cn bus [time = lsla(alpha = 0.5), energy = lsla(alpha = 0.25)]
    p0 -- bus; p1 -- bus
}}"""


MAPS = """mapping m1 { a -> p0; b -> p1 }
mapping m2 { a -> p0; b -> p0 }
mapping m3 { a -> p1; b -> p1 }
mapping m4 { a -> p1; b -> p0 }"""

TOTAL = [19.0, 20.0, 20.0, 18.0]
EDP = [171.0, 100.0, 300.0, 108.0]
HALF = [14.5, 17.5, 12.5, 15.0]


def problem(params=None, metrics=None):
    app = parse_sdf(SDF)[0]
    arch = parse_moa(moa_text() if metrics is None else moa_text(metrics))[0]
    return app, arch, bind_problem(app, arch, params)


def rows(ev):
    return np.array([ev.encode(m) for m in parse_map(MAPS)])


@pytest.mark.parametrize("metric, expected", [("energy_total", TOTAL), ("edp", EDP)])
def test_reference_and_batch_by_hand(metric, expected):
    app, arch, prob = problem()
    maps = parse_map(MAPS)
    got = [evaluate(app, arch, m, metric, problem=prob).value for m in maps]
    assert got == pytest.approx(expected, rel=1e-12)
    ev = BatchEvaluator(prob, metric)
    assert ev.evaluate(rows(ev)).tolist() == pytest.approx(expected, rel=1e-12)
    assert [evaluate_value(prob, m, metric) for m in maps] == pytest.approx(expected, rel=1e-12)
    assert [ev.value(m) for m in maps] == pytest.approx(expected, rel=1e-12)


def test_terms_and_json():
    app, arch, prob = problem()
    ev = evaluate(app, arch, parse_map(MAPS)[0], "energy_total", problem=prob)
    assert ev.terms == {"energy[sum]": 10.0, "time[max]": 9.0}
    d = ev.to_dict()
    assert d["value"] == pytest.approx(19.0) and d["terms"] == {"energy[sum]": 10.0,
                                                                "time[max]": 9.0}
    assert d["aggregate"] == "system"
    # elements: those of the first term, energy by element
    assert [e["value"] for e in d["elements"]] == pytest.approx([6.0, 3.0, 1.0])
    edp = evaluate(app, arch, parse_map(MAPS)[0], "edp", problem=prob)
    assert edp.terms == {"time[max]": 9.0, "energy_total": 19.0}


def test_parameter_override_changes_value_and_best():
    app, arch, prob = problem({"p_static": 0.5})
    got = [evaluate(app, arch, m, "energy_total", problem=prob).value for m in parse_map(MAPS)]
    assert got == pytest.approx(HALF)
    ev = BatchEvaluator(prob, "energy_total")
    assert ev.evaluate(rows(ev)).tolist() == pytest.approx(HALF)
    best = search(prob, metric="energy_total", strategy="exhaustive")
    assert best.value == pytest.approx(12.5)
    assert dict(best.mapping) == {"a": "p1", "b": "p1"}


def test_exhaustive_search_finds_hand_best():
    _, _, prob = problem()
    best = search(prob, metric="energy_total", strategy="exhaustive")
    assert best.value == pytest.approx(18.0)
    assert dict(best.mapping) == {"a": "p1", "b": "p0"}


def test_known_metrics_include_system_metrics():
    _, arch, _ = problem()
    assert {"edp", "energy_total", "energy", "time"} <= set(known_metrics(arch))


def test_unknown_metric_inside_lists_known():
    app, arch, prob = problem(metrics="metric bad = watts[sum] + time[max]")
    with pytest.raises(MappingError, match=r"metric 'bad': unknown metric 'watts'.*known "
                                           r"metrics: bad, energy, time"):
        evaluate(app, arch, parse_map(MAPS)[0], "bad", problem=prob)
    with pytest.raises(MappingError, match="unknown metric 'watts'"):
        BatchEvaluator(prob, "bad")


def test_unknown_aggregation_inside():
    _, arch, prob = problem(metrics="metric bad = time[median]")
    with pytest.raises(MappingError, match=r"unknown aggregation 'median'.*sum"):
        check_metric(prob.arch, "bad")


def test_cycle_between_system_metrics():
    _, _, prob = problem(metrics="""metric x = y + time[sum]
    metric y = 2 * x""")
    with pytest.raises(MappingError, match=r"cycle: x -> y -> x"):
        check_metric(prob.arch, "x")
    with pytest.raises(MappingError, match="cycle"):
        BatchEvaluator(prob, "y")


def test_aggregation_of_a_system_metric_refused():
    _, _, prob = problem(metrics="""metric x = time[sum]
    metric y = x[max]""")
    with pytest.raises(MappingError, match="'x' is a system metric"):
        check_metric(prob.arch, "y")


def test_aggregate_option_refused():
    app, arch, prob = problem()
    with pytest.raises(MappingError, match="does not apply"):
        evaluate(app, arch, parse_map(MAPS)[0], "energy_total", "max", problem=prob)
    with pytest.raises(MappingError, match="does not apply"):
        BatchEvaluator(prob, "energy_total", "max")


def test_unknown_bare_name_is_a_parse_error():
    with pytest.raises(ParseError, match=r"unknown parameter or metric 'q'"):
        parse_moa(moa_text("metric bad = q * time[max]"))


def test_term_outside_metric_statement_is_a_parse_error():
    text = moa_text("param q = time[max]")
    with pytest.raises(ParseError, match="only appear in a `metric"):
        parse_moa(text)


def test_duplicate_metric():
    with pytest.raises(Exception, match="duplicate metric 'x'"):
        parse_moa(moa_text("metric x = time[sum]\n    metric x = time[max]"))


def test_printer_round_trip():
    arch = parse_moa(moa_text())[0]
    text = format_moa([arch])
    assert "metric energy_total = energy[sum] + p_static * time[max]" in text
    again = parse_moa(text)[0]
    assert again.system_metrics == arch.system_metrics
    assert format_moa([again]) == text


def test_pickled_system_evaluator():
    import pickle
    _, _, prob = problem()
    ev = BatchEvaluator(prob, "energy_total")
    copy = pickle.loads(pickle.dumps(ev))
    assert copy.evaluate(rows(ev)).tolist() == pytest.approx(TOTAL)


def test_cli_eval_and_params(tmp_path, capsys):
    (tmp_path / "a.sdf").write_text(SDF)
    (tmp_path / "b.moa").write_text(moa_text())
    (tmp_path / "m.map").write_text("mapping m1 { a -> p0; b -> p1 }")
    files = [str(tmp_path / n) for n in ("a.sdf", "b.moa", "m.map")]
    assert main(["eval", *files, "--metric", "energy_total", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    out = out[0] if isinstance(out, list) else out
    assert out["value"] == pytest.approx(19.0)
    assert main(["eval", *files, "--metric", "energy_total", "-p", "p_static=0.5",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    out = out[0] if isinstance(out, list) else out
    assert out["value"] == pytest.approx(14.5)
    assert main(["eval", *files, "--metric", "energy_total", "--aggregate", "max"]) == 2
    assert "does not apply" in capsys.readouterr().err


def test_any_aggregate_is_refused_for_a_system_metric():
    """Even the architecture's default (sum): the terms name their own aggregations, and
    an --aggregate that silently does nothing would mislead (it passed before)."""
    app, arch, prob = problem()
    m = parse_map(MAPS)[0]
    assert evaluate(app, arch, m, "energy_total", problem=prob).value == 19.0
    assert BatchEvaluator(prob, "energy_total").value(m) == 19.0
    for aggregate in ("sum", "max"):
        with pytest.raises(MappingError, match="omit --aggregate"):
            evaluate(app, arch, m, "energy_total", aggregate, problem=prob)
        with pytest.raises(MappingError, match="omit --aggregate"):
            BatchEvaluator(prob, "energy_total", aggregate)


def test_name_of_an_element_metric_refused():
    _, _, prob = problem(metrics="metric time = energy[sum]")
    with pytest.raises(MappingError, match="cannot have the name of a metric"):
        check_metric(prob.arch, "time")


def test_cli_fidelity_and_sweep(tmp_path, capsys):
    (tmp_path / "a.sdf").write_text(SDF)
    (tmp_path / "b.moa").write_text(moa_text())
    (tmp_path / "m.map").write_text(MAPS)
    # measured in the order m4 < m1 < m3 < m2, the model's order up to the m2/m3 tie
    (tmp_path / "e.csv").write_text("mapping,e\nm1,19\nm2,20.5\nm3,19.5\nm4,18\n")
    files = [str(tmp_path / n) for n in ("a.sdf", "b.moa", "m.map")]
    assert main(["fidelity", *files, str(tmp_path / "e.csv"), "--measured", "e",
                 "--mapping-column", "mapping", "--metric", "energy_total"]) == 0
    # 6 pairs, 5 strictly ordered alike, the model's tie m2 = m3 counts as not ordered
    assert "0.8333" in capsys.readouterr().out
    assert main(["sweep", *files, "--mapping", "m1", "--metric", "energy_total",
                 "--param", "p_static=0:1:3"]) == 0
    values = [line.split(",")[1] for line in capsys.readouterr().out.split()[1:]]
    assert [float(v) for v in values] == [10.0, 14.5, 19.0]


def test_exclusive_term_by_hand():
    """time[exclusive]: each PE's phase is the max of its own time and of the bus share
    of the channels it produces (a crossing a -> b costs 2 on the bus, lambda 1):
    m1: p0 max(2, 2) + p1 9 = 11; m2: 5; m3: 15; m4: p1 max(6, 2) + p0 3 = 9.
    Minus time[max] (9, 5, 15, 6): 2, 0, 0, 3."""
    app, arch, prob = problem(metrics="metric mix = time[exclusive] - time[max]")
    maps = parse_map(MAPS)
    got = [evaluate(app, arch, m, "mix", problem=prob).value for m in maps]
    assert got == pytest.approx([2.0, 0.0, 0.0, 3.0], abs=1e-12)
    ev = BatchEvaluator(prob, "mix")
    assert ev.evaluate(rows(ev)).tolist() == pytest.approx([2.0, 0.0, 0.0, 3.0], abs=1e-12)
    assert ev.loads(rows(ev)).tolist()[0] == pytest.approx([2.0, 9.0, 2.0])


def test_functions_and_round_trip_of_a_compound_expression():
    """max(energy[sum], time[max]) ** 2 / -(-2) for m1: max(10, 9)² / 2 = 50; m2:
    max(15, 5)² / 2 = 112.5."""
    text = moa_text("metric sq = max(energy[sum], time[max]) ** 2 / -(-2)")
    arch = parse_moa(text)[0]
    again = parse_moa(format_moa([arch]))[0]
    assert again.system_metrics == arch.system_metrics
    app, _, prob = problem(metrics="metric sq = max(energy[sum], time[max]) ** 2 / -(-2)")
    maps = parse_map(MAPS)[:2]
    assert [evaluate(app, arch, m, "sq", problem=prob).value for m in maps] == [50.0, 112.5]
    ev = BatchEvaluator(prob, "sq")
    assert ev.evaluate(rows(ev)[:2]).tolist() == [50.0, 112.5]


# ------------------------------------------------------------ fitting through one
SM_MOA = """moa board {{
    param p_static = {p_static}
    pe p0 [time = lsla(alpha = 1), energy = lsla(alpha = {alpha0})]
    pe p1 [time = lsla(alpha = 3), energy = lsla(alpha = 1)]
    cn bus [time = lsla(alpha = 0.5), energy = lsla(alpha = 0.1)]
    p0 -- bus; p1 -- bus
    metric energy_total = energy[sum] + p_static * time[max]
}}
"""
SM_SDF = """sdf chain {
    actor a [quanta = 2]
    actor b [quanta = 5]
    actor c [quanta = 3]
    a -> b [size = 2]
    b -> c [size = 1]
}
"""


def test_fit_recovers_p_static_and_an_element_parameter_through_a_system_metric(tmp_path,
                                                                                capsys):
    """Measurements made by the model itself at p_static = 0.5, p0's energy alpha = 2;
    the file starts both 10x off; the fit goes through the system metric, whose time
    term is a max: non-linear least squares recovers both."""
    import csv
    import itertools
    from dsl.mappings import Mapping
    truth = parse_moa(SM_MOA.format(p_static=0.5, alpha0=2.0))[0]
    app = parse_sdf(SM_SDF)[0]
    rows = []
    for pes in itertools.product(("p0", "p1"), repeat=3):
        m = Mapping("m", dict(zip("abc", pes)))
        rows.append({"t_a": pes[0], "t_b": pes[1], "t_c": pes[2],
                     "energy": evaluate(app, truth, m, "energy_total").value})
    data = tmp_path / "data.csv"
    with data.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (tmp_path / "app.sdf").write_text(SM_SDF)
    (tmp_path / "start.moa").write_text(SM_MOA.format(p_static=5.0, alpha0=20.0))
    capsys.readouterr()
    code = main(["fit", str(tmp_path / "app.sdf"), str(tmp_path / "start.moa"), str(data),
                 "--measured", "energy", "--actor-column", "t_{actor}",
                 "--metric", "energy_total", "--free", "p_static,p0.energy.alpha",
                 "--test-fraction", "0", "--starts", "4", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    fitted = json.loads(out)["fitted"]
    assert fitted["p_static"] == pytest.approx(0.5, rel=1e-6)
    assert fitted["p0.energy.alpha"] == pytest.approx(2.0, rel=1e-6)


def test_export_json_lists_the_system_metrics(tmp_path, capsys):
    moa = tmp_path / "board.moa"
    moa.write_text(SM_MOA.format(p_static=0.5, alpha0=2.0))
    capsys.readouterr()
    assert main(["export", "json", str(moa)]) == 0
    doc = json.loads(capsys.readouterr().out)
    doc = doc[0] if isinstance(doc, list) else doc
    assert doc["metrics"] == {"energy_total": "energy[sum] + p_static * time[max]"}


def test_plot_mapping_draws_one_chart_per_term(tmp_path):
    from PIL import Image
    from dsl.mappings import Mapping
    from mapping.plots.mapping_load import plot_mapping_load
    arch = parse_moa(SM_MOA.format(p_static=0.5, alpha0=2.0))[0]
    app = parse_sdf(SM_SDF)[0]
    m = Mapping("m", {"a": "p0", "b": "p1", "c": "p0"})
    system = plot_mapping_load(app, arch, m, tmp_path / "system.png", metric="energy_total")
    plain = plot_mapping_load(app, arch, m, tmp_path / "plain.png", metric="energy")
    # two stacked charts (energy[sum], time[max]) against one, at the same width
    (w1, h1), (w2, h2) = Image.open(system).size, Image.open(plain).size
    assert w1 == w2 and h1 == 2 * h2


def test_exhaustive_reduces_interchangeable_pes_for_a_system_metric():
    """Two identical cores p[0], p[1] and a distinct p2: every term of energy_total is
    unchanged by swapping p[0] and p[1], so the expression is too, and the exhaustive
    search enumerates one mapping per class (by count: 3 actors on {p[0], p[1], p2} up to
    the swap: 3^3 = 27 mappings, (27 + 1) / 2 = 14 orbits — the swap fixes only
    all-on-p2) yet finds the optimum of all 27."""
    app = parse_sdf("""sdf chain {
        actor a [quanta = 2]
        actor b [quanta = 3]
        actor c [quanta = 1]
        a -> b [size = 4]
        b -> c [size = 2]
    }""")[0]
    arch = parse_moa("""moa three {
        param p_static = 1
        metric energy_total = energy[sum] + p_static * time[max]
        pe p[0..1] [time = lsla(alpha = 1), energy = lsla(alpha = 3)]
        pe p2 [time = lsla(alpha = 3), energy = lsla(alpha = 1)]
        cn bus [time = lsla(alpha = 0.5), energy = lsla(alpha = 0.25)]
        p[*] -- bus; p2 -- bus
    }""")[0]
    problem = bind_problem(app, arch)
    ex = search(problem, "energy_total", strategy="exhaustive")
    assert ex.extra["interchangeable"] == [["p[0]", "p[1]"]]
    assert ex.evaluations == 14
    ev = BatchEvaluator(problem, "energy_total")
    every = np.array(np.meshgrid(*[range(3)] * 3, indexing="ij")).reshape(3, -1).T
    assert ex.value == pytest.approx(ev.evaluate(every).min())
