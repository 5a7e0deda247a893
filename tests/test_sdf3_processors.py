"""``mapeval import sdf3 --processors keep|ignore|map:OLD=NEW`` and Kiter's
initialisation phases (issue 40, item 3): processor types kept, dropped or renamed; the
mocasin graphs (type ``proc_0``) mapped onto the Odroid example without editing a file;
``a;b`` rates and times read (or, where they disagree, refused at their line and column)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import dsl
from dsl.errors import ParseError
from dsl.importers.sdf3 import parse_processors, read_sdf3
from mapping.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
GRAPHS = ROOT / ".." / "shared" / "data" / "graphs"
#: mocasin's generated graphs (type proc_0) and the DeSyDe ones it ships (type proc)
MOCASIN = sorted(GRAPHS.glob("*.xml")) if GRAPHS.is_dir() else []
ODROID = ROOT / "examples" / "odroid" / "odroid.moa"

TWO_TYPES = """<?xml version="1.0"?>
<sdf3 type="sdf" version="1.0">
  <applicationGraph name="two">
    <sdf name="two" type="T">
      <actor name="x" type="X"><port name="o" type="out" rate="2"/></actor>
      <actor name="y" type="Y"><port name="i" type="in" rate="1"/></actor>
      <channel name="xy" srcActor="x" srcPort="o" dstActor="y" dstPort="i"/>
    </sdf>
    <sdfProperties>
      <actorProperties actor="x">
        <processor type="proc_0" default="true"><executionTime time="10"/></processor>
        <processor type="proc_1"><executionTime time="4"/></processor>
      </actorProperties>
      <actorProperties actor="y">
        <processor type="proc_1" default="true"><executionTime time="6"/></processor>
      </actorProperties>
    </sdfProperties>
  </applicationGraph>
</sdf3>
"""


@pytest.fixture
def two(tmp_path):
    path = tmp_path / "two.xml"
    path.write_text(TWO_TYPES)
    return path


def test_keep_ignore_and_map(two):
    kept = read_sdf3(two).actors["x"].attrs
    assert kept == {"quanta": 10, "exec": 10, "exec_proc_0": 10, "exec_proc_1": 4,
                    "allowed": "proc_0 proc_1"}
    ignored = read_sdf3(two, "ignore")
    assert dict(ignored.actors["x"].attrs) == {"quanta": 10, "exec": 10}
    assert dict(ignored.actors["y"].attrs) == {"quanta": 6, "exec": 6}
    mapped = read_sdf3(two, {"proc_0": "A7", "proc_1": "A15"}).actors["x"].attrs
    assert mapped == {"quanta": 10, "exec": 10, "exec_A7": 10, "exec_A15": 4,
                      "allowed": "A7 A15"}
    partly = read_sdf3(two, {"proc_1": "gpu"}).actors["x"].attrs
    assert partly["allowed"] == "proc_0 gpu"


@pytest.mark.parametrize("text, want", [
    ("keep", "keep"), ("ignore", "ignore"), ("map:proc_0=A15", {"proc_0": "A15"}),
    ("map:a=B, c = D", {"a": "B", "c": "D"})])
def test_processors_option(text, want):
    assert parse_processors(text) == want


@pytest.mark.parametrize("text", ["", "map:", "map:proc_0", "map:=A", "map:a=", "drop",
                                  "map:a=B,a=C", "map:a=1x", "map:a=b c", "map:a=é"])
def test_bad_processors_option(text):
    with pytest.raises(ParseError, match="--processors|not a name"):
        parse_processors(text)


def test_cli_bad_processors_option_exits_2(two, capsys):
    assert main(["import", "sdf3", str(two), "--processors", "map:proc_0"]) == 2
    assert "expected keep, ignore or map:OLD=NEW" in capsys.readouterr().err


@pytest.mark.skipif(not MOCASIN, reason="the shared mocasin graphs are absent")
@pytest.mark.parametrize("path", MOCASIN, ids=lambda p: p.name)
def test_mocasin_graph_maps_onto_odroid_with_types_ignored(path, tmp_path, capsys):
    sdf = tmp_path / "app.sdf"
    # as written, the graph's 'proc_0' (or 'proc') is no PE or type of the board
    assert main(["import", "sdf3", str(path), "-o", str(sdf)]) == 0
    assert main(["search", str(sdf), str(ODROID), "--budget", "50"]) == 2
    assert "allowed names unknown PE or type 'proc" in capsys.readouterr().err
    assert main(["import", "sdf3", str(path), "--processors", "ignore", "-o", str(sdf)]) == 0
    (graph,) = dsl.load_sdf(sdf)
    assert all("allowed" not in a.attrs for a in graph.actors.values())
    mapping = tmp_path / "little.map"
    mapping.write_text("mapping little {\n" + "".join(
        f"    {a} -> little[0]\n" for a in graph.actors) + "}\n")
    capsys.readouterr()
    assert main(["eval", str(sdf), str(ODROID), str(mapping), "--json"]) == 0
    one_core = json.loads(capsys.readouterr().out)["value"]
    assert main(["search", str(sdf), str(ODROID), "--time-limit", "30", "--json"]) == 0
    best = json.loads(capsys.readouterr().out)
    # an optimal search over both clusters: never worse than the whole graph on one LITTLE
    assert best["optimal"]
    assert 0 < best["value"] <= one_core * (1 + 1e-12)


KITER_RATE = """<?xml version="1.0"?>
<sdf3 type="csdf" version="1.0">
  <applicationGraph name="k">
    <csdf name="k" type="K">
      <actor name="src" type="S">
        <port name="o" type="out" rate="2"/>
      </actor>
      <actor name="warm" type="W">
        <port name="i" type="in" rate="0;1,1"/>
      </actor>
      <channel name="c" srcActor="src" srcPort="o" dstActor="warm" dstPort="i"/>
    </csdf>
  </applicationGraph>
</sdf3>
"""

KITER_TIME = """<?xml version="1.0"?>
<sdf3 type="csdf" version="1.0">
  <applicationGraph name="k">
    <csdf name="k" type="K">
      <actor name="a" type="A"><port name="o" type="out" rate="1"/></actor>
      <actor name="b" type="B"><port name="i" type="in" rate="1"/></actor>
      <channel name="c" srcActor="a" srcPort="o" dstActor="b" dstPort="i"/>
    </csdf>
    <csdfProperties>
      <actorProperties actor="b">
        <processor type="p" default="true">
          <executionTime time="5;2"/>
        </processor>
      </actorProperties>
    </csdfProperties>
  </applicationGraph>
</sdf3>
"""


def test_kiter_initialisation_phase_in_a_rate_is_read(tmp_path, capsys):
    """Read as the actor's initialisation phases (tests/test_initial_phases.py);
    ``import`` writes them as ``[a; b]`` values, which read back as the same phases."""
    path = tmp_path / "warm.xml"
    path.write_text(KITER_RATE)
    graph = read_sdf3(path)
    init = graph.actors["warm"].initial_phases
    assert init.count == 1 and init.cons == {"c": (0,)} and init.attrs["exec"] == (0,)
    assert main(["import", "sdf3", str(path)]) == 0
    out = capsys.readouterr()
    assert "    actor warm [exec = [0; 0]]\n" in out.out
    assert "    channel c : src -> warm [prod = 2, cons = [0; 1, 1]]\n" in out.out
    again = dsl.loads_sdf(out.out)[0]
    assert again.actors["warm"].initial_phases == init
    assert again.actors["src"].initial_phases is None
    assert again.channels == graph.channels


def test_kiter_initialisation_phase_in_a_time_alone_is_refused_by_name(tmp_path):
    """The time gives one initialisation phase, the actor's port none."""
    path = tmp_path / "time.xml"
    path.write_text(KITER_TIME)
    with pytest.raises(ParseError, match=r"actor 'b' has 1 initialisation phase by "
                       r"execution time '5;2' .* but no initialisation phase by rate '1' "
                       r"of port 'i'") as err:
        read_sdf3(path, "ignore")
    assert err.value.origin[1:] == (6, 32)


def test_fuzz_findings_non_ascii_type_and_nan_time(tmp_path, capsys):
    """Found by the fuzzer: a processor type 'é' gave the attribute exec_é, which no
    .sdf can hold (exit 1); a time 'nan' reached the printer (exit 1)."""
    text = TWO_TYPES.replace('type="proc_1"', 'type="é"', 1)
    path = tmp_path / "u.xml"
    path.write_text(text, encoding="utf-8")
    assert read_sdf3(path).actors["x"].attrs["exec__"] == 4
    assert main(["import", "sdf3", str(path)]) == 0
    path.write_text(TWO_TYPES.replace('time="4"', 'time="nan"'), encoding="utf-8")
    assert main(["import", "sdf3", str(path)]) == 2
    assert "processor 'proc_1': not a finite number: 'nan'" in capsys.readouterr().err


CSDF_TWO_TYPES = """<?xml version="1.0"?>
<sdf3 type="csdf" version="1.0">
<applicationGraph name="g">
<csdf name="g" type="G">
<actor name="a" type="A"><port name="o" type="out" rate="1,1"/><port name="i" type="in" rate="1,0"/></actor>
<actor name="b" type="B"><port name="i" type="in" rate="2"/><port name="o" type="out" rate="2"/></actor>
<channel name="ab" srcActor="a" srcPort="o" dstActor="b" dstPort="i"/>
<channel name="ba" srcActor="b" srcPort="o" dstActor="a" dstPort="i" initialTokens="2"/>
</csdf>
<csdfProperties>
<actorProperties actor="a">
<processor type="proc_0" default="true"><executionTime time="1,2"/></processor>
<processor type="proc_1"><executionTime time="3,4,5"/></processor>
</actorProperties>
</csdfProperties>
</applicationGraph>
</sdf3>
"""


def test_a_number_of_phases_is_named_in_the_files_own_terms(tmp_path, capsys):
    """SDF3's cyclo-static generator, given two processor types, writes a time list of
    another length than the actor's rates: the error names that execution time and
    where it is written, not the attribute it would have become (``exec_proc_1``)."""
    path = tmp_path / "g.xml"
    path.write_text(CSDF_TWO_TYPES)
    assert main(["analyse", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:13:26: error: actor 'a' has 2 phases by rate '1,1' of port 'o' of " \
        "actor 'a' but 3 by execution time '3,4,5' of processor type 'proc_1'" in err
    assert "exec_proc_1" not in err and "Traceback" not in err
    path.write_text(CSDF_TWO_TYPES.replace('rate="1,0"', 'rate="1,0,0"'))
    with pytest.raises(Exception, match=r"2 phases by rate '1,1' of port 'o' of actor "
                       r"'a' but 3 by rate '1,0,0' of port 'i'") as err:
        read_sdf3(path)
    assert err.value.origin[1:] == (5, 64)
    # with the types ignored, only the default's time is read: two phases, as the rates
    path.write_text(CSDF_TWO_TYPES)
    assert read_sdf3(path, "ignore").actors["a"].attrs["exec"] == (1, 2)
