"""Honest validation (SPEC §12): ``--within``, ``--folds``, ``--repeats`` and the rounding
of predictions before ranking, each checked against an independent computation here:
predictions and fits by hand formulas, the splits from the documented seeding, tau by
scipy per group, fidelity by a plain count of agreeing pairs."""
from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from mapping.cli.main import main
from mapping.calibration.fidelity import fidelity, pairwise_fidelity, within_groups

from duo_problem import ARCH, PLACES, write_inputs


def parts(mapping, n):
    """The LSLA time by hand as ``x·alpha_p0 + c``: the quanta on p0, and the rest
    (p1's alpha 3 times its quanta, the bus 0.5 when a and b are apart)."""
    pa, pb = PLACES[mapping]
    on_p0 = (n if pa == "p0" else 0) + (2 if pb == "p0" else 0)
    rest = 3.0 * ((n if pa == "p1" else 0) + (2 if pb == "p1" else 0)) + (0.5 if pa != pb else 0)
    return float(on_p0), rest


def predicted(mapping, n, alpha0=1.0):
    x, c = parts(mapping, n)
    return alpha0 * x + c


def make_rows():
    """Workloads w1..w5 (n = 1..5) with their four mappings, a 'true' p0 alpha of 1.7
    and a deterministic disturbance, measurements rounded to 0.5 so that some tie; and a
    workload w9 with one row only (a group without pairs)."""
    rows = []
    for n in range(1, 6):
        for k, m in enumerate(PLACES):
            x, c = parts(m, n)
            noise = 0.6 * math.sin(7 * n + 3 * k)
            rows.append((f"w{n}", m, n, round(2 * (1.7 * x + c + noise)) / 2))
    rows.append(("w9", "split", 9, 40.0))
    return rows


ROWS = make_rows()


@pytest.fixture
def files(tmp_path):
    paths = write_inputs(tmp_path)
    data = tmp_path / "data.csv"
    data.write_text("w,mapping,n,t\n" + "".join(f"{w},{m},{n},{t}\n" for w, m, n, t in ROWS))
    paths["csv"] = str(data)
    return paths


def run_json(capsys, files, *extra):
    argv = ["fidelity", files["sdf"], files["moa"], files["map"], files["csv"],
            "--measured", "t", "--mapping-column", "mapping", *extra, "--json"]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


# --------------------------------------------------------------------------- by hand

def count_fidelity(p, m):
    """Bambha & Bhattacharyya's fidelity: agreeing pairs by a plain loop."""
    agree = total = 0
    for i, j in itertools.combinations(range(len(p)), 2):
        total += 1
        agree += np.sign(p[i] - p[j]) == np.sign(m[i] - m[j])
    return agree / total if total else math.nan


def by_hand_within(p, m, labels):
    """fidelity_within: agreeing pairs of all groups over their pairs (hand count);
    tau_within: scipy's tau-b per group, weighted by the group's pairs (an undefined
    tau-b, all values of a group equal, counts 0 as documented)."""
    agree = pairs = 0
    weighted = 0.0
    for label in dict.fromkeys(labels):
        idx = [i for i, g in enumerate(labels) if g == label]
        k = len(idx)
        if k < 2:
            continue
        gp, gm = [p[i] for i in idx], [m[i] for i in idx]
        n_pairs = k * (k - 1) // 2
        for i, j in itertools.combinations(range(k), 2):
            agree += np.sign(gp[i] - gp[j]) == np.sign(gm[i] - gm[j])
        tau = stats.kendalltau(gp, gm).statistic
        weighted += n_pairs * (0.0 if np.isnan(tau) else tau)
        pairs += n_pairs
    return (agree / pairs, weighted / pairs) if pairs else (math.nan, math.nan)


def fit_alpha0(train):
    """Least squares in the one free parameter p0.time.alpha, by its formula."""
    xs = np.array([parts(ROWS[i][1], ROWS[i][2])[0] for i in train])
    cs = np.array([parts(ROWS[i][1], ROWS[i][2])[1] for i in train])
    ys = np.array([ROWS[i][3] for i in train])
    return max(0.0, float(xs @ (ys - cs) / (xs @ xs)))


def documented_folds(n, k, seed):
    order = np.random.default_rng(seed).permutation(n)
    return [sorted(int(i) for i in part) for part in np.array_split(order, k)]


def documented_repeat(n, fraction, seed):
    order = np.random.default_rng(seed).permutation(n)
    return sorted(int(i) for i in order[:int(round(n * fraction))])


def split_figures(test, alpha0):
    p = [predicted(ROWS[i][1], ROWS[i][2], alpha0) for i in test]
    m = [ROWS[i][3] for i in test]
    labels = [ROWS[i][0] for i in test]
    fw, tw = by_hand_within(p, m, labels)
    return {"tau": stats.kendalltau(p, m).statistic, "fidelity": count_fidelity(p, m),
            "fidelity_within": fw, "tau_within": tw}


def check_split(got: dict, test: list[int]) -> dict:
    """Check one split's JSON ``got`` against the independent fit on its training rows
    and the figures of its test rows; return those figures."""
    alpha0 = fit_alpha0([i for i in range(len(ROWS)) if i not in test])
    assert got["fitted"]["p0.time.alpha"] == pytest.approx(alpha0, rel=1e-9)
    want = split_figures(test, alpha0)
    for key, value in want.items():
        assert same(got[key], value), key
    return want


def mean(values):
    values = [v for v in values if v is not None and not np.isnan(v)]
    return float(np.mean(values)) if values else None


def same(a, b):
    if b is None or (isinstance(b, float) and np.isnan(b)):
        return a is None
    return a == pytest.approx(b, abs=1e-12)


# --------------------------------------------------------------------------- --within

def test_within_without_fit(files, capsys):
    doc = run_json(capsys, files, "--within", "w")
    p = [predicted(m, n) for _, m, n, _ in ROWS]
    t = [row[3] for row in ROWS]
    fw, tw = by_hand_within(p, t, [row[0] for row in ROWS])
    assert doc["fidelity_within"] == pytest.approx(fw, abs=1e-12)
    assert doc["tau_within"] == pytest.approx(tw, abs=1e-12)
    assert doc["fidelity"] == pytest.approx(count_fidelity(p, t), abs=1e-12)
    assert doc["folds"] is None and doc["repeats"] is None


def test_within_with_fit_on_the_test_rows(files, capsys):
    doc = run_json(capsys, files, "--within", "w", "--fit", "p0.time.alpha")
    test = documented_repeat(len(ROWS), 0.2, 0)
    train = [i for i in range(len(ROWS)) if i not in test]
    alpha0 = fit_alpha0(train)
    assert doc["fitted"]["p0.time.alpha"] == pytest.approx(alpha0, rel=1e-9)
    want = split_figures(test, alpha0)
    assert doc["n_test"] == len(test)
    for key in ("tau", "fidelity", "fidelity_within", "tau_within"):
        assert same(doc[key], want[key]), key


def test_within_by_hand_small():
    # Group A: p 1,2,3 against m 1,3,2 -> pairs (0,1) (0,2) agree, (1,2) disagrees:
    # 2 of 3; tau-b (2 - 1)/3.  Group B: p 5,5 against m 1,2 -> 0 of 1, tau undefined,
    # counts 0.  Group C: one row, no pair.  fidelity_within 2/4, tau_within (3·1/3)/4.
    fw, tw = within_groups([1, 2, 3, 5, 5, 9], [1, 3, 2, 1, 2, 0], list("AAABBC"))
    assert fw == pytest.approx(0.5) and tw == pytest.approx(0.25)
    assert all(math.isnan(v) for v in within_groups([1, 2], [1, 2], ["x", "y"]))


def test_within_unknown_column(files, capsys):
    argv = ["fidelity", files["sdf"], files["moa"], files["map"], files["csv"],
            "--measured", "t", "--mapping-column", "mapping", "--within", "nope"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "no column 'nope' for --within" in err and "Traceback" not in err


# --------------------------------------------------------------------------- --folds

@pytest.mark.parametrize("seed", [0, 3])
def test_folds_with_fit(files, capsys, seed):
    doc = run_json(capsys, files, "--fit", "p0.time.alpha", "--folds", "4", "--within", "w",
                   "--seed", str(seed))
    folds = documented_folds(len(ROWS), 4, seed)
    assert sorted(itertools.chain(*folds)) == list(range(len(ROWS)))
    assert len(doc["folds"]) == 4 and doc["repeats"] is None
    wants = []
    for test, got in zip(folds, doc["folds"]):
        wants.append(check_split(got, test))
        assert got["n_test"] == len(test) and got["n_train"] == len(ROWS) - len(test)
    for key in ("tau", "fidelity", "fidelity_within", "tau_within"):
        assert same(doc[key], mean([w[key] for w in wants])), key
    assert doc["p_value"] is None
    # the reported parameters are fitted on every row
    assert doc["fitted"]["p0.time.alpha"] == pytest.approx(fit_alpha0(range(len(ROWS))),
                                                           rel=1e-9)


def test_folds_without_fit_rank_the_model_on_each_fold(files, capsys):
    doc = run_json(capsys, files, "--folds", "3", "--within", "w")
    wants = [split_figures(test, 1.0) for test in documented_folds(len(ROWS), 3, 0)]
    for got, want in zip(doc["folds"], wants):
        assert got["n_train"] == 0 and got["fitted"] is None
        for key, value in want.items():
            assert same(got[key], value), key
    for key in ("tau", "fidelity", "fidelity_within", "tau_within"):
        assert same(doc[key], mean([w[key] for w in wants])), key


def test_folds_text_output_shows_the_figures(files, capsys):
    argv = ["fidelity", files["sdf"], files["moa"], files["map"], files["csv"],
            "--measured", "t", "--mapping-column", "mapping", "--fit", "p0.time.alpha",
            "--folds", "3", "--within", "w"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "3 folds of 21 rows" in out and "tau_within" in out and "fidelity_within" in out
    assert "per fold:" in out
    argv[0] = "fit"
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "mean over 3 folds" in out and "tau_within" in out


@pytest.mark.parametrize("extra, message", [
    (["--folds", "1"], "argument --folds: expected a whole number >= 2, got '1'"),
    (["--folds", "22"], "only 21 rows"),
    (["--folds", "3", "--repeats", "2"], "not both"),
    (["--repeats", "0"], "argument --repeats: expected a whole number >= 1, got '0'"),
    (["--repeats", "2", "--test-fraction", "0"], "at least two are needed"),
    (["--folds-by", "nosuch"], "no column 'nosuch' for --folds-by"),
    (["--folds-by", "w", "--folds", "3"], "not both"),
    (["--folds-by", "w", "--folds", "3", "--repeats", "2"], "only one"),
])
def test_bad_validation_options(files, capsys, extra, message):
    argv = ["fidelity", files["sdf"], files["moa"], files["map"], files["csv"],
            "--measured", "t", "--mapping-column", "mapping", *extra]
    try:
        code = main(argv)
    except SystemExit as exc:           # argparse refuses a bad value at the door
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


# --------------------------------------------------------------------------- --repeats

def test_repeats_with_fit(files, capsys):
    doc = run_json(capsys, files, "--fit", "p0.time.alpha", "--repeats", "5",
                   "--test-fraction", "0.3", "--seed", "11", "--within", "w")
    assert len(doc["repeats"]) == 5 and doc["folds"] is None
    wants = []
    for r, got in enumerate(doc["repeats"]):
        wants.append(check_split(got, documented_repeat(len(ROWS), 0.3, 11 + r)))
    for key in ("tau", "fidelity", "fidelity_within", "tau_within"):
        assert same(doc[key], mean([w[key] for w in wants])), key


# --------------------------------------------------------------------------- rounding

def test_predictions_equal_in_exact_arithmetic_tie():
    # 0.1 + 0.2 and 0.3 are one value in exact arithmetic: a tie, as the measurements.
    assert 0.1 + 0.2 != 0.3
    assert pairwise_fidelity([0.1 + 0.2, 0.3], [5.0, 5.0]) == 1.0
    r = fidelity([0.1 + 0.2, 0.3, 1.0], [5.0, 5.0, 6.0])
    assert r.fidelity == 1.0 and r.tau == pytest.approx(1.0)
    assert within_groups([0.1 + 0.2, 0.3], [5.0, 5.0], ["g", "g"])[0] == 1.0


def test_rounding_through_the_evaluator(tmp_path, capsys):
    # Row 1 puts quanta 0.1 and 0.2 on p0 (0.1 + 0.2 = 0.30000000000000004), row 2
    # quanta 0.3 and 0: equal in exact arithmetic, measured alike.
    (tmp_path / "app.sdf").write_text(
        "sdf two {\n param x = 0\n param y = 0\n actor a [quanta = x]\n"
        " actor b [quanta = y]\n a -> b\n}\n")
    (tmp_path / "arch.moa").write_text("moa one {\n pe p0 [time = lsla(alpha = 1)]\n}\n")
    (tmp_path / "data.csv").write_text("x,y,t\n0.1,0.2,5\n0.3,0,5\n1,0,7\n")
    from mapping.evaluation.reference import evaluate
    import dsl
    app, arch = dsl.load_sdf(tmp_path / "app.sdf")[0], dsl.load_moa(tmp_path / "arch.moa")[0]
    from dsl.mappings import Mapping
    both = Mapping("m", {"a": "p0", "b": "p0"})
    raw = [evaluate(app, arch, both, params={"x": x, "y": y}).value
           for x, y in ((0.1, 0.2), (0.3, 0.0))]
    assert raw[0] != raw[1]                       # the floats differ
    assert main(["fidelity", str(tmp_path / "app.sdf"), str(tmp_path / "arch.moa"),
                 str(tmp_path / "data.csv"), "--map", "a=p0,b=p0", "--measured", "t",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["fidelity"] == 1.0 and doc["tau"] == pytest.approx(1.0)


def test_fidelity_plot_under_folds_says_what_it_shows(files, tmp_path):
    out = tmp_path / "fidelity.png"
    assert main(["plot", "fidelity", files["sdf"], files["moa"], files["map"], files["csv"],
                 "--measured", "t", "--mapping-column", "mapping", "--fit", "p0.time.alpha",
                 "--folds", "3", "-o", str(out)]) == 0
    assert out.stat().st_size > 0
    from mapping.cli.main import build_parser, parse
    from mapping.cli.commands.measured import load_study
    from mapping.plots.fidelity import fidelity_figure
    args = parse(build_parser("fidelity"), [
        "fidelity", files["sdf"], files["moa"], files["map"], files["csv"], "--measured",
        "t", "--mapping-column", "mapping", "--fit", "p0.time.alpha", "--folds", "3"])
    fig = fidelity_figure(load_study(args, "fidelity").assessment)
    title = fig.axes[0].get_title()
    assert "mean over 3 folds" in title
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert "all rows (21)" in labels and not any("test rows (0)" in x for x in labels)


def test_within_missing_cell_is_an_error_at_the_cell(files, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("w,mapping,n,t\nw1,split,1,7\n,rev,1,7.5\n")
    assert main(["fidelity", files["sdf"], files["moa"], files["map"], str(bad), "--measured",
                 "t", "--mapping-column", "mapping", "--within", "w"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:3:1:" in err and "row 2, column 1 'w': missing cell" in err


TRUTH = ARCH.replace("alpha = 1)", "alpha = 1.7)").replace("alpha = 3)", "alpha = 2.4)")


def test_folds_of_a_fit_to_noisy_data_rank_as_the_truth(files, tmp_path, capsys):
    # Measurements from a stated ground truth (p0 alpha 1.7, p1 alpha 2.4, bus 0.5) with
    # 5 % log-normal noise; the model starts from 1 and 3.  Fitted and scored by 5-fold
    # cross-validation, its tau is within 0.05 of the ground truth's on the same folds.
    rng = np.random.default_rng(5)
    truth = tmp_path / "truth.moa"
    truth.write_text(TRUTH)
    lines = []
    for n in range(1, 31):
        for m, (pa, pb) in PLACES.items():
            alpha = {"p0": 1.7, "p1": 2.4}
            t = alpha[pa] * n + alpha[pb] * 2 + (0.5 if pa != pb else 0.0)
            lines.append(f"w{n},{m},{n},{t * math.exp(rng.normal(0, 0.05))!r}\n")
    data = tmp_path / "noisy.csv"
    data.write_text("w,mapping,n,t\n" + "".join(lines))
    common = [files["sdf"], files["map"], str(data), "--measured", "t", "--mapping-column",
              "mapping", "--folds", "5", "--within", "w", "--json"]
    assert main(["fidelity", str(truth), *common]) == 0
    want = json.loads(capsys.readouterr().out)
    assert main(["fidelity", files["moa"], *common, "--fit", "p0.time.alpha,p1.time.alpha"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["fitted"]["p0.time.alpha"] == pytest.approx(1.7, rel=0.05)
    assert got["fitted"]["p1.time.alpha"] == pytest.approx(2.4, rel=0.05)
    assert abs(got["tau"] - want["tau"]) <= 0.05
    assert abs(got["tau_within"] - want["tau_within"]) <= 0.05


# --------------------------------------------------------------------------- --folds-by

def test_folds_by_leaves_each_group_out(files, capsys):
    """``--folds-by mapping``: each mapping's rows are predicted by alpha_p0 fitted (by
    hand: least squares of x·alpha + c on the other mappings' rows) without them; each
    fold's tau by scipy and median absolute percentage error by numpy."""
    doc = run_json(capsys, files, "--fit", "p0.time.alpha", "--folds-by", "mapping")
    assert doc["folds_by"] == "mapping" and doc["repeats"] is None
    groups = sorted({m for _, m, _, _ in ROWS})
    assert [f["group"] for f in doc["folds"]] == groups
    for fold in doc["folds"]:
        train = [r for r in ROWS if r[1] != fold["group"]]
        test = [r for r in ROWS if r[1] == fold["group"]]
        x = np.array([parts(m, n)[0] for _, m, n, _ in train])
        c = np.array([parts(m, n)[1] for _, m, n, _ in train])
        t = np.array([r[3] for r in train])
        alpha = max(0.0, float(x @ (t - c) / (x @ x)))
        assert fold["fitted"]["p0.time.alpha"] == pytest.approx(alpha, rel=1e-9)
        p = np.array([predicted(m, n, alpha) for _, m, n, _ in test])
        m = np.array([r[3] for r in test])
        assert (fold["n_train"], fold["n_test"]) == (len(train), len(test))
        assert fold["mdape"] == pytest.approx(float(np.median(np.abs(p - m) / m)) * 100)
        if np.ptp(p) > 0:
            assert fold["tau"] == pytest.approx(stats.kendalltau(p, m).statistic)
    assert doc["mdape"] == pytest.approx(np.mean([f["mdape"] for f in doc["folds"]]))
    assert main(["fidelity", files["sdf"], files["moa"], files["map"], files["csv"],
                 "--measured", "t", "--mapping-column", "mapping", "--fit",
                 "p0.time.alpha", "--folds-by", "mapping"]) == 0
    out = capsys.readouterr().out
    assert "folds (one per mapping)" in out and "mdape" in out


def test_one_group_is_no_cross_validation():
    from mapping.errors import InputError
    from mapping.calibration.validation import leave_one_group_out
    splits, labels = leave_one_group_out(["b", "a", "b", "c"])
    assert labels == ["a", "b", "c"]
    assert [list(test) for _, test in splits] == [[1], [0, 2], [3]]
    assert [list(train) for train, _ in splits] == [[0, 2, 3], [1, 3], [0, 1, 2]]
    with pytest.raises(InputError, match="at least two groups"):
        leave_one_group_out(["a", "a"])
