"""Timing of mapped executions: ``--aggregate schedule | period`` (SPEC §13).

Every model is ``lsla(alpha)``: a token costs ``alpha · quanta``; a channel's token is one
producer firing's ``prod · size`` bytes.  ``lambda = 1``.  Two PEs ``p0``, ``p1`` joined by
the CN ``bus``.  Firings are ordered by decreasing b-level (actor weights: their mean
firing time over the PEs), ties by topological position.

Multi-rate (``MULTI``): a (2) -[prod 2, size 1]-> b (3) -[cons 2, size 1]-> c (4);
q = (a 1, b 2, c 1); firings a#0, b#0, b#1, c#0.  ab's token is 2 bytes: delay 2 on the
bus; bc's is 1 byte: delay 1.  b-levels: c 4, b 7, a 9: order a#0, b#0, b#1, c#0.

- a, c on p0, b on p1 (``split``):  a [0, 2]; b#0 ready 2 + 2 → [4, 7]; b#1 [7, 10];
  c ready max(7, 10) + 1 = 11 → [11, 15].  Makespan 15.  Static orders p0: a, c and
  p1: b#0, b#1; no data edge carries a token, so every cycle closes through a wrap edge
  (height 1): the longest, a→b#0→b#1→c→a, weighs (2+2) + 3 + (3+1) + 4 = 15.  Period 15.
- a on p0, b and c on p1 (``pipelined``): a [0, 2]; b#0 [4, 7]; b#1 [7, 10]; c (same PE,
  no local CN: no delay) [10, 14].  Makespan 14.  p1's wrap cycle b#0→b#1→c→b#0 weighs
  3 + 3 + 4 = 10, a's own 2, and nothing returns to a: period 10 (p1's load).
- ``split`` with ``charge = ends`` on the bus: nothing stays on the bus (delays 0); ab's
  cost per iteration (1 token of 2 bytes: 2) extends a's one firing by 2 and b's two
  firings by 1 each; bc's (2 tokens of 1 byte: 2) extends b's firings by 1 each and c's
  one by 2.  a 4, b 5, c 6 (p0 = 10 = its max value 6 + 2 + 2).  a [0, 4]; b#0 [4, 9];
  b#1 [9, 14]; c [14, 20].  Makespan 20; a→b#0→b#1→c→a weighs 4+5+5+6 = 20: period 20.

Cycle (``CYCLE``, bus alpha 2): a (2) -> b (3) -> c (1) -> a with 2 initial tokens on c->a,
sizes 1; a on p0, b and c on p1.  Delays: a->b 2, b->c 0 (one PE), c->a 2.  Order a, b,
c (b-levels 6, 4, 1).  a [0, 2]; b [4, 7]; c [7, 8]: makespan 8.  Cycles: a→b→c→a
through the data edge of height 2: ((2+2) + (3+0) + (1+2)) / 2 = 5; p1's wrap b→c→b:
(3+1)/1 = 4; a's wrap 2/1.  Period 5, over the max aggregation's 4 (p1 = 4, bus = 4).
"""
from __future__ import annotations

import itertools
import json
import pickle

import networkx as nx
import numpy as np
import pytest

from dsl import parse_map, parse_moa, parse_sdf
from dsl.mappings import Mapping
from mapping.semantics.aggregation import aggregator
from mapping.evaluation.batch import BatchEvaluator
from mapping.cli.main import main
from mapping.errors import MappingError
from mapping.evaluation.reference import evaluate
from mapping.semantics.metrics import element_metric
from mapping.semantics.problem import bind_problem
from mapping.search import search
from mapping.search.common import SearchError
from moc.hsdf import hsdf_expansion
from moc.record import replace
from search_problems import random_app

MULTI = """sdf multi {
    actor a [quanta = 2]
    actor b [quanta = 3]
    actor c [quanta = 4]
    a -> b [prod = 2, cons = 1, size = 1]
    b -> c [prod = 1, cons = 2, size = 1]
}"""

CYCLE = """sdf loop {
    actor a [quanta = 2]
    actor b [quanta = 3]
    actor c [quanta = 1]
    a -> b [size = 1]
    b -> c [size = 1]
    c -> a [size = 1, delay = 2]
}"""


def board(bus_alpha=1, charge="self", extra=""):
    return f"""moa duo {{
    lambda = 1
    pe p0 [time = lsla(alpha = 1), energy = lsla(alpha = 2)]
    pe p1 [time = lsla(alpha = 1), energy = lsla(alpha = 2)]
    cn bus [time = lsla(alpha = {bus_alpha}), energy = lsla(alpha = 1), charge = "{charge}"]
    p0 -- bus; p1 -- bus
    {extra}
}}"""


MAPS = """mapping split { a -> p0; b -> p1; c -> p0 }
mapping pipelined { a -> p0; b -> p1; c -> p1 }"""


def setup(sdf, moa, name):
    app, = parse_sdf(sdf)
    arch, = parse_moa(moa)
    mapping = {m.name: m for m in parse_map(MAPS)}[name]
    return app, arch, mapping, bind_problem(app, arch)


@pytest.mark.parametrize("sdf, moa, name, makespan, period", [
    (MULTI, board(), "split", 15, 15),
    (MULTI, board(), "pipelined", 14, 10),
    (MULTI, board(charge="ends"), "split", 20, 20),
    (CYCLE, board(bus_alpha=2), "pipelined", 8, 5),
])
def test_hand_computed_makespan_and_period(sdf, moa, name, makespan, period):
    app, arch, mapping, problem = setup(sdf, moa, name)
    for agg, expected in (("schedule", makespan), ("period", period)):
        ev = evaluate(app, arch, mapping, "time", agg, problem=problem)
        assert ev.value == pytest.approx(expected, rel=1e-12)
        batch = BatchEvaluator(problem, "time", agg)
        assert batch.value(mapping) == pytest.approx(expected, rel=1e-12)
        assert batch.evaluate(batch.encode(mapping)[None])[0] == pytest.approx(expected)
    ev = evaluate(app, arch, mapping, "time", "period", problem=problem)
    assert ev.throughput == pytest.approx(1 / period)


def test_the_cycle_period_exceeds_the_max_aggregation():
    app, arch, mapping, problem = setup(CYCLE, board(bus_alpha=2), "pipelined")
    assert evaluate(app, arch, mapping, "time", "max", problem=problem).value == 4
    assert evaluate(app, arch, mapping, "time", "period", problem=problem).value == 5


def test_cns_are_latencies_not_resources():
    # pipelined with bus alpha 10: a's token takes 20 on the bus, so max = 20 (the bus),
    # but transfers overlap the firings of later iterations: a [0, 2]; b#0 [22, 25];
    # b#1 [25, 28]; c [28, 32]: makespan 32; the period is p1's load, 3 + 3 + 4 = 10
    app, arch, mapping, problem = setup(MULTI, board(bus_alpha=10), "pipelined")
    value = {agg: evaluate(app, arch, mapping, "time", agg, problem=problem).value
             for agg in ("max", "schedule", "period")}
    assert value == {"max": 20, "schedule": 32, "period": 10}


def test_other_metrics_are_refused_by_name():
    app, arch, mapping, problem = setup(MULTI, board(), "split")
    for agg in ("schedule", "period"):
        with pytest.raises(MappingError, match=f"'{agg}'.*'time' only, not 'energy'"):
            evaluate(app, arch, mapping, "energy", agg, problem=problem)
        with pytest.raises(MappingError, match="'time' only, not 'energy'"):
            BatchEvaluator(problem, "energy", agg)


def test_element_values_alone_do_not_give_a_timed_aggregation():
    with pytest.raises(MappingError, match="schedules the firings"):
        aggregator("schedule").combine(np.zeros((2, 1)), np.zeros((1, 1)), 1.0)


def test_a_system_metric_uses_the_period():
    # energy[sum] + 3 * time[period]: split's energy is 2·(2 + 6 + 4) + (2 + 2) = 28
    moa = board(extra="param p_static = 3\n    metric total = energy[sum] + p_static * time[period]")
    app, arch, mapping, problem = setup(MULTI, moa, "split")
    assert evaluate(app, arch, mapping, "total", problem=problem).value == pytest.approx(28 + 45)
    ev = BatchEvaluator(problem, "total")
    assert ev.value(mapping) == pytest.approx(73)


# ------------------------------------------------ property test against an oracle
def oracle(problem, assignment):
    """Makespan and period of one mapping in plain Python: the list schedule firing by
    firing, and the period by enumerating the simple cycles of the static-order graph."""
    app, arch, act = problem.app, problem.arch, problem.activity
    q, lam = problem.repetitions, float(arch.lambda_)
    h = hsdf_expansion(app)
    firings = list(h.actors)
    actor = {f: f.rpartition("#")[0] for f in firings}

    def cost(element, tokens):
        return element_metric(arch.elements[element], [tokens], "time") or 0.0

    def route(s, d):
        if s == d:
            local = arch.elements[s].local
            return [local] if local else []
        return list(arch.route(s, d))

    delay, charged = {}, {}
    for name, ch in app.channels.items():
        tok = act.communication[name]
        hops = route(assignment[ch.src], assignment[ch.dst])
        delay[name] = lam * sum(cost(k, replace(tok, count=1)) for k in hops
                                if arch.elements[k].charge != "ends")
        charged[name] = lam * sum(cost(k, tok) for k in hops
                                  if arch.elements[k].charge != "self")
    dur = {}
    for a in app.actors:
        dur[a] = cost(assignment[a], replace(act.processing[a], count=1))
        for name, ch in app.channels.items():
            dur[a] += charged[name] / q[a] * ((ch.src == a) + (ch.dst == a))
    edges = []
    for label, e in h.channels.items():
        edges.append((e.src, e.dst, label[:label.index(":" + e.src + "->")], e.delay))
    mean = {a: np.mean([cost(p, replace(act.processing[a], count=1)) for p in arch.pes])
            for a in app.actors}
    zero = nx.DiGraph()
    zero.add_nodes_from(firings)
    zero.add_edges_from((u, v) for u, v, _, d in edges if d == 0)
    topo = list(nx.lexicographical_topological_sort(zero, key=firings.index))
    blevel = {}
    for u in reversed(topo):
        blevel[u] = mean[actor[u]] + max((blevel[v] for v in zero.successors(u)), default=0)
    order = sorted(firings, key=lambda f: (-blevel[f], topo.index(f)))
    free, end = {p: 0.0 for p in arch.pes}, {}
    for f in order:
        pe = assignment[actor[f]]
        ready = max([end[u] + delay[c] for u, v, c, d in edges if v == f and d == 0],
                    default=0.0)
        end[f] = max(free[pe], ready) + dur[actor[f]]
        free[pe] = end[f]
    makespan = max(end.values())
    g = nx.MultiDiGraph()
    for u, v, c, d in edges:
        g.add_edge(u, v, w=dur[actor[u]] + delay[c], h=d)
    for p in arch.pes:
        seq = [f for f in order if assignment[actor[f]] == p]
        for u, v in zip(seq, seq[1:]):
            g.add_edge(u, v, w=dur[actor[u]], h=0)
        if seq:
            g.add_edge(seq[-1], seq[0], w=dur[actor[seq[-1]]], h=1)
    period = 0.0
    for cycle in nx.simple_cycles(g):
        hops = list(zip(cycle, cycle[1:] + cycle[:1]))
        for choice in itertools.product(*(list(g[u][v].values()) for u, v in hops)):
            height = sum(e["h"] for e in choice)
            assert height > 0
            period = max(period, sum(e["w"] for e in choice) / height)
    return makespan, period


RANDOM_BOARD = """moa tri {
    lambda = 0.5
    pe p0 [time = lsla(alpha = 1, beta = 3), local = l0]
    pe p1 [time = lsla(alpha = 2)]
    pe p2 [time = lsla(alpha = 0.5, beta = 10)]
    cn l0 [time = lsla(alpha = 0.1)]
    cn bus [time = lsla(alpha = 0.3, beta = 2), charge = "CHARGE"]
    cn link [time = lsla(alpha = 0.05)]
    p0 -- l0; p0 -- bus; p1 -- bus; p1 -- link; p2 -- link; bus -- link
}"""


@pytest.mark.parametrize("charge", ["self", "ends", "both"])
def test_batch_equals_reference_equals_oracle(charge):
    arch, = parse_moa(RANDOM_BOARD.replace("CHARGE", charge))
    rng = np.random.default_rng(7)
    for seed in range(6):
        app = random_app(4, 5, seed=seed, extra_attrs=False)
        problem = bind_problem(app, arch)
        X = rng.integers(0, 3, (4, 4))
        evs = {agg: BatchEvaluator(problem, "time", agg) for agg in ("schedule", "period",
                                                                     "max")}
        values = {agg: ev.evaluate(X) for agg, ev in evs.items()}
        loads = evs["max"].loads(X)[:, :3]                     # the PEs come first
        for n, row in enumerate(X):
            mapping = evs["schedule"].to_mapping(row)
            makespan, period = oracle(problem, mapping.assignment)
            for agg, expected in (("schedule", makespan), ("period", period)):
                ref = evaluate(app, arch, mapping, "time", agg, problem=problem).value
                assert ref == pytest.approx(expected, rel=1e-9), (seed, row, agg)
                assert values[agg][n] == pytest.approx(expected, rel=1e-9), (seed, row, agg)
            # a PE busy for L per iteration can neither finish nor repeat sooner
            assert period >= loads[n].max() * (1 - 1e-12)
            assert makespan >= loads[n].max() * (1 - 1e-12)


# ------------------------------------------------------------ search and commands
def test_exhaustive_search_minimizes_the_makespan_and_exact_declines():
    app, arch, mapping, problem = setup(MULTI, board(), "split")
    result = search(problem, "time", "schedule", strategy="exhaustive")
    ev = BatchEvaluator(problem, "time", "schedule")
    X = np.array(list(itertools.product(range(2), repeat=3)))
    assert result.value == pytest.approx(ev.evaluate(X).min())
    # all on one PE: 2 + 3 + 3 + 4 = 12, below any split (the bus delays)
    assert result.value == pytest.approx(12)
    for agg in ("schedule", "period"):
        with pytest.raises(SearchError, match=f"'exact' does not cover '{agg}'"):
            search(problem, "time", agg, strategy="exact")


@pytest.mark.parametrize("strategy", ["greedy", "anneal", "genetic", "tabu"])
def test_heuristics_search_the_period(strategy):
    app, arch, mapping, problem = setup(CYCLE, board(bus_alpha=2), "pipelined")
    result = search(problem, "time", "period", strategy=strategy, budget=200, seed=0)
    # all on one PE: 2 + 3 + 1 = 6 per iteration, no transfer; pipelined: 5 (above)
    assert result.value <= 5
    best = Mapping("best", dict(result.mapping))
    assert result.value == pytest.approx(evaluate(app, arch, best, "time", "period",
                                                  problem=problem).value)


def test_timed_evaluators_pickle_for_workers():
    app, arch, mapping, problem = setup(CYCLE, board(bus_alpha=2), "pipelined")
    ev = pickle.loads(pickle.dumps(BatchEvaluator(problem, "time", "period")))
    assert ev.value(mapping) == 5


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, text in (("app.sdf", CYCLE), ("board.moa", board(bus_alpha=2)), ("m.map", MAPS)):
        paths[name] = tmp_path / name
        paths[name].write_text(text)
    return [str(paths[n]) for n in ("app.sdf", "board.moa", "m.map")]


def test_eval_prints_the_period_and_throughput(files, capsys):
    assert main(["eval", *files, "--mapping", "pipelined", "--aggregate", "period",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["value"] == 5 and out["throughput"] == pytest.approx(0.2)
    assert out["aggregate"] == "period"
    assert main(["eval", *files, "--mapping", "pipelined", "--aggregate", "period"]) == 0
    text = capsys.readouterr().out
    assert "(period, lambda = 1): 5" in text and "throughput: 0.2 " in text


def test_eval_refuses_energy_with_schedule(files, capsys):
    assert main(["eval", *files, "--mapping", "pipelined", "--aggregate", "schedule",
                 "--metric", "energy"]) == 2
    err = capsys.readouterr().err
    assert "'time' only, not 'energy'" in err and "Traceback" not in err


def test_search_command_with_schedule(files, capsys):
    assert main(["search", *files[:2], "--aggregate", "schedule", "--strategy",
                 "exhaustive", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # all on one PE: 2 + 3 + 1 = 6; the best split pays 2 on the bus at least once
    assert out["value"] == pytest.approx(6) and out["aggregate"] == "schedule"


def test_sweep_command_with_period(files, tmp_path, capsys):
    out = tmp_path / "sweep.csv"
    moa = tmp_path / "board.moa"
    moa.write_text(board(bus_alpha=2).replace("lambda = 1", "param k = 1\n    lambda = k"))
    assert main(["sweep", files[0], str(moa), files[2], "--mapping", "pipelined",
                 "--aggregate", "period", "--range", "k=1:2:2", "-o", str(out)]) == 0
    text = out.read_text()
    # k = 2 doubles the bus delays: ((2+4) + 3 + (1+4)) / 2 = 7
    assert text.count("\n") >= 3 and ",5" in text and ",7" in text


def test_fidelity_and_fit_commands_with_schedule(files, tmp_path, capsys):
    # model makespans (bus alpha 2): one (all on p0) 2 + 3 + 1 = 6; pipelined 8 (above);
    # split: a [0, 2], b [4, 7], c [9, 10]: 10; rev (a on p1): a [0, 2], b [4, 7], c [7, 8]:
    # 8.  Measured: twice these, as if every alpha were doubled.
    maps = tmp_path / "all.map"
    maps.write_text(MAPS + "\nmapping one { a -> p0; b -> p0; c -> p0 }"
                    "\nmapping rev { a -> p1; b -> p0; c -> p0 }")
    csv = tmp_path / "runs.csv"
    csv.write_text("mapping,time_s\none,12\npipelined,16\nsplit,20\nrev,16\n")
    common = [files[0], files[1], str(maps), str(csv), "--mapping-column", "mapping",
              "--measured", "time_s", "--aggregate", "schedule", "--json"]
    assert main(["fidelity", *common]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tau"] == pytest.approx(1.0) and out["mape"] == pytest.approx(50.0)
    assert main(["fit", *common, "--free", "p0.time.alpha,p1.time.alpha,bus.time.alpha",
                 "--test-fraction", "0"]) == 0
    fitted = json.loads(capsys.readouterr().out)["fitted"]
    assert fitted == pytest.approx({"p0.time.alpha": 2, "p1.time.alpha": 2,
                                    "bus.time.alpha": 4}, rel=1e-9)


# ------------------------------------------------------------ mapped_analysis
def test_mapped_analysis_of_the_cycle():
    from mapping.evaluation.timing import Slot, mapped_analysis
    app, arch, mapping, problem = setup(CYCLE, board(bus_alpha=2), "pipelined")
    t = mapped_analysis(problem, mapping)
    assert (t.makespan, t.latency, t.period) == (8, 8, 5)
    assert t.throughput == pytest.approx(0.2)
    assert sorted(t.critical_cycle) == ["a", "b", "c"]         # ratio 10/2 (docstring)
    assert t.schedule["p0"] == (Slot("a#0", "a", 0, 2),)
    assert t.schedule["p1"] == (Slot("b#0", "b", 4, 7), Slot("c#0", "c", 7, 8))
    # transfers on the bus: a's token leaves at 2 and arrives at 4, c's at 8 and 10
    assert t.schedule["bus"] == (Slot("a->b:a#0", "a", 2, 4), Slot("c->a:c#0", "c", 8, 10))
    # a->b: one token from 4 (read at 4); b->c: one at 7; c->a: its 2 initial tokens
    assert t.buffers == {"a->b": 1, "b->c": 1, "c->a": 2}
    d = json.loads(json.dumps(t.to_dict()))
    assert set(d) == {"throughput", "period", "critical_cycle", "latency", "buffers",
                      "schedule", "makespan"}
    assert d["schedule"]["p1"][1] == {"firing": "c#0", "actor": "c", "start": 7, "end": 8}


def test_mapped_analysis_buffers_of_a_multirate_graph():
    from mapping.evaluation.timing import mapped_analysis
    app, arch, mapping, problem = setup(MULTI, board(), "split")
    t = mapped_analysis(problem, mapping)
    # a->b: a's 2 tokens arrive at 4, b#0 reads one at 4, b#1 the other at 7: 2;
    # b->c: b#0's token arrives at 8, b#1's at 11, c reads both at 11: 2
    assert t.buffers == {"a->b": 2, "b->c": 2}
    assert (t.makespan, t.period) == (15, 15)
    assert [s.name for s in t.schedule["p1"]] == ["b#0", "b#1"]


def test_karp_on_the_transfer_matrix_equals_howard_on_the_static_order_graph():
    from mapping.evaluation.timing import static_order_graph
    from moc import cycle_ratio
    arch, = parse_moa(RANDOM_BOARD.replace("CHARGE", "both"))
    rng = np.random.default_rng(11)
    for seed in range(4):
        problem = bind_problem(random_app(6, 9, seed=seed, extra_attrs=False), arch)
        ev = BatchEvaluator(problem, "time", "period")
        X = rng.integers(0, 3, (5, 6))
        for row, value in zip(X, ev.evaluate(X)):
            nodes, edges = static_order_graph(problem, ev.to_mapping(row))
            howard = cycle_ratio.max_cycle_ratio(nodes, edges).ratio
            assert value == pytest.approx(float(howard), rel=1e-9)


def test_per_element_activity_refuses_timed_aggregations(tmp_path, capsys):
    moa = tmp_path / "board.moa"
    moa.write_text(board())
    csv = tmp_path / "runs.csv"
    csv.write_text("quanta_p0,quanta_p1,t\n10,0,11\n6,2,13\n")
    assert main(["fidelity", str(moa), str(csv), "--measured", "t", "--quanta-column",
                 "quanta_{element}", "--aggregate", "schedule"]) == 2
    err = capsys.readouterr().err
    assert "schedules the firings of a mapping" in err and "Traceback" not in err


def test_a_transfer_names_its_channel_whatever_colons_the_names_hold():
    from mapping.evaluation.timing import transfer_channel, transfer_name
    for channel, actor in [("ch", "a"), ("x:y", "a"), ("c", "p:q"), ("a->b", "a")]:
        assert transfer_channel(transfer_name(channel, f"{actor}#12"), actor) == channel
        assert transfer_channel(f"{actor}#12", actor) is None       # a firing
