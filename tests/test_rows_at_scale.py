"""Rows at scale (issue 39): a study binds the application once per distinct set of the
rows' own values of its parameters, whatever the number of rows."""
import json
import sys
from pathlib import Path

import pytest

from mapping.cli.main import main
from moc.graph import SDFGraph

sys.path.insert(0, str(Path(__file__).parent / "perf"))
from workload_study import write_workload_study  # noqa: E402


@pytest.fixture
def bindings(monkeypatch):
    """The parameter sets the application is bound with, one entry per binding."""
    seen = []
    original = SDFGraph.bind

    def counted(self, params=None, *args, **kwargs):
        seen.append(tuple(sorted((k, v) for k, v in (params or {}).items()
                                 if k in self.params)))
        return original(self, params, *args, **kwargs)
    monkeypatch.setattr(SDFGraph, "bind", counted)
    return seen


@pytest.mark.parametrize("workloads", [1, 6])
def test_fidelity_binds_once_per_workload(tmp_path, capsys, bindings, workloads):
    files = write_workload_study(tmp_path, 5000, workloads=workloads)
    assert main(["fidelity", str(files["sdf"]), str(files["moa"]), str(files["csv"]),
                 "--actor-column", "pe_{actor}", "--measured", "time_s", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["n"] == 5000
    # the rows' workloads, each bound once (a binding at the file's defaults aside)
    distinct = set(bindings)
    assert len(distinct) in (workloads, workloads + 1)
    assert len(bindings) == len(distinct)
