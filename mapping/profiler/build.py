"""Building the Valgrind tool ``mapeval_xfer`` from its C source, once per user.

A Valgrind tool is a static executable linked against Valgrind's own core libraries
(``libcoregrind``, ``libvex``, ``libgcc-sup``) and loaded by the ``valgrind`` launcher
from the directory ``VALGRIND_LIB`` names, next to Valgrind's other files.  The tool is
built with the system's ``gcc`` into ``$XDG_CACHE_HOME/mapeval`` (default
``~/.cache/mapeval``), in a directory keyed by a hash of the source, the flags and the
Valgrind version, so a new Valgrind or a changed source builds afresh and a rerun costs
nothing.
"""
from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from mapping.errors import InputError

TOOL = "mapeval_xfer"
SOURCE = Path(__file__).with_name(f"{TOOL}.c")
PLATFORM = "amd64-linux"
INSTALL = "apt-get install gcc valgrind"

#: Valgrind's own build of a tool for amd64 Linux (its Makefile.tool.am), restated
COMPILE_FLAGS = ("-O2", "-g", "-m64", "-Wall", "-Wno-unused-parameter", "-fno-strict-aliasing",
                 "-fno-builtin", "-fno-stack-protector", "-fno-pie", "-fno-pic",
                 "-DVGA_amd64=1", "-DVGO_linux=1", "-DVGP_amd64_linux=1",
                 "-DVGPV_amd64_linux_vanilla=1")
LINK_FLAGS = ("-static", "-nodefaultlibs", "-nostartfiles", "-u", "_start",
              "-Wl,--build-id=none", "-Wl,-Ttext-segment=0x58000000", "-m64")
LIBRARIES = (f"libcoregrind-{PLATFORM}.a", f"libvex-{PLATFORM}.a", f"libgcc-sup-{PLATFORM}.a")


class ToolchainError(InputError):
    """gcc, Valgrind, or Valgrind's tool headers or libraries are missing."""


@dataclass(frozen=True)
class Toolchain:
    """Where the pieces are: the compiler, the launcher and its version, the tool
    headers, the static libraries, and the directory of Valgrind's installed tools."""

    gcc: str
    valgrind: str
    version: str
    headers: Path
    libraries: Path
    libexec: Path


def _missing(what: str) -> ToolchainError:
    return ToolchainError(f"mapeval profile needs {what}; install it with: {INSTALL} "
                          "(Debian/Ubuntu; the valgrind package ships the tool headers and "
                          "libraries)")


def _prefixes(valgrind: str) -> list[Path]:
    real = Path(os.path.realpath(valgrind))
    return list(dict.fromkeys([real.parent.parent, Path("/usr"), Path("/usr/local")]))


def _first(candidates: Sequence[Path], *names: str) -> Path | None:
    for directory in candidates:
        if all((directory / name).is_file() for name in names):
            return directory
    return None


def find_toolchain(env: Mapping[str, str] | None = None,
                   include_dirs: Sequence[Path] | None = None,
                   library_dirs: Sequence[Path] | None = None) -> Toolchain:
    """Find gcc and Valgrind (on ``PATH`` of ``env``), Valgrind's tool headers and static
    libraries (searched in ``include_dirs``/``library_dirs``, default: beside the
    launcher's prefix and the distribution's paths); a :class:`ToolchainError` names
    what is missing and what to install."""
    env = os.environ if env is None else env
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise ToolchainError(f"mapeval profile runs on {PLATFORM} (x86-64 Linux) only, not "
                             f"{platform.system()} {platform.machine()}")
    path = env.get("PATH", os.defpath)
    gcc = shutil.which("gcc", path=path)
    valgrind = shutil.which("valgrind", path=path)
    if gcc is None and valgrind is None:
        raise _missing("gcc and Valgrind (neither 'gcc' nor 'valgrind' is on PATH)")
    if gcc is None:
        raise _missing("gcc to build its Valgrind tool ('gcc' is not on PATH)")
    if valgrind is None:
        raise _missing("Valgrind ('valgrind' is not on PATH)")
    try:
        version = subprocess.run([valgrind, "--version"], capture_output=True, text=True,
                                 timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        raise _missing(f"a working Valgrind ('{valgrind} --version' failed: {exc})") from None
    if not version.startswith("valgrind-"):
        raise _missing(f"a working Valgrind ('{valgrind} --version' printed {version!r})")
    prefixes = _prefixes(valgrind)
    arch = f"{platform.machine()}-linux-gnu"
    if include_dirs is None:
        include_dirs = [p / "include" / "valgrind" for p in prefixes]
    headers = _first(include_dirs, "pub_tool_basics.h", "pub_tool_tooliface.h", "libvex_ir.h")
    if headers is None:
        raise _missing("Valgrind's tool headers (pub_tool_basics.h, not found in "
                       + ", ".join(str(d) for d in include_dirs) + ")")
    if library_dirs is None:
        library_dirs = [d for p in prefixes for d in (p / "lib" / arch / "valgrind",
                                                      p / "lib" / "valgrind",
                                                      p / "libexec" / "valgrind")]
    libraries = _first(library_dirs, *LIBRARIES)
    if libraries is None:
        raise _missing(f"Valgrind's tool libraries ({', '.join(LIBRARIES)}, not found in "
                       + ", ".join(str(d) for d in library_dirs) + ")")
    libexec = _first([d for p in prefixes for d in (p / "libexec" / "valgrind",
                                                   p / "lib" / arch / "valgrind",
                                                   p / "lib" / "valgrind")],
                     f"none-{PLATFORM}")
    if libexec is None:
        raise _missing(f"Valgrind's installed tools (none-{PLATFORM} not found)")
    return Toolchain(gcc, valgrind, version, headers, libraries, libexec)


def cache_root(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/mapeval``, else ``~/.cache/mapeval``."""
    env = os.environ if env is None else env
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mapeval"


def tool_key(toolchain: Toolchain, source: bytes) -> str:
    """The hash naming a build: source, flags, Valgrind version and library place."""
    h = hashlib.sha256()
    for part in (source, "\0".join(COMPILE_FLAGS + LINK_FLAGS).encode(),
                 toolchain.version.encode(), str(toolchain.libraries).encode()):
        h.update(part)
        h.update(b"\0")
    return h.hexdigest()[:16]


def build_tool(toolchain: Toolchain | None = None, cache: Path | None = None) -> Path:
    """The ``VALGRIND_LIB`` directory holding the built tool next to links to Valgrind's
    installed files; built (atomically: in a temporary directory renamed into place)
    unless the cache already has it."""
    toolchain = toolchain or find_toolchain()
    cache = cache_root() if cache is None else Path(cache)
    source = SOURCE.read_bytes()
    final = cache / f"{TOOL}-{tool_key(toolchain, source)}"
    exe = f"{TOOL}-{PLATFORM}"
    if (final / exe).is_file():
        return final
    try:
        cache.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{TOOL}.", dir=cache))
    except OSError as exc:
        raise ToolchainError(f"cannot create the tool cache '{cache}': "
                             f"{exc.strerror or exc} (set XDG_CACHE_HOME to a writable "
                             "directory)") from None
    try:
        for item in toolchain.libexec.iterdir():
            if not item.name.startswith(".") and not (work / item.name).exists():
                os.symlink(item, work / item.name)
        obj = work / f"{TOOL}.o"
        _gcc([toolchain.gcc, "-c", *COMPILE_FLAGS, f"-I{toolchain.headers}", str(SOURCE),
              "-o", str(obj)], "compiling")
        _gcc([toolchain.gcc, "-o", str(work / exe), str(obj), *LINK_FLAGS,
              *(str(toolchain.libraries / lib) for lib in LIBRARIES), "-lgcc"], "linking")
        obj.unlink()
        try:
            os.rename(work, final)
        except OSError:
            if not (final / exe).is_file():      # not a concurrent build that won
                raise
            shutil.rmtree(work, ignore_errors=True)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return final


def _gcc(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise ToolchainError(f"{what} the Valgrind tool {SOURCE.name} failed (is the "
                             f"valgrind package complete? {INSTALL}):\n{tail}")
