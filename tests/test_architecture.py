"""Architectures: routes through CNs, types and arrays, cost-model validation, plug-ins."""
import sys
import textwrap

import pytest

from moa import (ArchitectureError, Architecture, CostModelError, CostSpec, NoRouteError,
                 available_models, make_model)
from moa.cost_models import registry


def lsla(alpha, beta=0.0):
    return {"time": CostSpec("lsla", {"alpha": alpha, "beta": beta})}


def ladder():
    """p0 - a - b - p1, plus a detour p0 - c - d - e - p1 and a PE-to-PE shortcut via p2."""
    arch = Architecture("ladder")
    for pe in ("p0", "p1", "p2"):
        arch.add_pe(pe)
    for cn in ("a", "b", "c", "d", "e", "z"):
        arch.add_cn(cn)
    for x, y in [("p0", "a"), ("a", "b"), ("b", "p1"), ("p0", "c"), ("c", "d"), ("d", "e"),
                 ("e", "p1"), ("p0", "z"), ("z", "p2")]:
        arch.add_link(x, y)
    return arch


def test_route_is_fewest_hops_through_cns():
    assert ladder().route("p0", "p1") == ("a", "b")


def test_route_ties_are_broken_by_name():
    arch = Architecture("tie")
    arch.add_pe("x")
    arch.add_pe("y")
    for cn in ("n2", "n1"):
        arch.add_cn(cn)
        arch.add_link("x", cn)
        arch.add_link(cn, "y")
    assert arch.route("x", "y") == ("n1",)


def test_routes_never_pass_through_a_pe():
    arch = Architecture("star")
    for pe in ("p0", "mid", "p1"):
        arch.add_pe(pe)
    arch.add_cn("c0")
    arch.add_cn("c1")
    arch.add_link("p0", "c0")
    arch.add_link("c0", "mid")
    arch.add_link("mid", "c1")
    arch.add_link("c1", "p1")
    with pytest.raises(NoRouteError, match="no route from PE 'p0' to PE 'p1'"):
        arch.route("p0", "p1")


def test_types_are_overridden_by_own_attributes():
    arch = Architecture("t")
    arch.add_type("core", costs=lsla(2.0, 1.0), attrs={"freq": 1.0})
    arch.add_pe("fast", type_name="core", costs=lsla(1.0), attrs={"freq": 2.0})
    arch.add_pe("slow", type_name="core")
    bound = arch.bind()
    assert bound.elements["fast"].model("time").params.alpha == 1.0
    assert bound.elements["fast"].model("time").params.beta == 0.0
    assert bound.elements["slow"].model("time").params.alpha == 2.0
    assert bound.elements["fast"].attrs["freq"] == 2.0


def test_structural_errors_name_the_culprit():
    arch = Architecture("e")
    arch.add_pe("p")
    with pytest.raises(ArchitectureError, match="duplicate element 'p'"):
        arch.add_cn("p")
    with pytest.raises(ArchitectureError, match="unknown type 'nope'"):
        arch.add_pe("q", type_name="nope")
    with pytest.raises(ArchitectureError, match="unknown element 'ghost'"):
        arch.add_link("p", "ghost")
    arch.add_pe("r")
    with pytest.raises(ArchitectureError, match="joins two PEs"):
        arch.add_link("p", "r")


def test_bad_model_parameters_name_element_metric_model_and_parameter():
    # a known value out of range, or an unknown model, is refused when the element is
    # added; a missing parameter when the architecture is bound
    arch = Architecture("m")
    with pytest.raises(CostModelError) as info:
        arch.add_pe("gpu", costs={"time": CostSpec("gsla", {"alpha": -1.0})})
    assert not arch.elements
    msg = str(info.value)
    assert "element 'gpu'" in msg and "metric 'time'" in msg and "'gsla'" in msg
    assert "'alpha'" in msg and "greater than or equal to 0" in msg
    arch2 = Architecture("m")
    arch2.add_pe("gpu", costs={"power": CostSpec("gsla_power", {"b": 1.0})})
    with pytest.raises(CostModelError, match="missing parameter 'a'"):
        arch2.bind()
    arch3 = Architecture("m")
    with pytest.raises(CostModelError, match="unknown cost model 'warp_drive'"):
        arch3.add_pe("gpu", costs={"time": CostSpec("warp_drive", {})})


class Token:
    def __init__(self, quanta, count=1, **attrs):
        self.quanta, self.count, self.attrs = quanta, count, attrs

    def get(self, key, default=None):
        return self.quanta if key == "quanta" else self.attrs.get(key, default)


def test_builtin_model_formulas():
    assert make_model("lsla", {"alpha": 2.0, "beta": 3.0}).token_cost(Token(5)) == 13.0
    # GSLA eq. 5: (alpha/gamma + beta)·S, S defaults to quanta.
    gsla = make_model("gsla", {"alpha": 8.0, "beta": 0.5})
    assert gsla.token_cost(Token(10, gamma=4)) == (8 / 4 + 0.5) * 10
    assert gsla.token_cost(Token(10, gamma=4, S=100)) == (8 / 4 + 0.5) * 100
    assert gsla.token_cost(Token(10)) == (8 + 0.5) * 10
    # GSLA eq. 6: a + b·S + c·S/gamma.
    power = make_model("gsla_power", {"a": 0.12, "b": 1e-3, "c": 4e-3})
    assert power.token_cost(Token(1000, gamma=8)) == pytest.approx(0.12 + 1.0 + 0.5)


PLUGIN = textwrap.dedent('''
    from pydantic import NonNegativeFloat
    from moa.cost_models import CostModel, Parameters

    class Quadratic(CostModel):
        """Cost k·quanta², a third-party model for the tests."""
        name = "quadratic"

        class Parameters(Parameters):
            k: NonNegativeFloat

        def token_cost(self, token):
            return self.params.k * token.quanta ** 2
''')


@pytest.fixture
def installed_plugin(tmp_path, monkeypatch):
    """A distribution on sys.path that declares a model in the ``mapeval.cost_models`` group."""
    (tmp_path / "mapeval_quadratic.py").write_text(PLUGIN)
    info = tmp_path / "mapeval_quadratic-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mapeval-quadratic\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[mapeval.cost_models]\nquadratic = mapeval_quadratic:Quadratic\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    monkeypatch.setattr(registry, "_registry", dict(registry._registry))
    yield
    sys.modules.pop("mapeval_quadratic", None)


def test_third_party_model_is_discovered_through_entry_points(installed_plugin):
    assert "quadratic" in available_models()
    model = make_model("quadratic", {"k": 2.0})
    assert model.token_cost(Token(3)) == 18.0
    with pytest.raises(CostModelError, match="missing parameter 'k'"):
        make_model("quadratic", {})
