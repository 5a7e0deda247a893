"""Generate examples/gsla/measurements.csv: SYNTHETIC GPU timings, not measurements.

The grid follows the GSLA paper's profiling (Payvar et al. 2021, Sect. 7): S in
{512, ..., 16384} and gamma in {8, ..., 256} (powers of two), each configuration run 10
times -- 360 samples of the gpu_offload mapping.  The "true" time is GSLA-like:

    host I/O      (2.0e-8/gamma + 6.0e-9) * S          (as in gpu.moa)
    kernel        (4.5e-7/gamma + 2.0e-9) * S + 4 us   (GPU values the .moa does not
                                                         know, plus a launch overhead
                                                         that GSLA has no term for)
    PCIe, twice   (1.0e-8/gamma + 1.0e-9) * S          (as in gpu.moa)

times multiplicative log-normal noise (sigma 5%), seeded.  ``--per-element FILE``
also writes the paper's three measured columns (Sect. 6): ``t_1`` (host only), ``t_k``
(the kernel, as the GPU's profiler reports it) and ``t_w`` (wall clock), each part with
its own noise, so that ``t_c = t_w - t_1 - t_k`` is the interconnect's.  Usage:

    python examples/gsla/make_measurements.py [OUT.csv] [--seed N] [--per-element FILE]
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

S_VALUES = [512, 1024, 2048, 4096, 8192, 16384]
GAMMA_VALUES = [8, 16, 32, 64, 128, 256]
REPEATS = 10
NOISE = 0.05

HOST = (2.0e-8, 6.0e-9)            # alpha, beta of the host (io actor)
GPU = (4.5e-7, 2.0e-9)             # the "true" GPU alpha, beta that `mapeval fit` recovers
PCIE = (1.0e-8, 1.0e-9)            # per transfer; two transfers per iteration
LAUNCH = 4.0e-6                    # seconds per kernel launch, outside the GSLA model


def true_time(S: float, gamma: float) -> float:
    gsla = lambda ab: (ab[0] / gamma + ab[1]) * S  # noqa: E731 - GSLA eq. 5
    return gsla(HOST) + gsla(GPU) + LAUNCH + 2 * gsla(PCIE)


def parts(S: float, gamma: float) -> tuple[float, float, float]:
    """The true (host, kernel, interconnect) times of one run."""
    gsla = lambda ab: (ab[0] / gamma + ab[1]) * S  # noqa: E731 - GSLA eq. 5
    return gsla(HOST), gsla(GPU) + LAUNCH, 2 * gsla(PCIE)


def write_per_element(out: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    with open(out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["S", "gamma", "repeat", "t_w", "t_1", "t_k"])
        for S in S_VALUES:
            for gamma in GAMMA_VALUES:
                for r in range(REPEATS):
                    t1, tk, tc = (t * float(np.exp(rng.normal(0.0, NOISE)))
                                  for t in parts(S, gamma))
                    w.writerow([S, gamma, r, f"{t1 + tk + tc:.6e}", f"{t1:.6e}", f"{tk:.6e}"])
    print(f"wrote {out}: {len(S_VALUES) * len(GAMMA_VALUES) * REPEATS} synthetic rows")


def main(argv=None):
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(here / "measurements.csv"))
    parser.add_argument("--seed", type=int, default=2021)
    parser.add_argument("--per-element", metavar="FILE",
                        help="also write t_w, t_1, t_k per row to FILE")
    args = parser.parse_args(argv)
    if args.per_element:
        write_per_element(args.per_element, args.seed + 1)
    rng = np.random.default_rng(args.seed)
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["S", "gamma", "repeat", "time_s"])
        for S in S_VALUES:
            for gamma in GAMMA_VALUES:
                for r in range(REPEATS):
                    t = true_time(S, gamma) * float(np.exp(rng.normal(0.0, NOISE)))
                    w.writerow([S, gamma, r, f"{t:.6e}"])
    print(f"wrote {args.out}: {len(S_VALUES) * len(GAMMA_VALUES) * REPEATS} synthetic rows")


if __name__ == "__main__":
    main()
