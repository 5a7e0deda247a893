"""``mapeval check --json``: the exact repetition vector and the token counts of a file."""
import json
from pathlib import Path

from mapping.cli.main import main

ROOT = Path(__file__).resolve().parents[1]


def test_check_json_gives_the_exact_repetition_vector(tmp_path, capsys):
    # H.263 decoder: a QCIF frame is 594 macroblocks (vld 1, iq 594, idct 594, mc 1).
    sdf = tmp_path / "h263.sdf"
    sdf.write_text("""\
sdf h263 {
    actor vld; actor iq; actor idct; actor mc
    vld -> iq    [prod = 594]
    iq -> idct
    idct -> mc   [cons = 594]
    mc -> vld    [delay = 1]
}
""")
    assert main(["check", str(sdf), "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["files"]
    assert entry["kind"] == "sdf" and entry["name"] == "h263"
    assert entry["repetitions"] == {"vld": 1, "iq": 594, "idct": 594, "mc": 1}
    assert entry["actors"] == ["vld", "iq", "idct", "mc"]
    assert entry["channels"] == ["vld->iq", "iq->idct", "idct->mc", "mc->vld"]
    # one processing token per firing; one communication token per producer firing
    assert entry["tokens"] == {"processing": 1190, "communication": 1 + 594 + 594 + 1}


def test_check_json_of_every_kind(capsys):
    files = [ROOT / "examples/odroid/stereo.sdf", ROOT / "examples/odroid/odroid.moa",
             ROOT / "examples/odroid/mappings.map"]
    assert main(["check", *map(str, files), "--json"]) == 0
    sdf, moa, mp = json.loads(capsys.readouterr().out)["files"]
    assert sdf["repetitions"] == {"read": 1, "rgb2gray": 2, "census": 2, "cost": 60,
                                  "aggregate": 60, "disparity": 1, "median": 3, "write": 1}
    assert moa["kind"] == "moa" and moa["pes"][:2] == ["little[0]", "little[1]"]
    assert moa["cns"] == ["l2_little", "l2_big", "cci"] and moa["links"] == 10
    assert mp == {"file": str(files[2]), "kind": "map",
                  "mappings": ["little_only", "big_only", "mixed"]}
