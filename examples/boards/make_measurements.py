"""Generate measurements.csv: SYNTHETIC pipeline times on an ODROID-XU4, not measurements.

Written directly from a stated ground truth (plain Python, not mapeval's evaluator) for
the calibration guide: SIZES x MAPPINGS rows, each mapping placing every actor of
pipeline.sdf on a random core of the 8 (4 Cortex-A15 `big[i]`, 4 Cortex-A7 `little[i]`).

    time = sum over actors of quanta / (clock[type] * IPC[type])
         + sum over channels whose ends sit in different clusters of
               size / (EFF_DRAM * 14.9e9) + O_COPY

(the clocks and the 14.9 GB/s are the board's data-sheet figures; a channel within a
cluster is free), times multiplicative log-normal noise (sigma 2 %), seeded.  Usage:

    python make_measurements.py [OUT.csv] [--seed N]
"""
from __future__ import annotations

import argparse
import csv
import math
import random
from pathlib import Path

CLOCK = {"A15": 2.1e9, "A7": 1.5e9}      # Hz, the board's data-sheet clocks
B_DRAM = 14.9e9                          # B/s, the board's data-sheet bandwidth
IPC = {"A15": 1.4, "A7": 0.6}            # the truth that fit recovers
EFF_DRAM = 0.45
O_COPY = 40e-6                           # s per cross-cluster transfer
NOISE = 0.02
CORES = [(f"big[{i}]", "A15") for i in range(4)] + [(f"little[{i}]", "A7") for i in range(4)]
SIZES = {"320x240": 320 * 240, "640x480": 640 * 480, "1280x720": 1280 * 720}
MAPPINGS = 20
ACTORS = ["capture", "blur", "edges", "track"]


def quanta(N):
    return {"capture": 2 * N, "blur": 25 * N, "edges": 12 * N, "track": 40 * N}


def channels(N):
    return [("capture", "blur", 3 * N), ("blur", "edges", 4 * N), ("edges", "track", 4 * N)]


def true_time(N, placed) -> float:
    kind = dict(CORES)
    t = sum(q / (CLOCK[kind[placed[a]]] * IPC[kind[placed[a]]])
            for a, q in quanta(N).items())
    for src, dst, size in channels(N):
        if kind[placed[src]] != kind[placed[dst]]:
            t += size / (EFF_DRAM * B_DRAM) + O_COPY
    return t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=Path(__file__).with_name("measurements.csv"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    mappings = [{a: rng.choice(CORES)[0] for a in ACTORS} for _ in range(MAPPINGS)]
    with open(args.out, "w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["workload", "N", "mapping", *(f"t_{a}" for a in ACTORS), "time [ms]"])
        for workload, N in SIZES.items():
            for i, placed in enumerate(mappings):
                measured = true_time(N, placed) * math.exp(rng.gauss(0, NOISE))
                out.writerow([workload, N, i, *(placed[a] for a in ACTORS),
                              f"{measured * 1e3:.6g}"])
    print(f"wrote {args.out}: {len(SIZES) * MAPPINGS} rows")


if __name__ == "__main__":
    main()
