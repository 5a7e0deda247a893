"""Route preference (issue 16): among fewest-hop routes the smallest Σ route_cost wins,
names only break what is left, so the shared-store study does not depend on names."""
from pathlib import Path

import networkx as nx
import pytest

import dsl
from mapping.evaluation.batch import BatchEvaluator
from mapping.evaluation.reference import evaluate
from mapping.semantics.problem import bind_problem
from moa.routing import route_to_cn, shortest_cn_path

STORE = Path(__file__).resolve().parents[1] / "examples" / "accelerator_store"


def two_routes(cost_a=None, cost_b=None, a="a", b="b"):
    """x -- a -- y and x -- b -- y: two one-hop routes."""
    g = nx.Graph()
    g.add_nodes_from([("x", {"kind": "pe"}), ("y", {"kind": "pe"})])
    for name, cost in ((a, cost_a), (b, cost_b)):
        g.add_node(name, kind="cn", **({} if cost is None else {"route_cost": cost}))
        g.add_edges_from([("x", name), (name, "y")])
    return g


def test_route_cost_beats_names():
    assert shortest_cn_path(two_routes(), "x", "y") == ("a",)
    assert shortest_cn_path(two_routes(cost_a=1), "x", "y") == ("b",)
    assert shortest_cn_path(two_routes(cost_a=1, a="zz"), "x", "y") == ("b",)
    assert shortest_cn_path(two_routes(cost_b=1, b="0"), "x", "y") == ("a",)


def test_route_cost_never_lengthens_a_route():
    g = two_routes(cost_a=5, cost_b=5)
    g.add_node("c1", kind="cn")
    g.add_node("c2", kind="cn")
    g.add_edges_from([("x", "c1"), ("c1", "c2"), ("c2", "y")])
    assert shortest_cn_path(g, "x", "y") == ("a",)


def test_shared_store_example_runs(tmp_path):
    assert shared_value(tmp_path, "acc_store") == pytest.approx(3.91008575168e-4)


def test_route_cost_sums_along_the_route():
    g = nx.Graph()
    g.add_nodes_from([("x", {"kind": "pe"}), ("y", {"kind": "pe"})])
    for name, cost in (("a1", 1), ("a2", 1), ("b1", 0), ("b2", 1.5)):
        g.add_node(name, kind="cn", route_cost=cost)
    g.add_edges_from([("x", "a1"), ("a1", "a2"), ("a2", "y"),
                      ("x", "b1"), ("b1", "b2"), ("b2", "y"), ("a1", "b2")])
    # x-a1-a2-y costs 2, x-b1-b2-y 1.5, x-a1-b2-y 2.5
    assert shortest_cn_path(g, "x", "y") == ("b1", "b2")
    assert route_to_cn(g, "x", "b2") == ("b1", "b2")


PARAMS = {"s_comp": 1e6, "s_local": 1e6}


def shared_inputs(tmp_path, store_name):
    text = (STORE / "shared.moa").read_text().replace("acc_store", store_name)
    moa = tmp_path / f"{store_name}.moa"
    moa.write_text(text)
    app, = dsl.load_sdf(STORE / "decoder.sdf")
    arch, = dsl.load_moa(moa)
    mapping = next(m for m in dsl.load_map(STORE / "mappings.map") if m.name == "idct_color")
    return app, arch, mapping


def shared_value(tmp_path, store_name):
    app, arch, mapping = shared_inputs(tmp_path, store_name)
    return evaluate(app, arch, mapping, params=PARAMS).value


def test_shared_store_does_not_depend_on_names(tmp_path):
    assert shared_value(tmp_path, "zz_store") == pytest.approx(shared_value(tmp_path,
                                                                            "acc_store"))


def test_batch_evaluator_prefers_the_same_route(tmp_path):
    app, arch, mapping = shared_inputs(tmp_path, "zz_store")
    batch = BatchEvaluator(bind_problem(app, arch, PARAMS), "time", None)
    assert batch.value(mapping) == pytest.approx(shared_value(tmp_path, "acc_store"))


def test_bound_copies_share_routes_only_under_the_same_preferences():
    arch = dsl.parse_moa(
        "moa m {\n param ca = 0\n param s = 1\n"
        " pe x [time = lsla(alpha = s)]\n pe y [time = lsla(alpha = s)]\n"
        " cn a [time = lsla(alpha = 1), route_cost = ca]\n cn b [time = lsla(alpha = 1)]\n"
        " x -- a\n a -- y\n x -- b\n b -- y\n}\n", "m.moa")[0]
    one, two = arch.bind({"s": 1}), arch.bind({"s": 2})
    assert one.route("x", "y") == ("a",)
    assert two._routes is one._routes                 # another value, the same routes
    pricier = arch.bind({"ca": 1})
    assert pricier._routes is not one._routes
    assert pricier.route("x", "y") == ("b",)
    assert arch.bind({"ca": 0, "s": 3}).route("x", "y") == ("a",)
