import pytest

import dsl
from dsl.errors import ExpressionError, ParseError
from dsl.expression import Expression
from moc import repetition_vector
from moc.errors import SDFError

# SPEC §3, verbatim
SPEC_SDF = """\
# A GPU application as in the GSLA paper: host I/O feeds a kernel.
sdf opencl {
    param S = 1024            # input data quantity
    param gamma = 8           # parallelism factor

    actor io     [quanta = S]
    actor kernel [quanta = S, S = S, gamma = gamma]

    io -> kernel     [size = 4]             # prod = cons = 1, delay = 0
    kernel -> io     [size = 4, delay = 1]
    channel back2 : kernel -> io [prod = 2, cons = 2, delay = 2]
}
"""


def test_spec_snippet():
    (g,) = dsl.parse_sdf(SPEC_SDF, "opencl.sdf")
    assert g.name == "opencl"
    assert g.params == {"S": 1024, "gamma": 8}
    assert list(g.actors) == ["io", "kernel"]
    assert str(g.actors["io"].attrs["quanta"]) == "S"
    assert set(g.actors["kernel"].attrs) == {"quanta", "S", "gamma"}
    assert list(g.channels) == ["io->kernel", "kernel->io", "back2"]
    c = g.channels["io->kernel"]
    assert (c.src, c.dst, c.prod, c.cons, c.delay, c.size) == ("io", "kernel", 1, 1, 0, 4)
    assert g.channels["kernel->io"].delay == 1
    b = g.channels["back2"]
    assert (b.src, b.dst, b.prod, b.cons, b.delay, b.size) == ("kernel", "io", 2, 2, 2, 1)
    bound = g.bind({"S": 2048})
    assert bound.actors["io"].attrs["quanta"] == 2048
    assert repetition_vector(bound) == {"io": 1, "kernel": 1}


def test_origins_point_at_the_statements():
    (g,) = dsl.parse_sdf(SPEC_SDF, "opencl.sdf")
    assert g.origin == ("opencl.sdf", 2, 5)
    assert g.actors["io"].origin == ("opencl.sdf", 6, 11)
    assert g.actors["kernel"].origin == ("opencl.sdf", 7, 11)
    assert g.channels["io->kernel"].origin == ("opencl.sdf", 9, 5)
    assert g.channels["back2"].origin == ("opencl.sdf", 11, 13)
    assert g.actors["io"].attrs["quanta"].origin == ("opencl.sdf", 6, 28)


def test_every_construct():
    text = """
    # leading comment
    sdf a { actor x; actor y [quanta = 2]; x -> y }   # one line, ';' separated
    sdf b {
        param n = 0x10
        param m = n * 2 + 1_000    # a parameter using another

        actor "odd name" [quanta = m, w = 1e-9, label = "text"]
        actor plain
        channel c1 : plain -> "odd name" [prod = 2 * 3, cons = n, delay = 2, size = 4.5, extra = 7]
        "odd name" -> plain [
            prod = 3,
            cons = 3
        ]
        later -> plain               # uses an actor declared further down
        actor later [q = -1, r = min(n, 3), s = (n)]
    }
    """
    a, b = dsl.parse_sdf(text)
    assert list(a.actors) == ["x", "y"] and list(a.channels) == ["x->y"]
    assert b.params["n"] == 16
    assert str(b.params["m"]) == "n * 2 + 1000"
    odd = b.actors["odd name"].attrs
    assert str(odd["quanta"]) == "m" and odd["w"] == 1e-9 and odd["label"] == "text"
    assert dict(b.actors["plain"].attrs) == {}
    c1 = b.channels["c1"]
    assert c1.prod == 6 and type(c1.prod) is int
    assert str(c1.cons) == "n" and c1.delay == 2 and c1.size == 4.5
    assert dict(c1.attrs) == {"extra": 7}
    assert b.channels["odd name->plain"].prod == 3
    assert "later->plain" in b.channels
    later = b.actors["later"].attrs
    assert later["q"] == -1 and str(later["r"]) == "min(n, 3)" and str(later["s"]) == "n"
    bound = b.bind()
    assert bound.channels["c1"].cons == 16
    assert bound.actors["odd name"].attrs["quanta"] == 1032


def test_empty_file_and_empty_graph():
    assert dsl.parse_sdf("") == []
    assert dsl.parse_sdf("# nothing\n\n") == []
    (g,) = dsl.parse_sdf("sdf empty {}")
    assert g.actors == {} and g.channels == {}


def test_keywords_are_names_where_no_keyword_fits():
    # after 'actor' or '->' a keyword is a name; at the start of a statement, quote it
    (g,) = dsl.parse_sdf('sdf g { actor param; actor sdf; "param" -> sdf }')
    assert list(g.actors) == ["param", "sdf"]
    assert list(g.channels) == ["param->sdf"]
    assert '"param" -> "sdf"' in dsl.format_sdf(g)


def _err(text, exc=ParseError):
    with pytest.raises(exc) as info:
        dsl.parse_sdf(text, "t.sdf")
    return info.value


@pytest.mark.parametrize("text, exc, where, message", [
    ("sdf g {\n actor a\n actor a\n}", SDFError, (3, 8), "duplicate actor 'a'"),
    ("sdf g {\n actor a; actor b\n channel c : a -> b\n channel c : b -> a\n}", SDFError,
     (4, 10), "duplicate channel 'c'"),
    ("sdf g {\n actor a; actor b\n a -> b\n a -> b\n}", SDFError, (4, 2), "second unnamed"),
    ("sdf g {\n actor a\n a -> zz\n}", SDFError, (3, 7), "unknown actor 'zz'"),
    ("sdf g {\n actor a [q = 1, q = 2]\n}", ParseError, (2, 18), "duplicate attribute 'q'"),
    ("sdf g {\n actor a; actor b\n a -> b [prod = 0]\n}", SDFError, (3, 10), "prod must be"),
    ("sdf g {\n actor a; actor b\n a -> b [delay = 1.5]\n}", SDFError, (3, 10), "delay must be"),
    ("sdf g {\n actor a; actor b\n a -> b [size = -1]\n}", SDFError, (3, 10), "size"),
    ("sdf g {\n param p = 1\n param p = 2\n}", ParseError, (3, 8), "duplicate parameter"),
    ("sdf g {\n actor a [quanta = 2 * T]\n}", ExpressionError, (2, 24), "unknown parameter 'T'"),
    ("sdf g {\n param a = b\n param b = a + 1\n}", ExpressionError, (2, 8), "cycle"),
    ("sdf g {}\nsdf g {}", SDFError, (2, 5), "duplicate graph 'g'"),
    ("sdf g {\n actor a [name = 1]\n}", ParseError, (2, 11), "cannot be an attribute"),
    ("sdf g {\n actor a [q = 1 / 0]\n}", ExpressionError, (2, 15), "division by zero"),
])
def test_semantic_errors_carry_origins(text, exc, where, message):
    err = _err(text, exc)
    assert message in str(err)
    assert err.origin == ("t.sdf",) + where


def test_cycle_through_a_single_parameter():
    err = _err("sdf g { param a = a + 1 }", ExpressionError)
    assert "a -> a" in str(err)
