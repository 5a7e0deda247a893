"""SDF3 as the oracle of throughput (issue 10, must-show 1).

``tests/data/sdf3_throughput.json`` holds what ``sdf3analysis --algo throughput`` printed
(SDF3 built from github.com/rhishi/SDF3 by ``tests/oracle_sdf3/build.sh``, recorded by
``tests/oracle_sdf3/record.py``) for the shared SDF3 graphs, SDF3's own example graphs
(restated as ``.sdf`` in ``tests/data/sdf3_examples/``) and our graphs in
``tests/data/sdf3_oracle/``.  ``moc.timing.throughput`` must give the same value, on the
graph as read and after ``import sdf3`` -> ``.sdf`` -> ``export sdf3`` (the round trip
kept SDF3's own value too: recorded as ``round_trip.same``)."""
from __future__ import annotations

import json
import math
import os
from fractions import Fraction
from pathlib import Path

import pytest

import dsl

ROOT = Path(__file__).resolve().parents[1]
DATA = json.loads((ROOT / "tests" / "data" / "sdf3_throughput.json").read_text())
SHARED = ROOT / ".." / "shared" / "data" / "graphs"
RECORDS = DATA["graphs"]


def _id(record):
    return Path(record["file"]).name


def _graph(record, tmp_path):
    """The recorded graph as mapeval reads it (our .sdf graphs as SDF3 got them, through
    ``export sdf3``), or skip where its file is absent."""
    if record["base"] == "shared":
        path = SHARED / record["file"]
        if not path.is_file():
            pytest.skip(f"{SHARED} is absent")
        return dsl.read_sdf3(path)
    if record["base"] == "sdf3":
        (graph,) = dsl.load_sdf(ROOT / record["restated"])
        return graph
    (graph,) = dsl.load_sdf(ROOT / record["file"])
    xml = tmp_path / "given_to_sdf3.xml"
    dsl.write_sdf3(graph, xml)
    return dsl.read_sdf3(xml)


def _expected(record):
    text = record["throughput"]
    return math.inf if text == "inf" else Fraction(text)


def _assert_same(got, want):
    if want == math.inf:
        assert got == math.inf
    elif isinstance(got, Fraction):
        assert got == want
    else:
        assert got == pytest.approx(float(want), rel=1e-9)


def _timing():
    import moc.timing
    return moc.timing


# ------------------------------------------------------------------ the records themselves

def test_records_carry_provenance_and_a_value_per_graph():
    assert len(DATA["sdf3"]["commit"]) == 40 and DATA["sdf3"]["date"]
    assert {r["base"] for r in RECORDS} == {"shared", "sdf3", "ours"}
    for r in RECORDS:
        assert r["command"].endswith("--algo throughput") and r["printed"].startswith("thr(")
        precise = float(r["precise"].rsplit("= ", 1)[1])
        want = _expected(r)
        if want == math.inf:   # SDF3 prints INT_MAX (its TDTIME_MAX) or inf
            assert precise in (2147483647, math.inf)
        else:
            assert float(want) == precise
        assert r["round_trip"] == {**r["round_trip"], "same": True, "export_valid": True}


def test_every_sdf3_example_is_restated_and_every_own_graph_recorded():
    restated = {r["restated"] for r in RECORDS if r["base"] == "sdf3"}
    assert restated == {p.relative_to(ROOT).as_posix()
                        for p in (ROOT / "tests" / "data" / "sdf3_examples").glob("*.sdf")}
    assert {r["file"] for r in RECORDS if r["base"] == "ours"} == \
        {p.relative_to(ROOT).as_posix()
         for p in (ROOT / "tests" / "data" / "sdf3_oracle").glob("*.sdf")}


@pytest.mark.skipif(not os.environ.get("SDF3_EXAMPLES"),
                    reason="SDF3_EXAMPLES (an SDF3 source tree) is not set")
@pytest.mark.parametrize("record", [r for r in RECORDS if r["base"] == "sdf3"], ids=_id)
def test_restated_example_is_the_sdf3_graph(record):
    xml = dsl.read_sdf3(Path(os.environ["SDF3_EXAMPLES"]) / record["file"])
    (sdf,) = dsl.load_sdf(ROOT / record["restated"])
    assert {a: dict(x.attrs) for a, x in xml.actors.items()} == \
        {a: dict(x.attrs) for a, x in sdf.actors.items()}
    assert {c: (x.src, x.dst, x.prod, x.cons, x.delay, x.size)
            for c, x in xml.channels.items()} == \
        {c: (x.src, x.dst, x.prod, x.cons, x.delay, x.size) for c, x in sdf.channels.items()}


# ------------------------------------------------------------------ moc.timing against SDF3

@pytest.mark.parametrize("record", RECORDS, ids=_id)
def test_throughput_equals_sdf3(record, tmp_path):
    timing = _timing()
    _assert_same(timing.throughput(_graph(record, tmp_path)).throughput, _expected(record))


@pytest.mark.parametrize("record", RECORDS, ids=_id)
def test_round_trip_keeps_sdf3_throughput(record, tmp_path):
    timing = _timing()
    graph = _graph(record, tmp_path)
    (text,) = dsl.parse_sdf(dsl.format_sdf(graph))
    xml = tmp_path / "back.xml"
    dsl.write_sdf3(text, xml)
    _assert_same(timing.throughput(dsl.read_sdf3(xml)).throughput, _expected(record))


# ------------------------------------------------------------------ analyse against SDF3

@pytest.mark.parametrize("mode", [[], ["--no-simulate"]], ids=["default", "no-simulate"])
@pytest.mark.parametrize("record", RECORDS, ids=_id)
def test_analyse_equals_sdf3(record, mode, tmp_path, capsys):
    """Issue 33: ``mapeval analyse``, by default and with ``--no-simulate``, prints
    SDF3's throughput on every recorded graph."""
    from mapping.cli.main import main
    graph = _graph(record, tmp_path)
    path = tmp_path / "graph.xml"
    dsl.write_sdf3(graph, path)
    assert main(["analyse", str(path), "--json", *mode]) == 0
    document = json.loads(capsys.readouterr().out)
    got = math.inf if document["throughput"] in (math.inf, "inf", "Infinity") else \
        Fraction(document["exact"]["throughput"])
    _assert_same(got, _expected(record))
    assert (document["latency"] is None) == bool(mode)
