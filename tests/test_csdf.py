"""Cyclo-static dataflow (issue 33, item 4; must-show 3): phases in the ``.sdf`` language,
SDF3 interchange, repetition vector, deadlock, throughput, the trade-off and mapping
evaluation; the hand-worked example of ``examples/csdf/README.md``; and SDF3's and
Kiter's cyclo-static graphs (restated in ``tests/data/csdf/``) against what SDF3's
cyclo-static ``sdf3analysis`` printed (``tests/data/sdf3_csdf.json``, recorded by
``tests/oracle_sdf3/record_csdf.py``)."""
from __future__ import annotations

import functools
import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import dsl
from dsl.errors import ParseError
from mapping.cli.main import main
from moc import analyse, repetition_vector, throughput
from moc.errors import DeadlockError, SDFError
from moc.phases import Phases
from moc.tradeoff import bounded_graph, tradeoff

ROOT = Path(__file__).resolve().parents[1]
PAIR = ROOT / "examples" / "csdf" / "pair.sdf"
EXAMPLES = ROOT / "tests" / "data" / "sdf3_examples"
DATA = json.loads((ROOT / "tests" / "data" / "sdf3_csdf.json").read_text())
RECORDS = DATA["graphs"]


def _load(path):
    (graph,) = dsl.load_sdf(path)
    return graph


@functools.lru_cache(maxsize=None)
def _timed(path):
    """The graph of ``path``, its repetition vector and its throughput, once per run."""
    graph = _load(path)
    return graph, repetition_vector(graph.bind()), throughput(graph)


# ------------------------------------------------------------------ language and model

def test_phases_parse_print_and_bind():
    (g,) = dsl.parse_sdf("sdf g { param n = 2\n actor a [exec = [1, 3]]; actor b\n"
                         "channel x : a -> b [prod = [n, 0], cons = 1] }")
    assert g.actors["a"].attrs["exec"] == Phases([1, 3])
    bound = g.bind()
    assert bound.channels["x"].prod == (2, 0) and isinstance(bound.channels["x"].prod, Phases)
    text = dsl.format_sdf(g)
    assert "prod = [n, 0]" in text and "exec = [1, 3]" in text
    assert dsl.format_sdf(dsl.parse_sdf(text)) == text


@pytest.mark.parametrize("text, message", [
    ("actor a [exec = [1, 2]]; actor b\n a -> b [prod = [1, 1, 1]]",
     "actor 'a' has 2 phases by attribute 'exec' of actor 'a' but 3 by prod of channel"),
    ("actor a; actor b\n a -> b [prod = [0, 0]]", "sum to 0"),
    ("actor a; actor b\n a -> b [delay = [1, 2]]", "delay cannot be given per phase"),
    ("actor a; actor b\n a -> b [prod = [1, -1]]", "non-negative integer"),
])
def test_bad_phases_are_named(text, message):
    with pytest.raises((SDFError, ParseError)) as info:
        (g,) = dsl.parse_sdf("sdf g {" + text + "}")
        g.bind()
    assert message in str(info.value)


def test_one_phase_is_sdf():
    """SDF is the case of one phase: samplerate with every rate and time a one-entry
    list (timed through the graph of its firings) gives the K-periodic throughput and
    the same trade-off."""
    sdf = _load(EXAMPLES / "samplerate.sdf")
    text = dsl.format_sdf(sdf)
    for key in ("prod", "cons", "exec"):
        text = __import__("re").sub(rf"\b{key} = (\d+)", rf"{key} = [\1]", text)
    phased = dsl.parse_sdf(text.replace("exec_p1", "other"))[0]
    assert phased.actors["a"].attrs["exec"] == Phases([5])
    assert repetition_vector(phased.bind()) == repetition_vector(sdf.bind())
    assert throughput(phased).throughput == throughput(sdf).throughput == Fraction(1, 960)
    assert [(p.size, p.throughput) for p in tradeoff(phased).points] == \
        [(p.size, p.throughput) for p in tradeoff(sdf).points]


# ------------------------------------------------------------------ the worked example

def test_worked_example_throughput_and_schedule():
    g = _load(PAIR)
    assert repetition_vector(g.bind()) == {"a": 2, "b": 3}
    result = analyse(g)
    assert result.throughput == Fraction(1, 6) and result.critical_cycle == ("b",)
    assert result.latency == 7
    assert [(f.start, f.end) for f in result.schedule["a"]] == [(0, 1), (1, 4)]
    assert [(f.start, f.end) for f in result.schedule["b"]] == [(1, 3), (3, 5), (5, 7)]


def test_worked_example_tradeoff_and_write_back():
    g = _load(PAIR)
    front = tradeoff(g)
    assert [(p.size, p.throughput, [dict(d) for d in p.distributions]) for p in front.points] \
        == [(6, Fraction(1, 8), [{"x": 2, "la": 2, "lb": 2}]),
            (7, Fraction(1, 6), [{"x": 3, "la": 2, "lb": 2}])]
    assert front.complete
    assert [(p.size, p.throughput) for p in tradeoff(g, method="kperiodic").points] == \
        [(6, Fraction(1, 8)), (7, Fraction(1, 6))]
    for p in front.points:
        assert throughput(bounded_graph(g.bind(), p.distributions[0])).throughput == \
            p.throughput


def test_worked_example_mapping_prices_each_phase(capsys):
    files = [str(PAIR.parent / n) for n in ("pair.sdf", "duo.moa", "mappings.map")]
    assert main(["eval", *files, "--mapping", "split", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["repetitions"] == {"a": 2, "b": 3}
    assert {e["name"]: (e["tokens"], e["quanta"], e["value"]) for e in document["elements"]} \
        == {"p0": (2, 400, 6), "p1": (3, 600, 12), "bus": (2, 12, 10)}
    assert document["value"] == 28


def test_deadlock_names_the_starving_channel():
    (g,) = dsl.parse_sdf("sdf d { actor a [exec = [1, 1]]; actor b [exec = 1]\n"
                         "channel x : a -> b [prod = [0, 1]]\n"
                         "channel y : b -> a [cons = [1, 0], delay = 0] }")
    with pytest.raises(DeadlockError) as info:
        throughput(g)
    assert "'a'" in str(info.value) and "y" in str(info.value)


# ------------------------------------------------------------------ SDF3 interchange

def test_import_export_round_trip(tmp_path):
    g = _load(ROOT / "tests" / "data" / "csdf" / "simple_example.sdf")
    out = tmp_path / "back.xml"
    dsl.write_sdf3(g, out)
    text = out.read_text()
    assert '<sdf3 type="csdf"' in text and "<csdf " in text and 'rate="3,1"' in text
    back = dsl.read_sdf3(out)
    assert {n: (c.prod, c.cons, c.delay) for n, c in back.channels.items()} == \
        {n: (c.prod, c.cons, c.delay) for n, c in g.channels.items()}
    assert back.actors["a"].attrs["exec"] == (1, 3)


def test_sdf3_run_length_rates(tmp_path):
    xml = tmp_path / "g.xml"
    xml.write_text(
        "<sdf3 type='csdf' version='1.0'><applicationGraph name='g'><sdf name='g' type='g'>"
        "<actor name='a' type='a'><port type='out' name='o' rate='0,2*3,1'/></actor>"
        "<actor name='b' type='b'><port type='in' name='i' rate='7'/></actor>"
        "<channel name='c' srcActor='a' srcPort='o' dstActor='b' dstPort='i'/>"
        "</sdf></applicationGraph></sdf3>")
    assert dsl.read_sdf3(xml).channels["c"].prod == (0, 3, 3, 1)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(st.tuples(st.sampled_from(["", "0", "00", "+", " "]),
                                st.integers(0, 10 ** 6) | st.integers(2 ** 53, 10 ** 20),
                                st.sampled_from(["", " "])),
                      min_size=1, max_size=4))
def test_sdf3_rates_are_read_through_a_float(items, tmp_path):
    # every rate read as float(text), an int where it is written as one: beyond 2**53
    # rounded as the float is, whether alone, in a list or repeated in other ports
    texts = [f"{before}{n}{after}" for before, n, after in items]
    expected = [int(float(text)) for text in texts]
    assume(sum(expected) > 0)
    rate = ",".join(texts)
    xml = tmp_path / "g.xml"
    xml.write_text(
        "<sdf3 type='csdf' version='1.0'><applicationGraph name='g'><sdf name='g' type='g'>"
        f"<actor name='a' type='a'><port type='out' name='o' rate='{rate}'/>"
        f"<port type='out' name='p' rate='{rate}'/></actor>"
        "<actor name='b' type='b'><port type='in' name='i' rate='1'/>"
        "<port type='in' name='j' rate='1'/></actor>"
        "<channel name='c' srcActor='a' srcPort='o' dstActor='b' dstPort='i'/>"
        "<channel name='d' srcActor='a' srcPort='p' dstActor='b' dstPort='j'/>"
        "</sdf></applicationGraph></sdf3>")
    g = dsl.read_sdf3(xml)
    for name in "cd":
        prod = g.channels[name].prod
        assert prod == (tuple(expected) if len(texts) > 1 else expected[0])
        assert all(type(v) is int for v in (prod if len(texts) > 1 else (prod,)))
    assert g.bind().channels == g.channels


# ------------------------------------------------------------------ SDF3 on SDF3's and Kiter's graphs

def _rate(value, q):
    """Firings per time unit of the first actor: what no choice of iteration changes."""
    return Fraction(value) * q


@pytest.mark.parametrize("record", [r for r in RECORDS if "throughput" in r],
                         ids=lambda r: Path(r["file"]).stem)
def test_throughput_equals_sdf3(record):
    g, q, timed = _timed(ROOT / record["file"])
    first = next(iter(q))
    ours = timed.throughput
    sdf3 = Fraction(record["throughput"])
    assert float(ours * q[first]) == pytest.approx(
        float(sdf3 * record["repetition_vector"][first]), rel=1e-12)
    # SDF3's iteration is a whole number of ours, the same for every actor
    ratio = {Fraction(record["repetition_vector"][a], q[a]) for a in q}
    assert len(ratio) == 1 and ratio.pop().denominator == 1


@pytest.mark.parametrize("record", [r for r in RECORDS if r["buffersize_answered"]],
                         ids=lambda r: Path(r["file"]).stem)
def test_tradeoff_equals_sdf3(record):
    g = _load(ROOT / record["file"])
    q = repetition_vector(g.bind())
    first = next(iter(q))
    scale = Fraction(record["repetition_vector"][first], q[first])
    result = tradeoff(g)
    assert [p.size for p in result.points] == [p["size"] for p in record["points"]]
    for ours, theirs in zip(result.points, record["points"]):
        assert float(ours.throughput / scale) == pytest.approx(float(theirs["printed"]),
                                                               rel=1e-5)
        assert sorted(sorted(d.items()) for d in ours.distributions) == \
            sorted(sorted(d.items()) for d in theirs["distributions"])


def test_hsdf_expansion_takes_each_phase_s_attributes():
    from moc import hsdf_expansion
    h = hsdf_expansion(_load(PAIR).bind())
    assert sorted(h.actors) == ["a#0", "a#1", "b#0", "b#1", "b#2"]
    assert h.actors["a#1"].attrs["exec"] == 3 and h.actors["a#0"].attrs["quanta"] == 100
    # b#2 reads the third token, written by a#1 (a#0 writes two)
    assert {(c.src, c.dst) for c in h.channels.values() if c.src.startswith("a")
            and c.dst.startswith("b")} == {("a#0", "b#0"), ("a#0", "b#1"), ("a#1", "b#2")}
    assert throughput(h).throughput == Fraction(1, 6)


# ------------------------------------------------------------------ two implementations agree

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402


@st.composite
def phased_rings(draw):
    """Two or three actors of 1-3 phases (times 1-3), each with a self-loop, on a ring
    whose channels move 1-6 tokens per cycle, split at random over the phases (0 in a
    phase too), the closing one holding 6-12 tokens."""
    from moc import SDFGraph
    k = draw(st.integers(2, 3))
    g = SDFGraph("ring")
    n = [draw(st.integers(1, 3)) for _ in range(k)]
    for i in range(k):
        times = [draw(st.integers(1, 3)) for _ in range(n[i])]
        g.add_actor(f"a{i}", exec=Phases(times) if n[i] > 1 else times[0])
        g.add_channel(f"a{i}", f"a{i}", prod=Phases([1] * n[i]), cons=Phases([1] * n[i]),
                      delay=1)

    def split(total, m):
        """``total`` tokens over ``m`` phases (consistent: one cycle each per iteration)"""
        cuts = sorted(draw(st.integers(0, total)) for _ in range(m - 1))
        values = [b - a for a, b in zip([0] + cuts, cuts + [total])]
        return Phases(values) if m > 1 else values[0]

    for i in range(k):
        j = (i + 1) % k
        total = draw(st.integers(1, 6))
        g.add_channel(f"a{i}", f"a{j}", prod=split(total, n[i]), cons=split(total, n[j]),
                      delay=draw(st.integers(6, 12)) if j == 0 else 0)
    return g


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(phased_rings())
def test_state_space_reaches_the_throughput_of_the_graph_of_firings(graph):
    """The bounded state space (phase by phase, moc.tradeoff) and the maximum cycle ratio
    of the firings (moc.csdf) are separate implementations of the same semantics: with
    buffers grown until nothing limits, the first reaches the second's throughput."""
    try:
        expected = throughput(graph).throughput
    except (DeadlockError, SDFError):
        return
    result = tradeoff(graph, max_explored=300)
    assert result.complete
    assert result.points[-1].throughput == expected
    assert all(p.throughput <= expected for p in result.points)


KITER = json.loads((ROOT / "tests" / "data" / "kiter_csdf.json").read_text())


@pytest.mark.parametrize("record", KITER["graphs"], ids=lambda r: Path(r["file"]).stem)
def test_period_equals_kiter(record):
    """Kiter's K-periodic period (tests/data/kiter_csdf.json, recorded by
    tests/oracle_sdf3/record_kiter.py): the same iteration, the same exact value under
    Kiter's order of an actor's firings (``starts``); the default order (``ends``)
    gives it too, except on ``examples/csdf/orders.sdf``, made for the two to differ
    (period 6 by hand, ``tests/test_csdf_tradeoff.py``)."""
    path = ROOT / record["file"]
    kiter = Fraction(record["period"])
    assert throughput(_load(path), order="starts").period == kiter
    if path.name != "orders.sdf":
        assert _timed(path)[2].period == kiter


def test_one_cumulative_rule_for_one_query_and_for_many():
    from moc.phases import Cumulative, cumulative
    # over K = 2 cycles of two phases (n = 4), as the K-periodic graphs count them
    assert cumulative((1, 2), 4, 5) == Cumulative((1, 2), 4)(5) == 7
    assert cumulative((1, 2), 2, -2) == -3 and cumulative(3, 1, 4) == 12
