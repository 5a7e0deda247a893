"""The distributed search under faults, on loopback only (issue 18): bad and silent
addresses are exit-2 errors within the deadline; a killed worker changes nothing; a
killed scheduler, the time limit and Ctrl-C return the best mapping so far (exit 0);
a ``--workers`` cluster is always shut down.  Every wait here is bounded."""
from __future__ import annotations

import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from child_signals import default_signals

pytest.importorskip("dask.distributed")

from mapping.errors import InputError  # noqa: E402
from mapping.search.dask_cluster import Address, parse_address  # noqa: E402
from mapping.search.dask_shard import run_shard  # noqa: E402
from mapping.search.distributed import DaskExecutor  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT), e.get("PYTHONPATH", "")])
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        e[v] = "1"
    return e


def chain_app(n: int = 20) -> str:
    lines = ["sdf chain {"]
    lines += [f"    actor a{i} [quanta = {1000 + 137 * i % 900}]" for i in range(n)]
    lines += [f"    a{(i * 7) % i} -> a{i} [size = {1 + i % 5}]" for i in range(1, n)]
    return "\n".join(lines + ["}"]) + "\n"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    from test_search import ARCH
    d = tmp_path_factory.mktemp("faults")
    (d / "app.sdf").write_text(chain_app())
    (d / "arch.moa").write_text(ARCH)
    return [str(d / "app.sdf"), str(d / "arch.moa")]


class Cli:
    """``mapeval ARGS`` in a subprocess; its output is read by threads, so that every
    wait on it is bounded."""

    def __init__(self, args, **kw):
        self.proc = subprocess.Popen([sys.executable, "-m", "mapping.cli.main", *args],
                                     env=env(), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     preexec_fn=default_signals, **kw)
        self.out, self.err = [], []
        self.readers = [threading.Thread(target=self._read, args=(s, b), daemon=True)
                        for s, b in ((self.proc.stdout, self.out),
                                     (self.proc.stderr, self.err))]
        for r in self.readers:
            r.start()

    @staticmethod
    def _read(stream, buffer):
        while True:
            chunk = stream.read(1)
            if not chunk:
                return
            buffer.append(chunk)

    def wait_for(self, text, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if text in "".join(self.err):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        pytest.fail(f"no {text!r} on stderr within {timeout} s: {''.join(self.err)[-400:]!r}")

    def finish(self, timeout):
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"mapeval did not end within {timeout} s")
        for r in self.readers:
            r.join(5)
        return self.proc.returncode, "".join(self.out), "".join(self.err)

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                self.proc.kill()
            self.proc.wait(10)


def cli(args):
    return Cli(args, start_new_session=True)


# ------------------------------------------------------------------ addresses
def test_parse_address():
    assert parse_address("tcp://10.0.0.1:8786") == Address("tcp", "10.0.0.1", 8786)
    assert parse_address("head") == Address("tcp", "head", 8786)
    assert parse_address("[::1]:9000") == Address("tcp", "::1", 9000)
    assert str(parse_address("tls://[::1]")) == "tls://[::1]:8786"
    for bad, words in [("", "empty"), ("   ", "empty"), ("http://head:8786", "scheme"),
                       (":99999", "invalid port"), ("head:0", "invalid port"),
                       ("head:x", "invalid port"), ("tcp://:8786", "no host"),
                       ("tcp://head:8786/status", "no path")]:
        with pytest.raises(InputError, match=words):
            parse_address(bad)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def silent_listener():
    """Accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held = []

    def accept():
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return
    threading.Thread(target=accept, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    server.close()
    for c in held:
        c.close()


def test_bad_addresses_exit_2_within_deadline(inputs, capsys):
    from mapping.cli.main import main
    for address, words, deadline in [
            ("", "empty address", 0), ("http://127.0.0.1:8786", "unknown scheme", 0),
            (":99999", "invalid port", 0),
            (f"tcp://127.0.0.1:{free_port()}", "connection refused", 0),
            ("tcp://no-such-host.invalid:8786", "cannot resolve host", 2)]:
        t = time.monotonic()
        assert main(["search", *inputs, "--scheduler", address,
                     "--connect-timeout", "2"]) == 2, address
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err, err
        assert time.monotonic() - t < deadline + 1.5, address
    assert main(["search", *inputs, "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"]) == 2
    assert "not both" in capsys.readouterr().err


def test_silent_listener_exit_2_within_deadline(inputs, silent_listener, capsys):
    from mapping.cli.main import main
    t = time.monotonic()
    assert main(["search", *inputs, "--scheduler", silent_listener,
                 "--connect-timeout", "1"]) == 2
    err = capsys.readouterr().err
    assert "no Dask answer within 1 s" in err and "Traceback" not in err, err
    assert time.monotonic() - t < 1 + 1.5


def test_run_shard_is_run_task():
    """run_shard builds the tracker and generator as engine.run_task does."""
    from mapping.semantics.problem import bind_problem
    from mapping.search.engine import plan, prepare, run_task
    from search_problems import bench_arch, random_app
    problem = bind_problem(random_app(10, 14, seed=1), bench_arch())
    for strategy in ("anneal", "genetic", "tabu"):
        tasks = plan(prepare(problem, "time", "sum", budget=20_000, seed=2), strategy, 2)
        for t in tasks:
            a, (b, stats) = run_task(t), run_shard(t)
            assert a.best_value == b.best_value and a.evaluations == b.evaluations
            assert stats["evaluations"] == b.evaluations


def test_run_task_reports_its_tracker_as_it_goes():
    from mapping.semantics.problem import bind_problem
    from mapping.search.engine import plan, prepare, run_task
    from search_problems import bench_arch, random_app
    problem = bind_problem(random_app(10, 14, seed=1), bench_arch())
    (task,) = plan(prepare(problem, "time", "sum", budget=20_000, seed=2), "anneal", 1)
    seen, counted = [], []
    result = run_task(task, counted.append, report=seen.append)
    assert seen and len(seen) == len(counted) and sum(counted) == result.evaluations
    assert seen[-1].best_value == result.best_value


# ------------------------------------------------ scheduler killed, time limit
@pytest.fixture(scope="module")
def external(tmp_path_factory):
    """A Dask scheduler and two single-thread workers in their own processes, on
    loopback."""
    d = tmp_path_factory.mktemp("cluster")
    file = d / "scheduler.json"
    procs = []
    dask = [sys.executable, "-m", "distributed.cli.dask_{}"]

    def start(kind, *args):
        cmd = [dask[0], dask[1], dask[2].format(kind), *args]
        p = subprocess.Popen(cmd, env=env(), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        procs.append(p)
        return p
    try:
        scheduler = start("scheduler", "--host", "127.0.0.1", "--port", "0",
                          "--no-dashboard", "--scheduler-file", str(file))
        end = time.monotonic() + 40
        while not file.exists() and time.monotonic() < end:
            time.sleep(0.1)
        if not file.exists():
            pytest.fail("the Dask scheduler did not start within 40 s")
        time.sleep(0.2)
        address = json.loads(file.read_text())["address"]
        start("worker", "--scheduler-file", str(file), "--nthreads", "1", "--nworkers", "2",
              "--no-dashboard", "--host", "127.0.0.1", "--death-timeout", "20")
        from distributed import Client
        with Client(address, timeout=40) as c:
            c.wait_for_workers(2, timeout=40)
            # the workers import mapeval now, not during the first timed search
            c.run(importlib.import_module, "mapping.search.strategies")
        yield {"address": address, "scheduler": scheduler}
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)


def test_killed_worker_same_result(external):
    from mapping.semantics.problem import bind_problem
    from mapping.search.engine import plan, prepare, run_task
    from search_problems import bench_arch, random_app
    problem = bind_problem(random_app(12, 20, seed=3), bench_arch())
    setup = prepare(problem, "time", "max", budget=800_000, seed=4)
    tasks = plan(setup, "anneal", 4)
    local = [run_task(t) for t in tasks]
    killed = []
    with DaskExecutor(address=external["address"], timeout=10) as ex:
        pids = ex.client.run(os.getpid)
        assert len(pids) == 2

        def progress(n):
            if not killed:
                victim = sorted(pids)[0]
                os.kill(pids[victim], signal.SIGKILL)
                killed.append(victim)
        box = []
        t = threading.Thread(target=lambda: box.append(ex.run(tasks, progress)),
                             daemon=True)
        t.start()
        t.join(90)
        assert box, f"the distributed run did not end within 90 s: " \
            f"{ex.client.processing()} {ex.client.has_what()}"
        assert killed and ex.outcome.stopped is None and not ex.outcome.failed
    for a, b in zip(local, box[0]):
        assert a.best_value == b.best_value and a.evaluations == b.evaluations
        assert (a.best_row == b.best_row).all()


def test_time_limit_returns_best_so_far(inputs, external):
    t = time.monotonic()
    proc = cli(["search", *inputs, "--strategy", "anneal", "--budget", "1000000000",
                "--aggregate", "max", "--scheduler", external["address"],
                "--time-limit", "1.5", "--json"])
    code, out, err = proc.finish(60)
    assert code == 0, err
    result = json.loads(out)
    assert "time limit of 1.5 s" in result["stopped"] and result["optimal"] is False
    assert result["mapping"] and result["evaluations"] > 0
    assert "Traceback" not in err
    # the worker stopped the abandoned shards: it is free again at once
    from distributed import Client
    with Client(external["address"], timeout=20) as c:
        end = time.monotonic() + 5
        while any(c.processing().values()) and time.monotonic() < end:
            time.sleep(0.1)
        assert not any(c.processing().values())
    assert time.monotonic() - t < 45


def test_killed_scheduler_returns_best_so_far(inputs, external):
    proc = cli(["search", *inputs, "--strategy", "anneal", "--budget", "1000000000",
                "--aggregate", "max", "--scheduler", external["address"],
                "--connect-timeout", "5", "--progress", "--json"])
    try:
        proc.wait_for("/s)", 40)
        external["scheduler"].kill()
        t = time.monotonic()
        code, out, err = proc.finish(30)
    finally:
        proc.kill()
    assert code == 0, err
    assert time.monotonic() - t < 15
    result = json.loads(out)
    assert "scheduler" in result["stopped"] and "lost" in result["stopped"]
    assert "best so far" in result["stopped"] and result["mapping"]
    assert "Traceback" not in err and "internal error" not in err


# --------------------------------------------------------------------- Ctrl-C
def children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_ctrl_c_returns_best_and_shuts_the_cluster_down(inputs):
    proc = cli(["search", *inputs, "--strategy", "anneal", "--budget", "1000000000",
                "--workers", "1", "--progress"])
    try:
        proc.wait_for("/s)", 40)
        workers = children(proc.proc.pid)
        assert workers
        os.killpg(proc.proc.pid, signal.SIGINT)       # what a terminal's Ctrl-C does
        code, out, err = proc.finish(40)
    finally:
        proc.kill()
    assert code == 0, err
    assert "stopped: interrupted (Ctrl-C)" in out and " -> " in out
    assert "Traceback" not in err
    end = time.monotonic() + 10
    alive = workers
    while alive and time.monotonic() < end:
        alive = [p for p in alive if Path(f"/proc/{p}").exists()
                 and not Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
                 == "Z"]
        time.sleep(0.1)
    assert not alive, f"worker processes left behind: {alive}"


# ---------------------------------------------------------------------- retries
ATTEMPTS: dict[int, int] = {}


def flaky_shard(task, *args, **kw):
    """Shard 1 always fails, shard 2 fails on its first attempt."""
    ATTEMPTS[task.index] = ATTEMPTS.get(task.index, 0) + 1
    if task.index == 1 or (task.index == 2 and ATTEMPTS[2] == 1):
        raise RuntimeError(f"shard {task.index} broke")
    return run_shard(task, *args, **kw)


def test_failed_shard_keeps_the_others(monkeypatch):
    from mapping.semantics.problem import bind_problem
    from mapping.search import distributed, search
    from search_problems import bench_arch, random_app
    problem = bind_problem(random_app(10, 14, seed=1), bench_arch())
    monkeypatch.setattr(distributed, "run_shard", flaky_shard)
    ATTEMPTS.clear()
    with DaskExecutor(workers=2, processes=False, retries=1) as ex:
        result = search(problem, "time", "max", strategy="tabu", budget=8000, seed=3,
                        executor=ex)
        outcome = ex.outcome
    assert outcome.finished == (0, 2, 3) and list(outcome.failed) == [1]
    assert ATTEMPTS == {0: 1, 1: 2, 2: 2, 3: 1}
    assert "shard 1: RuntimeError: shard 1 broke (after 1 retry)" in outcome.statement
    assert result.mapping and result.evaluations == 6000


def test_outcome_in_the_result():
    from mapping.cli.commands.search import cluster_line, distributed_outcome
    from mapping.search.common import SearchResult
    from mapping.search.distributed import Outcome
    workers = {"tcp://127.0.0.1:1": {"shards": 2, "evaluations": 10, "seconds": 1.0,
                                     "cpu_seconds": 1.0, "per_s": 2_500_000}}
    lost = Outcome(4, (0, 2), (1,), {3: "RuntimeError: x"}, "interrupted (Ctrl-C)",
                   workers, 1.0)

    class Ran:
        outcome = lost
    for strategy, optimal in (("exhaustive", False), ("exact", True)):
        r = distributed_outcome(SearchResult(strategy, "time", "max", 1.0, {"a": "p"}, 10,
                                             True, 1.0), Ran())
        assert r.optimal is optimal
        assert r.extra["stopped"] == ("interrupted (Ctrl-C); 2 of 4 shards finished, 1 "
                                      "returned their best so far, failed: shard 3: "
                                      "RuntimeError: x")
        assert r.extra["cluster"]["partial"] == [1] and "stopped: interrupted" in str(r)
    assert cluster_line(r) == "workers: tcp://127.0.0.1:1 2 shards, 2.50 M mappings/s"
