"""Gables (Hill & Reddi, HPCA 2019): roofline and bandwidth models, memory traffic along
routes, the memory-side cache (miss), the exclusive aggregation, and the paper's
worked numbers of Fig. 6a-d through the command line."""
import json
import math
from pathlib import Path

import pytest

from mapping import Mapping, MappingError, evaluate
from mapping.evaluation.batch import BatchEvaluator
from mapping.semantics.problem import Problem
from mapping.cli.main import main
from moa import Architecture, ArchitectureError, CostModelError, CostSpec, NoRouteError
from moa.cost_models.registry import register
from moa.cost_models.roofline import Roofline, token_bytes
from moc import SDFGraph

GABLES = Path(__file__).resolve().parent.parent / "examples" / "gables"
TWO_IP = [str(GABLES / "two_ip.sdf"), str(GABLES / "two_ip.moa"), str(GABLES / "two_ip.map")]


def roofline(**args):
    return {"time": CostSpec("roofline", args)}


def bandwidth(B):
    return {"time": CostSpec("bandwidth", {"B": B})}


def eval_json(capsys, *extra):
    assert main(["eval", *TWO_IP, "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


# --- the appendix of the paper: Fig. 6a-d ----------------------------------------------

@pytest.mark.parametrize("params, performance, bottleneck", [
    # 6a: f = 0: 1/T_IP[0] = min(6·8, 40)/1 = 40, memory 10·8 = 80 -> 40 (CPU)
    ([], 40.0, "cpu"),
    # 6b: f = 0.75: IP[0] 40/0.25 = 160, IP[1] min(15·0.1, 200)/0.75 = 2,
    #     memory 10·I_avg, I_avg = 1/(0.25/8 + 0.75/0.1) = 0.13278 -> 1.3278 (memory)
    (["-p", "f=0.75"], 1.3278, "dram"),
    # 6c: Bpeak = 30: memory 30·0.13278 = 3.98 -> IP[1]'s 2.0
    (["-p", "f=0.75", "-p", "Bpeak=30"], 2.0, "gpu"),
    # 6d: I1 = 8, Bpeak = 20: 160, 160 and 20·8 = 160, balanced; ties name the first PE
    (["-p", "f=0.75", "-p", "I1=8", "-p", "Bpeak=20"], 160.0, "cpu"),
])
def test_figure_6_numbers_through_the_cli(capsys, params, performance, bottleneck):
    doc = eval_json(capsys, *params)
    assert doc["aggregate"] == "max"
    assert doc["performance"] == pytest.approx(performance, abs=1e-3)
    assert doc["throughput"] == pytest.approx(performance, abs=1e-3)  # one unit of work
    assert doc["bottleneck"] == bottleneck
    assert doc["value"] == pytest.approx(1 / performance, rel=1e-3)


def test_figure_6b_element_values(capsys):
    doc = eval_json(capsys, "-p", "f=0.75")
    values = {e["name"]: e for e in doc["elements"]}
    # T_IP[0] = max(C0, D0/B0) = max(0.25/40, (0.25/8)/6) = 0.00625
    assert values["cpu"]["value"] == pytest.approx(0.00625)
    # T_IP[1] = max(0.75/200, (0.75/0.1)/15) = 0.5
    assert values["gpu"]["value"] == pytest.approx(0.5)
    # T_memory = (D0 + D1)/Bpeak = (0.03125 + 7.5)/10; its quanta are the bytes
    assert values["dram"]["value"] == pytest.approx(0.753125)
    assert values["dram"]["quanta"] == pytest.approx(7.53125)
    assert values["dram"]["tokens"] == 2


def test_figure_6b_exclusive_is_gables_eq_19(capsys):
    doc = eval_json(capsys, "-p", "f=0.75", "--aggregate", "exclusive")
    # eq. 18: T'_IP[0] = max(0.03125/10, 0.03125/6, 0.25/40) = 0.00625
    #         T'_IP[1] = max(7.5/10, 7.5/15, 0.75/200) = 0.75
    # eq. 19: P = 1 / (0.00625 + 0.75) = 1.32231
    assert doc["value"] == pytest.approx(0.75625)
    assert doc["performance"] == pytest.approx(1 / 0.75625)
    assert doc["bottleneck"] == "dram"


def test_memory_side_cache_scales_memory_traffic(capsys):
    # eq. 15 with m = 0.5: T_memory = 0.5·7.53125/10 = 0.3765625; IP[1] (0.5) now limits
    doc = eval_json(capsys, "-p", "f=0.75", "-p", "m=0.5")
    assert doc["bottleneck"] == "gpu"
    assert doc["performance"] == pytest.approx(2.0)
    dram = next(e for e in doc["elements"] if e["name"] == "dram")
    assert dram["value"] == pytest.approx(0.3765625)


def test_snapdragon_example_evaluates(capsys):
    files = [str(GABLES / f"snapdragon835.{ext}") for ext in ("sdf", "moa", "map")]
    assert main(["eval", *files, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    values = {e["name"]: e["value"] for e in doc["elements"]}
    # CPU: 0.4 of the work at I = 8: max(0.4/7.5, 0.05/15.1) = 0.05333
    assert values["cpu"] == pytest.approx(0.4 / 7.5)
    # DSP: 0.1 at I = 2: max(0.1/3, 0.05/12.5) = 0.03333; its 0.05 bytes cross its fabric
    assert values["dsp"] == pytest.approx(0.1 / 3.0)
    assert values["dsp_fabric"] == pytest.approx(0.05 / 12.5)
    # memory: (0.4/8 + 0.5/8 + 0.1/2)/30
    assert values["dram"] == pytest.approx((0.05 + 0.0625 + 0.05) / 30)
    assert doc["bottleneck"] == "cpu"
    assert doc["performance"] == pytest.approx(7.5 / 0.4)


# --- a bus with a memory-side cache behind it, and SDF communication ----------------------

def bus_system(lambda_=1.0, aggregate="max"):
    """cpu -- bus -- dram, acc -- bus.  Actor a (200 ops at 2 ops/byte: D = 100 bytes) on
    cpu, whose memory is dram behind the bus with miss 0.25; actor b (5 ops, no traffic)
    on acc; channel a -> b carries 16 bytes per iteration over the bus."""
    app = SDFGraph("app")
    app.add_actor("a", ops=200, intensity=2)
    app.add_actor("b", ops=5)
    app.add_channel("a", "b", size=16)
    arch = Architecture("soc", lambda_=lambda_, aggregate=aggregate)
    arch.add_pe("cpu", costs=roofline(peak=100, bandwidth=50, memory="dram", miss=0.25))
    arch.add_pe("acc", costs=roofline(peak=10))
    arch.add_cn("bus", costs=bandwidth(8))
    arch.add_cn("dram", costs=bandwidth(4))
    arch.add_link("cpu", "bus")
    arch.add_link("acc", "bus")
    arch.add_link("bus", "dram")
    return app, arch, Mapping("m", {"a": "cpu", "b": "acc"})


def test_bus_and_memory_with_miss_by_hand():
    ev = evaluate(*bus_system())
    values = {e.name: e.value for e in ev.elements}
    # cpu: max(C = 200/100, D/B = 100/50) = 2;  acc: 5/10 = 0.5
    assert values["cpu"] == pytest.approx(2.0)
    assert values["acc"] == pytest.approx(0.5)
    # bus: the cpu's 100 bytes to memory + the channel's 16 bytes, over 8 = 14.5
    assert values["bus"] == pytest.approx(14.5)
    # dram (memory CN): miss·D = 0.25·100 = 25 bytes over 4 = 6.25; the channel doesn't reach it
    assert values["dram"] == pytest.approx(6.25)
    quanta = {e.name: e.quanta for e in ev.elements}
    assert quanta["bus"] == pytest.approx(116) and quanta["dram"] == pytest.approx(25)
    # max: the bus, 14.5; performance = (200 + 5) ops / 14.5
    assert ev.value == pytest.approx(14.5) and ev.bottleneck == "bus"
    assert ev.performance == pytest.approx(205 / 14.5)


def test_bus_system_sum_and_lambda():
    # sum: 2 + 0.5 + 1·(14.5 + 6.25) = 23.25
    ev = evaluate(*bus_system(), aggregate="sum")
    assert ev.value == pytest.approx(23.25)
    # max with lambda = 0.1: PEs 2 and 0.5 against 0.1·14.5 = 1.45 -> cpu, 2
    ev = evaluate(*bus_system(lambda_=0.1))
    assert ev.value == pytest.approx(2.0) and ev.bottleneck == "cpu"


def test_exclusive_by_hand():
    # cpu's phase: max(own 2, bus share (100 + 16)/8 = 14.5, dram share 25/4 = 6.25) = 14.5
    #   (the channel a -> b is written by its producer, a, on cpu)
    # acc's phase: max(own 0.5) = 0.5  (nothing of acc crosses a CN)
    # system: 14.5 + 0.5 = 15.0, set by the bus in the longest phase
    ev = evaluate(*bus_system(aggregate="exclusive"))
    assert ev.aggregate == "exclusive"
    assert ev.value == pytest.approx(15.0)
    assert ev.bottleneck == "bus"
    # with lambda = 0.1: cpu's phase max(2, 1.45, 0.625) = 2, acc 0.5 -> 2.5, set by cpu
    ev = evaluate(*bus_system(lambda_=0.1, aggregate="exclusive"))
    assert ev.value == pytest.approx(2.5) and ev.bottleneck == "cpu"


def test_exclusive_equals_sum_when_nothing_crosses_a_cn():
    app = SDFGraph("app")
    app.add_actor("a", quanta=3)
    app.add_actor("b", quanta=4)
    arch = Architecture("two")
    arch.add_pe("p", costs={"time": CostSpec("lsla", {"alpha": 2.0})})
    arch.add_pe("q", costs={"time": CostSpec("lsla", {"alpha": 1.0})})
    m = Mapping("m", {"a": "p", "b": "q"})
    # phases 2·3 = 6 and 1·4 = 4: exclusive = sum = 10, max = 6
    assert evaluate(app, arch, m, aggregate="exclusive").value == pytest.approx(10.0)
    assert evaluate(app, arch, m, aggregate="sum").value == pytest.approx(10.0)
    assert evaluate(app, arch, m, aggregate="max").value == pytest.approx(6.0)


# --- model details and errors -----------------------------------------------------------

def single(actor_attrs, model_args, memory_cn=True):
    app = SDFGraph("app")
    app.add_actor("a", **actor_attrs)
    arch = Architecture("soc")
    arch.add_pe("p", costs=roofline(**model_args))
    if memory_cn:
        arch.add_cn("mem", costs=bandwidth(10))
        arch.add_link("p", "mem")
    return app, arch, Mapping("m", {"a": "p"})


def test_roofline_defaults_ops_to_quanta_and_reads_bytes():
    # ops = quanta = 50, intensity infinite: compute bound, 50/10 = 5, no traffic
    ev = evaluate(*single({"quanta": 50}, {"peak": 10, "bandwidth": 1, "memory": "mem"}))
    assert ev.value == pytest.approx(5.0)
    assert {e.name: e.value for e in ev.elements}["mem"] == 0.0
    assert ev.performance is None  # no token carries ops
    # explicit bytes override ops/intensity: max(50/10, 200/20) = 10; memory 200/10 = 20
    ev = evaluate(*single({"quanta": 50, "bytes": 200, "intensity": 1000},
                          {"peak": 10, "bandwidth": 20, "memory": "mem"}), aggregate="max")
    assert {e.name: e.value for e in ev.elements}["p"] == pytest.approx(10.0)
    assert ev.value == pytest.approx(20.0) and ev.bottleneck == "mem"


def test_roofline_counts_repetitions():
    app = SDFGraph("app")
    app.add_actor("a", ops=10, intensity=5)
    app.add_actor("b", ops=1)
    app.add_channel("a", "b", prod=1, cons=3)  # q(a) = 3, q(b) = 1
    arch = Architecture("soc")
    arch.add_pe("p", costs=roofline(peak=10, memory="NONE"))
    m = Mapping("m", {"a": "p", "b": "p"})
    ev = evaluate(app, arch, m)
    # C = (3·10 + 1)/10 = 3.1, no memory: performance = 31/3.1 = 10
    assert ev.value == pytest.approx(3.1)
    assert ev.performance == pytest.approx(10.0)


@pytest.mark.parametrize("args, needle", [
    ({"peak": 1, "miss": 1.5}, "miss"),
    ({"peak": 0}, "peak"),
    ({"bandwidth": 3}, "peak"),
    ({"peak": 1, "bandwidth": -1}, "bandwidth"),
])
def test_roofline_parameters_are_validated(args, needle):
    # a value out of range is refused when the element is added, a missing one at bind
    arch = Architecture("x")
    with pytest.raises(CostModelError, match=needle):
        arch.add_pe("p", costs=roofline(**args))
        arch.bind()


def test_memory_must_be_a_reachable_cn():
    app, arch, m = single({"ops": 1, "intensity": 1}, {"peak": 1, "memory": "p"})
    with pytest.raises(ArchitectureError, match="must name a communication node"):
        evaluate(app, arch, m)
    app, arch, m = single({"ops": 1, "intensity": 1}, {"peak": 1, "memory": "mem"},
                          memory_cn=False)
    arch.add_cn("mem", costs=bandwidth(1))  # declared but not linked
    with pytest.raises(NoRouteError, match="mem"):
        evaluate(app, arch, m)


def test_bad_token_attribute_is_an_input_error():
    app, arch, m = single({"ops": 1, "intensity": 0}, {"peak": 1, "memory": "mem"})
    with pytest.raises(MappingError, match="element 'p', metric 'time', model 'roofline'.*intensity"):
        evaluate(app, arch, m)


@register
class PerLane(Roofline):
    """A roofline whose memory traffic is a token's bytes per lane: a token with
    ``lanes = 0`` divides by zero in ``token_traffic``, the traffic path alone."""

    name = "test_per_lane_traffic"

    def token_traffic(self, token):
        return token_bytes(token) / token.get("lanes", 1)


def test_a_division_by_zero_in_the_memory_traffic_is_an_input_error(tmp_path, capsys):
    # place_memory_traffic words it as the element values do (once a bare
    # ZeroDivisionError: an internal error, exit 1)
    app = SDFGraph("app")
    app.add_actor("a", ops=4, bytes=8, lanes=0)
    arch = Architecture("soc")
    arch.add_pe("p", costs={"time": CostSpec("test_per_lane_traffic",
                                             {"peak": 1, "memory": "mem"})})
    arch.add_cn("mem", costs=bandwidth(10))
    arch.add_link("p", "mem")
    m = Mapping("m", {"a": "p"})
    where = "element 'p', metric 'time', model 'test_per_lane_traffic'.*division by zero"
    with pytest.raises(MappingError, match=where):
        evaluate(app, arch, m)
    # the batch evaluator leaves it to the reference evaluator, which says the same
    ev = BatchEvaluator(Problem(app, arch), "time", "max")
    with pytest.raises(MappingError, match=where):
        ev.evaluate(ev.encode(m)[None, :])
    files = {"a.sdf": "sdf a { actor x [ops = 4, bytes = 8, lanes = 0] }\n",
             "b.moa": "moa b {\n    pe p [time = test_per_lane_traffic(peak = 1, "
                      'memory = "mem")]\n    cn mem [time = bandwidth(B = 10)]\n'
                      "    p -- mem\n}\n",
             "m.map": "mapping m { x -> p }\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert main(["eval", *(str(tmp_path / n) for n in files)]) == 2
    err = capsys.readouterr().err
    assert "model 'test_per_lane_traffic'" in err and "division by zero" in err
    assert "internal error" not in err and "Traceback" not in err


def test_bandwidth_counts_channel_bytes():
    app = SDFGraph("app")
    app.add_actor("a")
    app.add_actor("b")
    app.add_channel("a", "b", prod=2, cons=1, size=4)  # q = (1, 2): 1 token of 8 bytes
    arch = Architecture("soc")
    arch.add_pe("p")
    arch.add_pe("q")
    arch.add_cn("bus", costs=bandwidth(2))
    arch.add_link("p", "bus")
    arch.add_link("q", "bus")
    ev = evaluate(app, arch, Mapping("m", {"a": "p", "b": "q"}), aggregate="sum")
    assert ev.value == pytest.approx(4.0)  # 8 bytes / 2
    assert sorted(ev.unmodelled) == ["p", "q"]
    assert math.isclose(ev.throughput, 0.25)
