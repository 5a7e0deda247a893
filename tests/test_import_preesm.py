"""``mapeval import preesm``: PiSDF graphs, S-LAM architectures and scenarios.

The project under examples/preesm/proj was written for these tests.  Its repetition
counts, derived by hand with PREESM's rules:

top: Src.out (n = N = 8) -> H.in (len·2 = 2·M = 8), M = floor(8/3) + max(1, 2) = 4,
K = ceil(8/3)·min(2, 5) = 6; H.out (len = 4) -> fork Fk (4 -> 2 + 2) -> join J (2 + 2 ->
4) -> Snk (2); Src.aux (3) -> round buffer RB (3 -> 1) -> Snk2 (k/6 = 1); Snk.fb (2) ->
Src.fb (n/2 = 4) with delay D = M = 4; setter Init (2 per firing) -> D -> getter Fin (4).
So q(Src) = q(H) = q(Fk) = q(J) = q(RB) = q(Snk2) = 1, q(Snk) = 2, and in the separate
component of the delay q(D) = 1, q(Init) = 2, q(Fin) = 1.

sub (refines H; len = 4, half = len/2 = 2): in (8) -> F (2 -> 1) -> G (2·h/2 = 2 -> h/2 =
1) -> out (4).  Locally q(F) = 2, q(G) = 1; interfaces: in needs ceil(8 / (2·2)) = 2,
out needs ceil(4 / (1·1)) = 4, so the scale is 4: F fires 8 and G 4 times per firing of
H.  F then reads 16 tokens per H firing where the interface gives 8: PREESM inserts a
broadcast (H_in, 8 -> 16); G writes 4 = the interface's rate, so it joins Fk directly.
"""
from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dsl
from dsl.errors import ParseError
from dsl.importers.preesm import import_preesm
from mapping.cli.main import main
from moc.repetition import repetition_vector

DATA = Path(__file__).resolve().parents[1] / "examples" / "preesm"
PROJ = DATA / "proj"
TOP, SLAM = PROJ / "Algo" / "top.pi", PROJ / "Archi" / "board.slam"
SCENARIO = PROJ / "Scenarios" / "board.scenario"

HAND = {"Src": 1, "H_F": 8, "H_G": 4, "H_in": 1, "Fk": 1, "J": 1, "Snk": 2, "RB": 1,
        "Snk2": 1, "Init": 2, "Fin": 1, "D": 1}


def test_repetitions_hierarchy_parameters_special_actors_and_delays():
    result = import_preesm(TOP, SLAM, SCENARIO)
    g = result.graph
    assert repetition_vector(g.bind()) == HAND
    assert result.firings == HAND
    assert g.params == {"N": 8, "M": 4, "K": 6}
    ch = g.channels
    assert (ch["H_in_in__F_i"].prod, ch["H_in_in__F_i"].cons) == (16, 2)   # broadcast
    assert (ch["H_out__Fk_in"].src, ch["H_out__Fk_in"].prod) == ("H_G", 1)  # joined
    assert ch["Snk_fb__Src_fb"].delay == 4
    assert ch["Init_o__D_set"].cons == 4 and ch["D_get__Fin_i"].prod == 4
    special = {a: g.actors[a].attrs.get("special") for a in g.actors}
    assert special["Fk"] == "fork" and special["J"] == "join"
    assert special["RB"] == "roundbuffer" and special["H_in"] == "broadcast"
    assert special["D"] == "delay"


def test_data_types_give_sizes():
    g = import_preesm(TOP, SLAM, SCENARIO).graph
    size = {name: c.size for name, c in g.channels.items()}
    assert size["Src_out__H_in"] == 4          # float: PREESM's C type table, 32 bits
    assert size["H_out__Fk_in"] == 1           # uchar: 8 bits in the scenario
    assert size["RB_out__Snk2_in"] == 3        # pixel: 24 bits in the scenario
    assert size["Snk_fb__Src_fb"] == 4         # int


def test_scenario_timings_constraints_and_special_actor_times():
    g = import_preesm(TOP, SLAM, SCENARIO).graph
    a = {n: dict(x.attrs) for n, x in g.actors.items()}
    assert a["Src"]["exec_core"] == 100 and a["Src"]["allowed"] == "core0"
    assert a["H_F"]["exec_core"] == 40            # len*10 with the actor's len = 4
    assert (a["H_G"]["exec_dsp"], a["H_G"]["exec_core"]) == (7, 12)
    assert a["H_G"]["allowed"] == "dsp0"          # its own constraint
    assert a["H_F"]["allowed"] == "core0 core1"   # the constraint on top/H
    # memory-copy rule: 2 + floor(max(in, out) tokens * 0.5)
    assert a["Fk"]["exec_core"] == 2 + 2          # 4 tokens
    assert a["H_in"]["exec_core"] == 2 + 8        # 16 tokens out
    assert a["RB"]["exec_core"] == 2 + 1          # floor(3 * 0.5)
    assert a["D"]["exec_core"] == 0 and a["D"]["exec_dsp"] == 0
    assert a["Fk"]["exec_dsp"] == 1 + 0           # no memcpy speed for dsp: PREESM's
    assert a["H_in"]["exec_dsp"] == 1 + 0         # default, 1 + floor(n / 1000)
    assert "exec_dsp" not in a["Src"]             # lookup's default (100) prices it


def test_scenario_parameter_value_overrides():
    result = import_preesm(TOP, SLAM, PROJ / "Scenarios" / "override.scenario")
    # K = 12: Snk2 reads k/6 = 2, so RB fires twice per Snk2 and everything around
    # Src doubles; the delay's own component is unchanged.
    want = {a: 2 * n for a, n in HAND.items()}
    want.update(Snk2=1, Init=2, Fin=1, D=1)
    assert repetition_vector(result.graph.bind()) == want
    assert result.graph.params["K"] == 12


def test_special_vertex_operators_run_special_actors(tmp_path):
    sc = tmp_path / "s.scenario"
    sc.write_text(SCENARIO.read_text().replace(
        "</dataTypes>", '</dataTypes><specialVertexOperators><specialVertexOperator '
        'path="core1"/></specialVertexOperators>'))
    g = import_preesm(TOP, SLAM, sc).graph
    allowed = {a: g.actors[a].attrs.get("allowed") for a in g.actors}
    assert allowed["Fk"] == allowed["H_in"] == allowed["RB"] == "core1"
    assert allowed["Src"] == "core0" and allowed["H_F"] == "core0 core1"
    assert "allowed" not in g.actors["D"].attrs


def test_scenario_value_of_a_subgraph_parameter(tmp_path):
    """PREESM names a subgraph by its hierarchical actor: parent="H".  half = 4 makes G
    read 4 and write 2: locally q(F) = 4, q(G) = 1; the interfaces need 8 / (2·4) = 1 and
    4 / (2·1) = 2, so F fires 8 and G 2 times per firing of H."""
    sc = tmp_path / "s.scenario"
    sc.write_text(SCENARIO.read_text().replace(
        "<parameterValues/>",
        '<parameterValues><parameter name="half" parent="H" value="4"/></parameterValues>'))
    result = import_preesm(TOP, SLAM, sc)
    assert repetition_vector(result.graph.bind()) == dict(HAND, H_G=2)
    assert not [u for u in result.unmatched if "parameter" in u]


def test_cli_writes_sdf_and_moa_and_search_runs(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["import", "preesm", str(TOP), "--slam", str(SLAM), "--scenario",
                 str(SCENARIO), "-o", str(out) + "/"]) == 0
    err = capsys.readouterr().err
    assert "timing of 'top/Gone' on 'core' names nothing" in err
    moa = (out / "board.moa").read_text()
    assert "type core [time = lookup(default = 100)]" in moa
    assert "cn bus [time = lsla(alpha = 0.5)]" in moa
    assert main(["check", str(out / "top.sdf")]) == 0
    capsys.readouterr()
    assert main(["search", str(out / "top.sdf"), str(out / "board.moa"), "--json"]) == 0
    import json
    res = json.loads(capsys.readouterr().out)
    # by hand: every actor on its cheapest allowed PE; H_G alone on dsp0 sends 8 tokens
    # of 4 B (from H_F) and 4 of 1 B (to Fk) over the bus at 0.5 per byte: 18.
    work = 100 + 8 * 40 + 4 * 7 + 10 + 4 + 4 + 2 * 100 + 3 + 100 + 2 * 100 + 100 + 0
    assert res["value"] == pytest.approx(work + 18)


def test_cli_sdf_to_stdout_and_slam_needs_a_directory(tmp_path, capsys):
    assert main(["import", "preesm", str(TOP), "--scenario", str(SCENARIO)]) == 0
    text = capsys.readouterr().out
    assert dsl.parse_sdf(text, "x.sdf")
    assert main(["import", "preesm", str(TOP), "--slam", str(SLAM), "-o",
                 str(tmp_path / "a.sdf")]) == 2


def _broken(tmp_path, old, new, name="top.pi"):
    proj = tmp_path / "proj"
    (proj / "Algo").mkdir(parents=True)
    for f in ("top.pi", "sub.pi"):
        (proj / "Algo" / f).write_text((PROJ / "Algo" / f).read_text())
    path = proj / "Algo" / name
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return proj / "Algo" / "top.pi"


def test_dynamic_parameter_refused_by_name_with_line(tmp_path, capsys):
    top = _broken(tmp_path, '<node id="Init" kind="actor">',
                  '<node id="Init" kind="actor">\n            <port kind="cfg_output" '
                  'name="nset"/>')
    text = top.read_text().replace('<edge kind="dependency" source="N" target="K"/>',
                                   '<edge kind="dependency" source="Init" '
                                   'sourceport="nset" target="K"/>')
    top.write_text(text)
    with pytest.raises(ParseError, match=r"'K' is set at run time by actor 'Init'"):
        import_preesm(top)
    assert main(["import", "preesm", str(top)]) == 2
    err = capsys.readouterr().err
    line = next(i for i, s in enumerate(text.splitlines(), 1) if 'sourceport="nset"' in s)
    assert f"top.pi:{line}:" in err and "dynamic parameter" in err


def test_non_persistent_delay_in_repeated_subgraph_refused(tmp_path):
    top = _broken(tmp_path, '<node expr="8" id="N" kind="param"/>',
                  '<node expr="16" id="N" kind="param"/>')
    # N = 16: Src writes 16 per firing into H's 2M = 14: H now fires more than once
    sub = top.parent / "sub.pi"
    sub.write_text(sub.read_text().replace(
        '<edge kind="fifo" source="F" sourceport="o" target="G" targetport="i" type="float"/>',
        '<node expr="1" id="d" kind="delay" level="none"/>\n'
        '<edge kind="fifo" source="F" sourceport="o" target="G" targetport="i" '
        'type="float"><data key="delay">d</data></edge>'))
    with pytest.raises(ParseError, match=r"delay 'top/H/d' is not persistent"):
        import_preesm(top)


def test_unconnected_configuration_port_takes_the_interface_default(tmp_path):
    top = _broken(tmp_path, '<edge kind="dependency" source="M" target="H" targetport="len"/>',
                  "")
    sub = top.parent / "sub.pi"
    sub.write_text(sub.read_text().replace('<node id="len" kind="cfg_in_iface"/>',
                                           '<node id="len" kind="cfg_in_iface" '
                                           'defaultValue="2*2"/>'))
    # H's own rates name its port len, now without a value: PREESM cannot evaluate them
    with pytest.raises(ParseError, match=r"rate of port 'in' of 'top/H'.*unknown len"):
        import_preesm(top)
    text = top.read_text().replace('expr="len*2" kind="input"', 'expr="8" kind="input"')
    top.write_text(text.replace('expr="len" kind="output" name="out"',
                                'expr="4" kind="output" name="out"'))
    assert repetition_vector(import_preesm(top, scenario=SCENARIO).graph.bind()) == HAND
    top.write_text(top.read_text().replace('<port kind="cfg_input" name="len"/>', ""))
    with pytest.raises(ParseError, match=r"the hierarchical actor has no configuration port"):
        import_preesm(top)


def test_periodic_actor_refused(tmp_path):
    top = _broken(tmp_path, '<node id="Snk" kind="actor">', '<node id="Snk" kind="actor" '
                  'period="100">')
    with pytest.raises(ParseError, match=r"actor 'Snk' has period 100"):
        import_preesm(top)


def test_fork_that_loses_tokens_refused(tmp_path):
    top = _broken(tmp_path, '<port annotation="NONE" expr="2" kind="output" name="o2"/>',
                  '<port annotation="NONE" expr="1" kind="output" name="o2"/>')
    with pytest.raises(ParseError, match=r"fork 'top/Fk' reads 4 tokens and writes 3"):
        import_preesm(top)


def test_unknown_type_without_scenario_named():
    with pytest.raises(ParseError, match=r"data type 'uchar' has no size"):
        import_preesm(TOP)


def test_jep_expressions():
    from dsl.importers.preesm.jep import evaluate, rounded
    assert evaluate("-2^2", {}, "x") == -4          # JEP: ^ binds tighter than a sign
    assert evaluate("2^3^2", {}, "x") == 512        # right-associative
    assert evaluate("7 % 3 + pow(2, 3)", {}, "x") == 9
    assert evaluate("pow_div_max(2, 96)", {}, "x") == 5
    assert evaluate("geo_sum(3, 2, 4)", {}, "x") == 45
    assert evaluate("if(a > 1 && b, 10, 20)", {"a": 2, "b": 0}, "x") == 20
    assert [rounded(x) for x in (2.5, 3.49, -0.5)] == [3, 3, 0]   # Math.round
    with pytest.raises(ParseError, match="unknown foo"):
        evaluate("foo + 1", {"a": 1}, "rate")


def _chain_pi(name, nodes, fifos, extra=""):
    body = "\n".join(nodes + fifos)
    return (f'<?xml version="1.0"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">'
            f'<graph edgedefault="directed"><data key="name">{name}</data>{extra}\n{body}'
            f'</graph></graphml>\n')


def _port(kind, name, rate):
    return f'<port annotation="NONE" expr="{rate}" kind="{kind}" name="{name}"/>'


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.integers(1, 6), st.integers(1, 6),
       st.lists(st.tuples(st.integers(1, 4), st.integers(1, 4)), min_size=1, max_size=4))
def test_flattening_keeps_the_hierarchical_repetitions(p, c, r1, r2, chain):
    """For a random two-level chain, the flat graph's repetition vector (mapeval's solver)
    equals the count by PREESM's hierarchical rule (the test's own), actor by actor."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        nodes = ['<node id="in" kind="src">' + _port("output", "in", p) + "</node>",
                 '<node id="out" kind="snk">' + _port("input", "out", c) + "</node>"]
        fifos = []
        prev = ("in", "in")
        for k, (cons, prod) in enumerate(chain):
            nodes.append(f'<node id="A{k}" kind="actor">' + _port("input", "i", cons)
                         + _port("output", "o", prod) + "</node>")
            fifos.append(f'<edge kind="fifo" source="{prev[0]}" sourceport="{prev[1]}" '
                         f'target="A{k}" targetport="i" type="char"/>')
            prev = (f"A{k}", "o")
        fifos.append(f'<edge kind="fifo" source="{prev[0]}" sourceport="{prev[1]}" '
                     'target="out" targetport="out" type="char"/>')
        (d / "sub.pi").write_text(_chain_pi("sub", nodes, fifos))
        top = [f'<node id="S" kind="actor">{_port("output", "o", r1)}</node>',
               '<node id="H" kind="actor"><data key="graph_desc">sub.pi</data>'
               + _port("input", "in", p) + _port("output", "out", c) + "</node>",
               f'<node id="T" kind="actor">{_port("input", "i", r2)}</node>']
        edges = ['<edge kind="fifo" source="S" sourceport="o" target="H" targetport="in" '
                 'type="char"/>',
                 '<edge kind="fifo" source="H" sourceport="out" target="T" targetport="i" '
                 'type="char"/>']
        (d / "top.pi").write_text(_chain_pi("top", top, edges))
        result = import_preesm(d / "top.pi")
        rv = repetition_vector(result.graph.bind())
        count: dict = {}
        _count(d / "top.pi", {}, None, "top", "", 1, count)
        assert rv == result.firings
        assert rv == {a: count[a] for a in rv}
        assert {a for a in count if a not in ("H_in", "H_out")} <= set(rv)


# --- preesm-apps: a local copy named by PREESM_APPS (skipped otherwise) ----------------

#: (project folder, graph, scenario or None): hierarchical (H), parameter expressions
#: (E), setter/getter delays (S)
APPS = [
    ("tutorials/org.ietr.preesm.sobel", "top_sobel.pi", "4core_sobel.scenario"),     # E
    ("stereo/org.ietr.preesm.stereo", "stereo_top.pi", "1core.scenario"),           # H E
    ("org.ietr.preesm.hello-world", "hierarchical_hello_world.pi", "4CoreX86.scenario"),  # H E
    ("org.ietr.preesm.largeFFT", "top.pi", "largeFFT_hawking.scenario"),            # H
    ("org.ietr.preesm.squeezenet", "top_squeezenet.pi", "1corePREESM.scenario"),    # H
    ("org.ietr.preesm.stabilization", "top.pi", "12coreX86.scenario"),              # H E
    ("openvvc-dataflow-model-main/Dataflow_OpenVVC_decoder", "dec.pi",
     "top_4CoreX86.scenario"),                                                      # H S
    ("SIFT", "Hextract.pi", "HextractSIFT1Corex86_64.scenario"),                    # H E
    ("org.ietr.preesm.sobel-morpho", "sobel_morpho.pi", "12CoreX86.scenario"),      # E
    ("org.ietr.preesm.rfi_filter", "rfi.pi", "rfi_1CoresX86.scenario"),             # E
    ("org.ietr.preesm.reinforcement_learning", "training/training.pi",
     "1coreTraining.scenario"),                                                     # H
    ("org.ietr.preesm.graphic_libraries/org.ietr.preesm.gaussian-pyramid",
     "second_level_slice.pi", "second_level_slice_4CoreX86.scenario"),        # H, 2 levels
    ("org.ietr.preesm.graphic_libraries/org.ietr.preesm.lane-detection",
     "lane_detection.pi", "lane_detection_1CoreX86.scenario"),                      # E
    ("vector-manipulation/org.ietr.preesm.matrix.accumulation", "addition.pi",
     "8coreC6678.scenario"),                                                        # old delays
]

APPS_ROOT = os.environ.get("PREESM_APPS")


def _py(expr: str, env: dict) -> float:
    """A JEP expression evaluated by Python: ``^`` -> ``**``, ``&&``/``||`` -> and/or."""
    text = (expr or "0").replace("^", "**").replace("&&", " and ").replace("||", " or ")
    text = text.replace("if(", "_if(")

    def pow_div_max(x, y):
        x, y, k = int(x), int(y), 0
        while y % x == 0:
            y, k = y // x, k + 1
        return k

    funcs = {"floor": math.floor, "ceil": math.ceil, "min": min, "max": max, "pow": pow,
             "abs": abs, "sqrt": math.sqrt, "ln": math.log, "log": math.log10,
             "exp": math.exp, "pow_div_max": pow_div_max,
             "geo_sum": lambda a, r, n: sum(a * r ** k for k in range(int(n))),
             "_if": lambda c, a, b: a if c else b}
    return float(eval(text, {"__builtins__": {}}, {**funcs, **env}))  # noqa: S307


def _local(tag):
    return tag.rsplit("}", 1)[-1]


def _count(pi: Path, values: dict, iface: dict, vpath: str, prefix: str, outer: int,
           out: dict) -> None:
    """Firings per iteration of every flat actor below ``pi`` (PREESM's hierarchical
    rule, independently of the importer): local repetition vector per connected
    component, scaled by the interfaces, times the parent's firings."""
    root = ET.parse(pi).getroot()
    graph = next(e for e in root if _local(e.tag) == "graph")
    nodes = {n.get("id"): n for n in graph if _local(n.tag) == "node"}
    edges = [e for e in graph if _local(e.tag) == "edge"]
    deps: dict = {}
    for e in edges:
        if e.get("kind") == "dependency":
            deps.setdefault(e.get("target"), []).append((e.get("source"), e.get("targetport")))
    val: dict = {}

    def param(pid):
        if pid not in val:
            n = nodes[pid]
            if n.get("kind") == "cfg_in_iface" and iface is not None:
                val[pid] = iface[pid]
            elif (vpath.split("/")[-1], pid) in values:       # by the graph's name
                val[pid] = _py(values[(vpath.split("/")[-1], pid)],
                               {s: param(s) for s, _ in deps.get(pid, [])})
            else:
                expr = n.get("expr") if n.get("kind") != "cfg_in_iface" else \
                    n.get("defaultValue")
                val[pid] = _py(expr, {s: param(s) for s, _ in deps.get(pid, [])})
        return val[pid]

    def env(nid):
        return {(tp or s): param(s) for s, tp in deps.get(nid, [])}

    def rate(nid, port):
        n = nodes[nid]
        if n.get("kind") == "delay":
            fifo_ids = [f"{e.get('source')}.{e.get('sourceport')}-{e.get('target')}."
                        f"{e.get('targetport')}" for e in edges
                        if any(_local(d.tag) == "data" and (d.text or "").strip() == nid
                               for d in e)]
            e_ = env(nid)
            for f in fifo_ids:
                e_.update(env(f))
            return math.floor(_py(n.get("expr"), e_) + 0.5)
        ports = [p for p in n if _local(p.tag) == "port"]
        p = ports[0] if n.get("kind") in ("src", "snk") else \
            next(p for p in ports if p.get("name") == port)
        return math.floor(_py(p.get("expr"), env(nid)) + 0.5)

    fifos = [e for e in edges if e.get("kind") == "fifo"]
    is_if = {k for k, n in nodes.items() if n.get("kind") in ("src", "snk")}
    acts = [k for k, n in nodes.items()
            if n.get("kind") in ("actor", "broadcast", "fork", "join", "roundbuffer")
            or (n.get("kind") == "delay" and any(k in (f.get("source"), f.get("target"))
                                                  for f in fifos))
            or (k in is_if and iface is None)]
    inner_if = [] if iface is None else \
        [f for f in fifos if f.get("source") in is_if or f.get("target") in is_if]
    q = {a: None for a in acts}
    links = [(f.get("source"), f.get("target"), rate(f.get("source"), f.get("sourceport")),
              rate(f.get("target"), f.get("targetport"))) for f in fifos if f not in inner_if]
    for a in acts:                         # propagate fractions, component by component
        if q[a] is not None:
            continue
        q[a], todo, comp = Fraction(1), [a], [a]
        while todo:
            x = todo.pop()
            for s, t, p, c in links:
                for u, v, r in ((s, t, Fraction(p, c)), (t, s, Fraction(c, p))):
                    if u == x and q[v] is None:
                        q[v] = q[x] * r
                        comp.append(v)
                        todo.append(v)
        m = math.lcm(*(q[y].denominator for y in comp))
        g = math.gcd(*(int(q[y] * m) for y in comp))
        scale = 1
        for f in inner_if:
            s, t = f.get("source"), f.get("target")
            i, a2, port = (s, t, f.get("targetport")) if s in is_if else (t, s, f.get("sourceport"))
            if a2 in comp:
                per = rate(a2, port) * int(q[a2] * m) // g
                scale = max(scale, -(-rate(i, None) // per))
        for y in comp:
            q[y] = int(q[y] * m) // g * scale
    for a in acts:
        n = nodes[a]
        desc = next((d.text.strip() for d in n if _local(d.tag) == "data"
                     and d.get("key") == "graph_desc" and (d.text or "").strip().endswith(".pi")),
                    None)
        if desc:
            sub = next(b / desc.lstrip("/") for b in [pi.parent, *pi.parent.parents]
                       if (b / desc.lstrip("/")).is_file())
            _count(sub, values, env(a), f"{vpath}/{a}", prefix + a + "_", outer * q[a], out)
        else:
            out[prefix + a] = outer * q[a]
    for f in inner_if:                     # an inserted broadcast / round buffer
        i = f.get("source") if f.get("source") in is_if else f.get("target")
        out.setdefault(prefix + i, outer)


def _scenario_values(path: Path) -> dict:
    root = ET.parse(path).getroot()
    return {(p.get("parent"), p.get("name")): p.get("value")
            for p in root.iter("parameter") if p.get("parent") is not None}


@pytest.mark.skipif(not APPS_ROOT, reason="PREESM_APPS does not name a copy of preesm-apps")
@pytest.mark.parametrize("folder,graph,scenario", APPS, ids=[a[1] for a in APPS])
def test_preesm_apps(folder, graph, scenario, tmp_path, capsys):
    proj = Path(APPS_ROOT) / folder
    pi = proj / "Algo" / graph
    sc = proj / "Scenarios" / scenario
    out = tmp_path / "out"
    assert main(["import", "preesm", str(pi), "--scenario", str(sc), "-o", str(out) + "/"]) == 0
    sdf = next(out.glob("*.sdf"))
    assert main(["check", str(sdf)]) == 0
    g = dsl.load_sdf(sdf)[0].bind()
    rv = repetition_vector(g)
    name = ET.parse(pi).getroot()
    top_name = next((d.text for d in name.iter() if _local(d.tag) == "data"
                     and d.get("key") == "name"), pi.stem)
    count: dict = {}
    _count(pi, _scenario_values(sc), None, top_name, "", 1, count)
    ident = {k.replace("-", "_").replace(".", "_"): v for k, v in count.items()}
    assert rv == {a: ident[a] for a in rv}
    assert len(rv) >= 2


def test_inconsistent_rates_name_the_fifo(tmp_path):
    top = _broken(tmp_path, '<port annotation="NONE" expr="2" kind="output" name="fb"/>',
                  '<port annotation="NONE" expr="3" kind="output" name="fb"/>')
    with pytest.raises(ValueError, match=r"channel 'top/Snk.fb-Src.fb'") as err:
        import_preesm(top)
    assert err.value.origin[1] == next(
        i for i, s in enumerate(top.read_text().splitlines(), 1)
        if 'source="Snk" sourceport="fb"' in s)


@pytest.mark.parametrize("old,new,message", [
    ('slam:componentType="parallelComNode"', 'slam:componentType="Dma"', "is a Dma"),
    ('slam:linkType="DataLink" slam:referenceId="l1"',
     'slam:linkType="ControlLink" slam:referenceId="l1"', "is a ControlLink"),
    ('slam:directedLink="undirected" slam:linkType="DataLink" slam:referenceId="l2"',
     'slam:directedLink="directed" slam:linkType="DataLink" slam:referenceId="l2"',
     "link 'l2' is directed"),
    ('spirit:componentRef="bus"/>\n            <spirit:activeInterface spirit:busRef="bus" '
     'spirit:componentRef="dsp0"/>',
     'spirit:componentRef="core0"/>\n            <spirit:activeInterface spirit:busRef="bus" '
     'spirit:componentRef="dsp0"/>', "joins two operators"),
])
def test_slam_refusals_by_name(tmp_path, old, new, message):
    text = SLAM.read_text()
    assert old in text
    path = tmp_path / "board.slam"
    path.write_text(text.replace(old, new))
    with pytest.raises(ParseError, match=message) as err:
        import_preesm(TOP, path, SCENARIO)
    assert err.value.origin[0] == str(path) and err.value.origin[1] > 1


def test_slam_names_that_are_keywords_are_made_names():
    """An S-LAM instance named by a keyword of .moa (``pe``) opened a link statement
    ``pe -- cn``, which reads as a PE declaration; names are made identifiers that are
    no keyword (dsl.names.identifier)."""
    from dsl.importers.preesm.slam import Slam, format_moa
    slam = Slam("moa", {"pe": "type", "core 1": "type"},
                {"cn": ("bus", "parallelComNode", 2.0)}, [("pe", "cn"), ("core 1", "cn")])
    arch, = dsl.parse_moa(format_moa(slam))
    assert arch.name == "moa_" and set(arch.types) == {"type_"}
    assert set(arch.elements) == {"pe_", "core_1", "cn_"}
    assert set(arch.links) == {("pe_", "cn_"), ("core_1", "cn_")}


def test_top_level_configuration_interface_and_moldable_parameter(tmp_path):
    """A top-level cfg_in_iface takes its defaultValue (or the scenario's value); a
    moldable parameter its current expr.  S writes 6·w = 12 and A reads m = 2: q(A) = 6;
    with the scenario's w = 1 and m = 3, S writes 6 and A reads 3: q(A) = 2."""
    nodes = ['<node id="w" kind="cfg_in_iface" defaultValue="2"/>',
             '<node id="m" kind="moldable_param" expr="2" moldable_expr="1;2;4"/>',
             '<node id="S" kind="actor"><port kind="cfg_input" name="x"/>'
             + _port("output", "o", "6*x") + "</node>",
             '<node id="A" kind="actor"><port kind="cfg_input" name="y"/>'
             + _port("input", "i", "y") + "</node>"]
    edges = ['<edge kind="fifo" source="S" sourceport="o" target="A" targetport="i" '
             'type="int8_t"/>',
             '<edge kind="dependency" source="w" target="S" targetport="x"/>',
             '<edge kind="dependency" source="m" target="A" targetport="y"/>']
    pi = tmp_path / "g.pi"
    pi.write_text(_chain_pi("g", nodes, edges))
    result = import_preesm(pi)
    assert repetition_vector(result.graph.bind()) == {"S": 1, "A": 6}
    assert result.graph.params == {"w": 2, "m": 2}
    sc = tmp_path / "s.scenario"
    sc.write_text('<scenario><parameterValues><parameter name="w" parent="g" value="1"/>'
                  '<parameter name="m" parent="g" value="3"/></parameterValues></scenario>')
    assert repetition_vector(import_preesm(pi, scenario=sc).graph.bind()) == {"S": 1, "A": 2}


@pytest.mark.parametrize("where,old,new,message", [
    ("Archi/board.slam", 'encoding="UTF-8"', 'encoding="UTF-x"', "unknown encoding"),
    ("Scenarios/board.scenario", 'encoding="UTF-8"', 'encoding="utf-32"',
     "the declared encoding cannot be read"),
    ("Algo/top.pi", '<data key="name">top</data>', f'<data key="name">{"N_" * 150}</data>',
     "the graph's name (300 characters) is too long for the name of the file"),
    ("Scenarios/board.scenario", 'timeperunit="0.5"', 'timeperunit="nan"',
     "memcpyspeed of 'core'"),
    ("Scenarios/board.scenario", 'name="pixel" size="24"', 'name="pixel" size="-1"',
     "data type 'pixel': size '-1'"),
    ("Algo/top.pi", '<node expr="M" getter="Fin"', '<node expr="0" getter="Fin"',
     "delay 'top/D' has a setter or getter but 0 tokens"),
])
def test_fuzz_findings_are_named_errors(tmp_path, capsys, where, old, new, message):
    """Inputs a fuzz run of 10,000 mutations found raising internal errors."""
    proj = tmp_path / "proj"
    import shutil
    shutil.copytree(PROJ, proj)
    path = proj / where
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    args = ["import", "preesm", str(proj / "Algo/top.pi"), "--slam",
            str(proj / "Archi/board.slam"), "--scenario", str(proj / "Scenarios/board.scenario"),
            "-o", str(tmp_path / "out") + "/"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and f"{path}:" in err


def test_a_long_graph_name_is_refused_only_as_a_file_name(tmp_path, capsys):
    """A graph's name names the .sdf written into ``-o DIR/``: too long for a file name it
    is refused at the name; to standard output or a named file it imports."""
    top = _broken(tmp_path, '<data key="name">top</data>', f'<data key="name">{"n" * 300}</data>')
    args = ["import", "preesm", str(top), "--scenario", str(SCENARIO)]
    assert main(args) == 0
    assert f"sdf {'n' * 300} {{" in capsys.readouterr().out
    assert main(args + ["-o", str(tmp_path / "g.sdf")]) == 0
    assert main(args + ["-o", str(tmp_path / "out") + "/"]) == 2
    err = capsys.readouterr().err
    assert f"{top}:8:9: error: the graph's name (300 characters)" in err and "^" in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
