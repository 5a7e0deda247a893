import pytest

import dsl
from dsl.errors import ExpressionError, ParseError
from moa.architecture import CostSpec
from moa.errors import ArchitectureError

# SPEC §4, verbatim
SPEC_MOA = """\
moa exynos5422 {
    param f = 1.0
    lambda = 1.0               # scale of communication costs against processing
    aggregate = sum            # default aggregation: sum | max | exclusive (§6)

    type A7  [time = lsla(alpha = 2.0e-9 / f, beta = 1e-6), energy = lsla(alpha = 3e-10)]
    type A15 [time = lsla(alpha = 0.7e-9 / f, beta = 1e-6), energy = lsla(alpha = 9e-10)]

    pe little[0..3] : A7
    pe big[0..3]    : A15
    pe gpu  [time = gsla(alpha = 3.1e-7, beta = 1.2e-9),
             power = gsla_power(a = 0.12, b = 1e-7, c = 2e-6)]
    cn cci  [time = lsla(alpha = 1e-10, beta = 2e-6)]
    cn l2_little [time = lsla(alpha = 5e-11)]

    little[*] -- l2_little
    l2_little -- cci
    big[*] -- cci
    gpu -- cci
}
"""


def test_spec_snippet():
    (a,) = dsl.parse_moa(SPEC_MOA, "exynos.moa")
    assert a.name == "exynos5422" and a.params == {"f": 1.0}
    assert a.lambda_ == 1.0 and a.aggregate == "sum"
    assert list(a.types) == ["A7", "A15"]
    assert a.pes == [f"little[{i}]" for i in range(4)] + [f"big[{i}]" for i in range(4)] + ["gpu"]
    assert a.cns == ["cci", "l2_little"]
    little0 = a.elements["little[0]"]
    assert little0.array == ("little", 0) and little0.type_name == "A7"
    assert a.elements["big[3]"].array == ("big", 3)
    assert little0.costs["time"].model == "lsla"
    assert str(little0.costs["time"].args["alpha"]) == "2e-09 / f"
    assert little0.costs["time"].args["beta"] == 1e-6
    assert dict(little0.own_costs) == {}
    gpu = a.elements["gpu"]
    assert gpu.costs["power"] == CostSpec("gsla_power", {"a": 0.12, "b": 1e-7, "c": 2e-6})
    assert a.links[:4] == [(f"little[{i}]", "l2_little") for i in range(4)]
    assert ("l2_little", "cci") in a.links and ("gpu", "cci") in a.links
    assert len(a.links) == 4 + 1 + 4 + 1
    assert a.arrays() == {"little": [f"little[{i}]" for i in range(4)],
                          "big": [f"big[{i}]" for i in range(4)]}
    # the origins point at the statements
    assert little0.origin == ("exynos.moa", 9, 8)
    assert a.types["A15"].origin == ("exynos.moa", 7, 10)
    assert gpu.costs["power"].origin == ("exynos.moa", 12, 22)


def test_spec_snippet_binds():
    (a,) = dsl.parse_moa(SPEC_MOA)
    bound = a.bind({"f": 2.0})
    assert bound.elements["little[1]"].costs["time"].params.alpha == pytest.approx(1e-9)
    assert bound.route("little[0]", "big[0]") == ("l2_little", "cci")


def test_every_construct():
    text = """
    moa m {
        param bw = 1e9; param k = 2
        lambda = k / 2
        aggregate = max
        type T [time = lsla(alpha = 1, beta = 2), local = store, x = 3]
        pe acc[0..1] : T [time = lsla(alpha = 5), y = k]     # own cost overrides T's
        pe host [time = logca()]
        pe ip [time = roofline(peak = 1e9, bandwidth = bw, memory = dram, miss = 0.5),
               latency = logca(A = 2, latency = independent), tag = "quoted"]
        cn store; cn dram [time = bandwidth(B = bw)]
        cn bus
        cn sw[0..1]
        acc[*] -- store
        acc[0] -- bus; host -- bus; ip -- bus
        bus -- dram
        sw[*] -- bus
        acc[*] -- sw[*]
        "host" -- sw[1]
    }
    """
    (a,) = dsl.parse_moa(text)
    assert str(a.lambda_) == "k / 2" and a.aggregate == "max"
    t = a.types["T"]
    assert t.local == "store" and dict(t.attrs) == {"x": 3}
    acc1 = a.elements["acc[1]"]
    assert acc1.costs["time"] == CostSpec("lsla", {"alpha": 5})
    assert acc1.local == "store" and acc1.own_local is None
    assert dict(acc1.own_attrs).keys() == {"y"} and acc1.attrs["x"] == 3
    assert a.elements["host"].costs["time"] == CostSpec("logca", {})
    ip = a.elements["ip"]
    roof = ip.costs["time"].args
    assert roof["memory"] == "dram" and str(roof["bandwidth"]) == "bw" and roof["miss"] == 0.5
    assert ip.costs["latency"].args["latency"] == "independent"
    assert ip.attrs["tag"] == "quoted"
    assert a.cns == ["store", "dram", "bus", "sw[0]", "sw[1]"]
    assert ("acc[0]", "bus") in a.links and ("acc[1]", "bus") not in a.links
    product = [(x, y) for x in ("acc[0]", "acc[1]") for y in ("sw[0]", "sw[1]")]
    assert all(p in a.links for p in product)
    assert ("host", "sw[1]") in a.links


def _err(text, exc):
    with pytest.raises(exc) as info:
        dsl.parse_moa(text, "t.moa")
    return info.value


@pytest.mark.parametrize("text, exc, where, message", [
    ("moa m {\n pe a : Nope\n}", ArchitectureError, (2, 9), "unknown type 'Nope'"),
    ("moa m {\n pe a\n cn b\n a -- zz\n}", ArchitectureError, (4, 7), "unknown element 'zz'"),
    ("moa m {\n pe a\n cn b\n b -- a[2]\n}", ArchitectureError, (4, 7), "unknown element 'a[2]'"),
    ("moa m {\n pe a\n cn b\n b -- q[*]\n}", ArchitectureError, (4, 7), "no array named 'q'"),
    ("moa m {\n pe a[0..1]\n cn b\n a -- b\n}", ArchitectureError, (4, 2), "is an array"),
    ("moa m {\n pe a\n cn a\n}", ArchitectureError, (3, 5), "duplicate element 'a'"),
    ("moa m {\n pe a[0..1]\n pe a[1..2]\n}", ArchitectureError, (3, 5), "duplicate element 'a[1]'"),
    ("moa m {\n type T\n type T\n}", ArchitectureError, (3, 7), "duplicate type 'T'"),
    ("moa m {\n pe a [local = nowhere]\n}", ArchitectureError, (2, 5), "local 'nowhere'"),
    ("moa m {\n pe a [local = 3]\n}", ArchitectureError, (2, 8), "local must name"),
    ("moa m {\n pe a[3..1]\n}", ArchitectureError, (2, 7), "empty range"),
    ("moa m {\n pe a; pe b\n a -- b\n}", ArchitectureError, (3, 2), "two PEs"),
    ("moa m {\n lambda = 1\n lambda = 2\n}", ParseError, (3, 2), "set twice"),
    ("moa m {\n pe a [time = lsla(alpha = 1, alpha = 2)]\n}", ParseError, (2, 31),
     "duplicate attribute 'alpha'"),
    ("moa m {\n pe a [time = lsla(alpha = 2 * g)]\n}", ExpressionError, (2, 32),
     "unknown parameter 'g'"),
    ("moa m {\n pe a [speed = g]\n}", ExpressionError, (2, 16), "unknown parameter 'g'"),
    ("moa m {}\nmoa m {}", ArchitectureError, (2, 5), "duplicate architecture"),
])
def test_semantic_errors_carry_origins(text, exc, where, message):
    err = _err(text, exc)
    assert message in str(err)
    assert err.origin == ("t.moa",) + where


def test_bad_model_argument_reported_with_origin():
    # a known argument is checked when the element is built; one that is an expression
    # of a parameter when the architecture is bound
    with pytest.raises(ArchitectureError, match="element 'a', metric 'time'") as info:
        dsl.parse_moa("moa m {\n pe a [time = lsla(alpha = -1)]\n}", "t.moa")
    assert info.value.origin == ("t.moa", 2, 15)
    (a,) = dsl.parse_moa("moa m {\n param n = 1\n pe a [time = lsla(alpha = -n)]\n}", "t.moa")
    with pytest.raises(ArchitectureError) as info:
        a.bind()
    assert info.value.origin == ("t.moa", 3, 15)


def test_charge_is_written_as_a_bare_word_or_in_quotes():
    # SPEC §12 writes `charge = ends`; a word, like the CN that `local` names
    text = """moa m {
        pe a [time = lsla(1)]
        cn bus [time = lsla(1), charge = ends]
        cn ring [time = lsla(1), charge = "both"]
        a -- bus; a -- ring
    }"""
    arch = dsl.parse_moa(text)[0].bind()
    assert arch.elements["bus"].charge == "ends" and arch.elements["ring"].charge == "both"
    again = dsl.parse_moa(dsl.format_moa([dsl.parse_moa(text)[0]]))[0].bind()
    assert again.elements["bus"].charge == "ends"
