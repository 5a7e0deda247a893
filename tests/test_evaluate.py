"""Evaluation against hand-computed values, through the CLI's JSON and the Python API.

The graph (tests/data/chain.sdf) has q = (src 2, work 3, sink 1): src*3 = work*2 and
work*1 = sink*3.  Tokens of one iteration:
  src  2 x quanta 10 on cpu0: 2*(1*10 + 2)   = 24
  work 3 x quanta N  on dsp : 3*(0.5*N + 1)  = 9 for N = 4
  sink 1 x quanta 2  on cpu1: 1*(3k*2)       = 6 for k = 1
  src->work 2 tokens of 3*4 = 12 bytes and work->sink 3 tokens of 1*8 = 8 bytes, both
  across bus0 and bus1 (cpu0 - bus0 - bus1 - dsp - ... - cpu1):
  bus0: 2*(0.25*12 + 1) + 3*(0.25*8 + 1) = 8 + 9 = 17
  bus1: 2*(0.125*12)    + 3*(0.125*8)    = 3 + 3 = 6
sum = 24 + 9 + 6 + lambda*(17 + 6) = 39 + 0.5*23 = 50.5;  max = max(24, 0.5*17) = 24.
"""
import json
from pathlib import Path

import pytest

from mapping.cli.main import main

DATA = Path(__file__).parent / "data"
FILES = [str(DATA / "chain.sdf"), str(DATA / "chain.moa"), str(DATA / "chain.map")]


def run_json(capsys, *args):
    code = main(["eval", *FILES, "--mapping", "spread", "--json", *args])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_sum_with_lambda_half(capsys):
    r = run_json(capsys)
    assert r["value"] == pytest.approx(50.5)
    assert r["aggregate"] == "sum" and r["lambda"] == 0.5
    assert r["repetitions"] == {"src": 2, "work": 3, "sink": 1}
    values = {e["name"]: e["value"] for e in r["elements"]}
    assert values == pytest.approx({"cpu0": 24, "cpu1": 6, "dsp": 9, "bus0": 17, "bus1": 6})
    tokens = {e["name"]: (e["tokens"], e["quanta"]) for e in r["elements"]}
    assert tokens["bus0"] == (5, 2 * 12 + 3 * 8) and tokens["dsp"] == (3, 12)
    assert r["throughput"] == pytest.approx(1 / 50.5)
    assert r["unmodelled"] == [] and r["bottleneck"] == "cpu0"
    assert list(r) == ["application", "architecture", "mapping", "metric", "aggregate",
                       "lambda", "params", "repetitions", "value", "throughput", "performance",
                       "bottleneck", "unmodelled", "elements"]


def test_max_names_the_bottleneck(capsys):
    r = run_json(capsys, "--aggregate", "max")
    assert r["value"] == pytest.approx(24) and r["bottleneck"] == "cpu0"


def test_parameter_overrides_reach_both_files(capsys):
    # N = 6: dsp 3*(0.5*6 + 1) = 12;  k = 5: cpu1 1*(15*2) = 30.
    r = run_json(capsys, "-p", "N=6", "-p", "k=5")
    assert r["params"] == {"N": 6, "k": 5, "lam": 0.5}
    assert r["value"] == pytest.approx(24 + 12 + 30 + 0.5 * 23)
    r = run_json(capsys, "-p", "N=6", "-p", "k=5", "--aggregate", "max")
    assert r["value"] == pytest.approx(30) and r["bottleneck"] == "cpu1"


def test_lambda_can_make_a_cn_the_bottleneck(capsys):
    r = run_json(capsys, "-p", "lam=4", "--aggregate", "max")
    assert r["value"] == pytest.approx(4 * 17) and r["bottleneck"] == "bus0"
    r = run_json(capsys, "-p", "lam=4")
    assert r["value"] == pytest.approx(39 + 4 * 23)


def test_same_pe_without_local_cn_communicates_for_free(capsys):
    code = main(["eval", *FILES, "--mapping", "local", "--json"])
    r = json.loads(capsys.readouterr().out)
    # cpu0: 2*(10+2) + 3*(4+2) + 1*(2+2) = 24 + 18 + 4
    assert code == 0 and r["value"] == pytest.approx(46)


def test_power_is_intensive_and_energy_comes_from_power_times_time(capsys):
    r = run_json(capsys, "--metric", "power")
    # Only dsp has a power model: constant a = 2 W whatever its tokens.
    assert r["value"] == pytest.approx(2.0)
    assert r["unmodelled"] == ["cpu0", "cpu1", "bus0", "bus1"]
    assert r["throughput"] is None
    r = run_json(capsys, "--metric", "energy")
    # dsp: 3 tokens x 2 W x (0.5*4 + 1) s = 18 J; no other element can value energy.
    assert r["value"] == pytest.approx(18.0)


def test_inline_mapping(capsys):
    code = main(["eval", str(DATA / "chain.sdf"), str(DATA / "chain.moa"),
                 "--map", "src=cpu0,work=dsp,sink=cpu1", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["value"] == pytest.approx(50.5)


def test_python_api_matches_cli():
    import dsl
    from mapping import evaluate
    (app,) = dsl.load_sdf(DATA / "chain.sdf")
    (arch,) = dsl.load_moa(DATA / "chain.moa")
    spread = {m.name: m for m in dsl.load_map(DATA / "chain.map")}["spread"]
    result = evaluate(app, arch, spread, params={"N": 6})
    assert result.value == pytest.approx(24 + 12 + 6 + 0.5 * 23)
    assert result.to_dict()["mapping"] == "spread"
