"""The Python API and the DOT pictures (issue 14): ``dsl.loads_*``, ``Problem`` taken by
``evaluate``/``search``, plain-data networkx views, DOT of graphs, architectures and
mappings, and their rendering by Graphviz where it is installed."""
from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import networkx as nx
import pytest

import dsl
from mapping.cli.main import main
from mapping.errors import MappingError
from mapping.evaluation.reference import evaluate
from mapping.semantics.problem import Problem, bind_problem
from mapping.search import search

TIMING = Path(__file__).resolve().parents[1] / "examples" / "timing"
VIDEO, DUO, MAPS = (str(TIMING / n) for n in ("video.sdf", "duo.moa", "mappings.map"))

APP = """sdf pipe {
    param n = 2
    actor src [quanta = n]
    actor work [quanta = 8 * n, exec = 3]
    src -> work [prod = 4, size = 2]
    channel state : work -> work [delay = 1]
}"""
ARCH = """moa duo {
    param s = 2
    pe cpu [time = lsla(alpha = 1), energy = lsla(alpha = 1), local = mem]
    pe dsp [time = lsla(alpha = 1 / s), energy = lsla(alpha = 3)]
    cn bus [time = lsla(alpha = 0.5)]
    cn mem [time = lsla(alpha = 0.25)]
    cpu -- bus
    dsp -- bus
}"""


@pytest.fixture()
def objects():
    (app,) = dsl.loads_sdf(APP)
    (arch,) = dsl.loads_moa(ARCH)
    (mapping,) = dsl.loads_map("mapping split { src -> cpu; work -> dsp }")
    return app, arch, mapping


# ------------------------------------------------------------------ dsl.loads_*

def test_loads_read_text_and_name_string_positions():
    (g,) = dsl.loads_sdf(APP)
    assert list(g.actors) == ["src", "work"] and g.params["n"] == 2
    with pytest.raises(dsl.INPUT_ERRORS) as info:
        dsl.loads_sdf("sdf g {\n actor a\n a -> b }")
    assert info.value.origin == ("<string>", 3, 7)
    assert "<string>:3:7: error: channel 'a->b' uses unknown actor 'b'" in info.value.__notes__[0]
    with pytest.raises(dsl.ParseError) as info:
        dsl.loads_moa("moa m {\n pe p [time = ]\n}", filename="inline.moa")
    assert info.value.origin[:2] == ("inline.moa", 2)
    assert dsl.loads_map("mapping m { a -> p }")[0].assignment == {"a": "p"}


# ------------------------------------------------------------------ Problem

def test_problem_binds_itself_and_evaluate_and_search_take_it(objects):
    app, arch, mapping = objects
    problem = Problem(app, arch, {"n": 3})
    assert problem.app.actors["work"].quanta == 24 and problem.params == {"n": 3, "s": 2}
    assert problem.repetitions == bind_problem(app, arch, {"n": 3}).repetitions
    assert repr(problem) == "Problem(app='pipe', arch='duo', actors=2, pes=2)"
    plain = evaluate(app, arch, mapping, params={"n": 3})
    assert evaluate(problem, mapping).value == plain.value
    assert evaluate(problem, dict(mapping.assignment), "time").value == plain.value
    by_max = evaluate(app, arch, mapping, "time", "max", params={"n": 3}).value
    assert evaluate(problem, mapping, "time", "max").value == by_max
    assert evaluate(problem, mapping, metric="time", aggregate="max").value == by_max
    assert evaluate(problem, mapping, "energy").metric == "energy"
    with pytest.raises(MappingError, match="Problem"):
        evaluate(problem, mapping, params={"n": 1})
    result = search(Problem(app, arch), objectives=["time", "energy"])
    assert len(result.front) >= 2
    best = search(problem, strategy="exhaustive")
    assert best.value == min(evaluate(problem, {"src": a, "work": b}).value
                             for a in ("cpu", "dsp") for b in ("cpu", "dsp"))


# ------------------------------------------------------------------ networkx views

def _exports(g) -> dict:
    buffer = io.BytesIO()
    nx.write_graphml(g, buffer)
    json.dumps(nx.node_link_data(g))
    return nx.read_graphml(io.BytesIO(buffer.getvalue()))


def test_networkx_views_hold_plain_data(objects, tmp_path):
    app, arch, _ = objects
    for graph in (app, app.bind()):
        g = graph.to_networkx()
        back = _exports(g)
        assert back.nodes["work"]["exec"] == 3
        (key,) = [k for _, _, k in g.edges("src", keys=True)]
        assert graph.channels[key].prod == 4                # the object, by the edge's key
        assert g.edges["src", "work", key]["prod"] == 4 and g.edges["src", "work", key]["size"] == 2
    assert app.to_networkx().nodes["work"]["quanta"] == "8 * n"
    assert app.bind().to_networkx().nodes["work"]["quanta"] == 16
    assert app.bind().to_networkx().edges["work", "work", "state"]["delay"] == 1
    for a in (arch, arch.bind()):
        back = _exports(a.to_networkx())
        assert back.nodes["cpu"]["kind"] == "pe" and back.nodes["cpu"]["local"] == "mem"
    assert arch.to_networkx().nodes["dsp"]["model.time"] == "lsla(alpha=1 / s)"
    assert arch.bind().to_networkx().nodes["dsp"]["model.time"] == "lsla(alpha=0.5, beta=0.0)"
    nx.write_graphml(arch.to_networkx(), tmp_path / "arch.graphml")
    assert (tmp_path / "arch.graphml").stat().st_size > 0


# ------------------------------------------------------------------ DOT

def test_dot_of_a_graph_omits_rates_of_one_and_labels_self_loops_beside_them():
    (g,) = dsl.loads_sdf(APP)
    text = dsl.to_dot(g)
    assert '"src" -> "work" [taillabel="4"];' in text               # no headlabel="1"
    assert '"work" -> "work" [label="state\\ndelay=1"];' in text     # no rates on a loop
    h = dsl.to_dot(dsl.loads_sdf('sdf h { param n = 2; actor a; actor b; a -> b\n'
                                 'b -> b [prod = 2, cons = 3]\n'
                                 'channel c : a -> b [cons = n] }')[0])
    assert '"a" -> "b";' in h
    assert '"b" -> "b" [label="prod=2\\ncons=3"];' in h
    assert '"a" -> "b" [headlabel="n", label="c"];' in h             # an expression stays
    assert 'label="1"' not in text + h and "taillabel" not in h.split("\n")[5]


def test_dot_of_an_architecture_shows_local_stores_and_model_parameters(objects):
    _, arch, _ = objects
    text = dsl.to_dot(arch)
    assert 'label="duo\\ns = 2"; labelloc=t;' in text
    assert '"dsp" [shape=box, label="dsp\\ntime: lsla(alpha=1 / s)\\nenergy: lsla(alpha=3)"];' \
        in text
    assert '"cpu" -- "mem" [style=dashed, label="local", constraint=false];' in text
    (linked,) = dsl.loads_moa("moa m { pe p [local = c]; cn c; p -- c }")
    assert '"p" -- "c" [label="local"];' in dsl.to_dot(linked)
    assert "style=dashed" not in dsl.to_dot(linked)


def test_export_dot_of_a_mapping(capsys, tmp_path):
    out = tmp_path / "split.dot"
    assert main(["export", "dot", VIDEO, DUO, MAPS, "--mapping", "split", "-o", str(out)]) == 0
    text = out.read_text()
    assert text.startswith('digraph "split" {')
    assert 'label="video on duo: mapping split\\ntime (sum) = 20, bottleneck little";' in text
    # actors grouped by PE, the bottleneck PE highlighted, values in the labels
    big, little = text.split("subgraph")[1:3]
    assert 'label="big\\n7"' in big and '"actor:src"' in big and '"actor:filt"' in big
    assert 'label="little\\n10"' in little and 'color="#D55E00"' in little
    assert '"actor:enc"' in little and '"actor:snk"' in little and "#D55E00" not in big
    # a channel between PEs goes over its CN; one on a PE stays inside
    assert '"actor:filt" -> "cn:bus" [label="frames", arrowhead=none];' in text
    assert '"cn:bus" -> "actor:enc";' in text
    assert '"actor:filt" -> "actor:filt" [label="state"];' in text
    assert main(["export", "dot", VIDEO, DUO, "--map", "src=big,filt=big,enc=big,snk=big",
                 "--metric", "time", "--aggregate", "max"]) == 0
    inline = capsys.readouterr().out
    assert '"pe:little" [shape=box, style=dashed, label="little\\n0\\n(idle)"];' in inline
    assert '"cn:bus" [shape=ellipse, label="bus\\n0", color=gray60, fontcolor=gray40];' in inline


def test_mapping_diagram_in_python_routes_over_local_stores(objects):
    from mapping.evaluation.diagram import mapping_diagram
    app, arch, mapping = objects
    text = mapping_diagram(app, arch, mapping)                      # src on cpu, work on dsp
    assert '"actor:src" -> "cn:bus" [arrowhead=none];' in text      # unnamed: no label
    assert '"cn:bus" -> "actor:work";' in text
    assert '"actor:work" -> "actor:work" [label="state"];' in text  # dsp has no local CN
    assert '"cn:mem" [shape=ellipse, label="mem\\n0", color=gray60' in text
    (all_cpu,) = dsl.loads_map("mapping c { src -> cpu; work -> cpu }")
    on_cpu = mapping_diagram(app, arch, all_cpu, "energy", params={"n": 1})
    assert '"actor:src" -> "cn:mem" [arrowhead=none];' in on_cpu    # over cpu's local store
    assert '"actor:work" -> "cn:mem" [label="state", arrowhead=none];' in on_cpu
    assert "energy (sum) = 33, bottleneck cpu" in on_cpu


def test_export_dot_of_a_mapping_refuses_bad_input(capsys):
    assert main(["export", "dot", MAPS]) == 2
    assert "APP.sdf ARCH.moa MAP.map" in capsys.readouterr().err
    assert main(["export", "dot", VIDEO, DUO, MAPS, "--name", "split"]) == 2
    assert "--mapping" in capsys.readouterr().err
    assert main(["export", "dot", VIDEO, DUO, MAPS, "--mapping", "nope"]) == 2
    with pytest.raises(SystemExit) as info:         # argparse: one file only
        main(["export", "json", VIDEO, DUO])
    assert info.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")


@needs_dot
def test_graphviz_renders_every_dot(tmp_path, capsys):
    (arch,) = dsl.load_moa(TIMING.parent / "odroid" / "odroid.moa")
    (app,) = dsl.load_sdf(VIDEO)
    assert main(["export", "dot", VIDEO, DUO, MAPS, "--mapping", "split"]) == 0
    for text in (dsl.to_dot(arch), dsl.to_dot(app), capsys.readouterr().out):
        done = subprocess.run(["dot", "-Tsvg"], input=text.encode(), capture_output=True,
                              timeout=60)
        assert done.returncode == 0 and not done.stderr, done.stderr
        assert b"<svg" in done.stdout
    out = tmp_path / "split.png"
    assert main(["plot", "diagram", VIDEO, DUO, MAPS, "--mapping", "split", "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image as mpimg
    image = mpimg.imread(out)[..., :3]
    assert min(image.shape[:2]) > 200 and image.std() > 0.05       # a picture, not blank


def test_plot_diagram_without_graphviz_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    out = tmp_path / "split.svg"
    assert main(["plot", "diagram", VIDEO, DUO, MAPS, "--mapping", "split", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Graphviz" in err and "export dot" in err and "Traceback" not in err
    assert not out.exists()
