"""Error messages in the ``FILE:LINE:COL: error: MESSAGE`` form, with the source line
and a caret under the column."""
from __future__ import annotations

import os

#: the most characters of a source line shown: a minified file (SDF3's XML, ONNX's
#: JSON) is one line of thousands, of which the part around the column is shown
WIDTH = 100
ELLIPSIS = "..."


def _window(src: str, col: int | None) -> tuple[str, int | None]:
    """The part of ``src`` shown, at most :data:`WIDTH` characters around ``col``
    (1-based) with ``...`` where it is cut, and the column within it."""
    if len(src) <= WIDTH:
        return src, col
    target = min(max(col or 1, 1), len(src) + 1) - 1
    start = max(0, min(target - WIDTH // 2, len(src) - WIDTH))
    shown = src[start:start + WIDTH]
    head = ELLIPSIS if start else ""
    tail = ELLIPSIS if start + WIDTH < len(src) else ""
    return head + shown + tail, None if col is None else target - start + len(head) + 1


def _source_line(filename, line, source):
    text = source
    if text is None and filename and not filename.startswith("<") and os.path.isfile(filename):
        try:
            with open(filename, encoding="utf-8", errors="replace") as fh:
                for number, content in enumerate(fh, 1):
                    if number == line:
                        return content.rstrip("\r\n")
            return None
        except OSError:
            return None
    if text is None:
        return None
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else None


def _place(origin) -> tuple[str, int | None, int | None] | None:
    """``(file, line, column)`` of ``origin`` (``<input>`` for a text without a file,
    ``None`` where unknown); ``None`` when it names neither a file nor a line."""
    if not origin or origin[0] is None and (len(origin) < 2 or origin[1] is None):
        return None
    return (str(origin[0]) if origin[0] is not None else "<input>",
            origin[1] if len(origin) > 1 else None, origin[2] if len(origin) > 2 else None)


def _where(filename: str, line: int | None, col: int | None) -> str:
    """``FILE:LINE:COL``, as much of it as is known."""
    if line is None:
        return filename
    return f"{filename}:{line}" if col is None else f"{filename}:{line}:{col}"


def format_located(message: str, origin=None) -> str:
    """``FILE:LINE:COL: MESSAGE`` on one line, placed as :func:`format_diagnostic`
    places it, for one entry of a list (the rows a command skipped); ``MESSAGE``
    alone without an origin."""
    place = _place(origin)
    return message if place is None else f"{_where(*place)}: {message}"


def format_diagnostic(message: str, origin=None, source: str | None = None,
                      program: str = "mapeval", severity: str = "error") -> str:
    """``FILE:LINE:COL: error: MESSAGE`` then the source line and a caret.

    ``origin`` is ``(file, line, column)`` (any part may be ``None``); the line is read
    from the file on disk, or from ``source`` (the text that was parsed) when given.
    Without an origin: ``mapeval: error: MESSAGE``."""
    place = _place(origin)
    if place is None:
        return f"{program}: {severity}: {message}"
    filename, line, col = place
    out = f"{_where(filename, line, col)}: {severity}: {message}"
    if line is None:
        return out
    src = _source_line(str(filename), line, source)
    if src is None:
        return out
    src = src.expandtabs(8) if col is None else src
    src, col = _window(src, col)
    out += "\n    " + src
    if col is not None and col >= 1:
        # keep tabs under tabs so that the caret lines up in a terminal
        lead = "".join(ch if ch == "\t" else " " for ch in src[:col - 1])
        lead += " " * max(0, col - 1 - len(src))
        out += "\n    " + lead + "^"
    return out
