"""Running search shards on a Dask cluster (the optional ``distributed`` extra).

The shards of a search — the islands of a heuristic, each with its own seed and share
of the budget, or the canonical-prefix subtrees of an exhaustive enumeration — are
independent: :class:`DaskExecutor` submits them to a Dask scheduler and gathers the
results in shard order, so a distributed search gives the same answer as a local one
for the same seed and budget.  The compiled objectives and the space go to each worker
once (one task every shard depends on); a shard is one long run of the batch evaluator.

Anytime: every shard reports its best mapping so far to the client (Dask events, at
most every :data:`REPORT_INTERVAL` seconds).  When the scheduler is lost, the time limit
passes or the user presses Ctrl-C, :meth:`DaskExecutor.run` returns the finished shards
and the best-so-far of the others, and :attr:`DaskExecutor.outcome` says what was lost.
A shard that fails is retried ``retries`` times, then left out.

Point it at an existing cluster with ``address`` (``tcp://scheduler:8786``; the workers
need ``mapeval`` installed), or give ``workers`` to start a ``LocalCluster`` on
127.0.0.1 only, which :meth:`DaskExecutor.close` always shuts down.  Connecting, and
every wait on the scheduler, is bounded by ``timeout`` seconds.
"""
from __future__ import annotations

import asyncio
import ctypes
import logging
import math
import os
import signal
import socket
import threading
import time
import uuid
from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

from mapping.errors import InputError
from mapping.options import NATURAL, POSITIVE_WHOLE, SECONDS
from mapping.search.common import SearchError, ShardResult

INSTALL_HINT = ("the distributed engine needs Dask: pip install 'mapeval[distributed]' "
                "(or pip install 'dask[distributed]')")
#: seconds allowed to connect to a scheduler, and for every later wait on it
CONNECT_TIMEOUT = 20.0
#: seconds between two best-so-far reports of a shard
REPORT_INTERVAL = 0.5
DEFAULT_PORT = 8786
SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")
#: glibc's heap-trim threshold during a shard.  Dask's nannies start workers with
#: MALLOC_TRIM_THRESHOLD_=65536, which hands the heap top back to the OS after nearly
#: every numpy temporary of a search step, so that the next step faults the pages in
#: again: 30-40% of a worker's time on the 20-actor benchmark
SHARD_TRIM_THRESHOLD = 1 << 27
#: Dask's loggers silenced while a command uses the cluster (no Dask traceback reaches
#: the user's terminal; what matters is reported by mapeval)
QUIET_LOGGERS = ("distributed", "tornado", "asyncio", "bokeh")


def _dask():
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


def _deadline_call(fn, timeout: float):
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
            done, infos = _deadline_call(lambda: socket.getaddrinfo(
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
        done, ident = _deadline_call(lambda: asyncio.run(ask()), left + 1.0)
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
class _Quiet:
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


# ----------------------------------------------------------------------- worker side
_trim = {"users": 0, "lock": threading.Lock()}


def _set_trim(value: int) -> None:
    try:
        ctypes.CDLL(None).mallopt(-1, ctypes.c_int(value))   # M_TRIM_THRESHOLD
    except (OSError, AttributeError, TypeError):
        pass                                                   # not glibc


class _HeapKept:
    """While a shard runs, raise glibc's trim threshold if the worker was started with
    a small one (:data:`SHARD_TRIM_THRESHOLD`); restored when the last shard ends."""

    def __init__(self):
        env = os.environ.get("MALLOC_TRIM_THRESHOLD_", "")
        self.old = int(env) if env.isdigit() and int(env) < SHARD_TRIM_THRESHOLD else None

    def __enter__(self):
        if self.old is not None:
            with _trim["lock"]:
                if _trim["users"] == 0:
                    _set_trim(SHARD_TRIM_THRESHOLD)
                _trim["users"] += 1

    def __exit__(self, *exc):
        if self.old is not None:
            with _trim["lock"]:
                _trim["users"] -= 1
                if _trim["users"] == 0:
                    _set_trim(self.old)


class ShardStopped(Exception):
    """Raised inside a shard whose result nobody waits for any more."""


def _reporter(topic: str, index: int, interval: float):
    """A function that sends a shard's best-so-far to the client as a Dask event and
    stops the shard (:class:`ShardStopped`) once its task was cancelled or its worker
    is closing: Dask never interrupts a running task, and a shard left running would
    keep the worker busy after the client stopped (time limit, Ctrl-C, lost scheduler)."""
    try:
        from distributed import get_worker
        from distributed.worker import thread_state
        worker = get_worker()
    except (ImportError, ValueError):
        return None
    key = getattr(thread_state, "key", None)
    state = {"last": -math.inf}

    def report(tracker):
        now = time.monotonic()
        if now - state["last"] < interval:
            return
        state["last"] = now
        if _abandoned(worker, key):
            raise ShardStopped(f"shard {index} stopped: its task was cancelled")
        if tracker.best_row is None:
            return
        msg = {"shard": index, "evaluations": int(tracker.evaluations),
               "row": [int(v) for v in tracker.best_row]}
        worker.log_event(topic, msg)
    return report


def _abandoned(worker, key) -> bool:
    status = getattr(getattr(worker, "status", None), "name", "running")
    if status in ("closing", "closed", "failed"):       # not a graceful retirement
        return True
    tasks = getattr(getattr(worker, "state", None), "tasks", None)
    ts = tasks.get(key) if tasks is not None and key is not None else None
    return getattr(ts, "state", None) == "cancelled"


def run_shard(task, shared=None, topic: str | None = None,
              interval: float = REPORT_INTERVAL) -> tuple[ShardResult, dict]:
    """Run one shard on a worker (what Dask executes): the result of
    :func:`mapping.search.engine.run_task`, and the worker's address, evaluations and
    seconds (wall and CPU) for its speed.  ``shared``: ``(objectives, space)`` when the
    task was sent without them; ``topic``: where best-so-far reports go."""
    from mapping.search.engine import run_task
    if shared is not None:
        task = replace(task, objectives=shared[0], space=shared[1])
    report = _reporter(topic, task.index, interval) if topic else None
    wall, cpu = time.perf_counter(), time.thread_time()
    with _HeapKept():
        result = run_task(task, report=report)
    stats = {"worker": _worker_address(), "evaluations": int(result.evaluations),
             "seconds": time.perf_counter() - wall, "cpu_seconds": time.thread_time() - cpu}
    return result, stats


def _shared(payload):
    """The task every shard depends on: the objectives and the space, sent to each
    worker once."""
    return payload


def _worker_addresses(client, timeout: float) -> list[str]:
    try:
        done, info = _deadline_call(client.scheduler_info, timeout)
    except Exception:  # noqa: BLE001 - no placement hint then
        return []
    return sorted(info.get("workers", {})) if done and isinstance(info, dict) else []


def _worker_address() -> str:
    try:
        from distributed import get_worker
        return get_worker().address
    except (ImportError, ValueError):
        return "local"


# ----------------------------------------------------------------------- client side
class _Board:
    """Best-so-far reports of the shards, written by the client's event thread."""

    def __init__(self):
        self.lock = threading.Lock()
        self.best: dict[int, tuple[list, int]] = {}
        self.evaluations: dict[int, int] = {}

    def receive(self, event) -> None:
        msg = event[1] if isinstance(event, (tuple, list)) and len(event) == 2 else event
        try:
            i, evals, row = int(msg["shard"]), int(msg["evaluations"]), msg["row"]
        except (KeyError, TypeError, ValueError):
            return
        with self.lock:
            self.evaluations[i] = max(evals, self.evaluations.get(i, 0))
            self.best.setdefault(i, []).append(row)
            del self.best[i][:-8]

    def snapshot(self):
        with self.lock:
            return dict(self.evaluations), {i: list(r) for i, r in self.best.items()}


def partial_result(task, rows: Sequence[Sequence[int]], evaluations: int) -> ShardResult:
    """What an unfinished shard contributes: the best of its reported mappings, valued
    on the client with the shard's own objectives and scalarizer."""
    if not rows:
        return ShardResult(math.inf, None, None, int(evaluations))
    X = np.asarray(rows, dtype=np.intp)
    F = task.objectives(X)
    s = task.scalarizer(F)
    i = int(np.argmin(s))
    multi = F.shape[1] > 1
    return ShardResult(float(s[i]), X[i].copy(), F[i].copy(), int(evaluations),
                       X[i][None, :].copy() if multi else None,
                       F[i][None, :].copy() if multi else None)


@dataclass(frozen=True)
class Outcome:
    """How a distributed run ended: ``stopped`` (None when every shard finished, else
    why not), the shards ``finished``, ``partial`` (their best-so-far kept) and
    ``failed`` (index → error), and each worker's speed."""

    shards: int
    finished: tuple[int, ...]
    partial: tuple[int, ...]
    failed: dict
    stopped: str | None
    workers: dict
    seconds: float

    @property
    def statement(self) -> str | None:
        """One sentence for the user: what was lost (None when nothing was)."""
        if self.stopped is None and not self.failed:
            return None
        parts = [f"{len(self.finished)} of {self.shards} shards finished"]
        if self.partial:
            parts.append(f"{len(self.partial)} returned their best so far")
        if self.failed:
            parts.append("failed: " + "; ".join(f"shard {i}: {e}"
                                                  for i, e in sorted(self.failed.items())))
        reason = self.stopped or "a shard failed"
        return f"{reason}; " + ", ".join(parts)

    def to_dict(self) -> dict:
        d = {"shards": self.shards, "finished": len(self.finished),
             "workers": self.workers}
        if self.partial:
            d["partial"] = list(self.partial)
        if self.failed:
            d["failed"] = {str(i): e for i, e in sorted(self.failed.items())}
        return d


def worker_speeds(stats: Sequence[dict]) -> dict:
    """Per worker: shards, evaluations, busy seconds and mappings per second."""
    out: dict[str, dict] = {}
    for s in stats:
        w = out.setdefault(s["worker"], {"shards": 0, "evaluations": 0, "seconds": 0.0,
                                         "cpu_seconds": 0.0})
        w["shards"] += 1
        w["evaluations"] += int(s["evaluations"])
        w["seconds"] += float(s["seconds"])
        w["cpu_seconds"] += float(s["cpu_seconds"])
    for w in out.values():
        w["per_s"] = round(w["evaluations"] / w["seconds"]) if w["seconds"] > 0 else None
        w["seconds"] = round(w["seconds"], 3)
        w["cpu_seconds"] = round(w["cpu_seconds"], 3)
    return out


class DaskExecutor:
    """Runs :class:`mapping.search.engine.Task` objects on Dask workers.

    ``address``: an existing scheduler (checked by :func:`probe` first); otherwise a
    ``LocalCluster`` of ``workers`` workers bound to 127.0.0.1 (threads when
    ``processes`` is False, the default being one process per worker with one thread
    each, numpy limited to one thread and Dask's profiler off).  ``timeout``: seconds
    for connecting and for every wait on the scheduler; ``retries``: how often a failed
    shard is run again; ``time_limit``: seconds after the first :meth:`run` starts when
    the best-so-far is returned.
    """

    def __init__(self, address: str | None = None, workers: int | None = None,
                 processes: bool = True, client=None, timeout: float = CONNECT_TIMEOUT,
                 retries: int = 0, time_limit: float | None = None):
        dd = _dask()
        SECONDS.check(timeout, "--connect-timeout")
        NATURAL.check(retries, "--retries")
        if time_limit is not None:
            SECONDS.check(time_limit, "--time-limit")
        self.timeout, self.retries, self.time_limit = float(timeout), int(retries), time_limit
        self._deadline = None
        self._own_cluster = None
        self._own_client = False
        self.outcome: Outcome | None = None
        self.address = None
        if client is not None:
            self.client = client
            return
        target = None
        if address is not None:
            target = parse_address(address)
        else:
            POSITIVE_WHOLE.check(workers, "--workers")
        self._quiet = _Quiet()
        try:
            if target is not None:
                probe(target, self.timeout)
                self.address = str(target)
                self.client = dd.Client(self.address, timeout=self.timeout)
            else:
                self._own_cluster = _local_cluster(dd, int(workers), processes)
                self.client = dd.Client(self._own_cluster, timeout=self.timeout)
                self.address = self._own_cluster.scheduler_address
        except InputError:
            self.close()
            raise
        except (OSError, TimeoutError) as exc:
            self.close()
            raise InputError(f"--scheduler {address}: cannot connect ({exc})") from None
        except BaseException:
            self.close()
            raise
        self._own_client = True

    # ------------------------------------------------------------------------- run
    def run(self, tasks: Sequence, progress: Callable[[int], None] | None = None) -> list:
        """The shards' results in shard order; unfinished shards (scheduler lost, time
        limit, Ctrl-C) contribute their best-so-far (:attr:`outcome` says which)."""
        tasks = list(tasks)
        start = time.monotonic()
        if self.time_limit is not None and self._deadline is None:
            self._deadline = start + float(self.time_limit)
        n = len(tasks)
        results: dict[int, ShardResult] = {}
        stats: list[dict] = []
        failed: dict[int, str] = {}
        stopped = None
        board = _Board()
        topic = f"mapeval-search-{uuid.uuid4().hex}"
        client = self.client
        futures = []
        shown: dict[int, int] = {}

        def show(i, evaluations):
            if progress is not None and evaluations > shown.get(i, 0):
                progress(evaluations - shown.get(i, 0))
                shown[i] = evaluations
        with _SigintFlag() as ctrl_c:
            try:
                client.subscribe_topic(topic, board.receive)
                same = all(t.objectives is tasks[0].objectives and t.space is tasks[0].space
                           for t in tasks)
                shared = None
                if same and tasks:
                    # a task, not scattered data: Dask computes it again if every worker
                    # holding it is lost
                    shared = client.submit(_shared, (tasks[0].objectives, tasks[0].space),
                                           pure=False, key=f"mapeval-shared-{topic}")
                # the shards spread over the workers (Dask would put them all where the
                # shared data is); any worker may take them over
                workers = _worker_addresses(client, self.timeout)
                for i, t in enumerate(tasks):
                    sent = replace(t, objectives=None, space=None) if shared is not None else t
                    where = {"workers": [workers[i % len(workers)]],
                             "allow_other_workers": True} if workers else {}
                    futures.append(client.submit(run_shard, sent, shared, topic,
                                                 pure=False, retries=self.retries,
                                                 key=f"mapeval-shard-{i}-{topic}", **where))
                away_since = None
                while len(results) + len(failed) < n:
                    if ctrl_c.raised:
                        stopped = "interrupted (Ctrl-C)"
                        break
                    if self._deadline is not None and time.monotonic() >= self._deadline:
                        stopped = f"the time limit of {self.time_limit:g} s was reached"
                        break
                    if client.status != "running":
                        away_since = away_since or time.monotonic()
                        if time.monotonic() - away_since > min(self.timeout, 5.0):
                            stopped = f"the scheduler {self.address} was lost"
                            break
                    else:
                        away_since = None
                    lost = False
                    for i, f in enumerate(futures):
                        if i in results or i in failed:
                            continue
                        status = f.status
                        if status == "finished":
                            try:
                                res, st = f.result(timeout=self.timeout)
                            except Exception:  # noqa: BLE001 - the scheduler went away
                                lost = True
                                break
                            results[i] = res
                            stats.append(st)
                            show(i, res.evaluations)
                        elif status == "error":
                            try:
                                exc = f.exception(timeout=self.timeout)
                            except Exception:  # noqa: BLE001
                                lost = True
                                break
                            failed[i] = _describe(exc, self.retries)
                        elif status == "cancelled":
                            # the client cancels every future when it loses the scheduler
                            if client.status == "running":
                                failed[i] = "cancelled on the cluster"
                            else:
                                lost = True
                        # "lost": a worker holding the result died; Dask computes it again
                    if lost:
                        stopped = f"the scheduler {self.address} was lost"
                        break
                    evals, _ = board.snapshot()
                    for i, e in evals.items():
                        if i not in results:
                            show(i, e)
                    time.sleep(0.05)
            except KeyboardInterrupt:
                stopped = "interrupted (Ctrl-C)"
            finally:
                # (a second Ctrl-C only sets the flag again: no shard is left running)
                self._release(topic, [f for i, f in enumerate(futures)
                                      if i not in results and i not in failed])
        if stopped is None and failed and len(failed) == n:
            first = min(failed)
            raise SearchError(f"every shard failed on the Dask cluster; shard {first}: "
                              f"{failed[first]}")
        evals, reported = board.snapshot()
        out, partial = [], []
        for i, t in enumerate(tasks):
            if i in results:
                out.append(results[i])
                continue
            r = partial_result(t, reported.get(i, []), evals.get(i, 0))
            if r.best_row is not None:
                partial.append(i)
            out.append(r)
        self.outcome = Outcome(n, tuple(sorted(results)), tuple(partial), failed, stopped,
                               worker_speeds(stats), time.monotonic() - start)
        if all(r.best_row is None for r in out):
            if stopped and stopped.startswith("interrupted"):
                raise KeyboardInterrupt
            raise SearchError(f"{self.outcome.statement or 'no shard ran'}: no mapping was "
                              "reported before that")
        return out

    def _release(self, topic, unfinished) -> None:
        try:
            self.client.unsubscribe_topic(topic)
        except Exception:  # noqa: BLE001 - best effort on a broken connection
            pass
        if unfinished and self.client.status == "running":
            try:
                _deadline_call(lambda: self.client.cancel(unfinished, force=True),
                               min(self.timeout, 5.0))
            except Exception:  # noqa: BLE001
                pass

    # ----------------------------------------------------------------------- close
    def close(self) -> None:
        """Close the client and shut down a cluster this executor started, on every
        path, within the timeout."""
        with _no_sigint():          # a second Ctrl-C must not leave workers behind
            self._close()

    def _close(self) -> None:
        limit = min(getattr(self, "timeout", CONNECT_TIMEOUT), 10.0)
        client = getattr(self, "client", None)
        if self._own_client and client is not None:
            try:
                _deadline_call(lambda: client.close(timeout=limit), limit + 1.0)
            except Exception:  # noqa: BLE001 - closing a broken connection
                pass
            self._own_client = False
        if self._own_cluster is not None:
            cluster, self._own_cluster = self._own_cluster, None
            try:
                cluster.close(timeout=limit)
            except Exception:  # noqa: BLE001 - the workers are killed below anyway
                pass
            _kill_workers(cluster)
        quiet = getattr(self, "_quiet", None)
        if quiet is not None:
            # late messages of the closing loops stay quiet for a moment
            time.sleep(0.05)
            quiet.restore()
            self._quiet = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _describe(exc, retries: int) -> str:
    tries = f" (after {retries} retr{'y' if retries == 1 else 'ies'})" if retries else ""
    hint = " (is mapeval installed on the workers?)" \
        if isinstance(exc, ImportError) else ""
    return f"{type(exc).__name__}: {exc}{hint}{tries}"


def _local_cluster(dd, n: int, processes: bool):
    """A ``LocalCluster`` on 127.0.0.1 of ``n`` single-thread workers: numpy limited to
    one thread in each, Dask's sampling profiler off (it takes the GIL every 10 ms)."""
    import dask
    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {})
    environ.update({v: 1 for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                   "MKL_NUM_THREADS")})
    where = {"host": "127.0.0.1"} if processes else {}
    with dask.config.set({"distributed.worker.profile.enabled": False,
                          "distributed.nanny.pre-spawn-environ": environ}), \
            _no_sigint(processes):
        return dd.LocalCluster(
            n_workers=n, threads_per_worker=1, processes=processes,
            dashboard_address="127.0.0.1:0", worker_dashboard_address="127.0.0.1:0",
            silence_logs=logging.CRITICAL, **where)


class _no_sigint:
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


class _SigintFlag(_no_sigint):
    """SIGINT sets :attr:`raised` instead of raising KeyboardInterrupt (main thread
    only), so that a Ctrl-C stops the poll loop between two polls and never lands
    inside a Dask call (a KeyboardInterrupt raised there may leave the client's state
    half-updated; with it, the test of Ctrl-C timed out in 2 of 6 full test runs)."""

    raised = False

    def _handler(self):
        def record(signum, frame):
            self.raised = True
        return record


def _kill_workers(cluster) -> None:
    """Worker processes still alive after the cluster closed (it timed out) are killed."""
    for worker in list(getattr(cluster, "workers", {}).values()):
        process = getattr(getattr(worker, "process", None), "process", None)
        pid = getattr(process, "pid", None)
        if pid and getattr(process, "is_alive", lambda: False)():
            try:
                os.kill(pid, 9)
            except OSError:
                pass
