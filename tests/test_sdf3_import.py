"""SDF3 import/export of per-processor execution times (SPEC §12): ``exec_<type>``, the
default processor (the last marked default, as SDF3), ``allowed`` from the processor
list, the round trip, and searches that respect the lists with ``lookup`` costs."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import dsl
from mapping.evaluation.batch import BatchEvaluator
from mapping.cli.main import main
from mapping.semantics.problem import bind_problem
from mapping.search import search

GRAPHS = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "graphs"
XML_FILES = sorted(GRAPHS.glob("*.xml")) if GRAPHS.is_dir() else []

MULTI = """<?xml version="1.0"?>
<sdf3 type="sdf" version="1.0">
  <applicationGraph name="multi">
    <sdf name="multi" type="M">
      <actor name="x" type="X"><port name="o" type="out" rate="2"/></actor>
      <actor name="y" type="Y"><port name="i" type="in" rate="1"/>
        <port name="o" type="out" rate="1"/></actor>
      <actor name="z" type="Z"><port name="i" type="in" rate="2"/></actor>
      <channel name="xy" srcActor="x" srcPort="o" dstActor="y" dstPort="i"/>
      <channel name="yz" srcActor="y" srcPort="o" dstActor="z" dstPort="i"/>
    </sdf>
    <sdfProperties>
      <actorProperties actor="x">
        <processor type="A7" default="true"><executionTime time="10"/></processor>
        <processor type="A15" default="true"><executionTime time="4"/></processor>
        <processor type="gpu"><executionTime time="2"/></processor>
      </actorProperties>
      <actorProperties actor="y">
        <processor type="A7"><executionTime time="6"/></processor>
      </actorProperties>
      <actorProperties actor="z">
        <processor type="A15"><executionTime time="5"/></processor>
        <processor type="arm-v9" default="true"><executionTime time="1.5"/></processor>
      </actorProperties>
      <channelProperties channel="xy"><tokenSize sz="8"/></channelProperties>
      <channelProperties channel="yz"><tokenSize sz="4"/></channelProperties>
    </sdfProperties>
  </applicationGraph>
</sdf3>
"""


@pytest.fixture
def multi(tmp_path):
    path = tmp_path / "multi.xml"
    path.write_text(MULTI)
    return path


def test_exec_times_default_and_allowed(multi):
    g = dsl.read_sdf3(multi)
    # x: two processors marked default; SDF3 keeps the last one (A15, 4)
    assert dict(g.actors["x"].attrs) == {"quanta": 4, "exec": 4, "exec_A7": 10,
                                         "exec_A15": 4, "exec_gpu": 2,
                                         "allowed": "A7 A15 gpu"}
    # y: the only processor is the default
    assert dict(g.actors["y"].attrs) == {"quanta": 6, "exec": 6, "exec_A7": 6,
                                         "allowed": "A7"}
    # z: a type that is no identifier is made one, as in exec_<type>
    assert dict(g.actors["z"].attrs) == {"quanta": 1.5, "exec": 1.5, "exec_A15": 5,
                                         "exec_arm_v9": 1.5, "allowed": "A15 arm_v9"}


def test_round_trip_keeps_times_default_and_lists(multi, tmp_path):
    g = dsl.read_sdf3(multi)
    out = tmp_path / "back.xml"
    dsl.write_sdf3(g, out)
    back = dsl.read_sdf3(out)
    for a in g.actors:
        assert dict(back.actors[a].attrs) == dict(g.actors[a].attrs)
    # exactly one default per actor, the processor of time exec
    root = ET.parse(out).getroot()
    for ap in root.iter("actorProperties"):
        marked = [p for p in ap.findall("processor") if p.get("default") == "true"]
        assert len(marked) == 1
        assert float(marked[0].find("executionTime").get("time")) == \
            g.actors[ap.get("actor")].attrs["exec"]
    # and through the .sdf text: import -> .sdf -> export -> import
    (text_graph,) = dsl.parse_sdf(dsl.format_sdf(g))
    dsl.write_sdf3(text_graph, out)
    again = dsl.read_sdf3(out)
    assert {a: dict(x.attrs) for a, x in again.actors.items()} == \
        {a: dict(x.attrs) for a, x in g.actors.items()}


def test_export_writes_allowed_types_without_times(tmp_path):
    (g,) = dsl.parse_sdf('sdf g { actor a [exec = 3, exec_A7 = 3, exec_A15 = 3, '
                         'allowed = "A7 A15 dsp"]; actor b [quanta = 2] }')
    out = tmp_path / "g.xml"
    dsl.write_sdf3(g, out)
    back = dsl.read_sdf3(out)
    # equal times: one default (the last of time exec), the list kept, dsp without a time
    assert dict(back.actors["a"].attrs) == {"quanta": 3, "exec": 3, "exec_A7": 3,
                                            "exec_A15": 3, "allowed": "A7 A15 dsp"}
    # an actor without per-type times: a processor 'default' that constrains nothing
    assert dict(back.actors["b"].attrs) == {"quanta": 2, "exec": 2, "exec_default": 2}


def test_export_keeps_keyword_types_and_drops_what_import_cannot_read_back(tmp_path):
    # a type may be a keyword (it is only read as exec_<type> and a word of allowed);
    # a non-ASCII word of allowed is no name, which import would read back as '_'
    (g,) = dsl.parse_sdf('sdf g { actor a [exec = 3, exec_pe = 3, allowed = "pe type é"] }')
    out = tmp_path / "g.xml"
    dsl.write_sdf3(g, out)
    back = dsl.read_sdf3(out)
    assert dict(back.actors["a"].attrs) == {"quanta": 3, "exec": 3, "exec_pe": 3,
                                            "allowed": "pe type"}


def _independent(path):
    """actor -> (exec_<type> times, processor types, time of the last default), read
    with ElementTree directly."""
    root = ET.parse(path).getroot()
    for el in root.iter():
        if isinstance(el.tag, str) and "}" in el.tag:
            el.tag = el.tag.split("}", 1)[1]
    out = {}
    for ap in root.iter("actorProperties"):
        times, types, default = {}, [], None
        procs = ap.findall("processor")
        for p in procs:
            types.append(p.get("type"))
            t = float(p.find("executionTime").get("time"))
            times[p.get("type")] = t
            if p.get("default") == "true" or len(procs) == 1:
                default = t
        out[ap.get("actor")] = (times, types, default)
    return out


@pytest.mark.skipif(not XML_FILES, reason=f"{GRAPHS} is absent")
@pytest.mark.parametrize("path", XML_FILES, ids=lambda p: p.name)
def test_every_shared_graph_keeps_times_and_processor_lists(path, tmp_path):
    g = dsl.read_sdf3(path)
    want = _independent(path)
    assert want
    for actor, (times, types, default) in want.items():
        attrs = g.actors[actor].attrs
        assert {k[5:]: v for k, v in attrs.items() if k.startswith("exec_")} == times
        assert attrs["allowed"].split() == types
        assert attrs["exec"] == default == attrs["quanta"]
    for a in set(g.actors) - set(want):       # actors without properties stay free
        assert "allowed" not in g.actors[a].attrs
    out = tmp_path / "back.xml"
    dsl.write_sdf3(g, out)
    # an actor without a time gets SDF3's time for it, 0, stated (Kiter needs it)
    untimed = {a: ({"default": 0.0}, ["default"], 0.0) for a in set(g.actors) - set(want)}
    assert _independent(out) == {**want, **untimed}
    assert {a: dict(x.attrs) for a, x in dsl.read_sdf3(out).actors.items()} == \
        {a: dict(x.attrs) for a, x in g.actors.items()}


def test_cli_import_writes_exec_and_allowed(multi, tmp_path, capsys):
    out = tmp_path / "multi.sdf"
    assert main(["import", "sdf3", str(multi), "-o", str(out)]) == 0
    (g,) = dsl.load_sdf(out)
    assert g.actors["x"].attrs["allowed"] == "A7 A15 gpu"
    assert g.actors["x"].attrs["exec"] == 4
    xml = tmp_path / "again.xml"
    assert main(["export", "sdf3", str(out), "-o", str(xml)]) == 0
    assert dict(dsl.read_sdf3(xml).actors["z"].attrs) == dict(g.actors["z"].attrs)


MOA = """moa board {
    type A7  [time = lookup()]
    type A15 [time = lookup()]
    type gpu [time = lookup()]
    type arm_v9 [time = lookup()]
    pe little[0..1] : A7
    pe big : A15
    pe g : gpu
    pe arm : arm_v9
    cn bus [time = lsla(alpha = 0.01)]
    little[*] -- bus; big -- bus; g -- bus; arm -- bus
}"""


def _types(arch, assignment):
    return {a: arch.elements[p].type_name for a, p in assignment.items()}


@pytest.mark.parametrize("strategy", ["exhaustive", "anneal", "greedy"])
def test_search_on_imported_graph_respects_processor_lists(multi, strategy):
    g = dsl.read_sdf3(multi)
    arch = dsl.parse_moa(MOA)[0]
    problem = bind_problem(g, arch)
    for aggregate in ("sum", "max"):
        res = search(problem, "time", aggregate, strategy=strategy, budget=300, seed=1)
        types = _types(arch, res.mapping)
        for actor, t in types.items():
            assert t in g.actors[actor].attrs["allowed"].split()
        assert np.isfinite(res.value)
    # by hand (sum): x fires once (cheapest allowed: gpu 2), y twice (A7 only: 2·6),
    # z once (arm_v9 1.5); on three PEs both channels cross the bus: x->y one token of
    # 2·8 = 16 bytes (0.16), y->z two of 4 bytes (0.08): 2 + 12 + 1.5 + 0.24 = 15.74
    res = search(problem, "time", "sum", strategy="exhaustive")
    assert res.value == pytest.approx(15.74, rel=1e-12)


@pytest.mark.skipif(not (GRAPHS / "medium_cyclic.xml").is_file(), reason="no shared graphs")
def test_search_on_shared_graph_keeps_every_actor_on_its_type():
    g = dsl.read_sdf3(GRAPHS / "medium_cyclic.xml")
    # the other type is far cheaper: only the processor lists keep actors off it
    arch = dsl.parse_moa("""moa m {
        type proc_0 [time = lookup()]
        type fast [time = lookup(default = 0)]
        pe p[0..1] : proc_0
        pe q : fast
        cn bus [time = lsla(alpha = 1e-3)]
        p[*] -- bus; q -- bus
    }""")[0]
    problem = bind_problem(g, arch)
    ev = BatchEvaluator(problem, "time", "max")
    assert ev.vectorized
    for strategy in ("anneal", "exact"):
        res = search(problem, "time", "max", strategy=strategy, budget=2000, seed=0)
        assert set(_types(arch, res.mapping).values()) == {"proc_0"}
        assert res.value == pytest.approx(ev.value(res.mapping))


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sdf3_lookup"


@pytest.mark.parametrize("aggregate, want", [("max", 96.0), ("sum", 248.44)])
def test_example_exact_equals_exhaustive_by_hand(aggregate, want):
    g = dsl.read_sdf3(EXAMPLE / "audio.xml")
    assert g.actors["fft"].attrs["exec"] == 12          # the last marked default: dsp
    (text,) = dsl.load_sdf(EXAMPLE / "audio.sdf")
    assert {a: dict(x.attrs) for a, x in text.actors.items()} == \
        {a: dict(x.attrs) for a, x in g.actors.items()}
    arch = dsl.load_moa(EXAMPLE / "board.moa")[0]
    problem = bind_problem(g, arch)
    ex = search(problem, "time", aggregate, strategy="exhaustive")
    milp = search(problem, "time", aggregate, strategy="exact")
    # by hand: see the example's README
    assert ex.value == pytest.approx(want, rel=1e-12)
    assert milp.value == pytest.approx(want, rel=1e-9)
    for res in (ex, milp):
        for actor, t in _types(arch, res.mapping).items():
            assert t in g.actors[actor].attrs["allowed"].split()


def test_a_missing_file_is_named_as_missing_not_as_an_encoding(tmp_path):
    """The reader's own errors are ValueErrors, as expat's encoding errors are: the file
    read before the parse keeps its message."""
    from dsl.errors import ParseError
    with pytest.raises(ParseError) as exc:
        dsl.read_sdf3(tmp_path / "absent.xml")
    assert "no such file" in str(exc.value)
    assert "encoding" not in str(exc.value)
