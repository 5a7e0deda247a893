"""Problems built programmatically for the batch-evaluator, search and benchmark tests."""
from __future__ import annotations

import numpy as np

from moa import Architecture, CostSpec
from moc import SDFGraph


def random_app(n_actors: int = 20, n_channels: int = 30, seed: int = 0, multirate: bool = True,
               extra_attrs: bool = True) -> SDFGraph:
    """A consistent, deadlock-free SDF graph: a random DAG of channels plus a few back
    edges carrying enough initial tokens, with random repetitions."""
    rng = np.random.default_rng(seed)
    g = SDFGraph(f"rand{seed}")
    q = rng.integers(1, 4, n_actors) if multirate else np.ones(n_actors, dtype=int)
    for i in range(n_actors):
        attrs = {"quanta": float(rng.integers(10, 5000))}
        if extra_attrs:
            attrs["gamma"] = float(rng.integers(1, 9))
            attrs["ops"] = attrs["quanta"] * 4
            attrs["intensity"] = float(rng.uniform(0.5, 8))
        g.add_actor(f"a{i}", **attrs)
    pairs = set()
    # a chain first so that the graph is connected
    for i in range(1, n_actors):
        pairs.add((int(rng.integers(0, i)), i))
    while len(pairs) < n_channels:
        s, d = (int(x) for x in rng.integers(0, n_actors, 2))
        if s != d:
            pairs.add((s, d))
    for s, d in sorted(pairs):
        prod, cons = int(q[d]), int(q[s])
        delay = 0 if s < d else prod * int(q[s]) * 2
        g.add_channel(f"a{s}", f"a{d}", f"c{s}_{d}", prod=prod, cons=cons, delay=delay,
                      size=float(rng.integers(1, 64)))
    return g


def lsla(alpha, beta=0.0):
    return CostSpec("lsla", {"alpha": alpha, "beta": beta})


def gsla(alpha, beta=0.0):
    return CostSpec("gsla", {"alpha": alpha, "beta": beta})


def bench_arch(lambda_: float = 1.0, aggregate: str = "sum", gsla_gpu: bool = True) -> Architecture:
    """8 PEs, 3 CNs: a big.LITTLE board with a GPU and a DSP."""
    a = Architecture("board", lambda_=lambda_, aggregate=aggregate)
    a.add_type("A7", costs={"time": lsla(2.0e-9, 1e-6), "energy": lsla(3e-10, 1e-8)})
    a.add_type("A15", costs={"time": lsla(0.7e-9, 1e-6), "energy": lsla(9e-10, 2e-8)})
    a.add_cn("l2_little", costs={"time": lsla(5e-11, 1e-7), "energy": lsla(1e-11)})
    a.add_cn("cci", costs={"time": lsla(1e-10, 2e-6), "energy": lsla(2e-11)})
    a.add_cn("l2_big", costs={"time": lsla(4e-11, 1e-7), "energy": lsla(1e-11)})
    for i in range(3):
        a.add_pe(f"little[{i}]", type_name="A7", array=("little", i))
    for i in range(3):
        a.add_pe(f"big[{i}]", type_name="A15", array=("big", i), local="l2_big")
    gpu = {"time": gsla(3.1e-8, 1.2e-10) if gsla_gpu else lsla(1e-10, 5e-5),
           "energy": lsla(2e-10, 1e-6)}
    a.add_pe("gpu", costs=gpu)
    a.add_pe("dsp", costs={"time": lsla(1.5e-9, 2e-6), "energy": lsla(1e-10)})
    for i in range(3):
        a.add_link(f"little[{i}]", "l2_little")
        a.add_link(f"big[{i}]", "l2_big")
    a.add_link("l2_little", "cci")
    a.add_link("l2_big", "cci")
    a.add_link("gpu", "cci")
    a.add_link("dsp", "cci")
    return a


def small_arch(lambda_: float = 1.0) -> Architecture:
    """4 PEs, two of them interchangeable (cpu[0], cpu[1]), 2 CNs."""
    a = Architecture("small", lambda_=lambda_)
    a.add_type("cpu", costs={"time": lsla(2e-9, 1e-6), "energy": lsla(4e-10)})
    a.add_cn("bus", costs={"time": lsla(1e-9, 1e-6), "energy": lsla(5e-11)})
    a.add_cn("mem", costs={"time": lsla(2e-10), "energy": lsla(1e-11)})
    a.add_pe("cpu[0]", type_name="cpu", array=("cpu", 0), local="mem")
    a.add_pe("cpu[1]", type_name="cpu", array=("cpu", 1), local="mem")
    a.add_pe("gpu", costs={"time": gsla(2e-8, 2e-10), "energy": lsla(1e-9, 1e-6)})
    a.add_pe("dsp", costs={"time": lsla(1e-9, 4e-6), "energy": lsla(1e-10)})
    for p in ("cpu[0]", "cpu[1]"):
        a.add_link(p, "mem")
    a.add_link("mem", "bus")
    a.add_link("gpu", "bus")
    a.add_link("dsp", "bus")
    return a


def roofline_arch(lambda_: float = 1.0, aggregate: str = "max") -> Architecture:
    """Gables-like SoC: roofline IPs with a memory CN reached through a bus, an LSLA
    core, bandwidth and LSLA CNs, a memory-side cache (miss < 1) on one IP."""
    def roof(peak, bw, memory="dram", miss=1.0):
        return CostSpec("roofline", {"peak": peak, "bandwidth": bw, "memory": memory,
                                     "miss": miss})
    a = Architecture("soc", lambda_=lambda_, aggregate=aggregate)
    a.add_cn("dram", costs={"time": CostSpec("bandwidth", {"B": 8e3})})
    a.add_cn("bus", costs={"time": CostSpec("bandwidth", {"B": 2e4})})
    a.add_cn("noc", costs={"time": lsla(1e-5, 1e-4)})
    a.add_pe("ip[0]", costs={"time": roof(4e4, 6e3)}, array=("ip", 0))
    a.add_pe("ip[1]", costs={"time": roof(4e4, 6e3)}, array=("ip", 1))
    a.add_pe("gpu", costs={"time": roof(2e5, 1.5e4, miss=0.25)})
    a.add_pe("cpu", costs={"time": lsla(3e-5, 1e-4)}, local="noc")
    for p in ("ip[0]", "ip[1]", "gpu"):
        a.add_link(p, "bus")
    a.add_link("cpu", "noc")
    a.add_link("noc", "bus")
    a.add_link("bus", "dram")
    return a


def split_arch(q_alpha: float = 1e-9) -> Architecture:
    """PEs ``p`` and ``q`` on CNs ``b1`` and ``b2`` with no link between them: only
    mappings on one PE route their channels."""
    a = Architecture("split")
    a.add_cn("b1", costs={"time": lsla(1e-9)})
    a.add_cn("b2", costs={"time": lsla(1e-9)})
    a.add_pe("p", costs={"time": lsla(1e-9)})
    a.add_pe("q", costs={"time": lsla(q_alpha)})
    a.add_link("p", "b1")
    a.add_link("q", "b2")
    return a
