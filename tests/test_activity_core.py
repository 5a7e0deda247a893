"""Per-element activity rows go through the same core as mappings (issue 31, item 1):
system metrics, every element-value aggregation, token attributes; the two things that
counted activity cannot know (which PE a CN's tokens belong to, the firings' order) are
refused by name."""
from __future__ import annotations

import json

import numpy as np
import pytest

import dsl
from mapping.cli.main import main
from mapping.evaluation.activity import evaluate_activity
from mapping.errors import MappingError
from mapping.evaluation.reference import evaluate
from mapping.calibration.assessment import assess
from mapping.calibration.measurements import read_measurements
from mapping.semantics.problem import bind_problem

SDF = """
sdf chain {
    param N = 4
    actor src  [quanta = 3 * N]
    actor work [quanta = 10 * N]
    actor sink [quanta = N]
    src -> work  [size = 2 * N]
    work -> sink [size = N]
}
"""

MOA = """
moa board {
    param p_static = 0.25
    lambda = 0.5
    metric energy_total = energy[sum] + p_static * time[max]
    metric edp = energy_total * time[max]
    aggregate = sum
    type little [time = lsla(alpha = 2.0, beta = 1.0), energy = lsla(alpha = 0.3)]
    type big    [time = lsla(alpha = 0.7, beta = 2.0), energy = lsla(alpha = 0.9, beta = 0.1)]
    pe l[0..1] : little
    pe b[0..1] : big
    cn bus [time = lsla(alpha = 0.05, beta = 0.5), energy = lsla(alpha = 0.01)]
    l[*] -- bus
    b[*] -- bus
}
"""

PES = ["l[0]", "l[1]", "b[0]", "b[1]"]
ACTORS = ["src", "work", "sink"]


def study(tmp_path, n=24, seed=3):
    """The same alternatives twice: as a mapping per row (``t_{actor}``) and as the
    activity that mapping puts on each element (``quanta_{element}``,
    ``tokens_{element}``), measured by a made-up column (ranks only need some order)."""
    (tmp_path / "a.sdf").write_text(SDF)
    (tmp_path / "b.moa").write_text(MOA)
    app, arch = dsl.load_sdf(tmp_path / "a.sdf")[0], dsl.load_moa(tmp_path / "b.moa")[0]
    rng = np.random.default_rng(seed)
    names = list(arch.elements)
    head = ["N"] + [f"t_{a}" for a in ACTORS] + [f"quanta_{e}" for e in names] \
        + [f"tokens_{e}" for e in names] + ["measured"]
    lines = [",".join(head)]
    for r in range(n):
        N = int(rng.integers(1, 9))
        assignment = {a: PES[int(rng.integers(0, 4))] for a in ACTORS}
        ev = evaluate(app, arch, assignment, "time", params={"N": N})
        quanta = {e.name: e.quanta for e in ev.elements}
        tokens = {e.name: e.tokens for e in ev.elements}
        lines.append(",".join([str(N)] + [assignment[a] for a in ACTORS]
                              + [repr(quanta[e]) for e in names]
                              + [str(tokens[e]) for e in names] + [str(rng.uniform(1, 9))]))
    (tmp_path / "runs.csv").write_text("\n".join(lines) + "\n")
    return app, arch


def predictions(tmp_path, app, arch, metric, aggregate=None):
    csv = tmp_path / "runs.csv"
    mapped = read_measurements(csv, "measured", params=["N"], actor_column="t_{actor}",
                               actors=ACTORS, pes=arch.pes, cns=arch.cns)
    counted = read_measurements(csv, "measured", params=["N"],
                                quanta_column="quanta_{element}",
                                tokens_column="tokens_{element}", elements=list(arch.elements))
    by_mapping = assess(arch, mapped.rows, app=app, metric=metric, aggregate=aggregate)
    by_activity = assess(arch, counted.rows, metric=metric, aggregate=aggregate)
    return by_mapping.predicted, by_activity.predicted


@pytest.mark.parametrize("metric,aggregate", [("energy_total", None), ("edp", None),
                                              ("time", "max"), ("energy", "sum")])
def test_activity_rows_equal_mapping_rows_row_for_row(tmp_path, metric, aggregate):
    app, arch = study(tmp_path)
    by_mapping, by_activity = predictions(tmp_path, app, arch, metric, aggregate)
    assert len(by_mapping) == 24
    # LSLA is affine in quanta: one token group of the element's total quanta in its
    # token count costs what the mapping's groups cost
    np.testing.assert_allclose(by_activity, by_mapping, rtol=1e-12)
    assert np.ptp(by_mapping) > 0


def test_system_metric_by_hand_on_one_row(tmp_path):
    (tmp_path / "b.moa").write_text(MOA)
    arch = dsl.load_moa(tmp_path / "b.moa")[0].bind()
    activity = {"l[0]": (10.0, 2), "b[1]": (4.0, 1), "bus": (6.0, 3)}
    # energy[sum] = 0.3*10 + (0.9*4 + 0.1) + 0.5 * 0.01*6; time[max] = max(2*10 + 2*1,
    # 0.7*4 + 2, 0.5 * (0.05*6 + 3*0.5)) = 22
    energy = 3.0 + 3.7 + 0.5 * 0.06
    assert evaluate_activity(arch, activity, "energy_total") == pytest.approx(
        energy + 0.25 * 22.0, rel=1e-12)
    assert evaluate_activity(arch, activity, "edp") == pytest.approx(
        (energy + 0.25 * 22.0) * 22.0, rel=1e-12)


def test_cli_activity_with_a_system_metric_fits_like_the_mapping_study(tmp_path, capsys):
    """The command of issue 31 that exited 2 ('no element it uses has a model for
    metric energy_total') now runs, and fits the same value as the mapping-based study."""
    study(tmp_path)
    common = [str(tmp_path / "b.moa"), str(tmp_path / "runs.csv"), "--measured", "measured",
              "--metric", "energy_total", "--fit", "p_static", "--starts", "0", "--json"]
    assert main(["fidelity", *common, "--quanta-column", "quanta_{element}",
                 "--tokens-column", "tokens_{element}"]) == 0
    counted = json.loads(capsys.readouterr().out)
    assert main(["fidelity", str(tmp_path / "a.sdf"), *common,
                 "--actor-column", "t_{actor}"]) == 0
    mapped = json.loads(capsys.readouterr().out)
    assert counted["fitted"]["p_static"] == pytest.approx(mapped["fitted"]["p_static"],
                                                          rel=1e-6)
    assert counted["tau"] == pytest.approx(mapped["tau"], abs=1e-12)


def test_exclusive_on_activity_without_cn_traffic_sums_the_phases(tmp_path):
    (tmp_path / "b.moa").write_text(MOA)
    arch = dsl.load_moa(tmp_path / "b.moa")[0].bind()
    activity = {"l[0]": (10.0, 2), "b[1]": (4.0, 1)}
    assert evaluate_activity(arch, activity, "time", "exclusive") == pytest.approx(
        22.0 + 4.8, rel=1e-12)


def test_exclusive_with_cn_activity_is_refused_by_name(tmp_path):
    (tmp_path / "b.moa").write_text(MOA)
    arch = dsl.load_moa(tmp_path / "b.moa")[0].bind()
    with pytest.raises(MappingError, match="share of each CN's tokens.*CN bus"):
        evaluate_activity(arch, {"l[0]": (10.0, 2), "bus": (6.0, 3)}, "time", "exclusive")


@pytest.mark.parametrize("aggregate", ["schedule", "period"])
def test_timed_aggregations_are_refused_with_the_reason(tmp_path, aggregate):
    (tmp_path / "b.moa").write_text(MOA)
    arch = dsl.load_moa(tmp_path / "b.moa")[0].bind()
    with pytest.raises(MappingError, match=f"'{aggregate}' schedules the firings"):
        evaluate_activity(arch, {"l[0]": (10.0, 2)}, "time", aggregate)


GSLA_MOA = """
moa gpu {
    pe host [time = gsla(alpha = 2.0, beta = 0.5)]
    pe gpu  [time = gsla(alpha = 8.0, beta = 0.25)]
    cn bus  [time = lsla(alpha = 0)]
    host -- bus
    gpu -- bus
    aggregate = max
}
"""


def test_attribute_columns_give_tokens_their_gamma(tmp_path, capsys):
    """``--attribute-column gamma=gamma_{element}``: GSLA's (alpha/gamma + beta)·S per
    element, hand-computed; an element without the column keeps gamma 1."""
    (tmp_path / "g.moa").write_text(GSLA_MOA)
    (tmp_path / "r.csv").write_text("q_host,q_gpu,g_gpu,t\n4,16,4,9\n4,16,8,7\n8,0,2,17\n")
    arch = dsl.load_moa(tmp_path / "g.moa")[0]
    data = read_measurements(tmp_path / "r.csv", "t", quanta_column="q_{element}",
                             attribute_columns={"gamma": "g_{element}"},
                             elements=list(arch.elements))
    got = assess(arch, data.rows).predicted
    host = lambda q: (2.0 + 0.5) * q                          # gamma 1
    gpu = lambda q, g: (8.0 / g + 0.25) * q
    np.testing.assert_allclose(got, [max(host(4), gpu(16, 4)), max(host(4), gpu(16, 8)),
                                     max(host(8), gpu(0, 2))], rtol=1e-12)
    assert main(["fit", str(tmp_path / "g.moa"), str(tmp_path / "r.csv"), "--measured", "t",
                 "--quanta-column", "q_{element}", "--attribute-column",
                 "gamma=g_{element}", "--free", "gpu.time.alpha", "--test-fraction", "0",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fitted"]["gpu.time.alpha"] > 0


def test_attribute_column_errors(tmp_path, capsys):
    (tmp_path / "g.moa").write_text(GSLA_MOA)
    (tmp_path / "r.csv").write_text("q_host,q_gpu,g_gpu,t\n4,16,-4,9\n")
    base = ["fidelity", str(tmp_path / "g.moa"), str(tmp_path / "r.csv"), "--measured", "t",
            "--quanta-column", "q_{element}"]
    assert main(base + ["--attribute-column", "gamma=g_{element}"]) == 2
    err = capsys.readouterr().err
    assert "column 3 'g_gpu'" in err and "non-negative" in err and "Traceback" not in err
    assert main(base + ["--attribute-column", "gamma"]) == 2
    assert "expected NAME=TEMPLATE" in capsys.readouterr().err
    assert main(base + ["--attribute-column", "S=S_{element}"]) == 2
    assert "no column matches --attribute-column 'S=S_{element}'" in capsys.readouterr().err
