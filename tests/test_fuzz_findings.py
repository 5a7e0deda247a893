"""What an outside fuzzer found (issue 34), each case as it was reported: blow-ups
without a stated limit, internal errors on bad option values and full devices,
misleading messages about input paths, outputs and signals, positions."""
from __future__ import annotations

import errno
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import dsl
from child_signals import default_signals
from dsl.errors import ParseError
from mapping.cli import main as cli
from mapping.cli.main import main
from mapping.errors import InputError
from mapping.cli.limits import limits_set
from moa.errors import ArchitectureError
from moc import check_deadlock
from moc.errors import DeadlockError

ROOT = Path(__file__).resolve().parents[1]
ODROID = [str(ROOT / "examples/odroid/stereo.sdf"), str(ROOT / "examples/odroid/odroid.moa")]
MAPS = str(ROOT / "examples/odroid/mappings.map")


def exit_code(argv) -> int:
    """``mapeval argv``'s exit status (argparse's refusals exit through SystemExit)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def run_cli(*argv, stdout=subprocess.PIPE, **kwargs) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "mapping.cli.main", *argv], env=env,
                          stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120,
                          **kwargs)


# --- limits on every expansion that can blow up --------------------------------------

HANG = ("moa m { type T [time = lsla(alpha = 1)]; pe ha[0..9999] : T; cn hc[0..9999]; "
        "ha[*] -- hc[*] }")


def test_links_between_arrays_stop_at_the_stated_limit():
    start = time.perf_counter()
    with pytest.raises(ArchitectureError) as info:
        dsl.parse_moa(HANG, "hang.moa")
    assert time.perf_counter() - start < 10          # it ran for ever before
    message = str(info.value)
    assert "10000 x 10000 links" in message
    assert "more than the limit links = 1000000; raise it with --limit links=N" in message
    assert info.value.origin == ("hang.moa", 1, HANG.index("ha[*]") + 1)


def test_the_links_limit_counts_every_link_of_the_architecture_and_can_be_raised():
    text = "moa m {\n  pe p[0..9]\n  cn c[0..2]\n  p[*] -- c[0]\n  p[*] -- c[*]\n}\n"
    with limits_set(["links=39"]):
        with pytest.raises(ArchitectureError, match=r"10 x 3 links \(40 in 'm'") as info:
            dsl.parse_moa(text, "f.moa")
        assert info.value.origin == ("f.moa", 5, 3)
    with limits_set(["links=40"]):
        (arch,) = dsl.parse_moa(text, "f.moa")
    assert len(arch.links) == 40


def test_arrays_each_under_their_limit_stop_at_the_elements_limit():
    text = "moa m {\n  pe p[0..5]\n  cn c[0..5]\n  p[*] -- c[0]\n}\n"
    with limits_set(["elements=11"]):
        with pytest.raises(ArchitectureError, match="elements of 'm' to 12, more than the "
                           "limit elements = 11") as info:
            dsl.parse_moa(text, "f.moa")
    assert info.value.origin[:2] == ("f.moa", 3)
    assert exit_code(["check", "--limit", "elements=12", str(_write(text))]) == 0


def _write(text, name="f.moa"):
    import tempfile
    path = Path(tempfile.mkdtemp()) / name
    path.write_text(text)
    return path


def test_a_logca_range_of_600_decades_is_analysed():
    # gmax / gmin overflowed to inf: an internal error before
    assert exit_code(["logca", "--L", "1", "--o", "1", "--C", "1", "--A", "2",
                      "--gmin", "1e-300", "--gmax", "1e300"]) == 0


# --- every option validated at the door ----------------------------------------------

def test_a_negative_seed_is_refused_at_the_door(capsys):
    assert exit_code(["search", *ODROID, "--strategy", "anneal", "--seed", "-1"]) == 2
    err = capsys.readouterr().err
    assert "argument --seed: expected a whole number >= 0, got '-1'" in err
    assert "internal error" not in err


@pytest.mark.parametrize("value", ["-1", "nan", "0", "inf", "1e300"])
def test_a_time_limit_must_be_a_positive_finite_number_of_seconds(value, capsys):
    assert exit_code(["search", *ODROID, "--strategy", "exact", "--time-limit", value]) == 2
    err = capsys.readouterr().err
    assert "argument --time-limit: expected a finite number of seconds > 0 and <= " \
        "31536000" in err and "OptimizeWarning" not in err


def _leaves(parser, path):
    """``(argv prefix, parser)`` of every leaf of ``parser`` (plot KIND, import FORMAT)."""
    action = cli._subparsers(parser)
    if action is None:
        configure = parser._defaults.get("configure")
        if configure is not None:
            configure(parser)
        yield path, parser
        return
    for word, sub in action.choices.items():
        yield from _leaves(sub, path + [word])


def every_option():
    for name in cli.COMMANDS:
        parser = cli.build_parser(name)
        yield from ((path, action) for path, leaf in
                    _leaves(cli._subparsers(parser).choices[name], [name])
                    for action in leaf._actions if action.option_strings)


def test_no_option_takes_a_bare_int_or_float():
    """A numeric option says which numbers it takes with a kind of mapping.options (sign,
    finiteness, range), never argparse's int or float, which take -1, nan and inf."""
    bare = [f"{' '.join(path)} {action.option_strings[-1]}" for path, action in
            every_option() if action.type in (int, float)]
    assert bare == []
    from mapping.options import Kind
    typed = {action.option_strings[-1] for _, action in every_option()
             if isinstance(action.type, Kind)}
    assert {"--seed", "--time-limit", "--budget", "--starts", "--test-fraction",
            "--folds", "--repeats", "--confidence", "--byte-cost"} <= typed


TYPED = sorted({(tuple(path), action.option_strings[-1]) for path, action in every_option()
                if action.type is not None})


@pytest.mark.parametrize("path, option", TYPED, ids=[" ".join(p) + " " + o for p, o in TYPED])
@pytest.mark.parametrize("value", ["nan", "inf", "x", "--"])
def test_every_typed_option_refuses_a_value_outside_its_kind(path, option, value, capsys):
    assert exit_code([*path, f"{option}={value}"]) == 2
    err = capsys.readouterr().err
    assert f"argument {option}" in err or f"/{option}:" in err, err
    assert "internal error" not in err and "Traceback" not in err


@pytest.mark.parametrize("kind, good, bad", [
    ("NATURAL", {"0": 0, "7": 7, "1_000": 1000, "1e3": 1000, "9" * 30: int("9" * 30)},
     ["-1", "2.5", "nan", "inf", "1e400", "x", "", "1/2"]),
    ("POSITIVE_WHOLE", {"1": 1, " 2 ": 2}, ["0", "-0", "-3"]),
    ("POSITIVE", {"0.5": 0.5, "1e-300": 1e-300}, ["0", "-1e-9", "inf", "nan"]),
    ("FRACTION", {"0": 0.0, "0.99": 0.99}, ["1", "-0.1", "nan"]),
    ("PROBABILITY", {"0.95": 0.95}, ["0", "1", "nan"]),
    ("SECONDS", {"0.1": 0.1, "3600": 3600.0}, ["0", "-1", "1e300", "inf"]),
])
def test_the_kinds_of_option_value(kind, good, bad):
    import mapping.options
    kind = getattr(mapping.options, kind)
    for text, value in good.items():
        assert kind.parse(text) == value and type(kind.parse(text)) is type(value)
    for text in bad:
        assert kind.parse(text) is None, text
        with pytest.raises(Exception, match=f"expected {kind.description}, got '{text}'"):
            kind(text)
    with pytest.raises(InputError, match=f"--x must be {kind.description}, got nan"):
        kind.check(math.nan, "--x")


def test_kind_descriptions():
    from mapping.options import FRACTION, NATURAL, SECONDS
    assert NATURAL.description == "a whole number >= 0"
    assert FRACTION.description == "a finite number >= 0 and < 1"
    assert SECONDS.description == "a finite number of seconds > 0 and <= 31536000"


def test_one_rule_reads_every_number_typed(capsys):
    """Options, ``-p`` and the cells of a table read a number by one rule,
    :func:`mapping.options.parse_number` (options read base 10 only, and ``-p`` took
    ``_`` in a float only between digits).  A whole number beyond the floats is no
    number: as an option it was an OverflowError (a traceback)."""
    from mapping.options import NATURAL, POSITIVE, parse_number
    big = "1" + "0" * 400
    assert parse_number("0x10") == 16 and parse_number("1_000") == 1000
    assert parse_number("1__0.5") == 10.5 and parse_number(" 2.5 ") == 2.5
    assert parse_number("1e3") == 1000.0 and parse_number("010") == 10.0
    assert parse_number("inf") is None and parse_number("nan") is None
    assert parse_number("1e400") is None and parse_number(big) is None
    assert parse_number("-inf", finite=False) == -math.inf
    assert math.isnan(parse_number("nan", finite=False))
    assert parse_number(big, finite=False) is None and parse_number("x") is None
    assert NATURAL.parse("0x10") == 16 and POSITIVE.parse("0x10") == 16.0
    assert NATURAL.parse(big) is None and POSITIVE.parse(big) is None
    assert exit_code(["search", *ODROID, "--strategy", "anneal", "--seed", big]) == 2
    err = capsys.readouterr().err
    assert f"argument --seed: expected a whole number >= 0, got '{big}'" in err
    assert "internal error" not in err and "Traceback" not in err


# --- output errors ---------------------------------------------------------------------

needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")


@needs_dev_full
def test_an_output_on_a_full_device_is_bad_input_naming_it(capsys):
    assert main(["search", *ODROID, "--strategy", "anneal", "--budget", "200",
                 "-o", "/dev/full"]) == 2
    err = capsys.readouterr().err
    assert "cannot write '/dev/full': writing failed: No space left on device" in err


@needs_dev_full
def test_stdout_on_a_full_device_is_bad_input():
    with open("/dev/full", "w") as full:
        done = run_cli("search", *ODROID, "--strategy", "anneal", "--budget", "200",
                       stdout=full)
    assert done.returncode == 2
    assert done.stderr.strip() == \
        "mapeval: error: cannot write the standard output: No space left on device"


def test_a_failed_write_leaves_no_file_and_no_directory_it_created(tmp_path):
    from mapping.output import open_output
    target = tmp_path / "new" / "dir" / "out.csv"
    with pytest.raises(InputError, match=f"cannot write '{target}': writing failed: "
                       "No space left on device"):
        with open_output(target) as stream:
            stream.write("a,b\n")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert list(tmp_path.iterdir()) == []


def test_missing_directories_of_an_output_are_created_and_said_so(tmp_path):
    done = run_cli("search", *ODROID, "--strategy", "anneal", "--budget", "200",
                   "-o", "no/such/best.map", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stderr.splitlines() == ["created directory no", "created directory no/such",
                                        "wrote no/such/best.map"]
    assert (tmp_path / "no/such/best.map").read_text().startswith("mapping ")


def test_an_output_under_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    assert main(["search", *ODROID, "--strategy", "anneal", "--budget", "200",
                 "-o", str(tmp_path / "f" / "best.map")]) == 2
    assert "is not a directory" in capsys.readouterr().err


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("signum, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_during_sweep_keeps_the_old_output_and_leaves_no_temporary_file(
        tmp_path, signum, status):
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "mapping.cli.main", "sweep", *ODROID, MAPS,
                             "--mapping", "big_only", "-r", "f=0.5:2:1000000", "-o", str(out)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, preexec_fn=default_signals)
    deadline = time.monotonic() + 60
    while not any(p.name.startswith(".out.csv.") for p in tmp_path.iterdir()):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == status and "Traceback" not in err
    assert out.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_signal_as_the_temporary_file_is_created_leaves_nothing(tmp_path, monkeypatch):
    """The suite's sweep above failed once under load: a SIGINT that lands after the
    temporary file exists but before the block that removes it knows its name left the
    file behind."""
    from mapping.output import write_atomically
    real = os.open

    def interrupted(*args, **kwargs):
        made = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)
        return made
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    old = signal.signal(signal.SIGINT, signal.default_int_handler)   # nohup ignores it
    monkeypatch.setattr(os, "open", interrupted)
    try:
        with pytest.raises(KeyboardInterrupt):
            write_atomically(out, "new\n")
    finally:
        monkeypatch.undo()
        signal.signal(signal.SIGINT, old)
    assert out.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_child_to_be_signalled_starts_interruptible_whatever_the_runner_ignores():
    """``nohup python -m pytest &`` in a script starts the suite with SIGINT ignored; the
    children the tests signal must still raise KeyboardInterrupt (issue 39: a sweep child
    ran on for 60 s)."""
    probe = [sys.executable, "-c",
             "import signal; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"]
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        inherited = subprocess.run(probe, capture_output=True, text=True).stdout.strip()
        reset = subprocess.run(probe, capture_output=True, text=True,
                               preexec_fn=default_signals).stdout.strip()
    finally:
        signal.signal(signal.SIGINT, old)
    assert inherited == "True"          # what the runner's disposition does to a child
    assert reset == "False"


# --- input paths that are not regular files --------------------------------------------

def test_inputs_that_are_not_regular_files_are_named_as_what_they_are(tmp_path, capsys):
    (tmp_path / "dir.moa").mkdir()
    os.mkfifo(tmp_path / "fifo.moa")
    (tmp_path / "zero.moa").symlink_to("/dev/zero")
    (tmp_path / "broken.moa").symlink_to(tmp_path / "nowhere.moa")
    for name, what in [("dir.moa", "a directory, not a file"),
                       ("fifo.moa", "a FIFO (named pipe), not a file"),
                       ("zero.moa", "a symlink to '/dev/zero', a character device, not a file"),
                       ("broken.moa", "a broken symlink (to "),
                       ("absent.moa", "no such file")]:
        path = str(tmp_path / name)
        assert main(["check", path]) == 2
        assert f"'{path}': {what}" in capsys.readouterr().err
        assert main(["eval", ODROID[0], path, MAPS, "--mapping", "big_only"]) == 2
        assert f"'{path}': {what}" in capsys.readouterr().err


def test_a_csv_that_is_not_utf8_is_reported_at_the_bad_byte(tmp_path, capsys):
    data = tmp_path / "m.csv"
    data.write_bytes(b"mapping,t\nbig_only,1.0\nbig_only,2\xff.0\n")
    assert main(["fidelity", *ODROID, MAPS, str(data), "--mapping-column", "mapping",
                 "--measured", "t"]) == 2
    err = capsys.readouterr().err
    assert f"{data}:3:11: error: not a UTF-8 text file: byte 0xff at offset 33" in err


def test_a_text_file_that_is_not_utf8_is_reported_at_the_bad_byte(tmp_path):
    path = tmp_path / "a.sdf"
    path.write_bytes(b"sdf g {\n  actor \xc3\xa9\xe9\n}\n")
    with pytest.raises(ParseError) as info:
        dsl.load_sdf(path)
    assert info.value.origin == (str(path), 2, 10)


# --- expressions and positions ----------------------------------------------------------

def test_min_and_max_of_one_number_are_that_number():
    (graph,) = dsl.parse_sdf("sdf g { param p = min(3) + max(4)\n actor a [quanta = p] }")
    assert graph.bind().actors["a"].attrs["quanta"] == 7


def test_a_deadlock_is_reported_at_the_channel_lacking_initial_tokens():
    text = ("sdf g {\n  actor a\n  actor b\n  channel ab : a -> b\n"
            "  channel ba : b -> a [prod = 2, cons = 2]\n}\n")
    (graph,) = dsl.parse_sdf(text, "g.sdf")
    with pytest.raises(DeadlockError) as info:
        check_deadlock(graph.bind())
    assert info.value.origin == ("g.sdf", 4, 11)


def test_a_negative_ops_is_bad_input_at_its_actor(tmp_path, capsys):
    # found by the fuzz run of this issue: Gables' work f summed a ValueError (exit 1)
    app = tmp_path / "a.sdf"
    app.write_text("sdf g {\n  actor a [ops = -1, quanta = 2]\n}\n")
    arch = tmp_path / "m.moa"
    arch.write_text("moa m {\n  pe p [time = lsla(1, 0)]\n}\n")
    assert main(["eval", str(app), str(arch), "--map", "a=p"]) == 2
    assert f"{app}:2:9: error: token of 'a' has ops = -1; it must be non-negative" in \
        capsys.readouterr().err


def test_an_output_whose_directory_vanishes_is_bad_input_naming_it(tmp_path):
    import shutil
    from mapping.output import open_output
    target = tmp_path / "d" / "out.csv"
    target.parent.mkdir()
    with pytest.raises(InputError, match=f"cannot write '{target}': writing failed: "
                       "No such file or directory"):
        with open_output(target) as stream:
            stream.write("a,b\n")
            shutil.rmtree(target.parent)
    assert list(tmp_path.iterdir()) == []


def test_a_logca_table_row_without_its_latency_cell_is_bad_input_at_the_row(tmp_path, capsys):
    # found by the fuzz run of this issue: KeyError 'latency' (exit 1)
    table = tmp_path / "t.csv"
    table.write_text("name,L,o,C,A,beta,latency\nT2 AES,1500,2.9e4,90,19,1\n")
    assert main(["logca", "--table", str(table)]) == 2
    assert f"{table}:2:" in capsys.readouterr().err


def test_a_logca_fit_of_times_past_the_float_range_is_bad_input(tmp_path, capsys):
    # found by the fuzz run of this issue: a time of 1e-320 overflowed inside scipy (exit 1)
    rows = [f"{g},{g * 90.0},{2.9e4 + g * 90.0 / 19}" for g in (16, 32, 64, 128, 256)]
    rows[2] = "64,1e-320,29303.2"
    data = tmp_path / "d.csv"
    data.write_text("granularity,host,accelerator\n" + "\n".join(rows) + "\n")
    assert main(["logca", "--fit", str(data), "--interface-latency", "1500"]) == 2
    err = capsys.readouterr().err
    assert "LogCA fit: the times span more than floating point holds" in err
    assert "Warning" not in err


# ---------------------------------------------------------------------------------------
# Found by the second fuzz run of 10,000 tables (second session, commit 7018396)

def test_a_bad_row_of_a_per_element_fit_is_an_error_at_its_cell(tmp_path, capsys):
    """A row whose values cannot be bound, in a per-element fit: the element model's
    culprit search asked the same row's failing binding again (RecursionError, exit 1);
    then the error carried its row prefix twice."""
    gsla = ROOT / "examples" / "gsla"
    lines = (gsla / "element_measurements.csv").read_text().splitlines()[:5]
    lines[2] = "-" + lines[2]                    # S = -512: a negative quanta
    (tmp_path / "bad.csv").write_text("\n".join(lines) + "\n")
    argv = ["fit", str(gsla / "opencl.sdf"), str(gsla / "gpu.moa"), str(gsla / "mappings.map"),
            str(tmp_path / "bad.csv"), "--mapping", "gpu_offload", "--measured", "t_w",
            "--measured-element", "host=t_1,gpu=t_k,pcie=-", "--test-fraction", "0",
            "--free", "host.time.alpha,host.time.beta,gpu.time.alpha,gpu.time.beta,"
            "pcie.time.alpha,pcie.time.beta"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'bad.csv'}:3:1: error: row 2, column 1 'S': actor 'io'" in err
    assert err.count("row 2") == 1 and "internal error" not in err


def test_an_interrupt_wrapped_by_python_is_still_an_interrupt(monkeypatch, capsys):
    """A signal while a pydantic model class is created (a cost model's module imported
    on first use) reaches the command as ``RuntimeError: Error calling __set_name__``
    caused by the KeyboardInterrupt: exit 130 (143 for SIGTERM), not an internal error
    (found by the signals fuzz run: 1 of 200)."""
    from mapping.errors import Terminated

    for interrupt, code in ((KeyboardInterrupt(), 130), (Terminated(), 143)):
        def run(args, interrupt=interrupt):
            class Probe:
                def __set_name__(self, owner, name):
                    raise interrupt
            type("Parameters", (), {"_none": Probe()})
        monkeypatch.setattr("mapping.cli.commands.check.run", run)
        assert main(["check", str(ROOT / "examples" / "odroid" / "odroid.moa")]) == code
        assert "internal error" not in capsys.readouterr().err
