"""SDF3 XML import/export against the real files of ../shared/data/graphs, DOT, JSON."""
import json
from pathlib import Path

import pytest

import dsl
from dsl.errors import ParseError
from dsl_compare import assert_same
from moc import check_deadlock, repetition_vector

GRAPHS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "graphs"
XML_FILES = sorted(GRAPHS.glob("*.xml")) if GRAPHS.is_dir() else []


def need(name):
    path = GRAPHS / name
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    return path


def test_jpeg_encoder_is_multi_rate():
    g = dsl.read_sdf3(need("desyde_d_jpegEnc1.sdf.xml"))
    assert g.name == "d_jpegEnc1"
    assert list(g.actors) == ["getImage", "CC", "DCT", "Huffman", "CS", "writeImage"]
    assert g.channels["chJ0_1"].prod == 16 and g.channels["chJ0_3"].cons == 16
    assert all(c.size == 128 for c in g.channels.values())
    assert g.actors["CC"].attrs["quanta"] == 1101
    assert g.actors["CC"].attrs["exec_proc"] == 1101
    assert "quanta" not in g.actors["Huffman"].attrs  # no properties given in the file
    q = repetition_vector(g.bind())
    # the README: DCT and Huffman fire 16 times per image
    assert q == {"getImage": 1, "CC": 1, "DCT": 16, "Huffman": 16, "CS": 1, "writeImage": 1}


def test_small_cyclic_initial_tokens_and_sizes():
    g = dsl.read_sdf3(need("small_cyclic.xml"))
    assert g.channels["ch1"].delay == 1 and g.channels["ch0"].delay == 0
    assert g.channels["ch0"].size == 67
    assert g.actors["a0"].attrs == {"quanta": 38, "exec": 38, "exec_proc_0": 38,
                                    "allowed": "proc_0"}
    check_deadlock(g.bind())


@pytest.mark.parametrize("path", XML_FILES, ids=lambda p: p.name)
def test_every_file_reads_is_consistent_and_round_trips(path, tmp_path):
    g = dsl.read_sdf3(path)
    assert g.actors and g.channels
    q = repetition_vector(g.bind())
    assert all(v >= 1 for v in q.values())
    out = tmp_path / "out.xml"
    dsl.write_sdf3(g, out)
    assert_same([g], [dsl.read_sdf3(out)])
    # and through the text format
    assert_same([g], dsl.parse_sdf(dsl.format_sdf(g)))


def test_write_parametric_graph_binds_defaults(tmp_path):
    (g,) = dsl.parse_sdf("sdf p { param n = 4; actor a [quanta = 2 * n]; actor b\n"
                         "a -> b [prod = n, size = 8] }")
    out = tmp_path / "p.xml"
    dsl.write_sdf3(g, out)
    back = dsl.read_sdf3(out)
    assert back.channels["a->b"].prod == 4 and back.channels["a->b"].size == 8
    assert back.actors["a"].attrs["quanta"] == 8
    assert [a for a in dsl.load(out)][0].name == "p"


def test_malformed_xml(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<sdf3>\n<applicationGraph>\n</sdf3>\n")
    with pytest.raises(ParseError) as info:
        dsl.read_sdf3(bad)
    assert info.value.origin[0] == str(bad) and info.value.origin[1] == 3
    other = tmp_path / "other.xml"
    other.write_text("<root/>")
    with pytest.raises(ParseError, match="not an SDF3 file"):
        dsl.read_sdf3(other)


def test_dot_of_graph_and_architecture():
    (g,) = dsl.parse_sdf('sdf g { actor a [quanta = 3]; actor "b c"\n'
                         'a -> "b c" [prod = 2, cons = 3, delay = 1] }')
    dot = dsl.to_dot(g)
    assert dot.startswith('digraph "g" {')
    assert '"a" -> "b c" [taillabel="2", headlabel="3", label="delay=1"];' in dot
    (a,) = dsl.parse_moa("moa m { pe p [time = lsla(alpha = 1)]; cn c; p -- c }")
    dot = dsl.to_dot(a)
    assert '"p" [shape=box' in dot and '"c" [shape=ellipse' in dot and '"p" -- "c";' in dot
    with pytest.raises(TypeError):
        dsl.to_dot(42)


def test_json_export():
    (g,) = dsl.parse_sdf("sdf g { param n = 2; actor a [quanta = n]; actor b; a -> b [prod = 2] }")
    data = dsl.to_json(g)
    assert data["kind"] == "sdf" and data["params"] == {"n": 2}
    assert data["actors"][0] == {"name": "a", "attrs": {"quanta": "n"}}
    assert data["channels"][0]["prod"] == 2
    (a,) = dsl.parse_moa("moa m { type T [time = lsla(alpha = 1)]\n pe p[0..1] : T\n"
                         "pe r [time = roofline(peak = 1, bandwidth = inf)]; cn c; p[*] -- c }")
    data = dsl.to_json(a)
    assert data["elements"][0]["array"] == ["p", 0]
    assert data["elements"][0]["costs"]["time"] == {"model": "lsla", "args": {"alpha": 1}}
    assert data["elements"][2]["costs"]["time"]["args"]["bandwidth"] == "inf"
    (m,) = dsl.parse_map("mapping x { a -> p[0]; channel a -> b via c }")
    assert dsl.to_json([m]) == [{"kind": "map", "name": "x", "assignment": {"a": "p[0]"},
                                 "routes": {"a->b": ["c"]}}]
    json.dumps(dsl.to_json(a.bind()), allow_nan=False)


UNTIMED = """\
<?xml version="1.0"?>
<sdf3 type="csdf" version="1.0">
  <applicationGraph name="untimed">
    <csdf name="untimed" type="untimed">
      <actor name="a" type="A"><port name="o" type="out" rate="1,2"/>
        <port name="i" type="in" rate="1,2"/></actor>
      <actor name="b" type="B"><port name="i" type="in" rate="3"/>
        <port name="o" type="out" rate="3"/></actor>
      <actor name="c" type="C"><port name="i" type="in" rate="1,2"/>
        <port name="o" type="out" rate="2,1"/></actor>
      <channel name="ab" srcActor="a" srcPort="o" dstActor="b" dstPort="i"/>
      <channel name="bc" srcActor="b" srcPort="o" dstActor="c" dstPort="i"/>
      <channel name="ca" srcActor="c" srcPort="o" dstActor="a" dstPort="i"
               initialTokens="6"/>
    </csdf>
    <csdfProperties>
      <actorProperties actor="a">
        <processor type="p0" default="true"><executionTime time="0,4"/></processor>
      </actorProperties>
      <actorProperties actor="b">
        <processor type="default" default="true"><executionTime time="0"/></processor>
      </actorProperties>
    </csdfProperties>
  </applicationGraph>
</sdf3>
"""


def stated_times(xml_text):
    """actor -> the time of its default processor, as the file states it (None: no
    default processor, or one without an executionTime)."""
    import xml.etree.ElementTree as ET
    root = ET.fromstring(xml_text)
    out = {a.get("name"): None for a in root.iter("actor")}
    for ap in root.iter("actorProperties"):
        for proc in ap.iter("processor"):
            et = proc.find("executionTime")
            if proc.get("default") == "true" and et is not None:
                out[ap.get("actor")] = et.get("time")
    return out


def test_zero_times_are_stated_and_the_round_trip_is_exact(tmp_path):
    """An actor that takes no time (c has no processor, b only SDF3's 'default' at 0)
    is written with an explicit time 0 (Kiter fails on an actor without one) and reads
    back as it was read: exec = 0, no quanta, no exec_default."""
    source = tmp_path / "untimed.xml"
    source.write_text(UNTIMED)
    g = dsl.read_sdf3(source)
    assert repetition_vector(g.bind()) == {"a": 2, "b": 1, "c": 2}
    assert dict(g.actors["b"].attrs) == {"exec": 0}
    assert dict(g.actors["c"].attrs) == {"exec": 0}
    assert g.actors["a"].attrs["exec"] == (0, 4) and g.actors["a"].attrs["quanta"] == (0, 4)
    first = tmp_path / "first.xml"
    dsl.write_sdf3(g, first)
    assert stated_times(first.read_text()) == {"a": "0,4", "b": "0", "c": "0,0"}
    again = dsl.read_sdf3(first)
    assert_same([g], [again])
    second = tmp_path / "second.xml"
    dsl.write_sdf3(again, second)
    assert second.read_text() == first.read_text()


def test_an_sdf_actor_without_a_time_is_written_at_time_0(tmp_path):
    (g,) = dsl.parse_sdf("sdf z { actor a [exec = 2, quanta = 2]; actor b [exec = 0]\n"
                         "actor c; a -> b [prod = 2]; b -> c; c -> a [cons = 2, delay = 2] }")
    out = tmp_path / "z.xml"
    dsl.write_sdf3(g, out)
    assert stated_times(out.read_text()) == {"a": "2", "b": "0", "c": "0"}
    back = dsl.read_sdf3(out)
    assert {a: dict(x.attrs) for a, x in back.actors.items()} == \
        {"a": {"quanta": 2, "exec": 2, "exec_default": 2}, "b": {"exec": 0}, "c": {"exec": 0}}
