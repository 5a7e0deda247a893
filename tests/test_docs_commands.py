"""The ``console`` blocks of README.md and of the documentation run, and print what they show.

Pages: the README, the tutorial, the how-to pages listed in ``PAGES`` and the examples'
READMEs. A block is a shell session: ``$ COMMAND`` lines (a trailing backslash continues
one), each followed by the output it shows. Commands run with ``bash`` (one each) in a
temporary directory holding a copy of ``examples/`` (and an empty ``out/``), one block
after another in one directory, so that a later command may read what an earlier one
wrote; a command that only sets a shell variable (``$ B=examples/...``) is run again
before every later command of its page, as a reader's shell would keep it. A line
``<!-- console: MARKS -->`` right above a block marks it (an HTML comment: neither GitHub
nor the site shows it): ``shared``, its commands read ``../shared/`` (the data folder
next to the repository: they are skipped where it is absent); ``long``, they take
minutes (the page says so: they run only with ``MAPEVAL_LONG_STUDIES`` set). The
output shown is what the command prints (stdout then stderr), line for line: whitespace
runs compare equal, ``...`` inside a line matches any text, and a line that is only
``...`` stands for any number of lines (a page that leaves lines out says so with it). A
command shown without output may print anything."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "docs" / "tutorial.md",
         ROOT / "docs" / "howto" / "board-from-datasheet.md", ROOT / "docs" / "howto" / "calibrate.md",
         ROOT / "docs" / "howto" / "neural-networks.md", ROOT / "docs" / "howto" / "preesm.md",
         *sorted(ROOT.glob("examples/*/README.md")), *sorted(ROOT.glob("examples/*/*/README.md"))]
#: pages whose commands need an optional package
NEEDS = {"docs/howto/neural-networks.md": "onnx", "examples/sdf3_lookup/README.md": "ortools"}
#: the shared data folder, a sibling of the repository (where present)
SHARED = ROOT.parent / "shared"
SETS = re.compile(r"[A-Za-z_]\w*=")
BLOCK = re.compile(r"^(?:<!-- console:((?:[ \t]+(?:long|shared))+) -->\n)?"
                   r"```console[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)


#: a command: its line, the command, the output it shows and its block's marks
Session = tuple[int, str, list[str], frozenset]


def sessions(text: str) -> list[Session]:
    """``(line, command, expected output lines, its block's marks)`` of every ``$``
    command of the console blocks of a Markdown text."""
    found = []
    for block in BLOCK.finditer(text):
        first = text.count("\n", 0, block.start(2)) + 1
        lines = block.group(2).split("\n")
        i = 0
        while i < len(lines):
            if not lines[i].startswith("$ "):
                i += 1
                continue
            at, command = first + i, lines[i][2:]
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1] + " " + lines[i].strip()
            i += 1
            expected = []
            while i < len(lines) and not lines[i].startswith("$ "):
                expected.append(lines[i])
                i += 1
            while expected and not expected[-1].strip():
                expected.pop()
            found.append((at, command, expected, frozenset((block.group(1) or "").split())))
    return found


def _pattern(line: str) -> re.Pattern:
    parts = [r"\s+".join(map(re.escape, chunk.split())) for chunk in line.strip().split("...")]
    return re.compile(r"\s*" + ".*".join(parts) + r"\s*$")


def shows(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` (output lines) shows ``expected`` as the module doc says."""
    if not expected:
        return True

    def match(e: int, a: int) -> bool:
        if e == len(expected):
            return a == len(actual)
        if expected[e].strip() == "...":
            return any(match(e + 1, k) for k in range(a, len(actual) + 1))
        return a < len(actual) and bool(_pattern(expected[e]).match(actual[a])) \
            and match(e + 1, a + 1)
    return match(0, 0)


def test_the_matcher():
    assert shows(["...", "a  b", "...", "c ... d"], ["x", "a b", "y", "z", "c 12 d"])
    assert not shows(["a  b", "...", "c ... d"], ["x", "a b", "y", "z", "c 12 d"])
    assert not shows(["a", "c"], ["a", "b", "c"])      # a line left out needs a "..."
    assert not shows(["a"], ["a", "b"])
    assert shows(["a", "..."], ["a", "b"])
    assert shows([], ["anything"])
    assert not shows(["a", "b"], ["b", "a"])
    assert not shows(["c ... d"], ["c 12 e"])
    assert sessions("```console\n$ echo a \\\n  b\na b\n\n$ true\n```\n") == \
        [(2, "echo a  b", ["a b"], set()), (6, "true", [], set())]
    page = "```console\n$ B=x\n```\n<!-- console: long shared -->\n```console\n$ echo $B\nx\n```\n"
    assert carried(sessions(page)) == [(2, "B=x", [], set()),
                                       (6, "B=x\necho $B", ["x"], {"long", "shared"})]


def carried(found: list[Session]) -> list[Session]:
    """The ``sessions`` of a page, each command preceded by the page's earlier commands
    that set a variable."""
    variables, out = [], []
    for line, command, expected, marks in found:
        out.append((line, "\n".join([*variables, command]), expected, marks))
        if SETS.match(command):
            variables.append(command)
    return out


CASES = [(page, *session) for page in PAGES
         for session in carried(sessions(page.read_text(encoding="utf-8")))]


def test_the_pages_have_commands():
    assert {page.relative_to(ROOT).as_posix() for page, *_ in CASES} == {
        "README.md", "docs/tutorial.md", "docs/howto/board-from-datasheet.md",
        "docs/howto/calibrate.md", "docs/howto/neural-networks.md", "docs/howto/preesm.md",
        "examples/csdf/README.md", "examples/gsla/README.md",
        "examples/calibration/biglittle/README.md",
        "examples/calibration/preesm/README.md", "examples/timing/README.md",
        "examples/calibration/streaming/README.md", "examples/sdf3_lookup/README.md",
        "examples/measured/README.md", "examples/gpu_choice/README.md"}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    work = tmp_path_factory.mktemp("docs") / "repo"
    shutil.copytree(ROOT / "examples", work / "examples")
    (work / "out").mkdir()
    if SHARED.is_dir():
        (work.parent / "shared").symlink_to(SHARED, target_is_directory=True)
    return work


@pytest.mark.parametrize("page, line, command, expected, marks", CASES,
                         ids=[f"{p.relative_to(ROOT)}:{n}" for p, n, *_ in CASES])
def test_console_command(page, line, command, expected, marks, workdir):
    if page.relative_to(ROOT).as_posix() in NEEDS:
        pytest.importorskip(NEEDS[page.relative_to(ROOT).as_posix()])
    if "shared" in marks and not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent")
    if "long" in marks and not os.environ.get("MAPEVAL_LONG_STUDIES"):
        pytest.skip("a long command: set MAPEVAL_LONG_STUDIES=1 to run it")
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg",
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    done = subprocess.run(["bash", "-c", command], cwd=workdir, env=env, text=True,
                          capture_output=True, timeout=300)
    output = (done.stdout + done.stderr).splitlines()
    assert done.returncode == 0, f"{page.name}:{line}: exit {done.returncode}\n{done.stderr}"
    assert shows(expected, output), (f"{page.name}:{line}: the output does not show what "
                                     f"the page says:\n" + "\n".join(output))
