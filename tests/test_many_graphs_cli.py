"""Many graphs in one process (issue 42): ``analyse`` and ``check`` of several files or a
folder, each reported on its own, ``--json-lines`` one object per graph."""
from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path

from mapping.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
CSDF = ROOT / "tests" / "data" / "csdf"


def _lines(capsys):
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_analyse_a_folder_and_a_bad_file_as_json_lines(tmp_path, capsys):
    for name in ("mp3_csdf.sdf", "simple_example.sdf"):
        shutil.copy(CSDF / name, tmp_path / name)
    bad = tmp_path / "bad.sdf"
    bad.write_text("sdf g { actor a; channel x : a -> b }\n")
    assert main(["analyse", str(tmp_path), "--no-simulate", "--json-lines"]) == 2
    lines = _lines(capsys)
    assert [Path(d["file"]).name for d in lines] == ["bad.sdf", "mp3_csdf.sdf",
                                                     "simple_example.sdf"]
    assert lines[0]["error"]["line"] == 1
    # the periods of tests/data/kiter_csdf.json, Kiter's
    assert Fraction(lines[1]["exact"]["period"]) == 120000
    assert Fraction(lines[2]["exact"]["period"]) == 12


def test_check_many_files_as_json_lines(capsys):
    files = [str(CSDF / "mp3_csdf.sdf"), str(CSDF / "simple_example.sdf")]
    assert main(["check", *files, "--json-lines"]) == 0
    lines = _lines(capsys)
    assert [d["name"] for d in lines] == ["csdfmp3playback", "example"]
    assert not any(d["deadlock"] for d in lines)
