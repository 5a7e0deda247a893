"""LogCA from real measurements (issue 32, item 5): a host with a fixed cost.

A library call costs a fixed ``o0`` however small its input, so measured host times are
flat at small g: ``T0 = o0 + C·g^beta`` (an extension of LogCA, whose host is
``C·g^beta``). Generating model of the must-show (the issue's matrix product: beta =
1.5, the accelerator's copies and launch a fixed o + L, A = 30), on 16 B .. 256 MB in
powers of two (25 rows), 2% noise on every time::

    C = 0.003, beta = 1.5, A = 30, o + L = 6·o0, o0 = C·knee^1.5

g1 of the generating model, from o0 + C·g^beta = o + L + C·g^beta/A (independent
latency): ``g1 = ((o + L - o0)·A / ((A - 1)·C))^(1/beta)``; with knee = 1 KB,
o0 = 0.003·32768 = 98.304, o + L = 589.824 and g1 = (491.52·30/(29·0.003))^(2/3) =
169,489.66^(2/3) = 3,062.64 B.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mapping.cli.main import main
from mapping.errors import InputError
from mapping.calibration.logca import analyse_fit, fit_logca, runs_test, synthetic
from moa.logca_analysis import analyse, break_even, speedup

G = 2.0 ** np.arange(4, 29)                      # 16 B .. 256 MB


def case(knee, latency="independent", L=0.0):
    C, beta = 0.003, 1.5
    o0 = C * knee ** beta
    return dict(L=L, o=6 * o0 - (L if latency == "independent" else 0.0), C=C, A=30.0,
                beta=beta, latency=latency, o0=o0)


def g1_of(t):
    """The generating model's g1 by hand (independent latency, see the module doc)."""
    K = t["o"] + t["L"]
    return ((K - t["o0"]) * t["A"] / ((t["A"] - 1) * t["C"])) ** (1 / t["beta"])


def test_the_hand_worked_g1():
    t = case(1024)
    assert t["o0"] == pytest.approx(98.304)
    assert g1_of(t) == pytest.approx(3062.64, rel=1e-5)
    assert break_even(t["L"], t["o"], t["C"], t["A"], t["beta"], t["latency"],
                      o0=t["o0"]) == pytest.approx(g1_of(t), rel=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_two_percent_noise_recovers_every_parameter_and_g1_within_5_percent(seed):
    """Must-show 4."""
    t = case(1024)
    fit = fit_logca(*synthetic(**t, g=G, noise=0.02, seed=seed))
    assert fit.host_form == "fit" and fit.latency == "independent"
    truth = {"C": t["C"], "beta": t["beta"], "A": t["A"], "o_plus_L": t["o"] + t["L"],
             "o0": t["o0"]}
    for name, value in truth.items():
        assert fit[name].value == pytest.approx(value, rel=0.05), name
    assert analyse_fit(fit).g1 == pytest.approx(g1_of(t), rel=0.05)
    assert fit.warnings == ()


@pytest.mark.parametrize("seed", range(5))
def test_the_issues_64_KB_knee(seed):
    """Flat below 64 KB (the issue's matrix product): 12 of the 25 host rows say
    nothing of C·g^beta, and C is known less well -- ln C moves with beta times ln g
    (about 17 here), so beta's 0.2% becomes C's 4% (standard deviation over 40 seeds:
    3.8%; within 5% on 32 of 40).  The rest within 5%, C within 10%."""
    t = case(65536)
    fit = fit_logca(*synthetic(**t, g=G, noise=0.02, seed=seed))
    assert fit.host_form == "fit"
    for name, value in (("beta", 1.5), ("A", 30.0), ("o_plus_L", 6 * t["o0"]),
                        ("o0", t["o0"])):
        assert fit[name].value == pytest.approx(value, rel=0.05), name
    assert fit["C"].value == pytest.approx(t["C"], rel=0.10)
    assert analyse_fit(fit).g1 == pytest.approx(g1_of(t), rel=0.05)


def test_the_intervals_are_honest_at_the_64_KB_knee():
    """The 95% intervals hold the generating values about 95% of the time (38 of 40
    seeds for C when measured; at least 17 of 20 asked here)."""
    t = case(65536)
    held = {name: 0 for name in ("C", "beta", "A", "o0")}
    for seed in range(20):
        fit = fit_logca(*synthetic(**t, g=G, noise=0.02, seed=100 + seed))
        for name in held:
            held[name] += fit[name].low <= t[name] <= fit[name].high
    assert min(held.values()) >= 17, held


def test_noise_free_recovery_is_exact_with_either_latency():
    for t in (case(4096), case(4096, "dependent", L=0.5)):
        fit = fit_logca(*synthetic(**t, g=G))
        assert fit.host_form == "fit" and fit.latency == t["latency"]
        for name in ("C", "beta", "A", "o0"):
            assert fit[name].value == pytest.approx(t[name], rel=1e-6), name
        # the paper's form holds where o0 is below 5% of T0: C·g^beta >= 19·o0
        assert fit.paper_form_from == pytest.approx((19 * 4096 ** 1.5) ** (1 / 1.5), rel=1e-6)


def test_the_papers_form_on_such_data_is_flagged():
    """The issue's report: the paper's T0 = C·g^beta on a host with a fixed cost bends
    beta and A (A well below the measured speedup) and nothing warned.  Now the runs
    test flags both columns, and the measured speedup above A is named."""
    t = case(65536, "dependent", L=0.5)
    g, t0, t1 = synthetic(**t, g=G, noise=0.02, seed=1)
    paper = fit_logca(g, t0, t1, host_overhead="none")
    assert paper.host_form == "none" and not paper.has("o0")
    assert paper["A"].value < 0.6 * t0[-1] / t1[-1]            # A misread
    runs = dict(paper.runs)
    assert runs["host"].systematic and runs["accelerator"].systematic
    text = " ".join(paper.warnings)
    assert "host residuals are systematic" in text
    assert f"measured speedup {t0[-1] / t1[-1]:.4g}" in text and "exceeds" in text
    # the default chooses the fixed cost, and nothing is left to warn about
    auto = fit_logca(g, t0, t1)
    assert auto.host_form == "fit" and "F =" in auto.host_reason
    assert auto.warnings == ()
    assert auto["A"].value == pytest.approx(30, rel=0.05)


@pytest.mark.parametrize("seed", range(10))
def test_without_a_fixed_cost_the_papers_form_is_kept_and_nothing_warns(seed):
    t2_aes = dict(L=1500.0, o=2.9e4, C=90.0, A=19.0, beta=1.0, latency="independent")
    fit = fit_logca(*synthetic(**t2_aes, noise=0.02, seed=seed))
    assert fit.host_form == "none" and "not significant" in fit.host_reason
    assert fit.warnings == ()


def test_runs_test_by_hand():
    # ++++---- : 2 runs of 8 (4 and 4); mean 2·4·4/8 + 1 = 5, variance
    # 2·16·(32 - 8)/(64·7) = 1.7143; z = (2 - 5 + 0.5)/1.3093 = -1.9094, p = 0.0281
    r = runs_test([1, 2, 3, 4, -1, -2, -3, -4])
    assert (r.runs, r.expected) == (2, 5.0)
    assert r.p == pytest.approx(0.02811, abs=2e-5)
    assert not r.systematic                        # p >= 0.01
    assert runs_test([1, -1] * 4).p == pytest.approx(1.0, abs=0.02)
    assert runs_test([1] * 10 + [-1] * 10).systematic
    assert runs_test([1, 1, 1, -1]).p is None      # too few of a sign


def test_the_analysis_with_a_fixed_host_cost():
    a = analyse(L=0, o=3e5, C=0.003, A=30, beta=1.5, latency="independent", o0=5e4)
    g1 = ((3e5 - 5e4) * 30 / (29 * 0.003)) ** (1 / 1.5)
    assert a.g1 == pytest.approx(g1, rel=1e-9) and a.g1_closed_form == pytest.approx(g1)
    # S = A/2: o0 + C·g^1.5 = (A/2)·(o + C·g^1.5/A)  =>  C·g^1.5 = A·o - 2·o0
    assert a.g_half == pytest.approx(((30 * 3e5 - 1e5) / 0.003) ** (1 / 1.5), rel=1e-9)
    assert speedup(0, 0, 3e5, 0.003, 30, 1.5, "independent", 5e4) == pytest.approx(5e4 / 3e5)
    assert a.speedup_limit == 30 and a.to_dict()["o0"] == 5e4
    assert "host fixed cost o0 = 50000" in str(a)
    # a host fixed cost above the accelerator's o + L: the accelerator wins at every g
    # (S(0) = o0/(o + L) = 5 and S grows towards A), so g1 = 0
    assert break_even(0, 1e3, 0.003, 30, 1.5, "independent", o0=5e3) == 0.0
    # the paper's host (o0 = 0) is the paper's analysis, to the bit
    plain = analyse(L=0, o=3e5, C=0.003, A=30, beta=1.5, latency="independent")
    zero = analyse(L=0, o=3e5, C=0.003, A=30, beta=1.5, latency="independent", o0=0.0)
    assert plain == zero and "o0" not in plain.to_dict()


def test_command_reports_the_fixed_cost(tmp_path, capsys):
    t = case(1024)
    g, t0, t1 = synthetic(**t, g=G, noise=0.02, seed=0)
    path = tmp_path / "gemm.csv"
    path.write_text("granularity,host,accelerator\n" + "".join(
        f"{float(a)!r},{float(b)!r},{float(c)!r}\n" for a, b, c in zip(g, t0, t1)))
    assert main(["logca", "--fit", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["fit"]["host_form"] == "fit"
    assert doc["fit"]["parameters"]["o0"]["value"] == pytest.approx(t["o0"], rel=0.05)
    assert doc["o0"] == pytest.approx(t["o0"], rel=0.05)
    assert doc["g1"] == pytest.approx(g1_of(t), rel=0.05)
    assert set(doc["fit"]["runs_test"]) == {"host", "accelerator"}
    assert doc["fit"]["warnings"] == []
    assert main(["logca", "--fit", str(path), "--host-overhead", "none"]) == 0
    out = capsys.readouterr().out
    assert "host: C·g^beta (the paper)" in out and "warning: the host residuals" in out
    assert main(["logca", "--fit", str(path)]) == 0
    out = capsys.readouterr().out
    assert "o0 + C·g^beta (a fixed cost: an extension of LogCA)" in out
    assert math.isfinite(float(out.split("o0          ")[1].split()[0]))


def test_range_fits_the_papers_form_where_it_holds():
    """``--host-overhead range``: the granularities where o0 (fitted on every row) is
    below 5% of T0, chosen by the data, then the paper's form on those rows alone."""
    t = case(65536)
    g, t0, t1 = synthetic(**t, g=G, noise=0.02, seed=1)
    fit = fit_logca(g, t0, t1, host_overhead="range")
    start = (19 * 65536 ** 1.5) ** (1 / 1.5)              # 468,514 B without noise
    assert fit.host_form == "range" and not fit.has("o0")
    assert fit.paper_form_from == pytest.approx(start, rel=0.02)
    assert min(fit.g) == 2 ** 19 and len(fit.g) == 10     # 512 KB .. 256 MB
    assert "rows from g = " in fit.host_reason and "below 5% of T0" in fit.host_reason
    assert fit["beta"].value == pytest.approx(1.5, rel=0.02)
    assert fit["A"].value == pytest.approx(30, rel=0.05)
    # a fixed cost that dominates nearly every row leaves too few rows: said so
    late = case(2 ** 25)
    with pytest.raises(InputError, match="--host-overhead range needs 6"):
        fit_logca(*synthetic(**late, g=G), host_overhead="range")


def test_a_table_may_give_the_hosts_fixed_cost(tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_text("name,L,o,C,A,beta,latency,o0\n"
                     "paper host,0,3e5,0.003,30,1.5,independent,\n"
                     "library host,0,3e5,0.003,30,1.5,independent,5e4\n"
                     "bad,0,3e5,0.003,30,1.5,independent,lots\n")
    assert main(["logca", "--table", str(table), "--row", "paper host",
                 "--row", "library host", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["accelerators"]}
    assert rows["paper host"]["g1"] == pytest.approx((3e5 * 30 / (29 * 0.003)) ** (1 / 1.5))
    assert rows["library host"]["g1"] == pytest.approx(
        ((3e5 - 5e4) * 30 / (29 * 0.003)) ** (1 / 1.5))
    assert rows["library host"]["o0"] == 5e4 and "o0" not in rows["paper host"]
    assert main(["logca", "--table", str(table), "--row", "bad"]) == 2
    # the error of any bad cell (it said "expected a number, got 'lots'")
    assert f"{table}:4:36: error: row 3, column 8 'o0': 'lots' is not a (finite) " \
        "number" in capsys.readouterr().err
