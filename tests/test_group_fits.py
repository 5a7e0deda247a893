"""Within-group models (issue 31, item 4): ``--fit-by COLUMN`` fits one parameter set
per group, ``SPEC@COLUMN`` one value of a parameter per group in a pooled fit; both
recover stated per-group values from noise-free synthetic data and report each group's
fidelity (and fitted values) in the JSON."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mapping.cli.main import main
from mapping.calibration.fidelity import fidelity
from mapping.calibration.validation import group_splits

MOA = """
moa board {
    param p_static = 0.5
    metric energy_total = energy[sum] + p_static * time[max]
    aggregate = sum
    type A7  [time = lsla(alpha = 2.0), energy = lsla(alpha = 1.0)]
    type A15 [time = lsla(alpha = 0.7), energy = lsla(alpha = 1.0)]
    pe little[0..1] : A7
    pe big[0..1] : A15
    cn bus [time = lsla(alpha = 0), energy = lsla(alpha = 0)]
    little[*] -- bus
    big[*] -- bus
}
"""

CORES = ["little[0]", "little[1]", "big[0]", "big[1]"]
TIME = {"little": 2.0, "big": 0.7}
#: the stated ground truth: per configuration, the energy per quantum and static power
TRUTH = {"c1": {"A7": 0.3, "A15": 0.9, "p_static": 1.5},
         "c2": {"A7": 0.5, "A15": 1.4, "p_static": 1.5},
         "c3": {"A7": 0.2, "A15": 0.6, "p_static": 1.5}}


def write_study(tmp_path, truth=TRUTH, rows=20, seed=1):
    """Per-core activity rows; energy = Σ E[type]·quanta + p_static · max time, exact."""
    rng = np.random.default_rng(seed)
    lines = ["config," + ",".join(f"q_{c}" for c in CORES) + ",energy"]
    for config, t in truth.items():
        for _ in range(rows):
            q = {c: float(rng.uniform(1, 10)) if rng.random() < 0.7 else 0.0 for c in CORES}
            q[CORES[int(rng.integers(0, 4))]] = float(rng.uniform(1, 10))
            dynamic = sum(t["A7" if c.startswith("little") else "A15"] * v
                          for c, v in q.items())
            busiest = max(TIME[c.split("[")[0]] * v for c, v in q.items())
            lines.append(",".join([config] + [repr(q[c]) for c in CORES]
                                  + [repr(dynamic + t["p_static"] * busiest)]))
    (tmp_path / "board.moa").write_text(MOA)
    (tmp_path / "runs.csv").write_text("\n".join(lines) + "\n")
    return [str(tmp_path / "board.moa"), str(tmp_path / "runs.csv"), "--measured", "energy",
            "--quanta-column", "q_{element}"]


def run_json(capsys, argv):
    assert main(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_fit_by_recovers_each_groups_parameters(tmp_path, capsys):
    files = write_study(tmp_path)
    doc = run_json(capsys, ["fit", *files, "--metric", "energy_total", "--free",
                            "A7.energy.alpha,A15.energy.alpha,p_static", "--fit-by", "config",
                            "--starts", "1", "--json"])
    assert doc["within"] == "config"
    assert [g["group"] for g in doc["groups"]] == ["c1", "c2", "c3"]
    for g in doc["groups"]:
        truth = TRUTH[g["group"]]
        assert g["fitted"]["A7.energy.alpha"] == pytest.approx(truth["A7"], rel=0.02)
        assert g["fitted"]["A15.energy.alpha"] == pytest.approx(truth["A15"], rel=0.02)
        assert g["fitted"]["p_static"] == pytest.approx(truth["p_static"], rel=0.02)
        assert doc["fitted"][f"A15.energy.alpha@config={g['group']}"] == \
            g["fitted"]["A15.energy.alpha"]
        # each group split alike: 16 training rows, 4 test rows of 20
        assert (g["n"], g["n_train"], g["n_test"]) == (20, 16, 4)
        assert g["tau"] == pytest.approx(1.0) and g["fidelity"] == 1.0
    assert doc["n_test"] == 12 and doc["fidelity_within"] == 1.0


def test_group_specific_parameter_in_a_pooled_fit(tmp_path, capsys):
    """``A15.energy.alpha@config``: one value per configuration, A7 and p_static shared
    (the truth shares them here)."""
    truth = {k: {**v, "A7": 0.3} for k, v in TRUTH.items()}
    files = write_study(tmp_path, truth)
    doc = run_json(capsys, ["fidelity", *files, "--metric", "energy_total", "--fit",
                            "A7.energy.alpha,A15.energy.alpha@config,p_static",
                            "--starts", "1", "--json"])
    fitted = doc["fitted"]
    assert set(fitted) == {"A7.energy.alpha", "p_static", "A15.energy.alpha@config=c1",
                           "A15.energy.alpha@config=c2", "A15.energy.alpha@config=c3"}
    assert fitted["A7.energy.alpha"] == pytest.approx(0.3, rel=0.02)
    assert fitted["p_static"] == pytest.approx(1.5, rel=0.02)
    for config, t in truth.items():
        assert fitted[f"A15.energy.alpha@config={config}"] == pytest.approx(t["A15"], rel=0.02)
    by = {g["group"]: g for g in doc["groups"]}
    assert by["c2"]["fitted"] == {"A7.energy.alpha": fitted["A7.energy.alpha"],
                                  "A15.energy.alpha": fitted["A15.energy.alpha@config=c2"],
                                  "p_static": fitted["p_static"]}
    # the pooled fit's usual split: 12 test rows among the groups, each group's own figures
    assert sum(g["n_test"] for g in doc["groups"]) == 12
    assert all(g["fidelity"] == 1.0 and g["n"] == 20 for g in doc["groups"])


def test_group_specific_parameters_keep_the_linear_fit(tmp_path, capsys):
    """``energy`` under ``sum`` is linear in the alphas: a per-group alpha is a column
    that is zero on the other groups' rows, and NNLS recovers every value exactly."""
    files = write_study(tmp_path)
    energy = {k: v for k, v in TRUTH.items()}
    # measured: the dynamic energy alone (subtract the static part the generator added)
    rows = (tmp_path / "runs.csv").read_text().splitlines()
    out = [rows[0]]
    for line in rows[1:]:
        cells = line.split(",")
        q = dict(zip(CORES, map(float, cells[1:5])))
        t = energy[cells[0]]
        cells[5] = repr(sum(t["A7" if c.startswith("little") else "A15"] * v
                            for c, v in q.items()))
        out.append(",".join(cells))
    (tmp_path / "runs.csv").write_text("\n".join(out) + "\n")
    doc = run_json(capsys, ["fit", *files, "--metric", "energy", "--free",
                            "A7.energy.alpha@config,A15.energy.alpha@config",
                            "--test-fraction", "0", "--json"])
    assert doc["method"] == "nnls"
    for config, t in TRUTH.items():
        assert doc["fitted"][f"A7.energy.alpha@config={config}"] == pytest.approx(t["A7"], rel=1e-9)
        assert doc["fitted"][f"A15.energy.alpha@config={config}"] == pytest.approx(t["A15"], rel=1e-9)


def test_fit_by_with_folds_validates_within_each_group(tmp_path, capsys):
    files = write_study(tmp_path, rows=12)
    doc = run_json(capsys, ["fidelity", *files, "--metric", "energy_total", "--fit",
                            "A7.energy.alpha,A15.energy.alpha,p_static", "--fit-by", "config",
                            "--folds", "3", "--starts", "0", "--json"])
    # every fold tests 4 rows of each of the 3 groups, trained on that group's other 8
    assert [(f["n_train"], f["n_test"]) for f in doc["folds"]] == [(24, 12)] * 3
    assert [g["group"] for g in doc["groups"]] == ["c1", "c2", "c3"]
    assert all(g["n_test"] == 4 and g["n_train"] == 8 for g in doc["groups"])
    assert doc["tau_within"] == pytest.approx(1.0)


def test_per_group_figures_are_each_groups_own(tmp_path, capsys):
    """Without a fit, ``--within`` lists each group's own figures: those of
    :func:`fidelity` on that group's rows."""
    files = write_study(tmp_path, rows=8)
    doc = run_json(capsys, ["fidelity", *files, "--metric", "energy_total", "--within",
                            "config", "--json"])
    text = (tmp_path / "runs.csv").read_text().splitlines()[1:]
    measured = {}
    for line in text:
        cells = line.split(",")
        measured.setdefault(cells[0], []).append(float(cells[-1]))
    for g in doc["groups"]:
        # the file's model: every alpha 1, p_static 0.5
        predicted = []
        for line in text:
            cells = line.split(",")
            if cells[0] != g["group"]:
                continue
            q = dict(zip(CORES, map(float, cells[1:5])))
            predicted.append(sum(q.values()) + 0.5 * max(TIME[c.split("[")[0]] * v
                                                         for c, v in q.items()))
        own = fidelity(predicted, measured[g["group"]])
        assert g["tau"] == pytest.approx(own.tau) and g["fidelity"] == own.fidelity
        assert g["n"] == 8 and g["n_train"] == 0 and g["fitted"] is None


def test_group_errors(tmp_path, capsys):
    files = write_study(tmp_path, rows=4)
    base = ["fit", *files, "--metric", "energy_total", "--starts", "0"]

    def fails(*extra):
        assert main([*base, *extra]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err
        return err

    assert "no column 'cfg' for --fit-by" in fails("--free", "p_static", "--fit-by", "cfg")
    assert "no column 'cfg' for A15.energy.alpha@cfg" in fails(
        "--free", "A15.energy.alpha@cfg")
    assert "expected PARAM@COLUMN" in fails("--free", "A15.energy.alpha@")
    assert "drop '@config'" in fails("--free", "A15.energy.alpha@config", "--fit-by",
                                     "config")
    assert "group 'c1' of column 'config' (4 rows)" in fails(
        "--free", "p_static", "--fit-by", "config", "--folds", "5")
    err = fails("--free", "p_static@config", "-o", str(tmp_path / "out.moa"))
    assert "one value per group of config" in err
    assert not (tmp_path / "out.moa").exists()


def test_per_element_fits_refuse_group_specific_parameters(tmp_path, capsys):
    files = write_study(tmp_path, rows=4)
    assert main(["fit", *files, "--metric", "energy", "--free", "A15.energy.alpha@config",
                 "--measured-element", "big[0]=energy"]) == 2
    assert "does not take group-specific parameters" in capsys.readouterr().err


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from("abc"), min_size=9, max_size=40), st.integers(2, 3),
       st.integers(0, 5))
def test_folds_within_groups_test_every_row_once(labels, folds, seed):
    """``--fit-by`` folds: each fold tests part of every group and trains on the rest of
    that group; over the folds every row is tested exactly once."""
    counts = {g: labels.count(g) for g in set(labels)}
    if min(counts.values()) < folds:
        return
    splits = group_splits(labels, "g", folds=folds, seed=seed)
    tested = np.concatenate([test for _, test in splits])
    assert sorted(tested.tolist()) == list(range(len(labels)))
    for train, test in splits:
        assert not set(train.tolist()) & set(test.tolist())
        assert len(train) + len(test) == len(labels)
        for g, n in counts.items():
            in_test = sum(labels[i] == g for i in test)
            assert n // folds <= in_test <= -(-n // folds)


def test_per_group_figures_are_listed_up_to_a_limit(monkeypatch):
    import mapping.calibration.fidelity as fid
    rng = np.random.default_rng(0)
    p, m = rng.random(40), rng.random(40)
    labels = [f"g{i // 4}" for i in range(40)]
    assert len(fidelity(p, m, groups=labels, within="g").groups) == 10
    monkeypatch.setattr(fid, "GROUPS_LISTED", 9)
    capped = fidelity(p, m, groups=labels, within="g")
    assert capped.groups is None and "groups" not in capped.to_dict()
    assert capped.fidelity_within == fidelity(p, m, groups=labels, within="g").fidelity_within


MAPPED_SDF = """
sdf chain {
    actor a [quanta = 3]
    actor b [quanta = 10]
    actor c [quanta = 5]
    a -> b [size = 1]
    b -> c [size = 1]
}
"""


def test_group_specific_parameters_with_mapping_rows(tmp_path, capsys):
    """The same plumbing for rows that name a mapping (``--actor-column``): 24 distinct
    mappings per configuration go through the batch evaluator under each group's values;
    energy under ``max`` (non-linear) recovers per-group A15 alphas exactly."""
    (tmp_path / "a.sdf").write_text(MAPPED_SDF)
    (tmp_path / "board.moa").write_text(MOA.replace("aggregate = sum", "aggregate = max"))
    quanta = {"a": 3.0, "b": 10.0, "c": 5.0}
    truth = {"c1": 0.9, "c2": 1.4}
    rng = np.random.default_rng(5)
    lines = ["config,t_a,t_b,t_c,energy"]
    for config, a15 in truth.items():
        seen = set()
        while len(seen) < 24:
            placement = tuple(CORES[int(rng.integers(0, 4))] for _ in quanta)
            if placement in seen:
                continue
            seen.add(placement)
            load = {}
            for (actor, q), core in zip(quanta.items(), placement):
                alpha = 0.3 if core.startswith("little") else a15
                load[core] = load.get(core, 0.0) + alpha * q
            lines.append(",".join([config, *placement, repr(max(load.values()))]))
    (tmp_path / "runs.csv").write_text("\n".join(lines) + "\n")
    doc = run_json(capsys, ["fit", str(tmp_path / "a.sdf"), str(tmp_path / "board.moa"),
                            str(tmp_path / "runs.csv"), "--measured", "energy",
                            "--actor-column", "t_{actor}", "--metric", "energy",
                            "--free", "A7.energy.alpha,A15.energy.alpha@config",
                            "--test-fraction", "0", "--starts", "1", "--json"])
    assert doc["method"] == "least_squares"
    assert doc["fitted"]["A7.energy.alpha"] == pytest.approx(0.3, rel=1e-6)
    for config, a15 in truth.items():
        assert doc["fitted"][f"A15.energy.alpha@config={config}"] == pytest.approx(a15, rel=1e-6)
    # every prediction is its measurement (ties under max make fidelity a float matter)
    assert [g["group"] for g in doc["groups"]] == ["c1", "c2"]
    assert all(g["mape"] < 1e-9 and g["n_train"] == 24 for g in doc["groups"])


@pytest.mark.parametrize("free, extra", [
    ("A7.energy.alpha,A15.energy.alpha,p_static", ["--fit-by", "config"]),
    ("A7.energy.alpha,A15.energy.alpha@config,p_static", []),
])
def test_fit_writes_one_moa_per_group(tmp_path, capsys, free, extra):
    """``-o fitted_{group}.moa``: each file holds that group's values (its own and the
    shared ones) and predicts its rows as the grouped fit does."""
    import dsl
    from mapping.calibration.row_model import RowModel
    from mapping.calibration.measurements import read_measurements

    files = write_study(tmp_path)
    doc = run_json(capsys, ["fit", *files, "--metric", "energy_total", "--free", free,
                            *extra, "--starts", "1", "--json", "-o",
                            str(tmp_path / "fitted_{group}.moa")])
    assert doc["output"] == [str(tmp_path / f"fitted_{c}.moa") for c in ("c1", "c2", "c3")]
    rows = list(read_measurements(tmp_path / "runs.csv", "energy", quanta_column="q_{element}",
                                  elements=CORES + ["bus"], params=["p_static"]).rows)
    for g in doc["groups"]:
        arch, = dsl.load_moa(tmp_path / f"fitted_{g['group']}.moa")
        model = arch.bind()
        assert model.params["p_static"] == g["fitted"]["p_static"]
        assert model.elements["big[1]"].model("energy").params.alpha == \
            g["fitted"]["A15.energy.alpha"]
        mine = [r for r in rows if r.cells["config"] == g["group"]]
        predicted = RowModel(arch, mine, "energy_total").predict()
        truth = TRUTH[g["group"]] if extra else None
        if truth:                           # exact data: the group's fit predicts it
            assert predicted == pytest.approx([r.measured for r in mine], rel=0.02)
    assert main(["fit", *files, "--metric", "energy_total", "--free", free, *extra,
                 "--starts", "0", "-o", str(tmp_path / "one.moa")]) == 2
    assert "name the files with {group}" in capsys.readouterr().err
