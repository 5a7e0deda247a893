import pytest

import dsl
from dsl.errors import ParseError

# SPEC §6, verbatim
SPEC_MAP = """\
mapping gpu_offload {
    io -> big[0]
    kernel -> gpu
}
mapping all_host { io -> big[0]; kernel -> big[0] }
"""


def test_spec_snippet():
    m1, m2 = dsl.parse_map(SPEC_MAP, "m.map")
    assert m1.name == "gpu_offload"
    assert dict(m1.assignment) == {"io": "big[0]", "kernel": "gpu"}
    assert dict(m2.assignment) == {"io": "big[0]", "kernel": "big[0]"}
    assert m1.origin == ("m.map", 1, 9)
    assert m1.origins["io"] == ("m.map", 2, 5)
    assert m2.origins["kernel"] == ("m.map", 5, 34)


def test_routes():
    text = """
    mapping m {
        a -> p0
        b -> "p 1"            # a quoted name
        channel c via sw[0], bus
        channel a -> b via bus
        channel "x->y" via bus
    }
    """
    (m,) = dsl.parse_map(text)
    assert dict(m.assignment) == {"a": "p0", "b": "p 1"}
    assert dict(m.routes) == {"c": ("sw[0]", "bus"), "a->b": ("bus",), "x->y": ("bus",)}


@pytest.mark.parametrize("text, where, message", [
    ("mapping m {\n a -> p\n a -> q\n}", (3, 2), "mapped twice"),
    ("mapping m {\n channel c via x\n channel c via y\n}", (3, 10), "two routes"),
    ("mapping m {}\nmapping m {}", (2, 9), "duplicate mapping"),
])
def test_semantic_errors(text, where, message):
    # a .map file's own errors are positioned ParseErrors: dsl knows nothing of mapping
    with pytest.raises(ParseError) as info:
        dsl.parse_map(text, "t.map")
    assert message in str(info.value)
    assert info.value.origin == ("t.map",) + where


def test_syntax_error():
    with pytest.raises(ParseError) as info:
        dsl.parse_map("mapping m {\n a -> b[x]\n}", "t.map")
    assert info.value.origin == ("t.map", 2, 9)
    assert "expected a number" in str(info.value)
