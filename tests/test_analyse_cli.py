"""``mapeval analyse`` (SPEC §13): JSON keys and hand-computed values on
``examples/timing``, the readable table, SDF3 ``.xml`` input, and bad input (exit 2, a
message, no traceback)."""
import json
from pathlib import Path

import pytest

from mapping.cli.commands.analyse import SHOWN_FIRINGS as SHOWN
from mapping.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
TIMING = ROOT / "examples" / "timing"
VIDEO, DUO, MAPS = (str(TIMING / n) for n in ("video.sdf", "duo.moa", "mappings.map"))
GRAPHS = ROOT.parent / "shared" / "data" / "graphs"

KEYS = {"throughput", "period", "critical_cycle", "latency", "buffers", "schedule",
        "application", "architecture", "mapping", "exec"}


def run_json(capsys, *argv):
    assert main(["analyse", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def fails(capsys, *argv):
    code = main(["analyse", *argv])
    captured = capsys.readouterr()
    assert code == 2, captured
    assert "Traceback" not in captured.err and captured.out == ""
    return captured.err


# video.sdf without an architecture (exec: src 1, filt 3, enc 4, snk 1; q = 1, 2, 1, 1).
# Self-timed: the two credits let src#0 and src#1 fire at once (0-1); the four tiles wait
# for filt, which its self-loop serializes: filt#0 1-4, filt#1 4-7, filt#2 7-10, ...
# without a gap (src#2, enabled by enc#0's credit at 11, delivers at 12 < 13). enc#0
# fires 7-11 on filt#0 and filt#1, snk#0 11-12. filt needs 2 x 3 = 6 per iteration and
# never waits: period 6, throughput 1/6, the critical cycle is filt's self-loop (the
# credit cycle src -> filt -> filt -> enc -> src needs (1 + 3 + 3 + 4) / 2 = 5.5 per
# iteration). Iteration 0 runs from src#0's start (0) to snk#0's end (12): latency 12.
# Buffers: both credits are on 'credit' at 0 (2); src#0 and src#1 each put 2 tiles at 1
# (4, before filt#0 takes one); filt#1 puts the second frame at 7 (2, then enc#0 takes
# both); 'out' and 'state' hold one token at most.
def test_unmapped_json_keys_and_hand_computed_values(capsys):
    doc = run_json(capsys, VIDEO)
    assert KEYS <= set(doc)
    assert (doc["application"], doc["architecture"], doc["mapping"], doc["exec"]) == \
        ("video", None, None, "exec")
    assert doc["throughput"] == pytest.approx(1 / 6)
    assert doc["period"] == pytest.approx(6)
    assert doc["exact"]["throughput"] == "1/6" and doc["exact"]["period"] == "6"
    assert doc["critical_cycle"] == ["filt"]
    assert doc["latency"] == pytest.approx(12)
    assert set(doc["buffers"]) == {"tiles", "state", "frames", "out", "credit"}
    assert doc["buffers"] == {"tiles": 4, "state": 1, "frames": 2, "out": 1, "credit": 2}
    # the schedule is the first iteration: q(a) firings of every actor a
    firings = {a: [(f["firing"], f["start"], f["end"]) for f in doc["schedule"][a]]
               for a in doc["schedule"]}
    assert firings == {"src": [("src#0", 0, 1)], "filt": [("filt#0", 1, 4), ("filt#1", 4, 7)],
                       "enc": [("enc#0", 7, 11)], "snk": [("snk#0", 11, 12)]}


def test_unmapped_table(capsys):
    assert main(["analyse", VIDEO]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("timing of 'video'")
    assert any(line.split()[:2] == ["throughput", "1/6"] for line in lines)
    assert any(line.split() == ["critical", "cycle", "filt"] for line in lines)
    assert "buffers" in out and "schedule" in out
    assert any(line.split()[:3] == ["filt", "filt#0", "1-4,"] for line in lines)


def test_no_simulate_gives_throughput_only(capsys):
    doc = run_json(capsys, VIDEO, "--no-simulate")
    assert doc["throughput"] == pytest.approx(1 / 6)
    assert doc["latency"] is None and doc["buffers"] is None and doc["schedule"] is None
    assert main(["analyse", VIDEO, "--no-simulate"]) == 0
    assert "not simulated" in capsys.readouterr().out


def test_mapped_json_keys(capsys):
    doc = run_json(capsys, VIDEO, DUO, MAPS, "--mapping", "split")
    assert KEYS | {"makespan"} <= set(doc)
    assert (doc["application"], doc["architecture"], doc["mapping"], doc["exec"]) == \
        ("video", "duo", "split", None)
    assert set(doc["schedule"]) <= {"big", "little", "bus"}
    for slots in doc["schedule"].values():
        for slot in slots:
            assert set(slot) >= {"firing", "actor", "start", "end"}
    # firings on one PE never overlap
    for pe in ("big", "little"):
        slots = sorted(doc["schedule"].get(pe, []), key=lambda s: s["start"])
        assert all(a["end"] <= b["start"] + 1e-12 for a, b in zip(slots, slots[1:]))
    assert doc["period"] == pytest.approx(1 / doc["throughput"])


# duo.moa: big takes 1 x quanta per firing, little 2 x quanta, the bus delays a token by
# its bytes (tiles 2, the others 1); firings on one PE never overlap.
# split (src, filt on big; enc, snk on little): big src#0 0-1, filt#0 1-4, filt#1 4-7;
# the frames cross the bus 4-5 and 7-8; little enc#0 8-16, snk#0 16-18: makespan 18.
# Repeated, little works 8 + 2 = 10 per iteration in its static order enc, snk; big 7;
# the credit cycle needs (1 + 3 + 3 + 1 + 8 + 1) / 2 = 8.5: period 10, on enc -> snk.
# filt_little (filt alone on little): src#0 0-1, tiles over the bus 1-3, filt#0 3-9,
# filt#1 9-15 on little, frames 15-16, enc#0 16-20, snk#0 20-21 on big: makespan 21.
# big fires src, enc, snk in that order every iteration, so the next src waits for snk:
# one token around src (1) + bus (2) + filt (12) + bus (1) + enc (4) + snk (1) = 21.
# all_big: one PE does 1 + 3 + 3 + 4 + 1 = 12 per iteration: makespan and period 12.
@pytest.mark.parametrize("mapping, makespan, period, critical", [
    ("split", 18, 10, ["enc", "snk"]),
    ("filt_little", 21, 21, ["src", "filt", "enc", "snk"]),
    ("all_big", 12, 12, ["src", "filt", "enc", "snk"])])
def test_mapped_makespan_and_period_by_hand(capsys, mapping, makespan, period, critical):
    doc = run_json(capsys, VIDEO, DUO, MAPS, "--mapping", mapping)
    assert doc["makespan"] == pytest.approx(makespan)
    assert doc["latency"] == pytest.approx(makespan)
    assert doc["period"] == pytest.approx(period)
    assert doc["throughput"] == pytest.approx(1 / period)
    assert sorted(doc["critical_cycle"]) == sorted(critical)


def test_mapped_schedule_of_split_by_hand(capsys):
    doc = run_json(capsys, VIDEO, DUO, MAPS, "--mapping", "split")
    bars = {e: [(s["actor"], s["start"], s["end"]) for s in slots]
            for e, slots in doc["schedule"].items()}
    assert bars["big"] == [("src", 0, 1), ("filt", 1, 4), ("filt", 4, 7)]
    assert bars["little"] == [("enc", 8, 16), ("snk", 16, 18)]
    assert bars["bus"] == [("filt", 4, 5), ("filt", 7, 8), ("enc", 16, 17)]
    assert main(["analyse", VIDEO, DUO, MAPS, "--mapping", "split"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "timing of mapping 'split' of 'video' on 'duo'"
    assert any(line.split() == ["makespan", "18"] for line in lines)
    assert any(line.split()[:3] == ["little", "enc#0", "8-16,"] for line in lines)


def test_inline_mapping_and_files_in_any_order(capsys):
    by_file = run_json(capsys, VIDEO, DUO, MAPS, "--mapping", "all_big")
    inline = run_json(capsys, "--map", "src=big,filt=big,enc=big,snk=big", DUO, VIDEO)
    assert inline["mapping"] == "inline"
    for key in ("throughput", "period", "makespan", "latency", "schedule"):
        assert inline[key] == by_file[key]


TINY_XML = """\
<?xml version="1.0"?>
<sdf3 type="sdf" version="1.0">
  <applicationGraph name="tiny">
    <sdf name="tiny" type="Tiny">
      <actor name="a" type="A">
        <port name="out" type="out" rate="2"/>
        <port name="in" type="in" rate="2"/>
      </actor>
      <actor name="b" type="B">
        <port name="in" type="in" rate="1"/>
        <port name="out" type="out" rate="1"/>
      </actor>
      <channel name="ab" srcActor="a" srcPort="out" dstActor="b" dstPort="in"/>
      <channel name="ba" srcActor="b" srcPort="out" dstActor="a" dstPort="in"
               initialTokens="2"/>
    </sdf>
    <sdfProperties>
      <actorProperties actor="a">
        <processor type="p" default="true"><executionTime time="2"/></processor>
      </actorProperties>
      <actorProperties actor="b">
        <processor type="p" default="true"><executionTime time="3"/></processor>
      </actorProperties>
    </sdfProperties>
  </applicationGraph>
</sdf3>
"""


# tiny: q = (a 1, b 2). a#0 takes both initial tokens (0-2); b has no self-loop, so b#0
# and b#1 fire at once (2-5); their two tokens enable a#1 at 5. One token round of the
# cycle a -> b -> a costs 2 + 3 = 5: period 5, throughput 1/5, latency 5.
def test_sdf3_xml_written_in_the_test(tmp_path, capsys):
    path = tmp_path / "tiny.xml"
    path.write_text(TINY_XML)
    doc = run_json(capsys, str(path))
    assert doc["application"] == "tiny"
    assert doc["exact"]["throughput"] == "1/5" and doc["period"] == pytest.approx(5)
    assert sorted(doc["critical_cycle"]) == ["a", "b"]
    assert doc["latency"] == pytest.approx(5)
    assert [(f["start"], f["end"]) for f in doc["schedule"]["b"][:2]] == [(2, 5), (2, 5)]


# small_cyclic.xml: a single-rate cycle a0 (38) -> a1 (10) -> a2 (37) -> a0 with one
# initial token (plus a0 -> a2): one firing of each at a time, 38 + 10 + 37 = 85 per
# iteration, throughput 1/85.
def test_sdf3_xml_from_the_shared_graphs(capsys):
    path = GRAPHS / "small_cyclic.xml"
    if not path.exists():
        pytest.skip(f"{path} is not on this machine")
    doc = run_json(capsys, str(path))
    assert doc["exact"]["throughput"] == "1/85"
    assert sorted(doc["critical_cycle"]) == ["a0", "a1", "a2"]
    assert doc["latency"] == pytest.approx(85)


def test_exec_attribute_is_chosen_with_exec(tmp_path, capsys):
    app = tmp_path / "two.sdf"
    app.write_text("sdf two {\n actor a [exec = 1, slow = 4]\n actor b [exec = 2, slow = 8]\n"
                   " a -> b\n b -> a [delay = 1]\n}\n")
    assert run_json(capsys, str(app))["exact"]["period"] == "3"
    doc = run_json(capsys, str(app), "--exec", "slow")
    assert doc["exec"] == "slow" and doc["exact"]["period"] == "12"


# a cycle whose firings take no time repeats in no time: period 0, throughput inf,
# whether the times are the actors' own or those of PEs whose every cost is 0
def test_a_period_of_0_has_one_throughput_with_or_without_an_architecture(tmp_path,
                                                                          capsys):
    paths = {}
    for name, text in (
            ("zero.sdf", "sdf zero {\n actor a [exec = 0]\n actor b [exec = 0]\n a -> b\n"
                         " b -> a [delay = 1]\n}\n"),
            ("free.moa", "moa free {\n pe p [time = lsla(alpha = 0)]\n"
                         " cn bus [time = lsla(alpha = 0)]\n p -- bus\n}\n"),
            ("one.map", "mapping one { a -> p; b -> p }\n")):
        paths[name] = str(tmp_path / name)
        (tmp_path / name).write_text(text)
    alone = run_json(capsys, paths["zero.sdf"])
    mapped = run_json(capsys, *paths.values())
    assert alone["period"] == mapped["period"] == 0
    assert alone["throughput"] == mapped["throughput"] == "inf"
    assert main(["analyse", *paths.values()]) == 0
    assert "throughput      inf iterations per time unit" in capsys.readouterr().out
    assert main(["eval", *paths.values(), "--aggregate", "period", "--json"]) == 0
    evaluated = json.loads(capsys.readouterr().out)
    assert evaluated["value"] == 0 and evaluated["throughput"] == "inf"
    assert main(["eval", *paths.values(), "--aggregate", "period"]) == 0
    assert "throughput: inf iterations per time unit" in capsys.readouterr().out


def test_help_text(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["analyse", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "critical cycle" in out and "list scheduling" in out
    assert "examples:" in out and "mapeval analyse examples/timing/video.sdf" in out


# --- bad input: exit 2, a message, no traceback -------------------------------------

def test_a_mapping_without_an_architecture(capsys):
    err = fails(capsys, VIDEO, MAPS, "--mapping", "split")
    assert "needs an architecture" in err
    err = fails(capsys, VIDEO, "--map", "src=big")
    assert "needs an architecture" in err


def test_exec_with_an_architecture(capsys):
    err = fails(capsys, VIDEO, DUO, MAPS, "--mapping", "split", "--exec", "slow")
    assert "--exec" in err and "PE's time cost" in err


def test_no_simulate_with_an_architecture(capsys):
    err = fails(capsys, VIDEO, DUO, MAPS, "--mapping", "split", "--no-simulate")
    assert "--no-simulate" in err


def test_unknown_parameter_and_missing_mapping(capsys):
    assert "unknown parameter 'N'" in fails(capsys, VIDEO, "-p", "N=3")
    err = fails(capsys, VIDEO, DUO, MAPS)
    assert "--mapping NAME" in err and "all_big" in err


def test_wrong_extension_and_missing_file(tmp_path, capsys):
    assert "expected a file ending in" in fails(capsys, str(tmp_path / "x.txt"))
    assert "no such file" in fails(capsys, str(tmp_path / "x.sdf"))


def test_deadlock_names_the_actors(tmp_path, capsys):
    app = tmp_path / "dead.sdf"
    app.write_text("sdf dead {\n actor a [exec = 1]\n actor b [exec = 1]\n a -> b\n"
                   " b -> a\n}\n")
    err = fails(capsys, str(app))
    assert "deadlock" in err.lower() and "a" in err and "b" in err


def test_missing_exec_names_the_actors(tmp_path, capsys):
    app = tmp_path / "noexec.sdf"
    app.write_text("sdf noexec {\n actor first [exec = 1]\n actor second\n"
                   " actor third\n first -> second\n second -> third\n}\n")
    err = fails(capsys, str(app))
    assert "exec" in err and "second" in err and "third" in err
    err = fails(capsys, str(app), "--exec", "wcet")
    assert "wcet" in err and "first" in err


def test_a_limit_names_itself(capsys):
    err = fails(capsys, VIDEO, "--limit", "firings=2")
    assert "firings" in err and "--limit firings=N" in err


def test_the_states_limit_leaves_buffers_unexplored_and_says_so(capsys):
    # issue 33: past the limit the default still answers; the method says what is missing
    # (the firings' precedences answer first, issue 42: within 10 firings they cannot)
    assert main(["analyse", VIDEO, "--limit", "states=2", "--limit", "firings=10",
                 "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert "buffers not explored" in document["method"]
    assert "--limit states=N" in document["method"]
    assert document["latency"] is not None and document["schedule"]


def test_table_counts_the_firings_it_does_not_show(tmp_path, capsys):
    """The table shows the first firings of a row and how many more the JSON holds
    (it converts only those shown): a two-actor cycle of 20 and 21 firings."""
    path = tmp_path / "many.sdf"
    path.write_text("sdf many {\n  actor a [exec = 1]\n  actor b [exec = 2]\n"
                    "  channel ab : a -> b [prod = 21, cons = 20]\n"
                    "  channel ba : b -> a [prod = 20, cons = 21, delay = 420]\n}\n")
    doc = run_json(capsys, str(path))
    assert main(["analyse", str(path)]) == 0
    out = capsys.readouterr().out
    for actor in ("a", "b"):
        count = len(doc["schedule"][actor])
        assert count > SHOWN
        line = next(x for x in out.splitlines() if x.startswith(f"  {actor}  {actor}#0"))
        assert line.endswith(f"... ({count - SHOWN} more)")
        assert line.count(f"{actor}#") == SHOWN


# a cyclo-static graph (the phases' path): a's two phases (1 and 3) feed b (2.25, so the
# times are quarters); b's tokens go back to a, two initially. q = (2, 2): 4 firings.
CSDF = ("sdf c {\n actor a [exec = [1, 3]]; actor b [exec = 2.25]\n"
        " channel x : a -> b [prod = [1, 1]]\n channel y : b -> a [delay = 2] }\n")


@pytest.mark.parametrize("graph", ["video", "csdf"])
def test_the_schedule_limit_leaves_the_rows_out_and_says_so(graph, tmp_path, capsys):
    # issue 42: past the limit schedule the rows are not made; everything else as before
    path = VIDEO
    if graph == "csdf":
        path = str(tmp_path / "c.sdf")
        Path(path).write_text(CSDF)
    whole = run_json(capsys, path)
    firings = sum(len(rows) for rows in whole["schedule"].values())
    assert firings == 5 if graph == "video" else firings == 4
    assert whole["latency"] == max(r["end"] for rows in whole["schedule"].values()
                                   for r in rows)
    cut = run_json(capsys, path, "--limit", "schedule=3")
    assert cut["schedule"] is None
    why = (f"schedule left out: the first iteration of '{whole['application']}' has "
           f"{firings} firings, more than the limit schedule = 3; raise it with "
           "--limit schedule=N")
    assert cut["method"] == f"{whole['method']}; {why}"
    assert cut["schedule_missing"] == why and whole["schedule_missing"] is None
    kept = ("schedule", "method", "schedule_missing")
    assert {k: v for k, v in cut.items() if k not in kept} == \
        {k: v for k, v in whole.items() if k not in kept}
    # at exactly the firings of an iteration the schedule is given
    assert run_json(capsys, path, "--limit", f"schedule={firings}") == whole
    # the table: the method says it, and no word of --no-simulate
    assert main(["analyse", path, "--limit", "schedule=3"]) == 0
    text = capsys.readouterr().out
    assert "schedule left out" in text and "--no-simulate" not in text
    assert f"latency         {whole['latency']}" in text
    # a Gantt chart needs the rows: exit 2 with the reason
    out = tmp_path / "g.png"
    assert main(["plot", "schedule", path, "--limit", "schedule=3", "-o", str(out)]) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and not out.exists()
    assert "no schedule to draw: schedule left out" in captured.err
    assert "raise it with --limit schedule=N" in captured.err


def test_an_sdf_iteration_past_the_limit_firings_keeps_its_throughput(tmp_path, capsys):
    """As a cyclo-static one (issue 42: graphs of Kiter's generator with 5.6·10^17
    firings an iteration were refused): A (time 2, one firing at a time) feeds B 1 token
    a firing, B takes 3: q = (3, 1), 4 firings, over the limit 3; A's three firings
    take 6, the period."""
    app = tmp_path / "past.sdf"
    app.write_text("sdf past {\n actor A [exec = 2]\n actor B [exec = 1]\n"
                   " A -> A [delay = 1]\n A -> B [prod = 1, cons = 3]\n"
                   " B -> B [delay = 1]\n}\n")
    assert main(["analyse", str(app), "--limit", "firings=3", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["exact"]["period"] == "6"
    assert document["latency"] is None and document["schedule"] is None
    assert "schedule not computed" in document["method"]
    assert "--limit firings=N" in document["method"]
