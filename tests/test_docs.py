"""The documentation builds without a warning, and its reference has an entry for every
command, cost model, aggregation, search strategy and plot that the registries hold (a
new one without documentation fails here)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"


def _text(name: str) -> str:
    return (REFERENCE / name).read_text(encoding="utf-8")


def test_the_docs_build_with_warnings_as_errors(tmp_path):
    pytest.importorskip("mkdocs", reason="the 'test' extra installs MkDocs")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "--site-dir", str(tmp_path / "site")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    assert "usage: mapeval plot fidelity" in cli     # the generated --help of a plot kind


def test_every_command_has_a_reference_entry_with_its_help():
    from mapping.cli.main import COMMANDS
    text = _text("cli.md")
    for name in COMMANDS:
        assert f"### mapeval {name}\n" in text, f"no reference entry for 'mapeval {name}'"
        assert re.search(rf"<!--\s*mapeval-help:\s*{name}\s*-->", text), name


def test_every_cost_model_has_a_reference_entry():
    from moa.cost_models.registry import available_models, model_class
    text = _text("cost-models.md")
    own = [n for n in available_models() if model_class(n).__module__.startswith("moa.")]
    assert "lsla" in own and "gpu" in own
    for name in own:        # mapeval's own models (a test or a plug-in may register more)
        assert f"### `{name}`\n" in text, f"no reference entry for cost model '{name}'"
        assert re.search(rf"<!--\s*mapeval-model:\s*{name}\s*-->", text), name


def test_every_aggregation_strategy_and_plot_is_documented():
    from mapping.semantics.aggregation import AGGREGATIONS
    from mapping.plots import PLOTS
    from mapping.search.strategies import STRATEGIES
    evaluation, search, plots = _text("evaluation.md"), _text("search.md"), _text("plots.md")
    for name in AGGREGATIONS:
        assert f"| `{name}` |" in evaluation, f"aggregation '{name}' is not in evaluation.md"
    for name in STRATEGIES:
        assert f"`{name}`" in search, f"strategy '{name}' is not in search.md"
    for name in PLOTS:
        assert f"`{name}`" in plots, f"plot '{name}' is not in plots.md"


def test_the_readme_is_short_and_links_the_docs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 300
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).exists(), link
