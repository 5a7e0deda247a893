"""The command-line defects of issue 8, each reproduced as a user meets it."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mapping.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
ODROID = [str(ROOT / "examples/odroid" / n) for n in ("stereo.sdf", "odroid.moa", "mappings.map")]
TWO_IP = [str(ROOT / "examples/gables" / n) for n in ("two_ip.sdf", "two_ip.moa", "two_ip.map")]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


# ---------------------------------------------------------------- files among options
def test_a_file_after_an_option_is_accepted(capsys):
    sdf, moa, maps = ODROID
    code, out, _ = run(capsys, "eval", sdf, "--aggregate", "max", moa, maps, "--mapping",
                       "mixed", "--json")
    assert code == 0
    after = json.loads(out)
    code, out, _ = run(capsys, "eval", sdf, moa, maps, "--mapping", "mixed", "--aggregate",
                       "max", "--json")
    assert code == 0 and json.loads(out)["value"] == after["value"]


def test_the_readmes_fidelity_usage_with_a_map_after_measured(capsys):
    gsla = ROOT / "examples/gsla"
    code, out, err = run(capsys, "fidelity", gsla / "opencl.sdf", gsla / "gpu.moa",
                         gsla / "measurements.csv", "--measured", "time_s",
                         gsla / "mappings.map", "--mapping", "gpu_offload", "--json")
    assert code == 0, err
    assert json.loads(out)["n"] == 360


def test_files_among_options_of_a_plot_kind(tmp_path, capsys):
    sdf, moa, maps = TWO_IP
    png = tmp_path / "load.png"
    code, _, _ = run(capsys, "plot", "mapping", sdf, "-p", "f=0.75", moa, "-o", png, maps)
    assert code == 0 and png.stat().st_size > 0


# ---------------------------------------------------------------- version, overview
def test_version_and_overview(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("mapeval ")
    code, out, _ = run(capsys)
    assert code == 0 and "mapeval eval" in out and "mapeval plot" in out


@pytest.mark.parametrize("command", ["plot", "export", "import"])
def test_a_command_without_its_kind_is_a_usage_error(capsys, command):
    with pytest.raises(SystemExit) as exit_:
        main([command])
    assert exit_.value.code == 2
    assert "choose" in capsys.readouterr().err


def test_help_does_not_import_heavy_modules():
    code = ("import sys, contextlib, io\n"
            "from mapping.cli.main import main\n"
            "for argv in (['--help'], ['plot', '--help'], ['search', '--help']):\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        try: main(argv)\n"
            "        except SystemExit: pass\n"
            "heavy = [m for m in ('matplotlib', 'scipy') if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})


# ---------------------------------------------------------------- search
def chain(tmp_path, actors=8, pes=4):
    """A chain on distinct PEs: 4^8 = 65,536 mappings, none interchangeable."""
    sdf = tmp_path / "chain.sdf"
    sdf.write_text("sdf chain {\n" + "".join(f"  actor a{i} [quanta = {i + 1}]\n"
                                             for i in range(actors))
                   + "".join(f"  a{i} -> a{i + 1} [size = {3 * i + 1}]\n"
                             for i in range(actors - 1)) + "}\n")
    moa = tmp_path / "quad.moa"
    moa.write_text("moa quad {\n  aggregate = max\n"
                   + "".join(f"  pe p{k} [time = lsla(alpha = {k + 1}, beta = {0.5 * k})]\n"
                             for k in range(pes))
                   + "  cn bus [time = lsla(alpha = 0.25)]\n"
                   + "".join(f"  p{k} -- bus\n" for k in range(pes)) + "}\n")
    return sdf, moa


def test_auto_with_a_budget_smaller_than_the_space_runs_a_heuristic(tmp_path, capsys):
    sdf, moa = chain(tmp_path)
    code, out, err = run(capsys, "search", sdf, moa, "--budget", "20000", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["strategy"] == "portfolio" and doc["budget"] == 20000
    assert doc["evaluations"] <= 20000
    code, out, _ = run(capsys, "search", sdf, moa, "--budget", "70000", "--json")
    assert code == 0 and json.loads(out)["strategy"] == "exhaustive"


def test_python_search_defaults_to_auto(tmp_path):
    import dsl
    from mapping.semantics.problem import bind_problem
    from mapping.search import search
    sdf, moa = chain(tmp_path, actors=4)
    problem = bind_problem(dsl.load_sdf(sdf)[0], dsl.load_moa(moa)[0], {})
    result = search(problem)
    assert result.strategy == "exhaustive" and result.optimal
    assert search(problem, strategy="auto").value == result.value


def test_auto_builds_the_search_once(tmp_path, monkeypatch):
    import dsl
    from mapping.semantics.problem import bind_problem
    from mapping.search import engine, search
    calls = []
    prepare = engine.prepare
    monkeypatch.setattr(engine, "prepare", lambda *a, **k: calls.append(1) or prepare(*a, **k))
    sdf, moa = chain(tmp_path, actors=4)
    search(bind_problem(dsl.load_sdf(sdf)[0], dsl.load_moa(moa)[0], {}), strategy="auto")
    assert len(calls) == 1


def test_exact_search_stopped_by_the_time_limit_says_so(tmp_path, capsys, monkeypatch):
    # HiGHS stopping at the limit with an incumbent depends on the machine's speed: the
    # solver's answer is simulated, the report is what is tested
    from mapping.search import exact
    from mapping.search.strategies import STRATEGIES

    def stopped(setup, time_limit=None):
        row = np.zeros(len(setup.space.actors), dtype=np.intp)
        value = float(setup.objectives.evaluators[0].evaluate(row[None, :])[0])
        return exact.ExactResult(value, row, False, exact.STATUS[1], None, limited=True,
                                 message="the MILP solver stopped at its time limit of 0.5 s")
    monkeypatch.setitem(STRATEGIES._entries, "exact", stopped)
    sdf, moa = chain(tmp_path, actors=4)
    # the simulated solver is the MILP's (auto would run CP-SAT first where installed)
    code, out, err = run(capsys, "search", sdf, moa, "--strategy", "exact", "--engine", "milp",
                         "--time-limit", "0.5", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["optimal"] is False and "time limit of 0.5 s" in doc["stopped"]
    code, out, _ = run(capsys, "search", sdf, moa, "--strategy", "exact", "--engine", "milp",
                       "--time-limit", "0.5")
    assert code == 0 and "stopped: the MILP solver stopped at its time limit of 0.5 s" in out
    assert "not proven optimal" in out


# ---------------------------------------------------------------- check
BAD_SDF = "sdf bad {\n  actor a\n  actor a\n}\n"
DEADLOCK = "sdf dead {\n  actor a\n  actor b\n  a -> b\n  b -> a\n}\n"


def test_check_json_reports_every_file(tmp_path, capsys):
    bad = tmp_path / "bad.sdf"
    bad.write_text(BAD_SDF)
    dead = tmp_path / "dead.sdf"
    dead.write_text(DEADLOCK)
    code, out, _ = run(capsys, "check", ODROID[0], bad, dead, ODROID[1], "--json")
    assert code == 2
    files = json.loads(out)["files"]
    assert [Path(e["file"]).name for e in files] == ["stereo.sdf", "bad.sdf", "dead.sdf",
                                                     "odroid.moa"]
    good, broken, deadlocked, moa = files
    assert good["deadlock"] is False and "error" not in good
    assert "duplicate actor 'a'" in broken["error"]["message"]
    assert broken["error"]["line"] == 3 and broken["error"]["column"] >= 1
    assert deadlocked["deadlock"] is True and "error" in deadlocked
    assert moa["kind"] == "moa"


def test_sdf3_xml_is_an_application_for_check_and_eval(tmp_path, capsys):
    xml = tmp_path / "stereo.xml"
    assert main(["export", "sdf3", ODROID[0], "-o", str(xml)]) == 0
    capsys.readouterr()
    code, out, err = run(capsys, "check", xml, "--json")
    assert code == 0, err
    (entry,) = json.loads(out)["files"]
    assert entry["kind"] == "sdf" and entry["repetitions"]["cost"] == 60
    code, out, err = run(capsys, "eval", xml, ODROID[1], ODROID[2], "--mapping", "mixed",
                         "--json")
    assert code == 0, err
    code, ref, _ = run(capsys, "eval", *ODROID, "--mapping", "mixed", "--json")
    assert json.loads(out)["value"] == pytest.approx(json.loads(ref)["value"])


# ---------------------------------------------------------------- JSON convention
def test_infinity_is_spelled_alike_in_every_json_document(tmp_path, capsys):
    moa = tmp_path / "arch.moa"
    moa.write_text("moa m {\n  pe p [time = roofline(peak = 1, bandwidth = inf)]\n}\n")
    code, out, _ = run(capsys, "export", "json", moa)
    assert code == 0
    exported = json.loads(out)["elements"][0]["costs"]["time"]["args"]["bandwidth"]
    sdf = tmp_path / "app.sdf"
    sdf.write_text("sdf g {\n  actor a [quanta = 1e300]\n}\n")
    arch = tmp_path / "inf.moa"
    # parameters must be finite; their product may still overflow to infinity
    arch.write_text("moa m {\n  pe p [time = lsla(alpha = 1e300)]\n}\n")
    code, out, err = run(capsys, "eval", sdf, arch, "--map", "a=p", "--json")
    assert code == 0, err
    value = json.loads(out)["value"]
    assert exported == value == "inf"


# ---------------------------------------------------------------- outputs
def test_output_through_a_symlink_replaces_its_target(tmp_path, capsys):
    target = tmp_path / "real.json"
    target.write_text("old\n")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert run(capsys, "export", "json", ODROID[2], "-o", link)[0] == 0
    assert link.is_symlink() and json.loads(target.read_text())[0]["kind"] == "map"


def test_output_to_a_fifo_writes_through_it(tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        assert run(capsys, "export", "dot", ODROID[1], "-o", fifo)[0] == 0
        out, _ = reader.communicate(timeout=20)
    finally:
        reader.kill()
        reader.wait()
    assert out.startswith(b"graph") and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_output_to_a_descriptor_writes_through_a_redirection(tmp_path):
    # `mapeval export dot ... -o /dev/fd/1 > FILE`: FILE gets the text and stays the file
    # the shell opened (the system's /dev/stdout is not used: a defect would replace it)
    captured = tmp_path / "captured.txt"
    with open(captured, "w") as out:
        out.write("before\n")
        out.flush()
        inode = os.fstat(out.fileno()).st_ino
        subprocess.run([sys.executable, "-m", "mapping.cli.main", "export", "dot", ODROID[1],
                        "-o", "/dev/fd/1"], stdout=out, check=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    text = captured.read_text()
    assert text.startswith("before\ngraph") and os.stat(captured).st_ino == inode


@pytest.fixture
def device(tmp_path):
    """A private null device (never the system's: a defect would replace it)."""
    path = tmp_path / "null"
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs root")
    return path


def test_output_to_a_character_device_is_not_replaced(device, capsys):
    before = os.stat(device)
    assert run(capsys, "export", "dot", ODROID[1], "-o", device)[0] == 0
    after = os.stat(device)
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_outputs_that_are_refused(tmp_path, capsys):
    (tmp_path / "dir.dot").mkdir()
    code, _, err = run(capsys, "export", "dot", ODROID[1], "-o", tmp_path / "dir.dot")
    assert code == 2 and "not a regular file" in err and "dir.dot" in err
    other = tmp_path / "notes.txt"
    other.write_text("keep me\n")
    code, _, err = run(capsys, "export", "json", ODROID[1], "-o", other)
    assert code == 2 and ".json" in err and other.read_text() == "keep me\n"
    code, _, err = run(capsys, "sweep", *TWO_IP, "--range", "f=0:1:2", "-o", other)
    assert code == 2 and ".csv" in err and other.read_text() == "keep me\n"
    link = tmp_path / "app_link.json"
    link.symlink_to(ODROID[2])
    code, _, err = run(capsys, "export", "json", ODROID[2], "-o", link)
    assert code == 2 and "input" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_directory_names_the_users_path(tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        code, _, err = run(capsys, "export", "dot", ODROID[1], "-o", ro / "arch.dot")
    finally:
        ro.chmod(0o755)
    assert code == 2 and str(ro / "arch.dot") in err and "/." not in err.split("'")[1]


def test_write_error_names_the_users_path(tmp_path, monkeypatch):
    # as root a read-only directory is writable: simulate the refusal
    from mapping.errors import InputError
    from mapping.output import write_atomically

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied", str(tmp_path / ".x.csv.abc"))
    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(InputError) as info:
        write_atomically(tmp_path / "x.csv", "a\n", suffixes=(".csv",))
    monkeypatch.undo()
    assert str(tmp_path / "x.csv") in str(info.value) and ".x.csv.abc" not in str(info.value)


# ---------------------------------------------------------------- sweep
def test_a_huge_sweep_is_refused_with_its_limit(capsys):
    code, out, err = run(capsys, "sweep", *TWO_IP, "--range", "f=0:1:100000",
                         "--range", "Bpeak=1:10:100000")
    assert code == 2 and out == ""
    assert "more than the limit sweep = 1000000; raise it with --limit sweep=" in err
    code, out, err = run(capsys, "sweep", *TWO_IP, "--range", "f=0:1:1000000",
                         "--range", "Bpeak=1:10:100000", "--range", "x=1:2:1000000")
    assert code == 2 and "--limit sweep=" in err


def test_the_sweep_limit_can_be_lowered_and_raised(capsys):
    code, _, err = run(capsys, "sweep", *TWO_IP, "--range", "f=0:1:3", "--limit", "sweep=2")
    assert code == 2 and "--limit sweep=3" in err
    code, out, err = run(capsys, "sweep", *TWO_IP, "--range", "f=0:1:3", "--limit", "sweep=3")
    assert code == 0 and len(out.splitlines()) == 4
    from mapping.evaluation.sweep import MAX_POINTS
    assert MAX_POINTS == 1_000_000          # restored after the run
    code, _, err = run(capsys, "sweep", *TWO_IP, "--range", "f=0:1:3", "--limit", "nope=3")
    assert code == 2 and "unknown limit 'nope'" in err and "sweep" in err


def test_sweep_streams_and_shows_progress_on_stderr(capsys):
    code, out, err = run(capsys, "sweep", *TWO_IP, "--range", "f=0:1:5", "--progress")
    assert code == 0 and len(out.splitlines()) == 6
    assert "sweep" in err and "5/5" in err


def test_sweep_ranges_and_values_share_one_vocabulary(capsys):
    new = run(capsys, "sweep", *TWO_IP, "--range", "f=0:1:3", "-p", "Bpeak=20")
    old = run(capsys, "sweep", *TWO_IP, "--param", "f=0:1:3", "--param", "Bpeak=20")
    assert new[0] == old[0] == 0 and new[1] == old[1]


# ---------------------------------------------------------------- vocabulary
def test_plot_logca_output_and_overhead_are_told_apart(tmp_path, capsys):
    png = tmp_path / "aes.png"
    code, _, err = run(capsys, "plot", "logca", "--interface-latency", "1500", "--overhead",
                       "2.9e4", "--compute-index", "90", "--acceleration", "19", "--latency",
                       "independent", "--output", png)
    assert code == 0, err
    assert png.stat().st_size > 0
    code, new, _ = run(capsys, "logca", "--interface-latency", "1500", "--overhead", "2.9e4",
                       "--compute-index", "90", "--acceleration", "19", "--json")
    code, old, _ = run(capsys, "logca", "--L", "1500", "--o", "2.9e4", "--C", "90", "--A",
                       "19", "--json")
    assert new == old


def test_choices_come_from_the_registries():
    from mapping.semantics.aggregation import AGGREGATIONS
    from mapping.cli.main import build_parser
    from mapping.plots import PLOTS
    from mapping.search.strategies import STRATEGIES
    for command, option, registry in (("eval", "--aggregate", AGGREGATIONS),
                                      ("search", "--strategy", STRATEGIES)):
        parser = build_parser(command)
        sub = next(a for a in parser._actions if a.dest == "command").choices[command]
        (action,) = [a for a in sub._actions if option in a.option_strings]
        assert list(action.choices) == registry.names()
    parser = build_parser("plot")
    plot = next(a for a in parser._actions if a.dest == "command").choices["plot"]
    kinds = next(a for a in plot._actions if a.dest == "kind")
    assert list(kinds.choices) == PLOTS.names()


# ---------------------------------------------------------------- files without blocks
@pytest.mark.parametrize("suffix, keyword", [(".sdf", "sdf"), (".moa", "moa"),
                                             (".map", "mapping")])
def test_a_file_without_blocks_is_named_and_refused(tmp_path, capsys, suffix, keyword):
    empty = tmp_path / f"empty{suffix}"
    empty.write_text("# nothing here\n")
    code, _, err = run(capsys, "check", empty)
    assert code == 2
    assert f"{empty}: error: the file holds no '{keyword} NAME {{ ... }}' block" in err
