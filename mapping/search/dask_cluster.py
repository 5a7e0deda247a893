"""Connecting to a Dask cluster for a distributed search (the optional ``distributed``
extra): scheduler addresses (``[scheme://]host[:port]``) and a probe that checks one
answers Dask's handshake within a timeout, a ``LocalCluster`` on 127.0.0.1 started and
always shut down, Dask's loggers kept quiet, and Ctrl-C handled by the client alone
(:class:`mapping.search.distributed.DaskExecutor` uses all of them).
"""
from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import threading
import time
from dataclasses import dataclass

from mapping.errors import InputError

INSTALL_HINT = ("the distributed engine needs Dask: pip install 'mapeval[distributed]' "
                "(or pip install 'dask[distributed]')")
#: seconds allowed to connect to a scheduler, and for every later wait on it
CONNECT_TIMEOUT = 20.0
DEFAULT_PORT = 8786
SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")
#: Dask's loggers silenced while a command uses the cluster (no Dask traceback reaches
#: the user's terminal; what matters is reported by mapeval)
QUIET_LOGGERS = ("distributed", "tornado", "asyncio", "bokeh")


def import_dask():
    """``dask.distributed``, or an :class:`InputError` saying how to install it."""
    try:
        import dask.distributed as dd
    except ImportError:
        raise InputError(f"--scheduler/--workers: {INSTALL_HINT}") from None
    return dd


# --------------------------------------------------------------------------- address
@dataclass(frozen=True)
class Address:
    """A scheduler address: ``scheme://host:port``."""

    scheme: str
    host: str
    port: int

    def __str__(self):
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


def parse_address(text: str | None, option: str = "--scheduler") -> Address:
    """``[scheme://]host[:port]`` (scheme ``tcp`` and port :data:`DEFAULT_PORT` when
    left out); a clear :class:`InputError` for an empty value, a scheme Dask does not
    speak (``http``), a missing host or a port outside 1..65535."""
    raw = (text or "").strip()
    if not raw:
        raise InputError(f"{option}: empty address (give tcp://HOST:{DEFAULT_PORT}, or "
                         "--workers N for a local cluster)")
    scheme, sep, rest = raw.partition("://")
    if not sep:
        scheme, rest = "tcp", raw
    scheme = scheme.lower()
    if scheme not in SCHEMES:
        hint = (f" (the Dask dashboard speaks http, usually on port 8787; the scheduler "
                f"listens on tcp://HOST:{DEFAULT_PORT})") if scheme.startswith("http") else ""
        raise InputError(f"{option} {raw}: unknown scheme '{scheme}://'{hint}; "
                         f"known: {', '.join(s + '://' for s in SCHEMES)}")
    rest = rest.rstrip("/")
    if "/" in rest:
        raise InputError(f"{option} {raw}: an address has no path (tcp://HOST:PORT)")
    if rest.startswith("["):                      # [IPv6]:port
        host, _, tail = rest[1:].partition("]")
        port_text = tail[1:] if tail.startswith(":") else (None if not tail else tail)
    elif rest.count(":") > 1:                     # bare IPv6, no port
        host, port_text = rest, None
    else:
        host, sep, port_text = rest.partition(":")
        port_text = port_text if sep else None
    port = DEFAULT_PORT
    if port_text is not None:
        if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
            raise InputError(f"{option} {raw}: invalid port '{port_text}' "
                             "(a number from 1 to 65535)")
        port = int(port_text)
    if not host and scheme != "inproc":
        raise InputError(f"{option} {raw}: no host (tcp://HOST:{DEFAULT_PORT})")
    return Address(scheme, host, port)


def deadline_call(fn, timeout: float):
    """``fn()`` in a daemon thread, given up after ``timeout`` seconds (name lookups
    and other calls without a timeout of their own): ``(done, value or exception)``."""
    box: list = []

    def target():
        try:
            box.append((True, fn()))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box.append((False, exc))

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout)
    if not box:
        return False, None
    ok, value = box[0]
    if not ok:
        raise value
    return True, value


async def _identity(address: str, timeout: float):
    from distributed.comm import connect
    comm = await connect(address, timeout=timeout)
    try:
        await comm.write({"op": "identity"})
        return await comm.read()
    finally:
        comm.abort()


def probe(address: Address, timeout: float = CONNECT_TIMEOUT, option: str = "--scheduler"
          ) -> dict:
    """Check that a Dask scheduler answers at ``address`` within ``timeout`` seconds:
    the host resolves, something listens, and it answers Dask's handshake (a silent
    listener does not).  Returns the scheduler's identity; raises :class:`InputError`."""
    where = f"{option} {address}"
    end = time.monotonic() + timeout
    if address.scheme in ("tcp", "tls", "ws", "wss"):
        try:
            done, infos = deadline_call(lambda: socket.getaddrinfo(
                address.host, address.port, type=socket.SOCK_STREAM), timeout)
        except (socket.gaierror, UnicodeError) as exc:
            raise InputError(f"{where}: cannot resolve host '{address.host}' "
                             f"({exc.args[-1] if exc.args else exc})") from None
        if not done:
            raise InputError(f"{where}: looking up host '{address.host}' took more than "
                             f"{timeout:g} s") from None
        family, kind, proto, _, sockaddr = infos[0]
        try:
            with socket.socket(family, kind, proto) as s:
                s.settimeout(max(end - time.monotonic(), 0.01))
                s.connect(sockaddr)
        except ConnectionRefusedError:
            raise InputError(f"{where}: connection refused (is a Dask scheduler running "
                             "there?)") from None
        except (socket.timeout, TimeoutError):
            raise InputError(f"{where}: no connection within {timeout:g} s") from None
        except OSError as exc:
            raise InputError(f"{where}: cannot connect ({exc.strerror or exc})") from None
    left = max(end - time.monotonic(), 0.01)

    async def ask():
        return await asyncio.wait_for(_identity(str(address), left), left)
    try:
        done, ident = deadline_call(lambda: asyncio.run(ask()), left + 1.0)
    except (asyncio.TimeoutError, TimeoutError):
        done, ident = False, None
    except Exception as exc:  # noqa: BLE001 - any failure of the handshake
        raise InputError(f"{where}: not a Dask scheduler, or it refused the handshake "
                         f"({type(exc).__name__}: {exc})") from None
    if not done or ident is None:
        raise InputError(f"{where}: the address accepts connections but gave no Dask "
                         f"answer within {timeout:g} s (is it a Dask scheduler?)")
    if not isinstance(ident, dict) or ident.get("type") != "Scheduler":
        kind = ident.get("type") if isinstance(ident, dict) else type(ident).__name__
        raise InputError(f"{where}: this is not a Dask scheduler (it says: {kind})")
    return ident


# --------------------------------------------------------------------------- logging
class QuietLoggers:
    """Silences :data:`QUIET_LOGGERS` (and their children) until :meth:`restore`."""

    def __init__(self):
        self.saved = {}
        names = [n for n in list(logging.root.manager.loggerDict)
                 if n.split(".")[0] in QUIET_LOGGERS] + list(QUIET_LOGGERS)
        for name in names:
            log = logging.getLogger(name)
            self.saved[name] = log.level
            log.setLevel(logging.CRITICAL + 1)

    def restore(self):
        for name, level in self.saved.items():
            logging.getLogger(name).setLevel(level)
        self.saved = {}


def local_cluster(dd, n: int, processes: bool):
    """A ``LocalCluster`` on 127.0.0.1 of ``n`` single-thread workers: numpy limited to
    one thread in each, Dask's sampling profiler off (it takes the GIL every 10 ms)."""
    import dask
    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {})
    environ.update({v: 1 for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                   "MKL_NUM_THREADS")})
    where = {"host": "127.0.0.1"} if processes else {}
    with dask.config.set({"distributed.worker.profile.enabled": False,
                          "distributed.nanny.pre-spawn-environ": environ}), \
            no_sigint(processes):
        return dd.LocalCluster(
            n_workers=n, threads_per_worker=1, processes=processes,
            dashboard_address="127.0.0.1:0", worker_dashboard_address="127.0.0.1:0",
            silence_logs=logging.CRITICAL, **where)


class no_sigint:
    """SIGINT ignored inside (main thread only).  Worker processes started inside
    inherit it: a terminal's Ctrl-C reaches the whole process group, and the client,
    not each worker with its own traceback, handles it (it stops the search and shuts
    the cluster down, which a second Ctrl-C does not interrupt)."""

    def __init__(self, active: bool = True):
        self.active = active and threading.current_thread() is threading.main_thread()
        self.old = None

    def _handler(self):
        return signal.SIG_IGN

    def __enter__(self):
        if self.active:
            self.old = signal.signal(signal.SIGINT, self._handler())
        return self

    def __exit__(self, *exc):
        if self.active:
            signal.signal(signal.SIGINT, self.old)


class SigintFlag(no_sigint):
    """SIGINT sets :attr:`raised` instead of raising KeyboardInterrupt (main thread
    only), so that a Ctrl-C stops the poll loop between two polls and never lands
    inside a Dask call (a KeyboardInterrupt raised there may leave the client's state
    half-updated; with it, the test of Ctrl-C timed out in 2 of 6 full test runs)."""

    raised = False

    def _handler(self):
        def record(signum, frame):
            self.raised = True
        return record


def kill_workers(cluster) -> None:
    """Worker processes still alive after the cluster closed (it timed out) are killed."""
    for worker in list(getattr(cluster, "workers", {}).values()):
        process = getattr(getattr(worker, "process", None), "process", None)
        pid = getattr(process, "pid", None)
        if pid and getattr(process, "is_alive", lambda: False)():
            try:
                os.kill(pid, 9)
            except OSError:
                pass
