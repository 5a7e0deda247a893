"""Children that a test signals start with the default signal dispositions.

A POSIX shell without job control starts a background job (``nohup pytest &``) with
SIGINT and SIGQUIT ignored; its children inherit that, and a Python child whose SIGINT is
ignored at start never raises KeyboardInterrupt, so a test that sends it SIGINT waits
until its timeout.  A test must not depend on how its runner was started: pass
``preexec_fn=default_signals`` to every child it will signal."""
from __future__ import annotations

import signal

#: the signals the tests send (SIGTERM is never ignored by a shell, but a runner may)
SENT = (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT)


def default_signals() -> None:
    """Run in the child between fork and exec: every sent signal back to its default."""
    for signum in SENT:
        signal.signal(signum, signal.SIG_DFL)
