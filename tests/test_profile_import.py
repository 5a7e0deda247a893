"""Profile import (Kim & Edwards) and the accelerator-store limit study example."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

import dsl
from mapping.cli.main import main
from dsl.errors import ParseError
from mapping.evaluation.reference import evaluate
from dsl.importers.profile import identifier_names, import_profile
from moc import check_deadlock, repetition_vector

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "accelerator_store"

# A hand-written run: main calls a, b, a; each a calls helper; b calls x.y.
FUNCTION = """\
# id name
1 main
2 a
3 helper
4 b
5 a
6 helper
7 x.y
"""
SUBCALLS = """\
1: 2 4 5
2: 3
4: 7
5: 6
"""
ICOUNT = """\
1 10
2 100
3 1000
4 200
5 100
6 1000
7 50
"""
XFERS = """\
2 1 8      # main -> a
1 2 4      # a -> main (back to an earlier function: delay 1)
3 2 16     # a -> helper
2 3 32     # helper -> a
5 2 64     # a (2) -> a (5): self-loop
6 3 128    # helper (3) -> helper (6): self-loop
4 5 256    # a -> b
7 4 512    # b -> x.y
4 7 1024   # x.y -> b
4 1 2      # main -> b, twice: adds up
4 1 2
6 1 0      # main -> helper, 0 bytes: no channel
"""
FUNCTIONS_CSV = """\
function,instructions
main,10
a,200
helper,2000
b,200
x.y,50
"""
TRANSFERS_CSV = """\
producer,consumer,bytes
main,a,8
a,main,4
a,helper,16
helper,a,32
a,a,64
helper,helper,128
a,b,256
b,x.y,512
x.y,b,1024
main,b,2
main,b,2
main,helper,0
"""

EXCLUSIVE_ACTORS = {"main": 10, "a": 200, "helper": 2000, "b": 200, "x_y": 50}
# (src, dst): (size, delay)
EXCLUSIVE_CHANNELS = {
    ("main", "a"): (8, 0), ("a", "main"): (4, 1), ("a", "helper"): (16, 0),
    ("helper", "a"): (32, 1), ("a", "a"): (64, 1), ("helper", "helper"): (128, 1),
    ("a", "b"): (256, 0), ("b", "x_y"): (512, 0), ("x_y", "b"): (1024, 1),
    ("main", "b"): (4, 0),
}
# --inclusive, default entries = the callees of main: a (with helper) and b (with x.y).
INCLUSIVE_ACTORS = {"main": 10, "a": 100 + 1000 + 100 + 1000, "b": 200 + 50}
INCLUSIVE_CHANNELS = {
    ("main", "a"): (8, 0), ("a", "main"): (4, 1),
    ("a", "a"): (16 + 32 + 64 + 128, 1),          # a <-> helper, a -> a, helper -> helper
    ("a", "b"): (256, 0), ("b", "b"): (512 + 1024, 1), ("main", "b"): (4, 0),
}


def write(directory: Path, files: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(textwrap.dedent(text))
    return directory


@pytest.fixture
def logs(tmp_path):
    return write(tmp_path / "run", {"function": FUNCTION, "subcalls": SUBCALLS,
                                    "icount": ICOUNT, "xfers": XFERS})


@pytest.fixture
def csvs(tmp_path):
    return write(tmp_path / "run_csv", {"functions.csv": FUNCTIONS_CSV,
                                        "transfers.csv": TRANSFERS_CSV})


def shape(graph):
    actors = {a.name: a.attrs["ops"] for a in graph.actors.values()}
    for a in graph.actors.values():
        assert a.attrs["quanta"] == a.attrs["ops"]
    channels = {}
    for ch in graph.channels.values():
        assert (ch.prod, ch.cons) == (1, 1)
        channels[ch.src, ch.dst] = (ch.size, ch.delay)
    return actors, channels


def assert_runs(graph):
    q = repetition_vector(graph)
    assert set(q.values()) == {1}                     # single-rate
    check_deadlock(graph, q)                          # one iteration completes


# ------------------------------------------------------------------ the Python function

def test_logs_exclusive(logs):
    result = import_profile(logs)
    assert shape(result.graph) == (EXCLUSIVE_ACTORS, EXCLUSIVE_CHANNELS)
    assert list(result.graph.actors) == list(EXCLUSIVE_ACTORS)      # order of first call
    assert result.graph.name == "run"
    assert result.renamed == {"x_y": "x.y"}
    assert_runs(result.graph)


def test_csv_equals_exclusive_logs(csvs):
    result = import_profile(csvs, name="prog")
    assert shape(result.graph) == (EXCLUSIVE_ACTORS, EXCLUSIVE_CHANNELS)
    assert result.graph.name == "prog"
    assert_runs(result.graph)


def test_logs_inclusive_default_entries(logs):
    result = import_profile(logs, inclusive=True)
    assert shape(result.graph) == (INCLUSIVE_ACTORS, INCLUSIVE_CHANNELS)
    assert_runs(result.graph)


def test_inclusive_outermost_entry_owns(logs):
    # b and x.y are both entries; x.y's only invocation runs under b, so b (the outermost)
    # absorbs it; a and helper stay exclusive.
    actors, channels = shape(import_profile(logs, entries=["b", "x.y"]).graph)
    assert actors == {"main": 10, "a": 200, "helper": 2000, "b": 250}
    assert channels[("b", "b")] == (1536, 1)
    # the whole run in one actor: every transfer is its own traffic
    actors, channels = shape(import_profile(logs, entries=["main"]).graph)
    assert actors == {"main": 2460}
    assert channels == {("main", "main"): (2048, 1)}


def test_inclusive_needs_call_tree(logs, csvs):
    (logs / "subcalls").unlink()
    with pytest.raises(ParseError, match="subcalls"):
        import_profile(logs, inclusive=True)
    with pytest.raises(ParseError, match="call tree"):
        import_profile(csvs, inclusive=True)
    (logs / "subcalls").write_text(SUBCALLS)
    with pytest.raises(ParseError, match="nosuch"):
        import_profile(logs, entries=["nosuch"])


def test_identifier_names():
    names = identifier_names(["foo.bar", "foo_bar", "std::vector<int>::at", "1st", "actor",
                              "ok", "foo-bar", "metric", "façade"])
    # metric is a keyword of .moa, as the other keywords of the languages
    assert names == {"foo.bar": "foo_bar_2", "foo_bar": "foo_bar",
                     "std::vector<int>::at": "std__vector_int___at", "1st": "_1st",
                     "actor": "actor_", "ok": "ok", "foo-bar": "foo_bar_3",
                     "metric": "metric_", "façade": "fa_ade"}


# ------------------------------------------------------------------ errors: file:line

@pytest.mark.parametrize("file, text, line, col, message", [
    ("icount", "1 10\n2 lots\n", 2, 3, "non-negative integer"),
    ("icount", "1 10\n# comment\n9 5\n", 3, 1, "unknown invocation '9'"),
    ("icount", "1 10\n1 11\n", 2, 1, "second instruction count"),
    ("xfers", "2 1 8\n2 1\n", 2, 1, "CONSUMER PRODUCER BYTES"),
    ("xfers", "2 1 8\n2 77 8\n", 2, 3, "unknown producer invocation '77'"),
    ("xfers", "2 1 -8\n", 1, 5, "non-negative integer"),
    ("subcalls", "1: 2 4 5\n2: 3\n4: 3\n", 3, 4, "two callers"),
    ("subcalls", "1 2 4\n", 1, 1, "ID: CHILD"),
    ("function", "1 main\n2 a\n1 b\n", 3, 1, "listed twice"),
    ("function", "1 main extra\n", 1, 8, "ID NAME"),
])
def test_log_errors_name_file_line(logs, file, text, line, col, message, capsys):
    (logs / file).write_text(text)
    with pytest.raises(ParseError, match=message) as info:
        import_profile(logs)
    assert info.value.origin == (str(logs / file), line, col)
    assert main(["import", "profile", str(logs)]) == 2
    err = capsys.readouterr().err
    assert f"{logs / file}:{line}:{col}: error:" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("file, text, line, message", [
    ("transfers.csv", "producer,consumer,bytes\nmain,a,8\nmain,zz,1\n", 3, "unknown consumer"),
    ("transfers.csv", "producer,consumer\nmain,a\n", 1, "missing column bytes"),
    ("functions.csv", "function,instructions\nmain,10\na,ten\n", 3, "non-negative integer"),
    ("functions.csv", "function,instructions\nmain,10\nmain,3\n", 3, "listed twice"),
])
def test_csv_errors_name_file_line(csvs, file, text, line, message, capsys):
    (csvs / file).write_text(text)
    with pytest.raises(ParseError, match=message) as info:
        import_profile(csvs)
    assert info.value.origin[:2] == (str(csvs / file), line)
    assert main(["import", "profile", str(csvs)]) == 2
    assert f"{csvs / file}:{line}:" in capsys.readouterr().err


def test_not_a_profile(tmp_path, capsys):
    assert main(["import", "profile", str(tmp_path)]) == 2
    assert "functions.csv" in capsys.readouterr().err
    assert main(["import", "profile", str(tmp_path / "missing")]) == 2


# ------------------------------------------------------------------ the command line

def test_cli_writes_sdf_that_parses_back(logs, tmp_path):
    out = tmp_path / "app.sdf"
    assert main(["import", "profile", str(logs), "-o", str(out), "--inclusive",
                 "--name", "prog"]) == 0
    (graph,) = dsl.load_sdf(out)
    assert graph.name == "prog"
    assert shape(graph.bind()) == (INCLUSIVE_ACTORS, INCLUSIVE_CHANNELS)


def test_cli_stdout_and_renamed_comment(logs, capsys):
    assert main(["import", "profile", str(logs / "function")]) == 0   # a file of the dir
    text = capsys.readouterr().out
    assert "# actor x_y is function x.y" in text
    (graph,) = dsl.parse_sdf(text, "<stdout>")
    assert shape(graph.bind()) == (EXCLUSIVE_ACTORS, EXCLUSIVE_CHANNELS)


def test_cli_entry_option(logs, capsys):
    assert main(["import", "profile", str(logs), "--entry", "b,x.y"]) == 0
    (graph,) = dsl.parse_sdf(capsys.readouterr().out, "<stdout>")
    assert list(graph.actors) == ["main", "a", "helper", "b"]


def test_cli_refuses_csv_inclusive_and_non_sdf_output(csvs, tmp_path, capsys):
    assert main(["import", "profile", str(csvs), "--inclusive"]) == 2
    assert main(["import", "profile", str(csvs), "-o", str(tmp_path / "x.txt")]) == 2
    assert "Traceback" not in capsys.readouterr().err


# ------------------------------------------------------------------ the example

def test_example_files_are_fresh_imports():
    """decoder.sdf and decoder_exclusive.sdf are what the README's commands produce."""
    inclusive = import_profile(EXAMPLE / "profile", inclusive=True, name="decoder").graph
    (written,) = dsl.load_sdf(EXAMPLE / "decoder.sdf")
    assert shape(written.bind()) == shape(inclusive)
    exclusive = import_profile(EXAMPLE / "profile_csv", name="decoder_exclusive").graph
    assert shape(exclusive) == shape(import_profile(EXAMPLE / "profile").graph)
    (written,) = dsl.load_sdf(EXAMPLE / "decoder_exclusive.sdf")
    assert shape(written.bind()) == shape(exclusive)


def example_time(arch, mapping, **params):
    (app,) = dsl.load_sdf(EXAMPLE / "decoder.sdf")
    (architecture,) = dsl.load_moa(EXAMPLE / arch)
    chosen = {m.name: m for m in dsl.load_map(EXAMPLE / "mappings.map")}[mapping]
    return evaluate(app, architecture, chosen, params=params)


# Hand count of decoder.sdf (inclusive import of profile/): instructions
#   main 2000, read_file 50000, huffman_decode 100000, idct_block 200000,
#   color_convert 80000, write_file 30000                         -> 462000
# bytes: 16+16+16 (main <-> read_file, write_file) + 16448 + 16384 + 12288 + 65536
#   + 196864 (idct local) + 65536 (idct -> color) + 32768 + 49152 + 49152 -> 504176
# t_op = t_byte = 1 ns, so all on the CPU: T0 = (462000 + 504176) ns = 966176 ns.
T0 = 966176e-9


def test_example_all_cpu_and_unaccelerated_idct():
    assert example_time("private.moa", "all_cpu").value == pytest.approx(T0, rel=1e-12)
    # Moving the IDCT to acc1 with no speed-up changes where bytes go, not the time.
    result = example_time("private.moa", "idct")
    assert result.value == pytest.approx(T0, rel=1e-12)
    elements = {e.name: e for e in result.elements}
    assert elements["store1"].quanta == 196864                   # idct's local traffic
    assert elements["bus"].quanta == 65536 + 65536              # huffman->idct, idct->color


def test_example_memory_wall():
    # Study (i): only computation accelerated by s: T(s) = T0 - 200000 ns * (1 - 1/s);
    # the speed-up T0/T(s) saturates at 966176 / 766176 = 1.261.
    for s in (1, 10, 100, 1e6):
        value = example_time("private.moa", "idct", s_comp=s).value
        assert value == pytest.approx(T0 - 200000e-9 * (1 - 1 / s), rel=1e-12)
    limit = T0 / example_time("private.moa", "idct", s_comp=1e12).value
    assert limit == pytest.approx(966176 / 766176, rel=1e-9)
    assert 1.26 < limit < 1.262


def test_example_local_beats_global():
    # Study (ii), computation at its limit: an infinitely fast store removes the 196864
    # local bytes (T = 569312 ns, speed-up 1.697); an infinitely fast bus only the
    # 131072 global bytes (T = 635104 ns, speed-up 1.521).
    local = example_time("private.moa", "idct", s_comp=1e12, s_local=1e12).value
    global_ = example_time("private.moa", "idct", s_comp=1e12, s_global=1e12).value
    assert local == pytest.approx(569312e-9, rel=1e-9)
    assert global_ == pytest.approx(635104e-9, rel=1e-9)
    assert local < global_


def test_example_private_versus_shared():
    # Study (iii), IDCT and colour conversion at the limit of computation and local
    # communication: private stores leave idct -> color (65536 B) on the bus,
    # T = 966176 - 280000 - 196864 - 32768 = 456544 ns; the shared store keeps it local,
    # T = 391008 ns. The gap is those 65536 B at bus speed, and vanishes with the bus.
    limit = dict(s_comp=1e12, s_local=1e12)
    private = example_time("private.moa", "idct_color", **limit).value
    shared = example_time("shared.moa", "idct_color", **limit).value
    assert private == pytest.approx(456544e-9, rel=1e-9)
    assert shared == pytest.approx(391008e-9, rel=1e-9)
    fast_bus = dict(limit, s_global=1e12)
    assert example_time("private.moa", "idct_color", **fast_bus).value == pytest.approx(
        example_time("shared.moa", "idct_color", **fast_bus).value, rel=1e-6)


def test_example_cli_eval_json(capsys):
    assert main(["eval", str(EXAMPLE / "decoder.sdf"), str(EXAMPLE / "shared.moa"),
                 str(EXAMPLE / "mappings.map"), "--mapping", "idct_color", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["value"] == pytest.approx(T0, rel=1e-12)


def test_example_sweep_memory_wall(tmp_path):
    """The README's study (i) through 'mapeval sweep': saturation at 1.261."""
    import csv
    out = tmp_path / "memory_wall.csv"
    assert main(["sweep", str(EXAMPLE / "decoder.sdf"), str(EXAMPLE / "private.moa"),
                 str(EXAMPLE / "mappings.map"), "--mapping", "idct",
                 "--param", "s_comp=1:1000:4:log", "-o", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert [float(r["s_comp"]) for r in rows] == pytest.approx([1, 10, 100, 1000])
    speedups = [T0 / float(r["value"]) for r in rows]
    assert speedups == pytest.approx([1.0, 966176 / 786176, 966176 / 768176,
                                      966176 / 766376], rel=1e-9)


# ------------------------------------------------------------------ export / import sdf3

def test_export_json_and_dot(capsys):
    app = str(EXAMPLE / "decoder.sdf")
    assert main(["export", "json", app]) == 0
    document = json.loads(capsys.readouterr().out)
    assert "idct_block" in json.dumps(document)
    assert main(["export", "dot", app]) == 0
    assert "idct_block" in capsys.readouterr().out
    assert main(["export", "dot", str(EXAMPLE / "private.moa")]) == 0
    assert "acc1" in capsys.readouterr().out


def test_export_refuses_wrong_kind_and_input_overwrite(capsys):
    assert main(["export", "sdf3", str(EXAMPLE / "private.moa")]) == 2
    app = str(EXAMPLE / "decoder.sdf")
    assert main(["export", "json", app, "-o", app]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_sdf3_round_trip(tmp_path):
    xml, back = tmp_path / "decoder.xml", tmp_path / "back.sdf"
    assert main(["export", "sdf3", str(EXAMPLE / "decoder.sdf"), "-o", str(xml)]) == 0
    assert main(["import", "sdf3", str(xml), "-o", str(back)]) == 0
    (graph,) = dsl.load_sdf(back)
    (original,) = dsl.load_sdf(EXAMPLE / "decoder.sdf")
    channels = lambda g: sorted((c.src, c.dst, c.size, c.delay)  # noqa: E731
                                for c in g.bind().channels.values())
    assert list(graph.actors) == list(original.actors)
    assert channels(graph) == channels(original)
