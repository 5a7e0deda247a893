"""Generate measurements.csv: SYNTHETIC big.LITTLE energy, not measurements.

Written directly from a stated ground truth (plain numpy, not mapeval's evaluator), after
the LSLA paper's Odroid-XU3 stereo-matching study: WORKLOADS x MAPPINGS rows, the same
mappings for every workload.  A mapping picks a random subset of the 8 cores (4 Cortex-A7
`little[i]`, 4 Cortex-A15 `big[i]`) and places each actor of stereo.sdf on one of them.

    quanta(actor)   the formulas of stereo.sdf (single rate: one firing per frame)
    time(core)      = sum over its actors of T[type] * quanta
    energy          = sum over actors of E[type] * quanta         (dynamic)
                    + P_STATIC * max over cores of time(core)      (static, whole run)

times multiplicative log-normal noise (sigma 5%), seeded.  Communication is free.  Usage:

    python make_measurements.py [OUT.csv] [--seed N] [--mappings M]
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

T = {"A7": 2.0e-9, "A15": 0.7e-9}        # s per quantum (as in the .moa files)
E = {"A7": 0.3e-9, "A15": 0.9e-9}        # J per quantum, dynamic (fitted by mapeval)
P_STATIC = 1.5                           # W, the whole board while it runs (fitted)
NOISE = 0.05
CORES = [(f"little[{i}]", "A7") for i in range(4)] + [(f"big[{i}]", "A15") for i in range(4)]
WORKLOADS = [(320, 240, 16), (450, 375, 60), (640, 480, 32),
             (640, 480, 64), (1024, 768, 48), (1280, 720, 96)]   # W, H, D


def quanta(W, H, D):
    """Work of each actor on one frame (stereo.sdf)."""
    return {"read": W * H, "rgb2gray": 3 * W * H, "census": 24 * W * H,
            "cost": D * W * H, "aggregate": 4 * D * W * H, "disparity": D * W * H,
            "median": 9 * W * H, "write": W * H}


def true_energy(placement, W, H, D):
    """Ground truth: dynamic energy plus static power over the busiest core's time."""
    q = quanta(W, H, D)
    kind = dict(CORES)
    busy = {core: 0.0 for core, _ in CORES}
    dynamic = 0.0
    for actor, core in placement.items():
        busy[core] += T[kind[core]] * q[actor]
        dynamic += E[kind[core]] * q[actor]
    return dynamic + P_STATIC * max(busy.values())


def random_mappings(rng, count):
    actors = list(quanta(1, 1, 1))
    out = []
    for _ in range(count):
        size = int(rng.integers(1, len(CORES) + 1))
        subset = rng.choice(len(CORES), size=size, replace=False)
        out.append({a: CORES[int(rng.choice(subset))][0] for a in actors})
    return out


def rows(seed=2018, mappings=40, workloads=WORKLOADS):
    rng = np.random.default_rng(seed)
    maps = random_mappings(rng, mappings)
    for W, H, D in workloads:
        for m, placement in enumerate(maps):
            e = true_energy(placement, W, H, D) * float(np.exp(rng.normal(0.0, NOISE)))
            yield {"workload": f"{W}x{H}x{D}", "W": W, "H": H, "D": D, "mapping": m,
                   **{f"t_{a}": pe for a, pe in placement.items()}, "energy_J": f"{e:.6e}"}


def write(out, **kw):
    data = list(rows(**kw))
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(data[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(data)
    return len(data)


def main(argv=None):
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(here / "measurements.csv"))
    parser.add_argument("--seed", type=int, default=2018)
    parser.add_argument("--mappings", type=int, default=40)
    args = parser.parse_args(argv)
    n = write(args.out, seed=args.seed, mappings=args.mappings)
    print(f"wrote {args.out}: {n} synthetic rows")


if __name__ == "__main__":
    main()
