"""The worker side of a distributed search: one shard run on a Dask worker
(:func:`run_shard`), reporting its best mapping so far to the client as Dask events and
stopping once nobody waits for its result, with glibc's heap kept while it runs
(:class:`mapping.search.distributed.DaskExecutor` submits the shards).
"""
from __future__ import annotations

import ctypes
import math
import os
import threading
import time
from dataclasses import replace

from mapping.search.common import ShardResult

#: seconds between two best-so-far reports of a shard
REPORT_INTERVAL = 0.5
#: glibc's heap-trim threshold during a shard.  Dask's nannies start workers with
#: MALLOC_TRIM_THRESHOLD_=65536, which hands the heap top back to the OS after nearly
#: every numpy temporary of a search step, so that the next step faults the pages in
#: again: 30-40% of a worker's time on the 20-actor benchmark
SHARD_TRIM_THRESHOLD = 1 << 27


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


def shared_payload(payload):
    """The task every shard depends on: the objectives and the space, sent to each
    worker once."""
    return payload


def _worker_address() -> str:
    try:
        from distributed import get_worker
        return get_worker().address
    except (ImportError, ValueError):
        return "local"
