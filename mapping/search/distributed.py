"""Running search shards on a Dask cluster (the optional ``distributed`` extra).

The shards of a search — the islands of a heuristic, each with its own seed and share
of the budget, or the canonical-prefix subtrees of an exhaustive enumeration — are
independent: :class:`DaskExecutor` submits them to a Dask scheduler and gathers the
results in shard order, so a distributed search gives the same answer as a local one
for the same seed and budget.  Each task carries the compiled cost tables (numpy
arrays), never the files.

Point it at an existing cluster with ``address`` (``tcp://scheduler:8786``; the workers
need ``mapeval`` installed), or give ``workers`` to start a ``LocalCluster`` on
127.0.0.1 only.
"""
from __future__ import annotations

from typing import Callable, Sequence

from mapping.errors import InputError

INSTALL_HINT = ("the distributed engine needs Dask: pip install 'mapeval[distributed]' "
                "(or pip install 'dask[distributed]')")


def _dask():
    try:
        import dask.distributed as dd
    except ImportError:
        raise InputError(f"--scheduler/--workers: {INSTALL_HINT}") from None
    return dd


class DaskExecutor:
    """Runs :class:`mapping.search.engine.Task` objects on Dask workers.

    ``address``: an existing scheduler; otherwise a ``LocalCluster`` of ``workers``
    workers bound to 127.0.0.1 (threads when ``processes`` is False, the default being
    one process per worker with one thread each).
    """

    def __init__(self, address: str | None = None, workers: int | None = None,
                 processes: bool = True, client=None):
        dd = _dask()
        self._own_cluster = None
        if client is not None:
            self.client = client
            self._own_client = False
            return
        if address:
            try:
                self.client = dd.Client(address, timeout="20s")
            except (OSError, TimeoutError) as exc:
                raise InputError(f"--scheduler {address}: cannot connect ({exc})") from None
        else:
            n = int(workers or 1)
            # worker processes talk TCP on loopback only; threads talk in-process
            where = {"host": "127.0.0.1"} if processes else {}
            self._own_cluster = dd.LocalCluster(
                n_workers=n, threads_per_worker=1, processes=processes,
                dashboard_address="127.0.0.1:0", worker_dashboard_address="127.0.0.1:0",
                silence_logs=50, **where)
            self.client = dd.Client(self._own_cluster)
        self._own_client = True

    def run(self, tasks: Sequence, progress: Callable[[int], None] | None = None) -> list:
        from mapping.search.engine import run_task
        dd = _dask()
        futures = self.client.map(run_task, list(tasks), pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        results = [None] * len(futures)
        for future in dd.as_completed(futures):
            result = future.result()
            results[index[future.key]] = result
            if progress is not None:
                progress(result.evaluations)
        return results

    def close(self) -> None:
        if self._own_client:
            self.client.close()
        if self._own_cluster is not None:
            self._own_cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
