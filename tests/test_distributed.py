"""The Dask engine gives the same search results as the local one (SPEC §9)."""
from __future__ import annotations

import sys

import pytest

from mapping.semantics.problem import bind_problem
from mapping.search import search

from search_problems import bench_arch, random_app, small_arch


def test_missing_dask_is_bad_input(monkeypatch):
    from mapping.errors import InputError
    from mapping.search import distributed
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(InputError, match="pip install"):
        distributed.DaskExecutor(workers=1)


@pytest.fixture(scope="module")
def executor():
    pytest.importorskip("dask.distributed")
    from mapping.search.distributed import DaskExecutor
    with DaskExecutor(workers=2, processes=False) as ex:
        yield ex


@pytest.mark.parametrize("strategy", ["anneal", "genetic", "tabu", "greedy"])
def test_heuristics_same_as_local(executor, strategy):
    problem = bind_problem(random_app(12, 20, seed=3), bench_arch())
    local = search(problem, "time", "max", strategy=strategy, budget=8000, seed=5)
    remote = search(problem, "time", "max", strategy=strategy, budget=8000, seed=5,
                    executor=executor)
    assert remote.value == local.value
    assert remote.mapping == local.mapping
    assert remote.evaluations == local.evaluations


def test_exhaustive_and_front_same_as_local(executor):
    problem = bind_problem(random_app(8, 12, seed=3), small_arch(lambda_=0.1))
    local = search(problem, "time", "max", strategy="exhaustive",
                   objectives=["time", "energy"])
    remote = search(problem, "time", "max", strategy="exhaustive",
                    objectives=["time", "energy"], executor=executor)
    assert remote.value == local.value and remote.mapping == local.mapping
    assert remote.evaluations == local.evaluations
    assert remote.front == local.front


def test_cli_workers(tmp_path, capsys):
    pytest.importorskip("dask.distributed")
    import json
    from mapping.cli.main import main
    from test_search import APP, ARCH
    (tmp_path / "app.sdf").write_text(APP)
    (tmp_path / "arch.moa").write_text(ARCH)
    argv = [str(tmp_path / "app.sdf"), str(tmp_path / "arch.moa"), "--strategy", "tabu",
            "--budget", "4000", "--seed", "2", "--json"]
    assert main(["search", *argv]) == 0
    local = json.loads(capsys.readouterr().out)
    assert main(["search", *argv, "--workers", "2"]) == 0
    remote = json.loads(capsys.readouterr().out)
    assert remote["value"] == local["value"] and remote["mapping"] == local["mapping"]
