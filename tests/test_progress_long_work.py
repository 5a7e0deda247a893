"""Progress of the long work that the first progress tests do not reach: the state-space
exploration of ``analyse`` and the fits of cross-validation."""
from __future__ import annotations

from dsl import loads_sdf
from mapping.cli.main import main
from moc.timing import analyse

# a fires 3000 times per iteration, one firing at a time (its self-loop): thousands of
# distinct states before the execution recurs
SERIAL = ("sdf serial { actor a [exec = 1]; actor b [exec = 7]; a -> a [delay = 1]; "
          "a -> b [cons = 3000]; b -> a [prod = 3000, delay = 3000] }")


def test_the_state_space_exploration_reports_its_states():
    (graph,) = loads_sdf(SERIAL)
    told = []
    result = analyse(graph.bind(), progress=told.append)
    assert result.throughput == 1 / 3007 or str(result.throughput) == "1/3007"
    assert told and set(told) == {1024} and sum(told) >= 2048


def test_analyse_shows_the_states_on_stderr_when_asked(tmp_path, capsys):
    app = tmp_path / "serial.sdf"
    app.write_text(SERIAL + "\n")
    assert main(["analyse", str(app), "--progress"]) == 0
    captured = capsys.readouterr()
    assert "analyse:" in captured.err and "states" in captured.err
    assert "analyse:" not in captured.out
    assert main(["analyse", str(app), "--json"]) == 0
    assert "analyse:" not in capsys.readouterr().err


def test_cross_validation_counts_the_starts_of_every_fold(capsys):
    from tests.test_progress_wrote import GSLA, GSLA_OPTIONS
    code = main(["fidelity", *GSLA, *GSLA_OPTIONS, "--fit", "gpu.time.alpha,gpu.time.beta",
                 "--starts", "1", "--folds", "3", "--progress"])
    err = capsys.readouterr().err
    # (1 + starts) fits on every row, then on each of the 3 folds' train rows
    assert code == 0 and "8/8" in err
