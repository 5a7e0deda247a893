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


UNREACHED = """\
moa m {
    pe p0 [time = lsla(alpha = 1)]
    pe p1 [time = lsla(alpha = 1)]
    pe lone [time = lsla(alpha = 1)]
    cn bus [time = lsla(alpha = 1)]
    cn a; cn b
    pe q [time = lsla(alpha = 1)]
    pe bridge [time = lsla(alpha = 1)]
    p0 -- bus; p1 -- bus; q -- a; a -- b; bridge -- b; bridge -- bus
}
"""


def test_check_warns_of_pes_that_no_route_joins(tmp_path, capsys):
    moa = tmp_path / "m.moa"
    moa.write_text(UNREACHED)
    assert main(["check", str(moa)]) == 0            # a warning, not an error
    err = capsys.readouterr().err
    # 'bridge' reaches both sides, but a route never crosses a PE: p0 and q do not meet
    assert f"{moa}:4:8: warning: no route joins PEs 'p0', 'p1' to PE 'lone' (PE 'lone' " \
           "has no link)" in err
    assert "no route joins PEs 'p0', 'p1' to PE 'q':" in err
    assert main(["check", str(moa), "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["files"]
    pairs = [w["message"].split(": ")[0] for w in entry["warnings"]]
    assert pairs == ["no route joins PEs 'p0', 'p1' to PE 'lone' (PE 'lone' has no link)",
                     "no route joins PEs 'p0', 'p1' to PE 'q'",
                     "no route joins PE 'lone' to PE 'q' (PE 'lone' has no link)",
                     "no route joins PE 'lone' to PE 'bridge' (PE 'lone' has no link)"]
    assert [(w["line"], w["column"]) for w in entry["warnings"]] == [(4, 8), (7, 8), (4, 8),
                                                                      (4, 8)]
    # the first eval that needs the missing route fails as check said it would
    sdf = tmp_path / "a.sdf"
    sdf.write_text("sdf a { actor x; actor y; x -> y }\n")
    assert main(["eval", str(sdf), str(moa), "--map", "x=p0,y=q"]) == 2
    assert "no route" in capsys.readouterr().err


def test_a_connected_architecture_has_no_warning(capsys):
    assert main(["check", str(ROOT / "examples/odroid/odroid.moa"), "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["files"]
    assert entry["warnings"] == []


def test_unrouted_pes_are_exactly_the_pairs_routing_refuses():
    from hypothesis import given, settings, strategies as st

    from moa import Architecture
    from moa.errors import NoRouteError
    from moa.routing import shortest_cn_path, unrouted_pes

    @settings(max_examples=200, deadline=None)
    @given(st.integers(2, 5), st.integers(0, 4), st.data())
    def check(n_pe, n_cn, data):
        arch = Architecture("r")
        pes, cns = [f"p{i}" for i in range(n_pe)], [f"c{i}" for i in range(n_cn)]
        for p in pes:
            arch.add_pe(p)
        for c in cns:
            arch.add_cn(c)
        pairs = [(a, b) for a in pes + cns for b in cns if a != b and (a in pes or a < b)]
        for a, b in data.draw(st.lists(st.sampled_from(pairs), unique=True)) if pairs else []:
            arch.add_link(a, b)
        g = arch.graph()
        apart = {frozenset((a, b)) if a != b else frozenset([a])
                 for ga, gb in unrouted_pes(g) for a in ga for b in gb}
        for i, a in enumerate(pes):
            for b in pes[i + 1:]:
                try:
                    shortest_cn_path(g, a, b)
                    routed = True
                except NoRouteError:
                    routed = False
                assert routed == (frozenset((a, b)) not in apart), (a, b)
    check()
