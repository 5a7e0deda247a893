"""Generate measurements.csv: SYNTHETIC run times of a streaming audio pipeline, not measurements.

Eight processes of an audio filter (``audio.sdf``) run on a big.LITTLE-like board with
four Cortex-A7-like cores (little[0..3]) and four Cortex-A15-like cores (big[0..3]).
Each of ~200 random mappings puts every process on one of the eight cores. The ground
truth below is written out plainly here; it does not use mapeval:

    load(core) = sum of EXEC[actor][type of core] over the actors on the core
               + for every channel whose two ends are on different cores, COPY * bytes
                 added to BOTH end cores (the producer and the consumer copy the data),
                 COPY = 0.01 us/byte within a cluster, 0.03 us/byte across clusters
    time       = max over cores of load(core)          (the busiest core sets the pace)

times multiplicative log-normal noise (sigma 5%), seeded.  Usage:

    python make_measurements.py [OUT.csv] [--seed N] [--rows N]
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

# us per iteration on (A7, A15): the big cores help the FIR filters far more than the rest
EXEC = {
    "src":    (40.0, 30.0),
    "deint":  (60.0, 35.0),
    "fir_l":  (300.0, 90.0),
    "fir_r":  (300.0, 90.0),
    "mix":    (80.0, 55.0),
    "eq":     (150.0, 60.0),
    "comp":   (200.0, 130.0),
    "sink":   (30.0, 25.0),
}
CHANNELS = [  # producer, consumer, bytes per iteration (as in audio.sdf)
    ("src", "deint", 4096), ("deint", "fir_l", 2048), ("deint", "fir_r", 2048),
    ("fir_l", "mix", 2048), ("fir_r", "mix", 2048), ("mix", "eq", 4096),
    ("eq", "comp", 4096), ("comp", "sink", 4096),
]
COPY_IN, COPY_ACROSS = 0.01, 0.03   # us per byte, charged to each end core
CORES = [f"little[{i}]" for i in range(4)] + [f"big[{i}]" for i in range(4)]
NOISE = 0.05


def cluster(core: str) -> str:
    return core.split("[")[0]


def true_time(placement: dict[str, str]) -> float:
    load = {core: 0.0 for core in CORES}
    for actor, core in placement.items():
        load[core] += EXEC[actor][0 if cluster(core) == "little" else 1]
    for src, dst, nbytes in CHANNELS:
        a, b = placement[src], placement[dst]
        if a != b:
            copy = (COPY_IN if cluster(a) == cluster(b) else COPY_ACROSS) * nbytes
            load[a] += copy
            load[b] += copy
    return max(load.values())


def main(argv=None):
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(here / "measurements.csv"))
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--rows", type=int, default=200)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    actors = list(EXEC)
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["run"] + [f"t_{a}" for a in actors] + ["time_us"])
        for run in range(args.rows):
            placement = {a: CORES[int(rng.integers(len(CORES)))] for a in actors}
            t = true_time(placement) * float(np.exp(rng.normal(0.0, NOISE)))
            w.writerow([run] + [placement[a] for a in actors] + [f"{t:.4f}"])
    print(f"wrote {args.out}: {args.rows} synthetic rows")


if __name__ == "__main__":
    main()
