"""Initialisation phases in the ``.sdf`` language: ``[a, ...; b, ...]`` (Kiter's ``;``
inside the brackets) read into the actor's :class:`~moc.phases.InitialPhases`, printed
back, and ``mapeval import sdf3`` of Kiter's files analysed as the files themselves."""
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from dsl import loads_sdf, read_sdf3
from dsl.errors import ParseError
from dsl.printer import format_sdf
from mapping.cli.main import main
from moc.errors import DeadlockError
from moc.phases import InitialPhases, Phases
from moc.timing import throughput
from tests.test_initial_phases import KITER, graphs

RING = """sdf r {
    param n = 2
    actor a [exec = [7; 2], quanta = 3]
    actor b [exec = [1.5, 0; 1, 2]]
    a -> b [prod = [1; 3, 1], cons = [0, 2; 2, 1]]
    channel back : b -> a [prod = [0, 0; n, 2], cons = [0; 1, 3], delay = 4]
}
"""


def _graph(text):
    return loads_sdf(text, "t.sdf")[0]


def test_values_before_the_semicolon_are_the_initialisation_phases():
    g = _graph(RING)
    a, b = g.actors["a"], g.actors["b"]
    assert a.initial_phases == InitialPhases(1, {"exec": (7,)}, prod={"a->b": (1,)},
                                             cons={"back": (0,)})
    assert b.initial_phases == InitialPhases(2, {"exec": (1.5, 0)},
                                             prod={"back": (0, 0)}, cons={"a->b": (0, 2)})
    assert a.attrs == {"exec": 2, "quanta": 3} and b.attrs["exec"] == Phases([1, 2])
    assert g.channels["a->b"].prod == Phases([3, 1])
    assert str(g.channels["back"].prod) == "[n, 2]"      # parameters in periodic phases


def test_printed_back_as_written():
    assert format_sdf(_graph(RING)) == RING


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_a_graph_printed_and_read_back_has_the_same_phases_and_throughput(g):
    again = _graph(format_sdf(g))
    assert format_sdf(again) == format_sdf(g)
    for name, actor in g.actors.items():
        init, read = actor.initial_phases, again.actors[name].initial_phases
        assert (init is None) == (read is None) and actor.attrs == again.actors[name].attrs
        if init is None:
            continue
        assert read.count == init.count and read.attrs == init.attrs
        for ch in g.channels.values():      # a channel not named moves no token: 0
            for kind in ("prod", "cons"):
                assert [read.rate(kind, ch.name, k) for k in range(read.count)] == \
                    [init.rate(kind, ch.name, k) for k in range(init.count)]
    try:
        period = throughput(g).period
    except DeadlockError:
        with pytest.raises(DeadlockError):
            throughput(again)
        return
    assert throughput(again).period == period


@pytest.mark.parametrize("rates, message, column", [
    # an actor's prod and cons agree on the number of initialisation phases, with its
    # attributes that give some
    ("prod = [1; 1], cons = 1", "actor 'b' has 1 initialisation phase by attribute "
     "'exec' of actor 'b' but no initialisation phase by cons of channel 'a->b'", 28),
    ("prod = [1, 0; 1], cons = [0; 1]", "actor 'a' has 1 initialisation phase by "
     "attribute 'exec' of actor 'a' but 2 initialisation phases by prod of channel "
     "'a->b'", 13),
    ("cons = [0; 1]", "actor 'a' has 1 initialisation phase by attribute 'exec' of "
     "actor 'a' but no initialisation phase by prod of channel 'a->b'", 5),
    ("prod = [1.5; 1], cons = [0; 1]", "actor 'a': initialisation phases: prod of "
     "channel 'a->b' must be non-negative integers, got 1.5", 13),
    ("prod = [-1; 1], cons = [0; 1]", "must be non-negative integers, got -1", 13),
    ("prod = [n; 1], cons = [0; 1]", "prod of channel 'a->b': the values of "
     "initialisation phases must be numbers (they cannot use parameters)", 21),
    ("prod = [1; 1], cons = [0; 1], delay = [0; 1]", "channel 'a->b': 'delay' cannot "
     "have initialisation phases", 43),
    ("prod = [1; 1; 1], cons = [0; 1]", "a second ';' in a list of phases: the values "
     "before the ';' are the initialisation phases, those after it the periodic ones", 25),
    ("prod = [1;; 1], cons = [0; 1]", "a second ';' in a list of phases", 23),
    ("prod = [; 1], cons = [0; 1]", "an initialisation part needs at least one value "
     "before ';'", 21),
    ("prod = [1;], cons = [0; 1]", "the periodic phases need at least one value after "
     "';'", 22),
    ("prod = [ # none\n], cons = [0; 1]", "a list of phases needs at least one value", 20),
])
def test_malformed_initialisation_phases_point_at_their_value(tmp_path, capsys, rates,
                                                              message, column):
    text = ("sdf g {\n    param n = 1\n    actor a [exec = [7; 2]]\n"
            "    actor b [exec = [0; 1]]\n"
            f"    a -> b [{rates}]\n    b -> a [prod = 1, cons = [0; 1], delay = 1]\n}}\n")
    with pytest.raises(ParseError) as err:
        _graph(text)
    assert message in str(err.value)
    assert err.value.origin[1:] == (5, column)
    path = tmp_path / "bad.sdf"
    path.write_text(text)
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:5:{column}: error:" in err and "^" in err and "Traceback" not in err


def test_an_initialisation_value_the_actor_has_no_periodic_value_of_is_refused_by_name():
    g = _graph("sdf g {\n actor a\n actor b\n a -> b\n b -> a [delay = 1]\n}")
    from moc import SDFGraph
    h = SDFGraph("h")
    h.add_actor("a", initial_phases=InitialPhases(1, {"exec": (3,)}))
    with pytest.raises(ValueError, match="actor 'a': its initialisation phases give "
                       "'exec', which it has no periodic value of"):
        format_sdf(h)
    assert format_sdf(g)            # a graph without any prints as before


@pytest.mark.parametrize("name", ["init_sample.xml", "NoCMotivation/initUserCase.xml",
                                  "NoCMotivation/SimpleInitUseCase.xml"])
def test_kiter_files_imported_as_sdf_keep_their_throughput(tmp_path, capsys, name):
    if not KITER:
        pytest.skip("KITER_BENCHMARKS names no copy of Kiter's benchmarks/ folder")
    path = Path(KITER) / name
    if not path.exists():
        pytest.skip(f"{path} is absent")
    _same_analysis(tmp_path, capsys, path)


def test_the_example_imported_as_sdf_keeps_its_throughput(tmp_path, capsys):
    sdf = _same_analysis(tmp_path, capsys, Path("examples/csdf/warm_ring.xml"))
    assert "actor a [quanta = [7; 2], exec = [7; 2], exec_p = [7; 2]" in sdf


def _same_analysis(tmp_path, capsys, xml):
    """``mapeval analyse`` of ``xml`` and of its ``mapeval import sdf3``: one result;
    the graphs read are equal, and the .sdf prints back as it is."""
    out = tmp_path / "g.sdf"
    assert main(["import", "sdf3", str(xml), "-o", str(out)]) == 0
    capsys.readouterr()
    results = []
    for path in (xml, out):
        assert main(["analyse", str(path), "--json"]) == 0
        results.append(json.loads(capsys.readouterr().out))
    assert results[0]["period"] == results[1]["period"] is not None
    assert results[0]["throughput"] == results[1]["throughput"]
    text = out.read_text()
    graph = loads_sdf(text, str(out))[0]
    direct = read_sdf3(xml)
    assert {a.name: (a.attrs, a.initial_phases) for a in graph.actors.values()} == \
        {a.name: (a.attrs, a.initial_phases) for a in direct.actors.values()}
    assert graph.channels == direct.channels
    assert text.endswith(format_sdf(graph))
    return text


def test_exported_as_json_and_dot_with_their_initialisation_phases(tmp_path, capsys):
    path = tmp_path / "r.sdf"
    path.write_text(RING)
    assert main(["export", "json", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    a, b = doc["actors"]
    assert a["initial_phases"] == {"count": 1, "attrs": {"exec": [7]},
                                   "prod": {"a->b": [1]}, "cons": {"back": [0]}}
    assert b["initial_phases"]["cons"] == {"a->b": [0, 2]}
    assert main(["export", "dot", str(path)]) == 0
    dot = capsys.readouterr().out
    assert '"a" -> "b" [taillabel="[1; 3, 1]", headlabel="[0, 2; 2, 1]"];' in dot
    assert 'headlabel="[0; 1, 3]", label="back\\ndelay=4"' in dot
