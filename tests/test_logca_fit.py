"""LogCA parameter extraction (Altaf & Wood, ISCA 2017, §4): ``mapeval logca --fit``.

Data are generated from stated parameters on the paper's grid, 16 B to 32 MB in powers
of two (22 granularities), with ``mapping.calibration.logca.synthetic``:

* UltraSPARC T2 AES (Table 5): L = 1500, o = 2.9e4, C = 90, A = 19, latency independent
  of g, beta = 1. T1 = (o + L) + C·g/A: the columns hold o + L = 30500, never o and L
  apart. g1 (eq. 5, beta = 1) = (A/(A-1))·(o+L)/C = (19/18)·30500/90 = 357.716 B.
* Discrete GPU GEMM (Table 5 with Table 4's beta): L = 3000 cycles/B, o = 2e8, C = 2,
  A = 30, beta = 1.7, latency L·g. Here o, L·g and C·g^1.7/A have three different shapes,
  so all five parameters are identified. (With beta = 1, L·g and C·g/A have the same
  shape and only L + C/A is: see test_beta_one_dependent_latency_says_L_and_A_not_separable.)
* Binary search: host time C·log2(g). Over 16 B .. 32 MB the log-log regression of
  log2(g) on g has slope 0.115: the paper's "beta = 0.11 provides a close approximation
  for log(g)" (§4). Table 4's 0.14 is what log2(g/4) gives (0.144): the log of the
  number of 4-byte elements rather than of bytes.
"""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from mapping.cli.main import main
from mapping.errors import InputError
from mapping.calibration.logca import analyse_fit, fit_logca, fit_host, synthetic

T2_AES = dict(L=1500.0, o=2.9e4, C=90.0, A=19.0, beta=1.0, latency="independent")
GPU_GEMM = dict(L=3000.0, o=2e8, C=2.0, A=30.0, beta=1.7, latency="dependent")
G1_T2_AES = 19 / 18 * 30500 / 90                      # eq. 5: 357.716 B


def _values(fit):
    return {e.name: e.value for e in fit.estimates}


def _write(path, g, t0, t1, names=("granularity", "host", "accelerator")):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(names)
        w.writerows(zip(g, t0, t1))
    return str(path)


def test_the_grid_is_the_papers():
    g, _, _ = synthetic(**T2_AES)
    assert g[0] == 16 and g[-1] == 32 * 2 ** 20 and len(g) == 22


def test_t2_aes_noise_free_gives_c_beta_a_and_o_plus_L_not_the_split():
    fit = fit_logca(*synthetic(**T2_AES))
    v = _values(fit)
    assert fit.latency == "independent"
    assert v["C"] == pytest.approx(90, rel=1e-6)
    assert v["beta"] == pytest.approx(1, rel=1e-6)
    assert v["A"] == pytest.approx(19, rel=1e-6)
    assert v["o_plus_L"] == pytest.approx(30500, rel=1e-6)
    assert not fit.separable and "o" not in v and "L" not in v
    assert "o and L are not separable" in str(fit)
    # g1 and g_A/2 depend on o + L alone (eqs. 5-6)
    a = analyse_fit(fit)
    assert a.g1 == pytest.approx(G1_T2_AES, rel=1e-6)
    assert a.g_half == pytest.approx(19 * 30500 / 90, rel=1e-6)


def test_t2_aes_noise_free_with_L_given_gives_all_five():
    fit = fit_logca(*synthetic(**T2_AES), L=1500)
    v = _values(fit)
    for name in ("L", "o", "C", "A", "beta"):
        assert v[name] == pytest.approx(T2_AES[name], rel=1e-6), name
    assert fit.separable and fit["o"].source == "fit - given" and fit["L"].source == "given"


def test_dependent_latency_noise_free_gives_all_five_from_the_columns():
    for case in (GPU_GEMM, dict(L=3.0, o=5e3, C=20.0, A=16.0, beta=1.2, latency="dependent")):
        fit = fit_logca(*synthetic(**case))
        v = _values(fit)
        assert fit.latency == "dependent" and fit.separable
        assert "F =" in fit.latency_reason
        for name in ("L", "o", "C", "A", "beta"):
            assert v[name] == pytest.approx(case[name], rel=1e-6), (case, name)


@pytest.mark.parametrize("seed", range(5))
def test_two_percent_noise_t2_aes_within_5_percent_and_g1_within_2(seed):
    fit = fit_logca(*synthetic(**T2_AES, noise=0.02, seed=seed), L=1500)
    v = _values(fit)
    assert fit.latency == "independent"
    for name in ("o", "C", "A", "beta"):
        assert v[name] == pytest.approx(T2_AES[name], rel=0.05), name
    assert analyse_fit(fit).g1 == pytest.approx(357.7, rel=0.02)
    # the intervals are honest: the true values lie inside (95%, five seeds)
    for name in ("C", "A", "o_plus_L"):
        true = 30500 if name == "o_plus_L" else T2_AES[name]
        assert fit[name].low <= true <= fit[name].high, name


@pytest.mark.parametrize("seed", range(5))
def test_two_percent_noise_dependent_latency_within_5_percent(seed):
    fit = fit_logca(*synthetic(**GPU_GEMM, noise=0.02, seed=seed))
    v = _values(fit)
    assert fit.latency == "dependent"
    for name in ("L", "o", "C", "A", "beta"):
        assert v[name] == pytest.approx(GPU_GEMM[name], rel=0.05), name


def test_weighting_keeps_o_plus_L_at_one_percent_noise():
    """Relative residuals: an unweighted fit lets the 32 MB rows set o + L (the issue
    measured 34.8 K for a true 30.5 K); weighted, it stays within 1.5%."""
    unweighted_misses = 0
    for seed in range(5):
        g, t0, t1 = synthetic(**T2_AES, noise=0.01, seed=seed)
        fit = fit_logca(g, t0, t1)
        assert fit["o_plus_L"].value == pytest.approx(30500, rel=0.015)
        C, beta = fit_host(g, t0)
        plain = np.linalg.lstsq(np.column_stack([np.ones_like(g), C * g ** beta]), t1,
                                rcond=None)[0]
        unweighted_misses += abs(plain[0] / 30500 - 1) > 0.1
    assert unweighted_misses >= 3                   # what the weighting is for


def test_binary_search_beta_is_about_0_11():
    g, _, _ = synthetic(**T2_AES)
    _, beta = fit_host(g, 50 * np.log2(g))
    assert beta == pytest.approx(0.11, abs=0.01)            # 0.115: the paper's §4
    _, beta_elements = fit_host(g, 50 * np.log2(g / 4))
    assert beta_elements == pytest.approx(0.14, abs=0.01)   # 0.144: Table 4's O(g^0.14)


def test_beta_one_dependent_latency_says_L_and_A_not_separable():
    data = synthetic(L=3.0, o=5e3, C=20.0, A=16.0, beta=1.0, latency="dependent")
    fit = fit_logca(*data, latency="dependent")
    assert any("only L + C/A" in n for n in fit.notes)
    assert fit["L"].high == np.inf
    # the paper's remedy for GPUs: A from the peak-FLOPS ratio; then L and o are fitted
    fit = fit_logca(*data, latency="dependent", A=16)
    assert fit["L"].value == pytest.approx(3, rel=1e-6)
    assert fit["o"].value == pytest.approx(5e3, rel=1e-6)
    # auto: the independent form fits these data exactly, and the output says why
    auto = fit_logca(*data)
    assert auto.latency == "independent"
    assert auto["A"].value == pytest.approx(1 / (1 / 16 + 3 / 20), rel=1e-6)
    assert any("would look like a lower acceleration" in n for n in auto.notes)


def test_bad_data_is_an_input_error():
    g, t0, t1 = synthetic(**T2_AES)
    with pytest.raises(InputError, match="> 0"):
        fit_logca(g, -t0, t1)
    with pytest.raises(InputError, match=r"exceeds the fitted o \+ L"):
        fit_logca(g, t0, t1, L=4e4)
    with pytest.raises(InputError, match="three distinct"):
        fit_logca(g[:2], t0[:2], t1[:2])


# --------------------------------------------------------------------------- command

def test_command_fit_text_and_json(tmp_path, capsys):
    data = _write(tmp_path / "t2.csv", *synthetic(**T2_AES))
    assert main(["logca", "--fit", data]) == 0
    out = capsys.readouterr().out
    assert "o and L are not separable" in out and "o_plus_L" in out
    assert "357.716 B" in out                         # g1 of the analysis on the fit
    assert main(["logca", "--fit", data, "--interface-latency", "1500", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["fit"]["separable"] is True and doc["fit"]["latency"] == "independent"
    assert doc["fit"]["parameters"]["o"]["value"] == pytest.approx(2.9e4, rel=1e-6)
    assert doc["g1"] == pytest.approx(G1_T2_AES, rel=1e-6)


def test_command_fit_columns_by_option_bandwidth_and_peak_ratio(tmp_path, capsys):
    case = dict(L=3.0, o=5e3, C=20.0, A=16.0, beta=1.0, latency="dependent")
    data = _write(tmp_path / "gpu.csv", *synthetic(**case), names=("g", "t0", "t1"))
    cols = ["--granularity-column", "g", "--host-column", "t0", "--accelerator-column", "t1"]
    assert main(["logca", "--fit", data, *cols, "--latency", "dependent",
                 "--peak-ratio", "16", "--json"]) == 0
    p = json.loads(capsys.readouterr().out)["fit"]["parameters"]
    assert p["L"]["value"] == pytest.approx(3, rel=1e-6) and p["A"]["source"] == "given"
    assert main(["logca", "--fit", data, *cols, "--latency", "dependent",
                 "--bandwidth", str(1 / 3), "--json"]) == 0
    p = json.loads(capsys.readouterr().out)["fit"]["parameters"]
    assert p["A"]["value"] == pytest.approx(16, rel=1e-6) and p["L"]["source"] == "given"


def test_command_fit_bad_input_exits_2(tmp_path, capsys):
    good = _write(tmp_path / "t2.csv", *synthetic(**T2_AES))
    assert main(["logca", "--fit", good, "--host-column", "T0"]) == 2
    assert "no column 'T0'" in capsys.readouterr().err
    assert main(["logca", "--fit", good, "--overhead", "5"]) == 2
    bad = tmp_path / "bad.csv"
    bad.write_text("granularity,host,accelerator\n16,1440,30575\n32,-2880,30651\n64,5760,30803\n")
    assert main(["logca", "--fit", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:3:" in err and "must be > 0" in err and "Traceback" not in err
    assert main(["logca", "--overhead", "5"]) == 2
    assert "missing --interface-latency" in capsys.readouterr().err


def test_table5_example_is_read(capsys):
    assert main(["logca", "--table", "examples/logca/table5.csv", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["accelerators"]}
    assert rows["UltraSPARC T2 AES"]["g1"] == pytest.approx(G1_T2_AES, rel=1e-9)
    # Table 5 against the paper's text: with C/L = 174/3000 the discrete GPU never breaks
    # even on AES (its limit A·C/(A·L + C) = 0.058), though Fig. 7 marks its g1
    assert rows["Discrete GPU AES"]["g1"] is None
    assert rows["Discrete GPU AES"]["speedup_limit"] == pytest.approx(
        30 * 174 / (30 * 3000 + 174))
    assert main(["logca", "--table", "examples/logca/table5.csv", "--row", "T2 AES"]) == 2
    assert "no row named 'T2 AES'" in capsys.readouterr().err


def test_a_missing_accelerator_column_names_its_option(tmp_path, capsys):
    from mapping.cli.main import main
    data = tmp_path / "l.csv"
    data.write_text("g,host,acc\n16,1,2\n")
    assert main(["logca", "--fit", str(data)]) == 2
    err = capsys.readouterr().err
    assert "l.csv:1:1" in err and "--accelerator-column" in err and "Traceback" not in err
