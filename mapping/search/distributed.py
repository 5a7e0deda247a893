"""Running search shards on a Dask cluster (the optional ``distributed`` extra).

The shards of a search — the islands of a heuristic, each with its own seed and share
of the budget, or the canonical-prefix subtrees of an exhaustive enumeration — are
independent: :class:`DaskExecutor` submits them to a Dask scheduler and gathers the
results in shard order, so a distributed search gives the same answer as a local one
for the same seed and budget.  The compiled objectives and the space go to each worker
once (one task every shard depends on); a shard is one long run of the batch evaluator.

Anytime: every shard reports its best mapping so far to the client (Dask events, at
most every :data:`mapping.search.dask_shard.REPORT_INTERVAL` seconds).  When the scheduler is lost, the time limit
passes or the user presses Ctrl-C, :meth:`DaskExecutor.run` returns the finished shards
and the best-so-far of the others, and :attr:`DaskExecutor.outcome` says what was lost.
A shard that fails is retried ``retries`` times, then left out.

Point it at an existing cluster with ``address`` (``tcp://scheduler:8786``; the workers
need ``mapeval`` installed), or give ``workers`` to start a ``LocalCluster`` on
127.0.0.1 only, which :meth:`DaskExecutor.close` always shuts down.  Connecting, and
every wait on the scheduler, is bounded by ``timeout`` seconds.

This module is the client: it submits the shards, gathers results and best-so-far
reports, and says what was lost.  A shard on a worker is :mod:`mapping.search.dask_shard`;
addresses, the probe, the local cluster and Ctrl-C are :mod:`mapping.search.dask_cluster`.
"""
from __future__ import annotations

import math
import threading
import time
import uuid
from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

from mapping.errors import InputError
from mapping.options import NATURAL, POSITIVE_WHOLE, SECONDS
from mapping.search.common import SearchError, ShardResult
from mapping.search.dask_cluster import (CONNECT_TIMEOUT, QuietLoggers, SigintFlag,
                                         deadline_call, import_dask, kill_workers,
                                         local_cluster, no_sigint, parse_address, probe)
from mapping.search.dask_shard import run_shard, shared_payload


def _worker_addresses(client, timeout: float) -> list[str]:
    """The workers' addresses the scheduler knows (empty when it does not answer)."""
    try:
        done, info = deadline_call(client.scheduler_info, timeout)
    except Exception:  # noqa: BLE001 - no placement hint then
        return []
    return sorted(info.get("workers", {})) if done and isinstance(info, dict) else []


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
        dd = import_dask()
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
        self._quiet = QuietLoggers()
        try:
            if target is not None:
                probe(target, self.timeout)
                self.address = str(target)
                self.client = dd.Client(self.address, timeout=self.timeout)
            else:
                self._own_cluster = local_cluster(dd, int(workers), processes)
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
        with SigintFlag() as ctrl_c:
            try:
                client.subscribe_topic(topic, board.receive)
                same = all(t.objectives is tasks[0].objectives and t.space is tasks[0].space
                           for t in tasks)
                shared = None
                if same and tasks:
                    # a task, not scattered data: Dask computes it again if every worker
                    # holding it is lost
                    shared = client.submit(shared_payload,
                                           (tasks[0].objectives, tasks[0].space),
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
                deadline_call(lambda: self.client.cancel(unfinished, force=True),
                               min(self.timeout, 5.0))
            except Exception:  # noqa: BLE001
                pass

    # ----------------------------------------------------------------------- close
    def close(self) -> None:
        """Close the client and shut down a cluster this executor started, on every
        path, within the timeout."""
        with no_sigint():          # a second Ctrl-C must not leave workers behind
            self._close()

    def _close(self) -> None:
        limit = min(getattr(self, "timeout", CONNECT_TIMEOUT), 10.0)
        client = getattr(self, "client", None)
        if self._own_client and client is not None:
            try:
                deadline_call(lambda: client.close(timeout=limit), limit + 1.0)
            except Exception:  # noqa: BLE001 - closing a broken connection
                pass
            self._own_client = False
        if self._own_cluster is not None:
            cluster, self._own_cluster = self._own_cluster, None
            try:
                cluster.close(timeout=limit)
            except Exception:  # noqa: BLE001 - the workers are killed below anyway
                pass
            kill_workers(cluster)
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
