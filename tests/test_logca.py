"""LogCA (Altaf & Wood, ISCA 2017): the cost model, the analysis, the command, the plot.

Hand derivation for UltraSPARC T2 / AES (paper Table 5: L = 1500 cycles, o = 2.9e4 cycles,
C = 90 cycles/B, A = 19, granularity-independent latency, beta = 1), with o + L = 30500:

* g1, eq. 5:      (A/(A-1))·(o+L)/C = (19/18)·(30500/90) = 357.716 B
* g_{A/2}, eq. 6:  A·(o+L)/C         = 19·30500/90        = 6438.89 B  (= (A-1)·g1, eq. 7)

Optimization regions (§3.2: a 10x better parameter gives >= 20% more speedup). With
S(g) = C·g/(o + L + C·g/A) (eq. 2) and u = C·g/A = 90·g/19 = 4.7368·g:

* o -> o/10:  S'/S = (30500 + u)/(2900 + 1500 + u) >= 1.2  <=>  25220 >= 0.2·u
              <=>  g <= 25220·19/18 = 26621.1 B               (16 KB < end < 32 KB)
* C -> 10·C:  S'/S = 10·(30500 + u)/(30500 + 10·u) >= 1.2  <=>  268400 >= 2·u
              <=>  g <= 268400·19/180 = 28331.1 B             (16 KB < end < 32 KB)
* A -> 10·A:  S'/S = (30500 + u)/(30500 + u/10) >= 1.2  <=>  0.88·u >= 6100
              <=>  g >= 6100/(0.88·4.7368) = 1463.38 B         (1 KB < start < 2 KB)
* L -> L/10:  S'/S = (30500 + u)/(29150 + u) <= 30500/29150 = 1.046 < 1.2: no latency region.

On the paper's power-of-two grid (Fig. 6) these read "A from 2 KB, o and C up till 32 KB".
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from moa.cost_models import make_model
from moa.errors import CostModelError
from moa.logca_analysis import (LogCAError, analyse, bound, break_even,
                                break_even_closed_form, crossings, g_half, g_half_closed_form,
                                gain, optimization_regions, speedup, speedup_limit)

AES = dict(L=1500.0, o=2.9e4, C=90.0, A=19.0, beta=1.0, latency="independent")
KB = 1024.0


class Token:
    """The duck-typed token the cost models see."""

    def __init__(self, quanta, count=1, **attrs):
        self.quanta, self.count, self.attrs, self.source = quanta, count, attrs, "t"

    def get(self, key, default=None):
        return self.quanta if key == "quanta" else self.attrs.get(key, default)


def _bisect(f, lo, hi, n=200):
    """Plain bisection in log space, independent of the module under test."""
    flo = f(lo)
    assert flo * f(hi) < 0
    for _ in range(n):
        mid = math.sqrt(lo * hi)
        if (f(mid) < 0) == (flo < 0):
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi)


# --------------------------------------------------------------------------- cost model

def test_cost_model_token_cost_by_hand():
    aes = make_model("logca", {"A": 19, "o": 2.9e4, "L": 1500, "latency": "independent"})
    host = make_model("logca", {})
    t = Token(4096, C=90)
    # independent: o + L + C·g/A = 29000 + 1500 + 90·4096/19 = 30500 + 19402.105...
    assert aes.token_cost(t) == pytest.approx(30500 + 368640 / 19, rel=1e-12)
    # the host, logca(): C·g^beta = 90·4096
    assert host.token_cost(t) == pytest.approx(368640.0)
    # their ratio is the analysis' speedup (eq. 2)
    assert host.token_cost(t) / aes.token_cost(t) == pytest.approx(speedup(4096, **AES))
    # dependent latency (default), g and beta from the token: o + L·g + C·g^beta/A
    gpu = make_model("logca", {"A": 30, "o": 100, "L": 2})
    t2 = Token(8, g=64, C=3, beta=1.5)
    assert gpu.token_cost(t2) == pytest.approx(100 + 2 * 64 + 3 * 64 ** 1.5 / 30)
    assert make_model("logca", {}).token_cost(Token(10)) == pytest.approx(10.0)   # C = beta = 1


@pytest.mark.parametrize("latency", ["dependent", "independent"])
def test_accelerator_time_is_the_models_over_an_array_of_g(latency):
    """T1(g) has one home: the model's token cost, and T0/T1 the analysis' speedup, at
    every g of an array at once."""
    from moa.cost_models.logca import accelerator_time, host_time
    p = dict(L=2.0, o=100.0, C=3.0, A=30.0, beta=1.5, latency=latency)
    g = np.array([16.0, 4096.0, 2.0 ** 20])
    t1 = accelerator_time(g, host_time(g, p["C"], p["beta"]), p["A"], p["o"], p["L"],
                          latency)
    # by hand at g = 16: o + L1(16) + 3 * 16^1.5 / 30 = 100 + L1 + 6.4
    assert t1[0] == pytest.approx(100 + (2 * 16 if latency == "dependent" else 2) + 6.4,
                                  rel=1e-15)
    model = make_model("logca", {k: p[k] for k in ("A", "o", "L", "latency")})
    assert t1 == pytest.approx([model.token_cost(Token(x, C=3.0, beta=1.5)) for x in g],
                               rel=1e-15)
    assert host_time(g, p["C"], p["beta"]) / t1 == pytest.approx(speedup(g, **p), rel=1e-12)


def test_cost_model_rejects_bad_parameters():
    with pytest.raises(CostModelError, match="'A'"):
        make_model("logca", {"A": 0})
    with pytest.raises(CostModelError, match="'L'"):
        make_model("logca", {"L": -1})
    with pytest.raises(CostModelError, match="latency"):
        make_model("logca", {"latency": "sometimes"})


# --------------------------------------------------------------------------- AES, Table 5

def test_aes_ultrasparc_t2_g1_and_g_half():
    a = analyse(**AES)
    assert a.g1 == pytest.approx(357.7, rel=1e-3)
    assert a.g_half == pytest.approx(6439, rel=1e-3)
    assert a.g1 == pytest.approx(19 / 18 * 30500 / 90, rel=1e-10)
    assert a.g_half == pytest.approx(19 * 30500 / 90, rel=1e-10)
    # eqs. 5-6 are exact for granularity-independent latency
    assert a.g1_closed_form == pytest.approx(a.g1, rel=1e-10)
    assert a.g_half_closed_form == pytest.approx(a.g_half, rel=1e-10)
    assert a.g_half == pytest.approx((AES["A"] - 1) * a.g1, rel=1e-10)        # eq. 7
    assert speedup(a.g1, **AES) == pytest.approx(1.0, rel=1e-10)
    assert speedup(a.g_half, **AES) == pytest.approx(19 / 2, rel=1e-10)
    assert a.speedup_limit == pytest.approx(19.0) and a.bound == "compute"  # eq. 3


def test_aes_ultrasparc_t2_optimization_regions():
    regions = {r.parameter: r for r in analyse(**AES).regions}
    assert set(regions) == {"o", "C", "A"}                     # no latency region (Fig. 6)
    assert regions["o"].start == 16 and 16 * KB < regions["o"].end < 32 * KB
    assert regions["C"].start == 16 and 16 * KB < regions["C"].end < 32 * KB
    assert 1 * KB < regions["A"].start < 2 * KB and regions["A"].end == 2 ** 25
    assert regions["o"].end == pytest.approx(25220 * 19 / 18, rel=1e-9)
    assert regions["C"].end == pytest.approx(268400 * 19 / 180, rel=1e-9)
    assert regions["A"].start == pytest.approx(6100 / (0.88 * 90 / 19), rel=1e-9)
    # the paper's reading on a power-of-two grid: A pays from 2 KB, o and C up till 32 KB
    assert gain("A", 2 * KB, **AES) >= 0.2 > gain("A", 1 * KB, **AES)
    for p in ("o", "C"):
        assert gain(p, 16 * KB, **AES) >= 0.2 > gain(p, 32 * KB, **AES)
    assert max(gain("L", g, **AES) for g in np.logspace(1, 8, 50)) < 0.2


def test_regions_ends_are_exact_roots():
    for r in optimization_regions(**AES):
        for end in (r.start, r.end):
            if end not in (16, 2 ** 25):
                assert gain(r.parameter, end, **AES) == pytest.approx(0.2, abs=1e-9)


# --------------------------------------------------------------------------- closed forms

def test_beta_one_dependent_closed_forms_are_exact():
    # eq. 8 with beta = 1: C·g = o + L·g + C·g/A  =>  g1 = A·o / (C·(A-1) - A·L) = eq. 11
    p = dict(L=3.0, o=2e8, C=174.0, A=30.0, beta=1.0, latency="dependent")
    a = analyse(**p)
    assert a.g1 == pytest.approx(30 * 2e8 / (174 * 29 - 30 * 3), rel=1e-10)
    assert a.g1_closed_form == pytest.approx(a.g1, rel=1e-10)
    assert a.g_half == pytest.approx(30 * 2e8 / (174 - 30 * 3), rel=1e-10)     # eq. 12
    assert a.g_half_closed_form == pytest.approx(a.g_half, rel=1e-10)
    # eq. 9 with beta = 1: the limit A·C/(A·L + C), below the paper's bound C/L
    assert a.speedup_limit == pytest.approx(30 * 174 / (30 * 3 + 174))
    assert a.speedup_limit < 174 / 3 and a.bound == "latency"
    assert speedup(1e16, **p) == pytest.approx(a.speedup_limit, rel=1e-6)


def test_independent_closed_forms_exact_for_any_beta():
    for beta in (0.5, 1.7):
        p = dict(L=10.0, o=1e3, C=5.0, A=8.0, beta=beta, latency="independent")
        assert break_even(**p) == pytest.approx(break_even_closed_form(**p), rel=1e-10)
        assert g_half(**p) == pytest.approx(g_half_closed_form(**p), rel=1e-10)


def test_dependent_beta_not_one_against_independent_solution():
    p = dict(L=2.0, o=1e4, C=50.0, A=20.0, beta=1.3, latency="dependent")
    L, o, C, A, beta = p["L"], p["o"], p["C"], p["A"], p["beta"]

    def t1_minus(level):  # C·g^beta - level·(o + L·g + C·g^beta/A), straight from eq. 8
        return lambda g: C * g ** beta - level * (o + L * g + C * g ** beta / A)

    g1_ref = _bisect(t1_minus(1.0), 1.0, 1e6)
    gh_ref = _bisect(t1_minus(A / 2), 1.0, 1e6)
    a = analyse(**p)
    assert a.g1 == pytest.approx(g1_ref, rel=1e-9)
    assert a.g_half == pytest.approx(gh_ref, rel=1e-9)
    # a dense grid and linear interpolation in log-log space agree as well
    g = np.logspace(0, 6, 200001)
    s = C * g ** beta / (o + L * g + C * g ** beta / A)
    assert a.g1 == pytest.approx(math.exp(np.interp(0.0, np.log(s), np.log(g))), rel=1e-4)
    # eq. 11/12 are one Newton step from g = 1: far from the solution here
    assert a.g1_closed_form == pytest.approx(
        (C * (beta - 1) * (A - 1) + A * o) / (C * beta * (A - 1) - A * L))
    assert a.g1_closed_form / a.g1 > 2.5            # 167.6 B against 61.8 B
    assert a.g_half_closed_form / a.g_half > 10     # 8000.6 B against 647.9 B
    assert a.speedup_limit == A and a.bound == "compute"      # super-linear: compute-bound


def test_sub_linear_dependent_closed_form_claims_what_does_not_exist():
    # beta < 1 with L·g latency: speedup peaks at g* = o·beta/(L·(1-beta)), then falls to 0
    p = dict(L=1.0, o=5e3, C=20.0, A=16.0, beta=0.9, latency="dependent")
    a = analyse(**p)
    assert a.g_peak == pytest.approx(5e3 * 0.9 / 0.1, rel=1e-9)
    g = np.logspace(0, 12, 20001)
    assert a.peak_speedup == pytest.approx(speedup(g, **p).max(), rel=1e-6)
    assert a.peak_speedup < p["A"] / 2
    assert a.g_half is None and a.g_half_closed_form is not None   # eq. 12 exists, S < A/2
    assert a.speedup_limit == 0.0 and a.bound == "latency"          # implication 4
    lo, hi = crossings(1.0, **p)                                    # breaks even, then not
    assert lo == pytest.approx(a.g1) and hi > lo
    assert speedup(lo, **p) == pytest.approx(1.0) and speedup(hi, **p) == pytest.approx(1.0)
    assert speedup(math.sqrt(lo * hi), **p) > 1.0 > speedup(hi * 2, **p)


def test_absent_quantities():
    assert break_even(L=1, o=10, C=5, A=1, latency="independent") is None     # A = 1
    assert break_even_closed_form(L=1, o=10, C=5, A=1, latency="independent") is None
    # dependent, beta = 1, C/L < 1: speedup bounded by A·C/(A·L+C) < 1 (eq. 9, §5.1)
    a = analyse(L=3e3, o=2e8, C=174, A=30)
    assert a.g1 is None and a.g1_closed_form is None and a.g_half is None
    assert a.to_dict()["g1"] is None


def test_limits_and_bounds():
    assert speedup_limit(L=5, o=1, C=1, A=7, beta=0.5, latency="independent") == 7
    assert speedup_limit(L=5, o=1, C=1, A=7, beta=1.5) == 7
    assert bound(L=5, o=1, C=1, A=7, beta=1.5) == "compute"
    assert bound(L=5, o=1, C=1, A=7, beta=1.0) == "latency"
    assert speedup_limit(L=0, o=1, C=1, A=7) == 7 and bound(L=0, o=1, C=1, A=7) == "compute"


def test_speedup_vectorized_and_edges():
    g = np.array([0.0, 16.0, 4096.0, 2.0 ** 40])
    s = speedup(g, **AES)
    assert s.shape == (4,) and s[0] == 0.0
    assert s[2] == pytest.approx(90 * 4096 / (30500 + 90 * 4096 / 19))
    assert s[3] == pytest.approx(19, rel=1e-6)
    assert speedup(1e300, L=1, o=1, C=1, A=4, beta=2.0) == pytest.approx(4.0)   # no overflow
    assert analyse(**AES, at=(4096,)).speedup_at == ((4096.0, pytest.approx(s[2])),)


@pytest.mark.parametrize("bad", [dict(L=-1), dict(A=0), dict(A=-3), dict(o=-1), dict(C=0),
                                 dict(beta=0), dict(latency="maybe")])
def test_bad_parameters_are_value_errors(bad):
    with pytest.raises(LogCAError) as info:
        analyse(**{**AES, **bad})
    assert isinstance(info.value, ValueError) and "LogCA" in str(info.value)


# --------------------------------------------------------------------------- command line

AES_ARGS = ["logca", "--L", "1500", "--o", "2.9e4", "--C", "90", "--A", "19",
            "--latency", "independent"]


@pytest.fixture
def cli():
    """``mapping.cli.main``: only the module of the command that runs is imported, so the test
    of ``logca`` does not depend on the other subcommands' parsers."""
    import mapping.cli.main as cli
    assert "logca" in cli.COMMANDS
    return cli


def test_cli_json_keys(cli, capsys):
    assert cli.main(AES_ARGS + ["--at", "4096", "--at", "1M", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc) == ["g1", "g1_closed_form", "g_half", "g_half_closed_form",
                         "speedup_limit", "bound", "speedup_at", "regions"]
    assert doc["g1"] == pytest.approx(357.716, rel=1e-5)
    assert doc["bound"] == "compute"
    assert [p["g"] for p in doc["speedup_at"]] == [4096, 2 ** 20]
    assert [r["parameter"] for r in doc["regions"]] == ["o", "C", "A"]
    assert all(set(r) == {"parameter", "from", "to"} for r in doc["regions"])


def test_cli_table_and_missing_as_null(cli, capsys):
    assert cli.main(AES_ARGS) == 0
    out = capsys.readouterr().out
    assert "357.716" in out and "6438.89" in out and "compute-bound" in out
    assert cli.main(["logca", "--L", "3e3", "--o", "2e8", "--C", "174", "--A", "30",
                     "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["g1"] is None and doc["g_half_closed_form"] is None


@pytest.mark.parametrize("bad", [["--L", "-5"], ["--A", "0"]])
def test_cli_bad_values_exit_2(cli, capsys, bad):
    args = AES_ARGS + bad          # argparse keeps the last value given
    with pytest.raises(SystemExit) as exit_:   # refused at the door (mapping.options)
        cli.main(args)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "error" in err and "Traceback" not in err
    assert ("argument --interface-latency/--L: expected a finite number >= 0, got '-5'" in err
            if bad[0] == "--L" else
            "argument --acceleration/--A: expected a finite number > 0, got '0'" in err)


def test_cli_plot_png(cli, tmp_path, capsys):
    import matplotlib.image as mpimg
    path = tmp_path / "aes.png"
    assert cli.main(AES_ARGS + ["--at", "4K", "--plot", str(path), "--json"]) == 0
    json.loads(capsys.readouterr().out)          # --json: stdout holds the document only
    image = mpimg.imread(path)
    assert image.shape[:2] == (500, 1300)
    rgb = image[..., :3]
    assert rgb.std() > 0.05 and (rgb.mean(axis=2) < 0.5).mean() > 0.005     # not blank
    assert cli.main(AES_ARGS + ["--plot", str(tmp_path / "aes.jpg")]) == 2


def test_plot_formats(tmp_path):
    from mapping.plots.logca import plot_logca
    for ext, magic in (("svg", b"<?xml"), ("pdf", b"%PDF")):
        path = plot_logca(L=0.05, o=1e4, C=5, A=30, beta=0.5, path=tmp_path / f"s.{ext}")
        assert path.read_bytes()[:5].startswith(magic)


# --------------------------------------------------------------------------- examples

EXAMPLES = __import__("pathlib").Path(__file__).resolve().parent.parent / "examples" / "logca"


def test_table5_csv_transcription():
    import csv
    with open(EXAMPLES / "table5.csv", newline="") as f:
        rows = {r["name"]: r for r in csv.DictReader(f)}
    t2 = rows["UltraSPARC T2 AES"]
    assert {k: float(t2[k]) for k in ("L", "o", "C", "A", "beta")} == \
        {k: AES[k] for k in ("L", "o", "C", "A", "beta")}
    assert t2["latency"] == "independent"
    for r in rows.values():       # every row is a valid parameter set
        analyse(float(r["L"]), float(r["o"]), float(r["C"]), float(r["A"]),
                float(r["beta"]), r["latency"])


def test_example_mapping_speedup_matches_analysis(capsys):
    import mapping.cli.main as cli
    files = [str(EXAMPLES / n) for n in ("aes.sdf", "aes_offload.moa", "aes.map")]
    values = {}
    for m in ("on_host", "offload"):
        assert cli.main(["eval", *files, "--mapping", m, "--json"]) == 0
        values[m] = json.loads(capsys.readouterr().out)["value"]
    assert values["on_host"] == pytest.approx(90 * 4096)
    assert values["on_host"] / values["offload"] == pytest.approx(speedup(4096, **AES))
