"""Writing results: JSON on stdout, and output files written safely.

A regular file (or the target of a symlink) is replaced atomically through a temporary
file beside it; missing directories on its way are created and said so on stderr
(``created directory DIR``), and removed again if the write fails; a FIFO or a character
device (``/dev/stdout``) is written through, never replaced; anything else is refused.
A write that fails (a full disk, a quota, an I/O error) is an :class:`InputError` naming
the path, and the temporary file goes, as it does on any exception or signal
(:func:`mapping.cli.main.main` turns SIGTERM into :class:`mapping.errors.Terminated`).  An output never overwrites an input of the command,
its extension must fit what is written, and every error names the user's path.  Under
the command line (:func:`announce_writes`) every file written says so on stderr:
``wrote FILE``, the one place of that rule.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterator, Sequence
from io import IOBase
from pathlib import Path

from mapping.errors import InputError


#: paths that name an open descriptor (``-o /dev/stdout`` redirected to a file): written
#: through, as a shell redirection expects, never replaced
DESCRIPTORS = ("/dev/stdout", "/dev/stderr", "/dev/fd/", "/proc/self/fd/")

#: a new file only, never through a symlink planted under its name; binary where the
#: platform would translate line ends under the text layer's own
CREATE_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)

_announce = False


def announce_writes(on: bool = True) -> None:
    """From now on, every regular file written here says ``wrote FILE`` on stderr (the
    command line turns this on; a library caller writing a figure hears nothing).  A
    stream written through (a FIFO, ``/dev/stdout``) is no file left behind: silent."""
    global _announce
    _announce = on


def announce(path, note: str = "") -> None:
    """``wrote PATH`` (and ``: note``) on stderr when writes are announced; for files
    written other than through this module (a directory of logs)."""
    if _announce:
        print(f"wrote {path}" + (f": {note}" if note else ""), file=sys.stderr, flush=True)


def print_json(document, stream=None) -> None:
    """``document`` as one strict JSON document (non-finite numbers as ``"inf"``,
    ``"-inf"``, ``"nan"``), laid out by :func:`dsl.json_export.json_text`, the one
    convention."""
    from dsl.json_export import json_text
    stream = stream or sys.stdout
    # one write: json.dump writes piece by piece, millions of calls for a large document
    stream.write(json_text(document) + "\n")


def print_json_line(entry) -> None:
    """``entry`` as one line of strict JSON (as :func:`print_json`), flushed: a
    reader of ``--json-lines`` gets each entry as soon as it is made."""
    from dsl.json_export import json_text
    print(json_text(entry, indent=False), flush=True)


def _fail(path, what: str, exc: OSError | None = None) -> InputError:
    reason = f": {exc.strerror or exc}" if exc is not None else ""
    return InputError(f"cannot write '{path}': {what}{reason}")


#: what a failed write of a file or a stream (no file name: the data, not the path) is
#: caused by: the output's condition, not a bug
OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS})


def output_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is a failed write (:data:`OUTPUT_ERRNOS`) of data to a stream."""
    return isinstance(exc, OSError) and exc.errno in OUTPUT_ERRNOS and exc.filename is None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_output(path: str | Path, inputs: Sequence = (),
                 suffixes: Sequence[str] | None = None, what: str = "the output"
                 ) -> tuple[Path, int | None, bool]:
    """Raise the :class:`InputError` that writing ``path`` would raise (an input of the
    command, not a regular file, FIFO or device, a wrong extension), before any work;
    return the file to write (a symlink's target), its mode (None: a new file) and
    whether it is written through (a FIFO, a device, a descriptor) rather than replaced."""
    user = str(path)
    try:
        mode = os.stat(path).st_mode             # through symlinks (and /dev/stdout)
    except (FileNotFoundError, NotADirectoryError):
        mode = None                              # (a file on its way: said below)
    except OSError as exc:
        raise _fail(user, "cannot reach it", exc) from None
    if mode is not None and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)
                             or os.path.abspath(path).startswith(DESCRIPTORS)):
        return Path(path), mode, True            # opened as given, written through
    target = Path(os.path.realpath(path))        # a symlink: replace its target
    for source in inputs:
        if _same_file(target, Path(source)):
            raise InputError(f"refusing to write '{user}': it is an input of this command")
    if mode is not None and not stat.S_ISREG(mode):
        raise InputError(f"refusing to write '{user}': it is not a regular file")
    if suffixes and Path(path).suffix.lower() not in suffixes:
        raise InputError(f"refusing to write '{user}': {what} is written to a "
                         f"{' or '.join(suffixes)} file")
    existing = next(p for p in Path(os.path.abspath(path)).parents if p.exists())
    if not existing.is_dir():
        raise InputError(f"cannot write '{user}': '{os.path.relpath(existing)}' is not a "
                         "directory")
    return target, mode, False


def _make_parents(target: Path, user: str) -> list[Path]:
    """Create the missing directories of ``target`` (said so on stderr), the deepest
    last; the list of those created."""
    missing = [p for p in reversed(target.parents) if not p.exists()]
    for directory in missing:
        try:
            directory.mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            _remove_dirs(missing)
            raise _fail(user, f"cannot create the directory '{directory}'", exc) from None
        if _announce:
            shown = os.path.relpath(directory)
            shown = directory if shown.startswith("..") else shown
            print(f"created directory {shown}", file=sys.stderr, flush=True)
    return missing


def _remove_dirs(created: list[Path]) -> None:
    for directory in reversed(created):
        with contextlib.suppress(OSError):
            directory.rmdir()


@contextlib.contextmanager
def open_output(path: str | Path, binary: bool = False, inputs: Sequence = (),
                suffixes: Sequence[str] | None = None, what: str = "the output",
                note: str = "") -> Iterator[IOBase]:
    """A file object writing to ``path`` as described in this module; a regular file
    appears only when the block ends without an exception (then announced, with
    ``note``).  ``suffixes``: the extensions that fit (``(".csv",)``), checked for
    regular files."""
    user = str(path)
    target, mode, through = check_output(path, inputs, suffixes, what)
    fmode = "wb" if binary else "w"
    encoding = None if binary else "utf-8"
    if through:
        # a FIFO, a device or a descriptor: appended to (a descriptor's file keeps what
        # was written before, as with a shell's >>), never truncated or replaced
        sys.stdout.flush()
        try:
            stream = open(target, "ab" if binary else "a", encoding=encoding)
        except OSError as exc:
            raise _fail(user, "cannot open it", exc) from None
        try:
            with stream:
                yield stream
        except OSError as exc:
            if output_failure(exc):
                raise _fail(user, "writing failed", exc) from None
            raise
        return
    created = _make_parents(target, user)
    tmp = stream = None
    try:
        while stream is None:
            # named before it exists, so that a signal at any point after its creation
            # finds the name to remove (mkstemp names it only once created)
            tmp = target.parent / f".{target.name}.{os.urandom(4).hex()}"
            with contextlib.suppress(FileExistsError):
                stream = os.fdopen(os.open(tmp, CREATE_NEW, 0o600), fmode,
                                   encoding=encoding)
        with stream:
            yield stream
    except BaseException as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        _remove_dirs(created)
        if stream is None and isinstance(exc, OSError):
            raise _fail(user, f"cannot create a file in '{target.parent}'", exc) from None
        if output_failure(exc):
            raise _fail(user, "writing failed", exc) from None
        raise
    try:
        # created 0600: keep an existing file's permissions, else the umask's
        if mode is not None:
            os.chmod(tmp, stat.S_IMODE(mode))
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _remove_dirs(created)
        raise _fail(user, "writing failed", exc) from None
    announce(user, note)


def write_atomically(path: str | Path, text: str | bytes, inputs: Sequence = (),
                     suffixes: Sequence[str] | None = None, what: str = "the output",
                     note: str = "") -> Path:
    """Write ``text`` to ``path`` through :func:`open_output`."""
    with open_output(path, isinstance(text, bytes), inputs, suffixes, what,
                     note) as stream:
        stream.write(text)
    return Path(path)
