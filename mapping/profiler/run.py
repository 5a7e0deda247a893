"""Running a program under the tool and writing its four logs into a directory atomically."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from dsl.importers.profile import read_call_tree
from mapping.errors import InputError
from mapping.profiler.build import TOOL, build_tool, find_toolchain

LOGS = ("function", "subcalls", "icount", "xfers")


@dataclass(frozen=True)
class ProfileRun:
    """A profiled run: where its logs are, the program's exit ``status`` (negative: killed
    by that signal), the wall-clock ``seconds`` under Valgrind, and the counts logged."""

    directory: Path
    status: int
    seconds: float
    invocations: int
    functions: int
    excluded: int = 0
    not_called: tuple[str, ...] = ()      # excluded names that never ran


def _program(command: Sequence[str], env: Mapping[str, str]) -> str:
    if not command:
        raise InputError("no program to profile: give it after '--' "
                         "(mapeval profile -o OUTDIR -- PROGRAM ARGS...)")
    name = command[0]
    found = shutil.which(name, path=env.get("PATH", os.defpath)) if os.sep not in name \
        else (name if os.access(name, os.X_OK) and os.path.isfile(name) else None)
    if found is None:
        raise InputError(f"'{name}': no such program (or not executable)")
    return found


def _inside(path: Path, directory: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(directory))
        return True
    except ValueError:
        return False


def check_outdir(outdir: str | Path, inputs: Iterable[str | Path] = ()) -> Path:
    """Refuse an output directory that is not a directory, holds anything but the four
    logs (a profile is replaced whole, nothing else is), or holds an input."""
    outdir = Path(outdir)
    if outdir.exists() or outdir.is_symlink():
        if not outdir.is_dir() or outdir.is_symlink():
            raise InputError(f"refusing to write '{outdir}': it is not a directory")
        others = sorted(p.name for p in outdir.iterdir() if p.name not in LOGS)
        if others:
            raise InputError(f"refusing to replace '{outdir}': it holds files other than the "
                             f"profile's logs ({', '.join(others[:3])}"
                             f"{', ...' if len(others) > 3 else ''})")
    for item in inputs:
        if Path(item).exists() and _inside(Path(item), outdir):
            raise InputError(f"refusing to write '{outdir}': it holds '{item}', an input "
                             "of the profiled run")
    return outdir


def exclude_functions(directory: Path, names: Iterable[str]) -> int:
    """Drop the invocations of the functions ``names`` with their whole call trees from
    the logs in ``directory``: their lines, their instructions and every transfer from or
    to them; return how many invocations went.  The remaining ids are unchanged."""
    names = set(names)
    if not names:
        return 0
    dropped = _call_trees(read_call_tree(directory), names)
    _drop(directory, dropped)
    return len(dropped)


def _call_trees(tree, names: set) -> set:
    """The invocations of the functions ``names`` in the call ``tree`` and all they
    call."""
    dropped = set()
    stack = [inv for inv, name in tree.names.items() if name in names]
    while stack:
        inv = stack.pop()
        if inv not in dropped:
            dropped.add(inv)
            stack.extend(tree.children.get(inv, ()))
    return dropped


def _drop(directory: Path, dropped: set) -> None:
    """Rewrite the logs in ``directory`` without the invocations ``dropped``."""

    def keep(path: Path, alive) -> None:
        tmp = path.with_name(f".{path.name}.tmp")
        with open(path, encoding="utf-8") as src, open(tmp, "w", encoding="utf-8") as dst:
            for line in src:
                kept = alive(line)
                if kept is not None:
                    dst.write(kept)
        os.replace(tmp, path)

    def first_field(line):
        fields = line.split("#", 1)[0].split()
        return line if not fields or fields[0] not in dropped else None

    def subcall(line):
        head, colon, rest = line.split("#", 1)[0].partition(":")
        if not colon:
            return line
        if head.strip() in dropped:
            return None
        kids = [c for c in rest.split() if c not in dropped]
        return f"{head.strip()}: {' '.join(kids)}\n" if kids else None

    def xfer(line):
        fields = line.split("#", 1)[0].split()
        return line if len(fields) < 2 or not dropped & {fields[0], fields[1]} else None

    keep(directory / "function", first_field)
    keep(directory / "icount", first_field)
    keep(directory / "subcalls", subcall)
    keep(directory / "xfers", xfer)


def profile_program(command: Sequence[str], outdir: str | Path, root: str = "main",
                    exclude: Iterable[str] = (), env: Mapping[str, str] | None = None,
                    cache: Path | None = None, stdin=None, stdout=None) -> ProfileRun:
    """Run ``command`` under the tool (standard input and output are the caller's, or the
    files ``stdin`` and ``stdout``; standard error is the caller's) and write the four
    logs into ``outdir``, replacing a previous profile there only once the run
    succeeded.  Lazy binding is turned off (``LD_BIND_NOW=1``) so the dynamic
    linker does not run inside the first call of each library function."""
    env = dict(os.environ if env is None else env)
    program = _program(command, env)
    inputs = [program, *(a for a in command[1:] if a and os.path.exists(a))]
    outdir = check_outdir(outdir, inputs)
    toolchain = find_toolchain(env)
    libdir = build_tool(toolchain, cache)
    parent = outdir.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{outdir.name}.", dir=parent))
    except OSError as exc:
        raise InputError(f"cannot write '{outdir}': {exc.strerror or exc}") from None
    try:
        env.update(VALGRIND_LIB=str(libdir), LD_BIND_NOW="1")
        argv = [toolchain.valgrind, "-q", f"--tool={TOOL}", f"--outdir={work}",
                f"--root={root}", "--demangle=no", program, *command[1:]]
        start = time.perf_counter()
        status = subprocess.run(argv, env=env, stdin=stdin, stdout=stdout).returncode
        seconds = time.perf_counter() - start
        missing = [name for name in LOGS if not (work / name).is_file()]
        if missing:
            raise InputError(f"the profiler wrote no logs (valgrind exited with status "
                             f"{status}; its messages are above)")
        tree = read_call_tree(work)
        invocations = tree.names
        if not invocations:
            raise InputError(f"function '{root}' never ran under the profiler: is "
                             f"'{command[0]}' built with its symbols (not stripped)? "
                             "--root names another function to record from")
        exclude = list(dict.fromkeys(exclude))
        called = set(invocations.values())
        not_called = tuple(name for name in exclude if name not in called)
        dropped = _call_trees(tree, set(exclude))
        if dropped:
            _drop(work, dropped)
        excluded = len(dropped)
        functions = len({name for inv, name in invocations.items() if inv not in dropped})
        os.chmod(work, 0o777 & ~_umask())
        _replace(work, outdir)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return ProfileRun(outdir, status, seconds, len(invocations) - excluded, functions, excluded,
                      not_called)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _replace(new: Path, outdir: Path) -> None:
    """Rename ``new`` to ``outdir``; an existing profile there is moved aside first and
    removed after."""
    old = None
    if outdir.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{outdir.name}.old.", dir=new.parent))
        os.rename(outdir, old / "profile")
    try:
        os.rename(new, outdir)
    except OSError as exc:
        if old is not None:
            os.rename(old / "profile", outdir)
        raise InputError(f"cannot write '{outdir}': {exc.strerror or exc}") from None
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
