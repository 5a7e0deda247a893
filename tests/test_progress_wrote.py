"""Issue 14 (what a user sees): progress on long commands, ``wrote FILE`` for every file a
command writes, and examples that write only into ``out/`` or ``/tmp/``."""
from __future__ import annotations

import io
import json
import os
import re
import select
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mapping import output
from mapping.cli.main import main
from mapping.progress import Progress, progress_bar, shown

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "examples"
TWO_IP = [str(EX / "gables" / n) for n in ("two_ip.sdf", "two_ip.moa", "two_ip.map")]
GSLA = [str(EX / "gsla" / n) for n in ("opencl.sdf", "gpu.moa", "mappings.map",
                                        "measurements.csv")]
GSLA_OPTIONS = ["--mapping", "gpu_offload", "--measured", "time_s"]
#: the cheapest model to sweep: one actor on one PE, one parameter in each file
CHEAP_SDF = "sdf one {\n    param x = 1\n    actor w [ops = x]\n}\n"
CHEAP_MOA = "moa one_pe {\n    param y = 1\n    pe p [time = lsla(alpha = y, beta = 0)]\n}\n"
#: its 100 x 100 = 10,000-point grid
GRID = ["one.sdf", "one.moa", "--map", "w=p", "--range", "x=1:2:100", "--range", "y=1:2:100"]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


# ---------------------------------------------------------------- when progress shows
class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_shows_on_a_terminal_or_when_asked_never_for_json_unasked():
    assert shown(stream=_Tty()) and not shown(stream=io.StringIO())
    assert shown(asked=True, stream=io.StringIO())
    assert not shown(json=True, stream=_Tty())           # a script reads the JSON
    assert shown(asked=True, json=True)                  # asked: on stderr, JSON intact
    tty = _Tty()
    with Progress(4, "sweep", None, stream=tty, interval=0, unit="points") as bar:
        for _ in range(4):
            bar(1)
    assert "sweep [" in tty.getvalue() and "4/4" in tty.getvalue()
    assert tty.getvalue().endswith("\n") and tty.getvalue().count("\n") == 1
    quiet = io.StringIO()
    with Progress(4, "sweep", None, stream=quiet) as bar:
        bar(4)
    assert quiet.getvalue() == ""
    args = type("Args", (), {"progress": False, "json": True})()
    assert not progress_bar(args, 10, "x").enabled


def test_search_on_a_terminal_shows_progress_but_not_with_json(monkeypatch, capsys):
    sdf3 = EX / "sdf3_lookup"
    argv = ["search", str(sdf3 / "audio.sdf"), str(sdf3 / "board.moa"), "--strategy",
            "greedy", "--aggregate", "max", "--budget", "300"]
    for extra, bar in (([], True), (["--json"], False)):
        tty = _Tty()
        monkeypatch.setattr(sys, "stderr", tty)
        assert main(argv + extra) == 0
        assert ("greedy [" in tty.getvalue()) is bar, tty.getvalue()
        out = capsys.readouterr().out
        assert "greedy [" not in out
    assert json.loads(out)["strategy"] == "greedy"


def _on_a_terminal(argv, cwd, stop=None, timeout=60.0):
    """Run ``mapeval argv`` with stderr on a pseudo-terminal and stdout on a pipe;
    return (stdout, what the terminal showed).  ``stop``: kill the run as soon as the
    terminal shows it."""
    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "mapping.cli.main", *argv], cwd=cwd,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=slave, env={**os.environ, "PYTHONPATH": str(ROOT),
                                               "MPLBACKEND": "Agg"})
    os.close(slave)
    shown_, out = b"", b""
    deadline = time.monotonic() + timeout
    try:
        streams = [master, proc.stdout.fileno()]
        while streams and time.monotonic() < deadline:
            ready, _, _ = select.select(streams, [], [], 0.5)
            for fd in ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:                 # the terminal's other end closed (EIO)
                    chunk = b""
                if not chunk:
                    streams.remove(fd)
                elif fd == master:
                    shown_ += chunk
                else:
                    out += chunk
            if stop is not None and stop in shown_:
                proc.kill()
                break
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        os.close(master)
    return out.decode(), shown_.decode()


def test_a_10000_point_sweep_shows_progress_on_a_terminal_and_none_with_json(tmp_path):
    """Must-show 4 of issue 14 (the first run is stopped once the bar shows)."""
    (tmp_path / "one.sdf").write_text(CHEAP_SDF)
    (tmp_path / "one.moa").write_text(CHEAP_MOA)
    out, terminal = _on_a_terminal(["sweep", *GRID, "-o", "/dev/null"], tmp_path,
                                   stop=b"/10000 (")
    assert out == "" and re.search(r"sweep \[#* *\] +\d+\.\d% \d+/10000 \(", terminal)
    out, terminal = _on_a_terminal(["sweep", *GRID, "--json"], tmp_path)
    assert terminal == ""                               # no bar, nothing else
    document = json.loads(out)
    assert len(document["rows"]) == 10_000 and document["columns"][:3] == ["x", "y",
                                                                          "value"]


def test_sweep_json_is_the_csv_as_one_document(capsys):
    code, csv_text, _ = run(capsys, "sweep", *TWO_IP, "--range", "f=0:1:3")
    code2, out, err = run(capsys, "sweep", *TWO_IP, "--range", "f=0:1:3", "--json")
    assert code == code2 == 0 and err == ""
    document = json.loads(out)
    lines = csv_text.splitlines()
    assert lines[0].split(",") == document["columns"] and len(document["rows"]) == 3
    assert [float(c) for c in lines[1].split(",")[:3]] == document["rows"][0][:3]


def test_fit_and_fidelity_show_the_starts_of_their_fit(capsys):
    # both through mapping.cli.commands.measured, which creates the bar
    code, out, err = run(capsys, "fidelity", *GSLA, *GSLA_OPTIONS, "--fit",
                         "gpu.time.alpha,gpu.time.beta", "--starts", "2", "--progress")
    assert code == 0 and "fit [" in err and "3/3" in err and "fit [" not in out


def test_fit_parameters_reports_every_start(capsys):
    from mapping.calibration.assessment import assess
    from mapping.calibration.measurements import read_measurements
    import dsl
    app, arch = dsl.load_sdf(GSLA[0])[0], dsl.load_moa(GSLA[1])[0]
    data = read_measurements(GSLA[3], "time_s", params=list(app.params) + list(arch.params),
                             mapping=dsl.load_map(GSLA[2])["gpu_offload"]
                             if isinstance(dsl.load_map(GSLA[2]), dict) else
                             next(m for m in dsl.load_map(GSLA[2]) if m.name == "gpu_offload"))
    counts = []
    # bare parameter of the .moa: a non-linear fit, one call per start
    assess(arch, list(data.rows)[:40], app=app, free=["gpu.time.alpha"], starts=3,
           progress=counts.append)
    assert sum(counts) == 4


# ---------------------------------------------------------------- wrote FILE
def _wrote(err: str) -> list[str]:
    return [line[len("wrote "):].split(": ")[0] for line in err.splitlines()
            if line.startswith("wrote ")]


def test_every_command_that_writes_a_file_says_what_it_wrote(tmp_path, capsys):
    t = tmp_path
    sdf3 = EX / "sdf3_lookup"
    commands = {
        "sweep": (["sweep", *TWO_IP, "--range", "f=0:1:3", "-o", t / "s.csv",
                   "--plot", t / "s.png"], [t / "s.csv", t / "s.png"]),
        "search": (["search", sdf3 / "audio.sdf", sdf3 / "board.moa", "--strategy",
                    "greedy", "--budget", "300", "--aggregate", "max", "-o", t / "best.map",
                    "--json"],
                   [t / "best.map"]),
        "fit": (["fit", *GSLA, *GSLA_OPTIONS, "--free", "gpu.time.alpha,gpu.time.beta",
                 "-o", t / "fitted.moa"], [t / "fitted.moa"]),
        "plot": (["plot", "mapping", *TWO_IP, "-o", t / "load.svg"], [t / "load.svg"]),
        "logca": (["logca", "--interface-latency", "1500", "--overhead", "2.9e4",
                   "--compute-index", "90", "--acceleration", "19", "--latency",
                   "independent", "--json", "--plot", t / "aes.svg"], [t / "aes.svg"]),
        "import sdf3": (["import", "sdf3", sdf3 / "audio.xml", "-o", t / "audio.sdf"],
                        [t / "audio.sdf"]),
        "import profile": (["import", "profile", EX / "accelerator_store" / "profile_csv",
                            "-o", t / "decoder.sdf"], [t / "decoder.sdf"]),
        "export": (["export", "dot", sdf3 / "audio.sdf", "-o", t / "audio.dot"],
                   [t / "audio.dot"]),
    }
    said = {}
    for name, (argv, files) in commands.items():
        code, out, err = said[name] = run(capsys, *argv)
        assert code == 0, (name, err)
        assert _wrote(err) == [str(f) for f in files], (name, err)
        assert "wrote" not in out, name
        assert all(f.is_file() for f in files), name
    assert f"wrote {t / 'decoder.sdf'}: graph 'profile_csv', 12 actors" in \
        said["import profile"][2]
    # a stream written through is no file left behind: silent
    code, out, err = run(capsys, "export", "dot", sdf3 / "audio.sdf", "-o", "/dev/stdout")
    assert code == 0 and "wrote" not in err


def test_the_library_writes_silently(tmp_path, capsys):
    was = output._announce
    output.announce_writes(False)
    try:
        output.write_atomically(tmp_path / "x.txt", "x\n")
        assert capsys.readouterr().err == ""
        output.announce_writes()
        output.write_atomically(tmp_path / "y.txt", "y\n", note="one line")
        assert capsys.readouterr().err == f"wrote {tmp_path / 'y.txt'}: one line\n"
    finally:
        output.announce_writes(was)


# ---------------------------------------------------------------- the READMEs' commands
READMES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md")),
           *sorted(EX.glob("**/README.md"))]
#: options whose value is a file or directory a command writes
WRITES = {"-o", "--output", "--plot", "--sdf"}
PLACES = ("out/", "/tmp/", "/dev/")


def readme_commands(path: Path):
    """``(line, words)`` of every ``mapeval`` command in the code of a README (fenced or
    indented blocks; continued lines joined, ``$ `` prompts and comments dropped; a
    variable set on a line of its own, ``$ T=examples/timing``, replaced in the
    commands after it, as a reader's shell would)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    fenced, found, i, variables = False, [], 0, {}
    while i < len(lines):
        line, start = lines[i], i + 1
        if line.lstrip().startswith("```"):
            fenced = not fenced
            i += 1
            continue
        code = fenced or line.startswith("    ")
        text = line.strip()
        while text.endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text[:-1] + " " + lines[i].strip()
        i += 1
        if text.startswith("$ "):
            text = text[2:]
        setting = re.fullmatch(r"([A-Za-z_]\w*)=(\S+)", text) if code else None
        if setting:
            variables[setting[1]] = setting[2]
        for name, value in variables.items():
            text = re.sub(r"\$(?:%s\b|\{%s\})" % (name, name), value, text)
        words = shlex.split(text, comments=True) if code and "mapeval " in text else []
        if "mapeval" in words:
            found.append((start, words[words.index("mapeval"):]))
    return found


def test_readme_commands_write_into_out_or_tmp_and_mark_shorthand():
    bad, seen = [], 0
    for path in READMES:
        for line, words in readme_commands(path):
            where = f"{path.relative_to(ROOT)}:{line}"
            if any("[" in w or "|" in w for w in words):
                continue                  # a synopsis: [optional], a|b, FILE...
            seen += 1
            if "..." in words:
                bad.append(f"{where}: '...' in a command (write it out)")
            for option, value in zip(words, words[1:]):
                if option in WRITES and not value.startswith(PLACES) \
                        and not value.split(".")[0].isupper():
                    bad.append(f"{where}: {option} {value} writes beside the sources")
    assert seen > 40
    assert not bad, "\n".join(bad)


def test_out_is_ignored_by_git():
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert "out/" in ignored


@pytest.mark.parametrize("example", ["sdf3_lookup", "timing", "logca"])
def test_following_an_example_readme_leaves_files_only_in_out(example, tmp_path,
                                                              monkeypatch, capsys):
    """Run the README's commands that write a file in a copy of the example (commands
    naming ``examples/...`` from the copy's root, the others from the example's folder);
    every new file is under an ``out/`` folder."""
    import shutil
    shutil.copytree(EX / example, tmp_path / "examples" / example)
    before = {p for p in tmp_path.rglob("*")}
    ran = 0
    for line, words in readme_commands(EX / example / "README.md"):
        if any(c in w for w in words for c in "[|$<>") or not WRITES & set(words):
            continue
        root = any(w.startswith("examples/") for w in words)
        monkeypatch.chdir(tmp_path if root else tmp_path / "examples" / example)
        code, _, err = run(capsys, *words[1:])
        assert code == 0, f"README.md:{line}: {err}"
        assert _wrote(err), f"README.md:{line}"
        ran += 1
    new = {p for p in tmp_path.rglob("*") if p.is_file()} - before
    assert ran and new
    assert all("out" in p.relative_to(tmp_path).parts for p in new), sorted(new)
