"""Fidelity: Kendall tau-b, its p-value and the pairwise fidelity, against scipy and
against hand counts, through the API and through ``mapeval fidelity``."""
from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from mapping.cli.main import main
from mapping.calibration.fidelity import JSON_KEYS, FidelityResult, fidelity, pairwise_fidelity

from duo_problem import PLACES, write_inputs


def loop_fidelity(p, m):
    """Bambha & Bhattacharyya's fidelity by a plain loop over the pairs."""
    agree = total = 0
    for i, j in itertools.combinations(range(len(p)), 2):
        total += 1
        agree += np.sign(p[i] - p[j]) == np.sign(m[i] - m[j])
    return agree / total


# --------------------------------------------------------------------------- the API

def test_hand_count_with_ties():
    p = [1, 2, 2, 3]
    m = [1, 3, 2, 2]
    # Pairs: (0,1) (0,2) (0,3) agree; (1,2) tie in p only; (1,3) reversed; (2,3) tie in m
    # only -> 3 of 6 agree.  Concordant 3, discordant 1, one tie in each:
    # tau_b = (3 - 1) / sqrt((6 - 1)(6 - 1)) = 0.4.
    r = fidelity(p, m)
    assert r.fidelity == pytest.approx(0.5)
    assert r.tau == pytest.approx(0.4)
    assert pairwise_fidelity(p, m) == pytest.approx(0.5)


def test_tie_in_both_agrees():
    assert pairwise_fidelity([1, 1, 2], [5, 5, 6]) == 1.0
    assert pairwise_fidelity([1, 1, 2], [5, 6, 7]) == pytest.approx(2 / 3)
    assert pairwise_fidelity([3, 2, 1], [1, 2, 3]) == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_against_scipy_and_loop(seed):
    rng = np.random.default_rng(seed)
    m = rng.integers(0, 6, 40).astype(float)          # many ties
    p = m + rng.integers(-2, 3, 40)                   # ties and disagreements
    r = fidelity(p, m)
    kt = stats.kendalltau(p, m)
    assert r.tau == pytest.approx(kt.statistic, abs=1e-12)
    assert r.p_value == pytest.approx(kt.pvalue, rel=1e-12)
    assert r.spearman == pytest.approx(stats.spearmanr(p, m).statistic, abs=1e-12)
    assert r.fidelity == pytest.approx(loop_fidelity(p, m), abs=1e-15)


def test_vectorized_blocks_match_loop_for_thousands_of_rows():
    rng = np.random.default_rng(7)
    n = 2100                                          # crosses two block boundaries
    m = np.round(rng.lognormal(size=n), 1)
    p = np.round(m * rng.lognormal(0, 0.2, size=n), 1)
    sp = np.sign(p[:, None] - p[None, :])
    sm = np.sign(m[:, None] - m[None, :])
    expected = (np.count_nonzero(np.triu(sp == sm, 1))) / (n * (n - 1) / 2)
    assert pairwise_fidelity(p, m) == pytest.approx(expected, abs=1e-15)


def test_mape_r2_and_json():
    r = fidelity([1.1, 1.8, 3.3], [1.0, 2.0, 3.0], n=10, n_train=7, fitted={"x.time.a": 1.0})
    assert r.mape == pytest.approx((10 + 10 + 10) / 3)
    assert r.r2 == pytest.approx(1 - (0.01 + 0.04 + 0.09) / 2)
    d = r.to_dict()
    assert tuple(d) == JSON_KEYS
    assert (d["n"], d["n_train"], d["n_test"]) == (10, 7, 3)
    assert d["fitted"] == {"x.time.a": 1.0}
    assert "Kendall tau-b" in str(r) and "FidelityResult(" in repr(r)
    json.dumps(d)


def test_undefined_statistics_are_null():
    r = fidelity([2.0, 2.0, 2.0], [1.0, 2.0, 3.0])
    assert math.isnan(r.tau)
    d = r.to_dict()
    assert d["tau"] is None and d["p_value"] is None and d["spearman"] is None
    assert d["fidelity"] == 0.0
    assert isinstance(r, FidelityResult)
    assert math.isnan(fidelity([1.0], [1.0]).fidelity)


def test_length_mismatch():
    with pytest.raises(ValueError):
        fidelity([1, 2], [1, 2, 3])


# --------------------------------------------------------------------------- the CLI


def predicted(mapping, n):
    """The LSLA time by hand: alpha(PE of a)·n + alpha(PE of b)·2 + bus 0.5 if split."""
    alpha = {"p0": 1.0, "p1": 3.0}
    pa, pb = PLACES[mapping]
    return alpha[pa] * n + alpha[pb] * 2 + (0.5 if pa != pb else 0.0)


ROWS = [("both_p0", 1, 3.0), ("both_p1", 1, 9.0), ("split", 1, 7.0), ("rev", 1, 7.0),
        ("both_p0", 2, 4.5), ("rev", 2, 8.5), ("split", 3, 9.0), ("both_p1", 2, 12.0)]


@pytest.fixture
def files(tmp_path):
    paths = write_inputs(tmp_path)
    by_name = tmp_path / "by_name.csv"
    by_name.write_text("mapping,n,t\n" + "".join(f"{m},{n},{t}\n" for m, n, t in ROWS))
    by_actor = tmp_path / "by_actor.csv"
    by_actor.write_text("t_a,t_b,n,t\n" + "".join(
        f"{PLACES[m][0]},{PLACES[m][1]},{n},{t}\n" for m, n, t in ROWS))
    paths["by_name"], paths["by_actor"] = str(by_name), str(by_actor)
    return paths


def run_json(capsys, *argv):
    assert main(list(argv) + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)


def expected_result():
    p = np.array([predicted(m, n) for m, n, _ in ROWS])
    t = np.array([t for *_, t in ROWS])
    return p, t


def check(doc):
    p, t = expected_result()
    kt = stats.kendalltau(p, t)
    assert tuple(doc) == JSON_KEYS
    assert doc["n"] == doc["n_test"] == len(ROWS) and doc["n_train"] == 0
    assert doc["tau"] == pytest.approx(kt.statistic, abs=1e-12)
    assert doc["p_value"] == pytest.approx(kt.pvalue, rel=1e-12)
    assert doc["fidelity"] == pytest.approx(loop_fidelity(p, t), abs=1e-15)
    assert doc["fitted"] is None


def test_hand_counted_table():
    # Predictions 3, 9, 7.5, 5.5, 4, 8.5, 9.5, 12 against 3, 9, 7, 7, 4.5, 8.5, 9, 12:
    # of the 28 pairs, (split@1, rev@1) ties in the measurements only; (both_p1@1,
    # split@3) ties in them too -- 9 against 9.5 -- and (split@3, rev@2) is 9.5 > 8.5
    # against 9 > 8.5 (agrees).  Counting every pair by hand gives 26 agreements.
    p, t = expected_result()
    assert list(p) == [3, 9, 7.5, 5.5, 4, 8.5, 9.5, 12]
    assert loop_fidelity(p, t) == pytest.approx(26 / 28)


def test_mapping_column(files, capsys):
    doc = run_json(capsys, "fidelity", files["sdf"], files["moa"], files["map"],
                   files["by_name"], "--measured", "t", "--mapping-column", "mapping")
    check(doc)


def test_actor_columns(files, capsys):
    doc = run_json(capsys, "fidelity", files["by_actor"], files["moa"], files["sdf"],
                   "--measured", "t", "--actor-column", "t_{actor}")
    check(doc)


def test_text_output(files, capsys):
    assert main(["fidelity", files["sdf"], files["moa"], files["map"], files["by_name"],
                 "--measured", "t", "--mapping-column", "mapping"]) == 0
    out = capsys.readouterr().out
    assert "Kendall tau-b" in out and "pairs ordered" in out
