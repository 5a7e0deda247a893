"""``--limit latency=N``: past it (and past the schedule's limit) ``analyse`` leaves out
the latency whose firings it would compute one by one, and says so in ``method``."""
import json
from pathlib import Path

from mapping.cli.main import main

ROOT = Path(__file__).resolve().parent.parent

# a cyclo-static chain (nothing bounds its pace: no buffers' run gives the firings):
# a's two phases (times 1 and 3) start at 0 and end at 1 and 3 (in order); b reads the
# two tokens at 3 and ends at 5, the latency.
CHAIN = ("sdf c {\n actor a [exec = [1, 3]]; actor b [exec = 2]\n"
         " channel x : a -> b [prod = [1, 1], cons = 2] }\n")


def run_json(capsys, *argv):
    assert main(["analyse", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_latency_left_out_past_both_limits_and_said_so(tmp_path, capsys):
    path = str(tmp_path / "c.sdf")
    Path(path).write_text(CHAIN)
    whole = run_json(capsys, path)
    assert whole["latency"] == 5
    assert whole["schedule"] == {
        "a": [{"firing": "a#0", "start": 0, "end": 1},
              {"firing": "a#1", "start": 0, "end": 3}],
        "b": [{"firing": "b#0", "start": 3, "end": 5}]}
    cut = run_json(capsys, path, "--limit", "schedule=2", "--limit", "latency=2")
    assert cut["latency"] is None and cut["schedule"] is None
    assert cut["method"] == whole["method"] + (
        "; schedule left out: the first iteration of 'c' has 3 firings, more than the "
        "limit schedule = 2; raise it with --limit schedule=N; latency left out: the "
        "first iteration of 'c' has 3 firings to compute one by one, more than the "
        "limit latency = 2; raise it with --limit latency=N")
    assert cut["buffers"] == whole["buffers"] == {"x": "inf"}
    assert whole["schedule_missing"] is None
    assert cut["schedule_missing"] == (
        "schedule left out: the first iteration of 'c' has 3 firings, more than the "
        "limit schedule = 2; raise it with --limit schedule=N")
    # either limit raised to the iteration's firings computes them: the latency back
    assert run_json(capsys, path, "--limit", "schedule=2", "--limit", "latency=3")[
        "latency"] == 5
    raised = run_json(capsys, path, "--limit", "schedule=3", "--limit", "latency=2")
    assert raised == whole
    # the table: a dash, and no word of --no-simulate
    assert main(["analyse", path, "--limit", "schedule=2", "--limit", "latency=2"]) \
        == 0
    text = capsys.readouterr().out
    assert "  latency         -\n" in text and "latency left out" in text
    assert "--no-simulate" not in text


def test_an_sdf_iteration_computed_a_block_at_a_time_keeps_its_latency(capsys):
    """video.sdf's firings come a block of an actor at a time (not one by one): its
    latency (12) stays past both limits, its schedule goes."""
    video = str(ROOT / "examples" / "timing" / "video.sdf")
    cut = run_json(capsys, video, "--limit", "schedule=1", "--limit", "latency=1")
    assert cut["latency"] == 12 and cut["schedule"] is None
    assert "latency left out" not in cut["method"]
