"""Input files: only regular, readable files are read, and what a path is instead is
named (a directory, a FIFO, a device, a broken symlink); text is UTF-8, and a byte that
is not is reported at its ``line:col``.  The one place every reader of the text and
table formats opens its input."""
from __future__ import annotations

import os
import stat
from io import TextIOBase
from pathlib import Path

from dsl.errors import ParseError

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def not_readable(path: str | Path) -> str | None:
    """Why ``path`` cannot be read as an input file (``"no such file"``, ``"a directory,
    not a file"``, ``"a symlink to /dev/zero, a character device, not a file"``, ...),
    or ``None`` when it is a regular file this process may read."""
    path = str(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            return f"a broken symlink (to '{os.readlink(path)}')"
        return "no such file"
    except NotADirectoryError:
        return "no such file (a part of its path is not a directory)"
    except OSError as exc:
        return f"cannot reach it: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        return None if os.access(path, os.R_OK) else "permission denied"
    what = _kind(mode)
    if os.path.islink(path):
        what = f"a symlink to '{os.path.realpath(path)}', {what}"
    return f"{what}, not a file"


def check_readable(path: str | Path) -> Path:
    """``path``, or a :class:`ParseError` naming what it is instead of a readable file."""
    why = not_readable(path)
    if why is not None:
        raise ParseError(f"'{path}': {why}")
    return Path(path)


def decode_utf8(data: bytes, path: str | Path) -> str:
    """``data`` decoded as UTF-8 (a leading byte-order mark dropped); a byte that is not
    UTF-8 is a :class:`ParseError` at its ``line:col`` (col counts characters)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = data[:exc.start].decode("utf-8-sig", errors="replace")
        line = before.count("\n") + 1
        col = len(before) - (before.rfind("\n") + 1) + 1
        raise ParseError(f"not a UTF-8 text file: byte 0x{data[exc.start]:02x} at offset "
                         f"{exc.start} ({exc.reason})", (str(path), line, col)) from None


def read_bytes(path: str | Path) -> bytes:
    """The bytes of the input file ``path`` (see :func:`check_readable`)."""
    check_readable(path)
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ParseError(f"'{path}': cannot read it: {exc.strerror or exc}") from None


def read_text(path: str | Path, newline: str | None = None) -> str:
    """The UTF-8 text of the input file ``path``; ``newline=None`` turns ``\\r\\n`` and
    ``\\r`` into ``\\n`` (as :func:`open` does), ``""`` keeps them as written."""
    text = decode_utf8(read_bytes(path), path)
    return text.replace("\r\n", "\n").replace("\r", "\n") if newline is None else text


def open_text(path: str | Path, newline: str | None = None) -> TextIOBase:
    """The input file ``path`` as a text stream (for :mod:`csv`, ``newline=""``); its
    whole text is decoded first, so that a bad byte is an error at its position."""
    import io
    return io.StringIO(read_text(path, newline), newline="")
