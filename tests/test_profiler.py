"""``mapeval profile`` (issue 12): the Valgrind tool on programs whose logs are known by
construction, its build, and the command's errors.

The tool tests are skipped where gcc, Valgrind or its tool headers and libraries are
missing; the tool is built once per module into a private cache under tmp."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dsl.errors import ParseError
from dsl.profile import import_profile, read_logs
from mapping.cli import main
from mapping.profiler import (ToolchainError, exclude_functions, find_toolchain,
                              profile_program)
from mapping.profiler.build import build_tool
from mapping.profiler.run import check_outdir

ROOT = Path(__file__).resolve().parents[1]

# A producer writes N bytes, a consumer reads them, a third function reads half.  No
# library call happens inside main, so the logs hold exactly these four functions.
PRODUCER_CONSUMER = r"""
static unsigned char buf[1 << 20];

__attribute__((noinline)) void produce(int n)
{
    for (int i = 0; i < n; i++)
        buf[i] = (unsigned char)i;
}

__attribute__((noinline)) unsigned consume(int n)
{
    unsigned s = 0;
    for (int i = 0; i < n; i++)
        s += buf[i];
    return s;
}

__attribute__((noinline)) unsigned half(int n)
{
    int m = n / 2;
    unsigned s = 0;
    for (int i = 0; i < m; i++)
        s += buf[i];
    return s;
}

int main(int argc, char **argv)
{
    int n = 0;
    for (const char *p = argv[1]; *p; p++)
        n = 10 * n + (*p - '0');
    produce(n);
    unsigned a = consume(n);
    unsigned b = half(n);
    return (a + b) == 12345u;
}
"""

# stdin to stdout through getchar/putchar, then a longjmp out of a recursion; exit 3.
ECHO = r"""
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;

__attribute__((noinline)) void deep(int k)
{
    if (k == 0)
        longjmp(env, 1);
    deep(k - 1);
}

__attribute__((noinline)) int after(int x) { return x + 1; }

int main(void)
{
    int c;
    while ((c = getchar()) != EOF)
        putchar(c);
    fflush(stdout);
    if (!setjmp(env))
        deep(3);
    return after(2);
}
"""


# ----------------------------------------------------------------- without Valgrind

def write_logs(directory: Path, **files: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(textwrap.dedent(text))
    return directory


def test_icount_third_field_other_instructions(tmp_path):
    """SPEC §5/§14: icount may carry a third field (all other instructions); it was
    refused as 'expected ID COUNT (2 fields)'."""
    logs = write_logs(tmp_path / "p", function="1 main\n2 f\n", subcalls="1: 2\n",
                      icount="1 5 7\n2 10 20\n", xfers="2 1 8\n")
    trace = read_logs(logs)
    assert trace.icount == {"1": 5, "2": 10}
    assert trace.other == {"1": 7, "2": 20}
    graph = import_profile(logs).graph
    assert {a: graph.actors[a].attrs["ops"] for a in graph.actors} == {"main": 5, "f": 10}
    (logs / "icount").write_text("1 5 x\n")
    with pytest.raises(ParseError, match="non-negative integer"):
        read_logs(logs)
    (logs / "icount").write_text("1 5 7 9\n")
    with pytest.raises(ParseError, match="fields"):
        read_logs(logs)


def test_exclude_drops_call_trees(tmp_path):
    logs = write_logs(tmp_path / "p", function="""\
        # header
        1 main
        2 f
        3 g
        4 h
        5 g
        """, subcalls="1: 2 4\n2: 3\n4: 5\n", icount="1 1 1\n2 2 2\n3 3 3\n4 4 4\n5 5 5\n",
        xfers="2 1 8\n3 2 4\n4 2 16\n4 5 2\n1 4 1\n")
    assert exclude_functions(logs, ["f"]) == 2                  # f and its callee g (3)
    trace = read_logs(logs)
    assert list(trace.names.items()) == [("1", "main"), ("4", "h"), ("5", "g")]
    assert trace.children == {"1": ["4"], "4": ["5"]}
    assert trace.icount == {"1": 1, "4": 4, "5": 5}
    assert trace.xfers == {("5", "4"): 2, ("4", "1"): 1}
    assert exclude_functions(logs, []) == 0


def test_check_outdir(tmp_path):
    assert check_outdir(tmp_path / "new") == tmp_path / "new"
    (tmp_path / "file").write_text("x")
    with pytest.raises(Exception, match="not a directory"):
        check_outdir(tmp_path / "file")
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    with pytest.raises(Exception, match="other than the profile's logs"):
        check_outdir(other)
    prof = write_logs(tmp_path / "prof", function="1 main\n")
    assert check_outdir(prof) == prof
    with pytest.raises(Exception, match="an input"):
        check_outdir(prof, [prof / "function"])


def test_missing_gcc_or_valgrind_says_what_to_install(tmp_path, monkeypatch, capsys):
    with pytest.raises(ToolchainError, match="apt-get install gcc valgrind"):
        find_toolchain({"PATH": str(tmp_path)})
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["profile", "-o", str(tmp_path / "out"), "--", sys.executable, "-c",
                 "pass"]) == 2
    err = capsys.readouterr().err
    assert "apt-get install gcc valgrind" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("argv, message", [
    (["profile", "-o", "OUT"], "no program to profile"),
    (["profile", "-o", "OUT", "--", "./no-such-program"], "no such program"),
    (["profile", "-o", "OUT", "--inclusive", "--", "true"], "give --sdf"),
    (["profile", "-o", "OUT", "--sdf", "app.txt", "--", "true"], ".sdf"),
    (["profile", "-o", "OUT", "--sdf", "OUT/app.sdf", "--", "true"], "logs only"),
])
def test_command_errors(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "OUT").exists()


def test_refuses_directory_with_other_files(tmp_path, capsys):
    (tmp_path / "keep.txt").write_text("x")
    assert main(["profile", "-o", str(tmp_path), "--", "true"]) == 2
    assert "other than the profile's logs" in capsys.readouterr().err
    assert (tmp_path / "keep.txt").read_text() == "x"


# ----------------------------------------------------------------- with Valgrind

@pytest.fixture(scope="module")
def toolchain():
    try:
        return find_toolchain()
    except ToolchainError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def cache(toolchain, tmp_path_factory):
    """The tool, built once for the module into a private cache."""
    cache = tmp_path_factory.mktemp("cache")
    build_tool(toolchain, cache)
    return cache


def compile_c(toolchain, source: str, directory: Path, name: str) -> Path:
    (directory / f"{name}.c").write_text(source)
    exe = directory / name
    subprocess.run([toolchain.gcc, "-O0", "-g", "-o", str(exe), str(directory / f"{name}.c")],
                   check=True)
    return exe


@pytest.fixture(scope="module")
def pc_exe(toolchain, tmp_path_factory):
    return compile_c(toolchain, PRODUCER_CONSUMER, tmp_path_factory.mktemp("pc"), "pc")


@pytest.fixture(scope="module")
def producer_consumer(pc_exe, cache):
    """The logs of three runs, N = 1000, 2000, 3000: {N: CallTrace}."""
    runs = {}
    for n in (1000, 2000, 3000):
        out = pc_exe.parent / f"prof{n}"
        result = profile_program([str(pc_exe), str(n)], out, cache=cache)
        assert result.status == 0 and result.invocations == 4 and result.functions == 4
        runs[n] = read_logs(out)
    return runs


def test_build_is_cached(toolchain, cache):
    first = build_tool(toolchain, cache)
    assert (first / "mapeval_xfer-amd64-linux").is_file()
    assert (first / "none-amd64-linux").exists()
    assert build_tool(toolchain, cache) == first
    assert [p.name for p in cache.iterdir()] == [first.name]     # no leftovers


def test_transfers_exact(producer_consumer):
    """Byte counts between functions are exact: consume reads the N bytes produce wrote,
    half reads N/2 of them; each callee reads the 8-byte return address main's call
    pushed; nothing else crosses between functions."""
    for n, trace in producer_consumer.items():
        assert list(trace.names.values()) == ["main", "produce", "consume", "half"]
        assert trace.children == {"1": ["2", "3", "4"]}
        between = {(p, c): b for (p, c), b in trace.xfers.items() if p != c}
        assert between == {("2", "3"): n, ("2", "4"): n // 2,
                           ("1", "2"): 8, ("1", "3"): 8, ("1", "4"): 8}


def test_instruction_counts_linear_in_n(producer_consumer):
    """At -O0 each loop iteration runs the same instructions, so every count is exactly
    a + b·N: the difference between the N and 2N runs equals that between 2N and 3N.
    produce's iteration has two arithmetic/logic instructions (i++ and the compare i < n),
    consume's three (s += buf[i] too); half runs consume's loop N/2 times.  The
    functions' own stack traffic (their locals) also grows linearly."""
    t1, t2, t3 = (producer_consumer[n] for n in (1000, 2000, 3000))
    for counts in ("icount", "other"):
        c1, c2, c3 = (getattr(t, counts) for t in (t1, t2, t3))
        for inv in ("1", "2", "3", "4"):
            assert c2[inv] - c1[inv] == c3[inv] - c2[inv], (counts, inv)
        slope = {inv: (c2[inv] - c1[inv]) / 1000 for inv in ("1", "2", "3", "4")}
        assert slope["1"] == 0                                   # main: no loop over N
        assert slope["3"] == 2 * slope["4"] > 0                  # half: consume's loop, N/2
    arith = {inv: (t2.icount[inv] - t1.icount[inv]) / 1000 for inv in ("2", "3")}
    assert arith == {"2": 2, "3": 3}
    for inv in ("2", "3", "4"):
        own1, own2, own3 = (t.xfers[inv, inv] for t in (t1, t2, t3))
        assert own2 - own1 == own3 - own2 > 0


def test_command_passes_stdin_stdout_status_and_imports(toolchain, cache, tmp_path):
    """Standard input and output pass through, the exit status (3) is reported and is
    not a mapeval failure; getchar's data comes from read(2) and putchar's leaves by
    write(2); a longjmp out of a recursion unwinds the shadow call stack."""
    exe = compile_c(toolchain, ECHO, tmp_path, "echo")
    xdg = tmp_path / "xdg"                 # $XDG_CACHE_HOME/mapeval is the module's cache
    xdg.mkdir()
    (xdg / "mapeval").symlink_to(cache)
    env = dict(os.environ, XDG_CACHE_HOME=str(xdg), PYTHONPATH=str(ROOT))
    out, sdf = tmp_path / "prof", tmp_path / "echo.sdf"
    done = subprocess.run([sys.executable, "-m", "mapping.cli", "profile", "-o", str(out),
                           "--sdf", str(sdf), "--inclusive", "--", str(exe)],
                          input=b"hello, world\n", capture_output=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"hello, world\n"
    assert b"exited with status 3" in done.stderr
    trace = read_logs(out)
    names = trace.names
    gets = [i for i, n in names.items() if n == "getchar"]
    puts = [i for i, n in names.items() if n == "putchar"]
    assert len(gets) == 14 and len(puts) == 13
    readers = {p for (p, c) in trace.xfers if c in gets and names[p] == "read"}
    assert readers, "getchar reads bytes that read(2) wrote"

    def under_putchar(inv):
        while inv is not None and names[inv] != "putchar":
            inv = trace.parent.get(inv)
        return inv is not None

    written = sum(b for (p, c), b in trace.xfers.items()
                  if names[c] == "write" and under_putchar(p))
    assert written == 13              # each byte putchar (or its callees) stored leaves once
    deep = [i for i, n in names.items() if n == "deep"]
    assert [trace.parent[i] for i in deep[1:]] == deep[:-1]       # recursion nests
    after = next(i for i, n in names.items() if n == "after")
    assert names[trace.parent[after]] == "main"                    # unwound by longjmp
    assert sdf.read_text().startswith("# Imported by 'mapeval import profile'")
    graph = import_profile(out, inclusive=True).graph
    assert "getchar" in graph.actors and "putchar" in graph.actors


def test_rerun_replaces_profile_and_exclude(pc_exe, producer_consumer, cache, tmp_path):
    out = tmp_path / "prof"
    shutil.copytree(pc_exe.parent / "prof1000", out)               # a previous profile
    result = profile_program([str(pc_exe), "10"], out, exclude=["half", "nothing"],
                             cache=cache)
    assert (result.excluded, result.not_called) == (1, ("nothing",))
    assert sorted(p.name for p in out.iterdir()) == ["function", "icount", "subcalls",
                                                     "xfers"]
    trace = read_logs(out)
    assert list(trace.names.values()) == ["main", "produce", "consume"]
    assert trace.xfers["2", "3"] == 10
    assert [p.name for p in tmp_path.iterdir()] == ["prof"]         # no temporary left
    with pytest.raises(Exception, match="never ran"):
        profile_program([str(pc_exe), "10"], tmp_path / "p2", root="no_such_function",
                        cache=cache)
    assert [p.name for p in tmp_path.iterdir()] == ["prof"]


# ----------------------------------------------------------------- the rotate example

ROTATE = ROOT / "examples" / "accelerator_store" / "rotate"


def test_rotate_example_files_check():
    for kernel in ("iter", "rec"):
        assert main(["check", str(ROTATE / f"rotate_{kernel}.sdf"),
                     str(ROTATE.parent / "private.moa"), str(ROTATE.parent / "shared.moa"),
                     str(ROTATE / f"{kernel}.map")]) == 0


def test_rotate_example_profile(toolchain, cache, tmp_path):
    """Both kernels rotate clockwise; the profile has the paper's data flow: one word
    per pixel from read_ppm to the kernel (plus the side and the image's address) and
    from the kernel to write_ppm; getchar and putchar are actors' callees."""
    sys.path.insert(0, str(ROTATE))
    try:
        from make_ppm import image
    finally:
        sys.path.remove(str(ROTATE))
    n = 16
    exe = tmp_path / "rotate"
    subprocess.run([toolchain.gcc, "-O2", "-fno-inline", "-g", "-o", str(exe),
                    str(ROTATE / "rotate.c")], check=True)
    ppm = image(n)
    body = ppm.split(b"\n", 3)[3]
    pixel = {(x, y): body[3 * (y * n + x):3 * (y * n + x) + 3]
             for y in range(n) for x in range(n)}
    for kernel in "ir":
        out = subprocess.run([str(exe), kernel], input=ppm, capture_output=True,
                             check=True).stdout
        rotated = out.split(b"\n", 3)[3]
        assert all(rotated[3 * (x * n + n - 1 - y):3 * (x * n + n - y)] == pixel[x, y]
                   for y in range(n) for x in range(n))
    (tmp_path / "in.ppm").write_bytes(ppm)
    with open(tmp_path / "in.ppm", "rb") as stdin:
        result = profile_program([str(exe), "i"], tmp_path / "prof", cache=cache,
                                 stdin=stdin, stdout=subprocess.DEVNULL)
    assert result.status == 0
    graph = import_profile(tmp_path / "prof", inclusive=True).graph
    assert list(graph.actors) == ["main", "read_ppm", "iter_rot", "write_ppm"]
    size = {(c.src, c.dst): c.size for c in graph.channels.values()}
    assert size["iter_rot", "write_ppm"] == 4 * n * n
    assert 4 * n * n < size["read_ppm", "iter_rot"] <= 4 * n * n + 16
    trace = read_logs(tmp_path / "prof")
    names = list(trace.names.values())
    assert names.count("getchar") == 3 * n * n + 1 and names.count("putchar") == 3 * n * n


ARGV_PRINTER = r"""
#include <stdio.h>
int main(int argc, char **argv) { for (int i = 1; i < argc; i++) puts(argv[i]); return 0; }
"""


def test_words_after_the_separator_belong_to_the_program(toolchain, cache, tmp_path):
    """mapeval's own --debug is taken only before '--': the program gets its --debug."""
    exe = compile_c(toolchain, ARGV_PRINTER, tmp_path, "argv")
    xdg = tmp_path / "xdg"
    xdg.mkdir()
    (xdg / "mapeval").symlink_to(cache)
    env = dict(os.environ, XDG_CACHE_HOME=str(xdg), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "mapping.cli", "profile", "-o",
                           str(tmp_path / "prof"), "--", str(exe), "--debug", "x"],
                          capture_output=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"--debug\nx\n"
