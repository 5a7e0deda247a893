"""parse -> print -> parse gives equal objects."""
from pathlib import Path

import pytest

import dsl
from dsl_compare import assert_same, key
from moa.architecture import Architecture, CostSpec
from moc.graph import SDFGraph

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_FILES = sorted(p for ext in ("sdf", "moa", "map") for p in EXAMPLES.rglob(f"*.{ext}"))

PARSE = {".sdf": dsl.parse_sdf, ".moa": dsl.parse_moa, ".map": dsl.parse_map}
FORMAT = {".sdf": dsl.format_sdf, ".moa": dsl.format_moa, ".map": dsl.format_map}


def round_trip(kind, objs):
    text = FORMAT[kind](objs)
    again = PARSE[kind](text, "printed" + kind)
    assert_same(objs, again)
    assert FORMAT[kind](again) == text  # printing is stable
    return text


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_examples_round_trip(path):
    objs = dsl.load(path)
    assert objs, f"{path} holds no block"
    round_trip(path.suffix, objs)


def test_examples_are_present():
    # An empty glob would let the round trip above pass vacuously.
    assert {p.suffix for p in EXAMPLE_FILES} == {".sdf", ".moa", ".map"}


SDF_SAMPLE = """
sdf a { actor x; actor y [quanta = 2]; x -> y }
sdf "b graph" {
    param n = 0x10
    param m = n * 2 + 1_000
    param third = 1 / 3
    param e = -2 ** -n
    actor "odd name" [quanta = m, w = 1e-9, label = "a \\"quoted\\" text", big = 1e300]
    actor plain [neg = -1.5, f = min(n, sqrt(m)) / (n - 1), inf_value = inf]
    actor channel
    channel c1 : plain -> "odd name" [prod = 2 * 3, cons = n, delay = 2, size = 4.5, x = 7]
    "odd name" -> plain [prod = 3, cons = 3, delay = n - 16]
    channel c2 : plain -> plain [delay = 1]
    plain -> "channel"
}
"""

MOA_SAMPLE = """
moa m {
    param bw = 1e9; param k = 2
    lambda = k / 2
    aggregate = exclusive
    type T [time = lsla(alpha = 1, beta = 2), local = store, x = 3]
    type U
    pe acc[0..1] : T [time = lsla(alpha = 5), y = k]
    pe acc[2..3] : T
    pe solo[7..7]
    pe host [time = logca()]
    pe ip [time = roofline(peak = 1e9, bandwidth = bw, memory = dram, miss = 0.5),
           latency = logca(A = 2, latency = independent), tag = "quoted"]
    pe "pe" : U
    cn store [time = lookup(key = "k")]; cn dram [time = bandwidth(B = bw)]
    cn bus [local = bus]
    cn sw[0..1]
    acc[*] -- store
    acc[0] -- bus; host -- bus; ip -- bus
    bus -- dram
    sw[*] -- bus
    acc[*] -- sw[*]
    host -- sw[1]
    "pe" -- bus
    store -- acc[3]
}
moa second { lambda = 0.5; pe p; cn c; p -- c }
"""

MAP_SAMPLE = """
mapping m { a -> p0; b -> "p 1"; c -> big[3]; channel c via sw[0], bus; channel a -> b via bus }
mapping "two words" {
    "channel" -> p
    channel "x y" via bus
}
"""


def test_sdf_sample_round_trip():
    objs = dsl.parse_sdf(SDF_SAMPLE)
    text = round_trip(".sdf", objs)
    assert 'actor "channel"' in text and '"odd name" -> plain' in text


def test_moa_sample_round_trip():
    objs = dsl.parse_moa(MOA_SAMPLE)
    text = round_trip(".moa", objs)
    assert "pe acc[0..1] : T [time = lsla(alpha = 5), y = k]" in text
    assert "pe acc[2..3] : T\n" in text
    assert "acc[*] -- store" in text and "acc[*] -- sw[*]" in text
    assert "memory = dram" in text and "latency = independent" in text and 'key = "k"' in text


def test_map_sample_round_trip():
    objs = dsl.parse_map(MAP_SAMPLE)
    text = round_trip(".map", objs)
    assert "channel a -> b via bus" in text


def test_spec_snippets_round_trip():
    from test_dsl_map import SPEC_MAP
    from test_dsl_moa import SPEC_MOA
    from test_dsl_sdf import SPEC_SDF
    round_trip(".sdf", dsl.parse_sdf(SPEC_SDF))
    round_trip(".moa", dsl.parse_moa(SPEC_MOA))
    round_trip(".map", dsl.parse_map(SPEC_MAP))


def test_floats_are_printed_exactly():
    g = SDFGraph("g", {"a": 0.1 + 0.2, "b": 1 / 3, "c": 1e-300, "d": 2.0 ** 0.5})
    g.add_actor("x", v=123456789.123456789)
    (again,) = dsl.parse_sdf(dsl.format_sdf(g))
    assert again.params == g.params
    assert again.actors["x"].attrs["v"] == g.actors["x"].attrs["v"]


def test_objects_built_in_python_print_and_parse():
    g = SDFGraph("py")
    g.add_actor("a", quanta=3)
    g.add_actor("b")
    g.add_channel("a", "b", prod=2, cons=4, delay=1, size=8, gamma=2)
    g.add_channel("b", "a", "back")
    assert_same([g], dsl.parse_sdf(dsl.format_sdf(g)))

    arch = Architecture("hw", {"f": 2.0}, aggregate="max")
    arch.add_type("T", {"time": CostSpec("lsla", {"alpha": 1e-9})})
    for i in range(3):
        arch.add_pe(f"core[{i}]", type_name="T", array=("core", i))
    arch.add_cn("bus", costs={"time": CostSpec("lsla", {"alpha": 1})})
    for i in range(3):
        arch.add_link(f"core[{i}]", "bus")
    text = dsl.format_moa(arch)
    assert "pe core[0..2] : T" in text and "core[*] -- bus" in text
    assert_same([arch], dsl.parse_moa(text))


def test_the_architecture_defaults_are_written_by_neither_printer():
    from dsl.dot import to_dot
    from dsl.expression import Name
    from dsl.printer import is_default
    from moa.architecture import DEFAULT_AGGREGATE, DEFAULT_LAMBDA
    from moc.phases import Phases
    (read,) = dsl.parse_moa("moa m { pe p }")
    built = Architecture("m")
    for arch in (read, built):
        assert (arch.lambda_, arch.aggregate) == (DEFAULT_LAMBDA, DEFAULT_AGGREGATE)
        assert "lambda" not in dsl.format_moa(arch) + to_dot(arch)
        assert "aggregate" not in dsl.format_moa(arch) + to_dot(arch)
    # a plain number equal to the default is not written; an expression always is
    assert is_default(1, DEFAULT_LAMBDA) and not is_default(2, DEFAULT_LAMBDA)
    assert not is_default(Name("l"), 1) and not is_default(Phases((1,)), 1)
    assert not is_default("1", 1)
    (named,) = dsl.parse_moa("moa m { param l = 1\n lambda = l\n pe p }")
    assert "lambda = l" in dsl.format_moa(named) and "lambda = l" in to_dot(named)


def test_bound_architecture_prints_its_models():
    (a,) = dsl.parse_moa(MOA_SAMPLE.split("moa second")[0].replace(', name = "k"', ""))
    bound = a.bind()
    text = dsl.format_moa(bound)
    (again,) = dsl.parse_moa(text)
    assert again.elements["acc[0]"].costs["time"].args["alpha"] == 5
    assert again.bind().elements["dram"].costs["time"] == bound.elements["dram"].costs["time"]


def test_format_accepts_single_objects_and_lists():
    (g,) = dsl.parse_sdf(SDF_SAMPLE)[:1]
    assert dsl.format_sdf(g) == dsl.format_sdf([g])
    assert key(dsl.parse_sdf(dsl.format_sdf(g))[0]) == key(g)
