"""Progress of long work: one line on stderr, redrawn in place.

Numeric functions take a ``progress`` callback (``progress(n)``: n more units done);
commands create the bar with :func:`progress_bar`.  The rule of when it shows is here
and only here: with ``--progress``; otherwise when stderr is a terminal, but never with
``--json``.  Never on stdout.
"""
from __future__ import annotations

import sys
import time


def shown(asked: bool = False, json: bool = False, stream=None) -> bool:
    """Whether a command shows progress: always when ``asked`` (``--progress``: on stderr,
    so even with ``--json`` stdout stays one JSON document), otherwise when ``stream``
    (stderr) is a terminal and the command does not print JSON (a script reads it)."""
    if asked:
        return True
    if json:
        return False
    stream = stream or sys.stderr
    return bool(getattr(stream, "isatty", lambda: False)())


class Progress:
    """A one-line progress report on stderr, redrawn at most every ``interval`` seconds:
    ``label [####   ]  42.0% 420/1000 (1,234/s)``, or a count when the total is unknown.
    Call it with the units just done; :meth:`close` ends the line (also as a context
    manager).  ``enabled=None``: shown when the stream is a terminal."""

    def __init__(self, total: int | None, label: str = "search", enabled: bool | None = None,
                 stream=None, interval: float = 0.25, unit: str = "evaluations"):
        self.stream = stream or sys.stderr
        if enabled is None:
            enabled = shown(stream=self.stream)
        self.enabled, self.total, self.label, self.unit = enabled, total, label, unit
        self.done, self.interval = 0, interval
        self._last = 0.0
        self._start = time.perf_counter()
        self._drawn = False

    def __call__(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last >= self.interval:
            self._last = now
            self._draw(now)

    def _draw(self, now):
        rate = self.done / max(now - self._start, 1e-9)
        if self.total:
            frac = min(self.done / self.total, 1.0)
            bar = "#" * int(frac * 30)
            text = f"\r{self.label} [{bar:<30}] {frac:6.1%} {self.done}/{self.total} " \
                   f"({rate:,.0f}/s)"
        else:
            text = f"\r{self.label}: {self.done} {self.unit} ({rate:,.0f}/s)"
        self.stream.write(text)
        self.stream.flush()
        self._drawn = True

    def close(self):
        """Draw the final count and end the line (if anything was drawn)."""
        if self.enabled and self._drawn:
            self._draw(time.perf_counter())
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def progress_bar(args, total: int | None, label: str, unit: str = "evaluations"
                 ) -> Progress:
    """The bar of a command run with ``args`` (its ``--progress`` and ``--json``, where it
    has them), on stderr."""
    enabled = shown(bool(getattr(args, "progress", False)), bool(getattr(args, "json", False)))
    return Progress(total, label, enabled, unit=unit)


def add_progress_option(parser) -> None:
    """``--progress``: show progress on stderr even when it is not a terminal."""
    parser.add_argument("--progress", action="store_true",
                        help="show progress on stderr even when it is not a terminal "
                        "or with --json")
