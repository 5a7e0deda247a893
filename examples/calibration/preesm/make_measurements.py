"""Generate measurements.csv: SYNTHETIC per-core activity and energy, not measurements.

A PREESM-style study after the LSLA paper's Odroid-XU3 experiment, written from a stated
ground truth with plain numpy (not mapeval's evaluator).  The board has 4 Cortex-A7-like
cores ``little[0..3]`` and 4 Cortex-A15-like cores ``big[0..3]``; it runs in 6
configurations (DVFS operating points: the big and the little cluster's clock).  In
each configuration, ROWS runs of an 8-actor stereo pipeline on one of three image sizes,
each actor placed on a random core of a random subset of the cores (as a mapper's
alternatives); a run reports, per core, the quanta it processed and the firings they
came in (``quanta_<core>``, ``tokens_<core>``: what PREESM's scheduler counts), and the
board's energy.  Ground truth, for configuration c with cluster voltages V_big, V_little:

    time(core)   = CYCLES[type] / f_type(c) * quanta(core)          (s)
    E[type](c)   = C_EFF[type] * V_type(c)^2 * CYCLES[type]         (J per quantum)
    P_static(c)  = P_BOARD + K_BIG * V_big(c) + K_LITTLE * V_little(c)   (W)
    energy       = sum over cores of E[type](c) * quanta(core)      (dynamic)
                 + P_static(c) * max over cores of time(core)       (static, whole run)

times multiplicative log-normal noise (sigma 5 %), seeded.  The row also gives its
configuration's clocks and the resulting seconds per quantum of each type (``t_A7``,
``t_A15``, columns named like the .moa's parameters, so that they set them per row):
a designer knows the clocks, not the energies.  Usage:

    python make_measurements.py [OUT.csv] [--seed N] [--rows R]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

#: configuration → (big clock GHz, big V, little clock GHz, little V)
CONFIGS = {"b2.0-l1.4": (2.0, 1.25, 1.4, 1.20), "b1.6-l1.4": (1.6, 1.10, 1.4, 1.20),
           "b1.2-l1.4": (1.2, 0.95, 1.4, 1.20), "b2.0-l1.0": (2.0, 1.25, 1.0, 1.00),
           "b1.6-l1.0": (1.6, 1.10, 1.0, 1.00), "b1.2-l1.0": (1.2, 0.95, 1.0, 1.00)}
CYCLES = {"A7": 2.0, "A15": 1.0}             # cycles per quantum
C_EFF = {"A7": 0.10e-9, "A15": 0.50e-9}      # F: switched capacitance per cycle
P_BOARD, K_BIG, K_LITTLE = 0.20, 0.60, 0.10  # W, W per V, W per V
NOISE = 0.05
CORES = [(f"little[{i}]", "A7") for i in range(4)] + [(f"big[{i}]", "A15") for i in range(4)]
SIZES = [(320, 240, 16), (640, 480, 32), (1024, 768, 48)]     # W, H, D


def quanta(W, H, D):
    """Work of each actor on one frame (single rate: one firing per frame)."""
    return {"read": W * H, "rgb2gray": 3 * W * H, "census": 24 * W * H,
            "cost": D * W * H, "aggregate": 4 * D * W * H, "disparity": D * W * H,
            "median": 9 * W * H, "write": W * H}


def truth(config):
    """The configuration's seconds per quantum, joules per quantum and static power."""
    f_big, v_big, f_little, v_little = CONFIGS[config]
    clock = {"A15": f_big * 1e9, "A7": f_little * 1e9}
    volt = {"A15": v_big, "A7": v_little}
    time = {t: CYCLES[t] / clock[t] for t in CYCLES}
    energy = {t: C_EFF[t] * volt[t] ** 2 * CYCLES[t] for t in CYCLES}
    return time, energy, P_BOARD + K_BIG * v_big + K_LITTLE * v_little


def run(config, placement, size):
    """Per-core (quanta, firings) of one run and its true energy."""
    q = quanta(*size)
    time, energy, p_static = truth(config)
    kind = dict(CORES)
    activity = {core: [0.0, 0] for core, _ in CORES}
    for actor, core in placement.items():
        activity[core][0] += q[actor]
        activity[core][1] += 1
    dynamic = sum(energy[kind[c]] * a[0] for c, a in activity.items())
    busiest = max(time[kind[c]] * a[0] for c, a in activity.items())
    return activity, dynamic + p_static * busiest


def rows(seed=2018, rows=60):
    rng = np.random.default_rng(seed)
    actors = list(quanta(1, 1, 1))
    for config in CONFIGS:
        time, _, _ = truth(config)
        f_big, _, f_little, _ = CONFIGS[config]
        for _ in range(rows):
            subset = rng.choice(len(CORES), size=int(rng.integers(1, len(CORES) + 1)),
                                replace=False)
            placement = {a: CORES[int(rng.choice(subset))][0] for a in actors}
            size = SIZES[int(rng.integers(0, len(SIZES)))]
            activity, energy = run(config, placement, size)
            energy *= float(np.exp(rng.normal(0.0, NOISE)))
            yield {"config": config, "f_big": f_big, "f_little": f_little,
                   "t_A15": repr(time["A15"]), "t_A7": repr(time["A7"]),
                   "workload": "x".join(map(str, size)),
                   **{f"quanta_{c}": int(a[0]) for c, a in activity.items()},
                   **{f"tokens_{c}": a[1] for c, a in activity.items()},
                   "energy_J": f"{energy:.6e}"}


def write(out, **kw):
    """Write the rows to ``out`` (no cell holds a comma); the number of rows."""
    data = list(rows(**kw))
    header = list(data[0])
    lines = [",".join(header)] + [",".join(str(row[k]) for k in header) for row in data]
    Path(out).write_text("\n".join(lines) + "\n")
    return len(data)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", nargs="?", default=str(Path(__file__).with_name("measurements.csv")))
    p.add_argument("--seed", type=int, default=2018)
    p.add_argument("--rows", type=int, default=60, help="runs per configuration")
    a = p.parse_args()
    print(f"wrote {write(a.out, seed=a.seed, rows=a.rows)} rows to {a.out}")
