"""Convert a KernelTuner cache file (JSON) into a measurement table for mapeval.

KernelTuner (https://github.com/KernelTuner/kernel_tuner, Apache-2.0) stores, for every
configuration it benchmarked, the tunable parameters, the mean ``time`` (ms), the
individual runs ``times`` and observed quantities (``core_freq``, ``nvml_power``,
``energy``, ...).  This script writes one CSV row per individual run (``repeat``,
``time_sample``), each carrying its configuration's parameters and observed scalars,
so that ``mapeval fidelity``/``fit`` see every repeat as a sample, as the GSLA paper's
360 samples of 36 configurations.

The data are not copied into the repository: the default source is the shared data
folder next to the repository root (``../shared/data/measurements/``).

    python examples/measured/convert_kerneltuner.py OUT.csv [--source FILE.json]

With ``--gpu-table``, a cache of a one-dimensional kernel tuned over ``block_size_x``
becomes a table for ``mapeval import gpu-table`` instead: one row per run with the
launch (``Grid.X`` = ceil(problem_size / block), ``Block.X``), the observed clock and
the data-sheet facts the cache does not hold, given as options (``--cc``, ``--sms``,
``--bandwidth``, ``--bus``).
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_SOURCE = (REPO.parent / "shared" / "data" / "measurements"
                  / "kerneltuner_synthetic_fp32_RTXA4000_time_power_vs_clock.json")
# Bookkeeping of the tuner, not observations of the kernel.
SKIP = {"times", "timestamp", "compile_time", "verification_time", "benchmark_time",
        "strategy_time", "framework_time"}


def rows(cache_file: dict):
    keys = list(cache_file.get("tune_params_keys", []))
    for config in cache_file["cache"].values():
        if not isinstance(config.get("time"), (int, float)):
            continue                       # failed or invalid configurations
        base = {k: config[k] for k in keys}
        for k, v in config.items():
            if k not in SKIP and k not in base and isinstance(v, (int, float)) \
                    and not isinstance(v, bool):
                base[k] = v
        times = config.get("times") or [config["time"]]
        for i, t in enumerate(times):
            yield {**base, "repeat": i, "time_sample": t}


def gpu_rows(cache_file: dict, args):
    """The rows of ``mapeval import gpu-table``: one per run of each block size."""
    n = int(cache_file["problem_size"])
    name = "".join(ch for ch in cache_file.get("device_name", "gpu") if ch.isalnum())
    for config in cache_file["cache"].values():
        if not isinstance(config.get("time"), (int, float)):
            continue
        block = int(config["block_size_x"])
        clock = config.get("core_freq") or config.get("nvml_gr_clock") or args.clock
        for t in config.get("times") or [config["time"]]:
            yield {"gpu_name": name, "compute_version": args.cc, "max_clock_rate": clock,
                   "sms": args.sms, "bandwith": args.bandwidth, "bus": args.bus,
                   "AppName": cache_file.get("kernel_name", "kernel"), "Input.Size": n,
                   "Grid.X": -(-n // block), "Block.X": block,
                   "Duration": t / 1e3}           # KernelTuner times are milliseconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the CSV file to write")
    parser.add_argument("--source", default=str(DEFAULT_SOURCE),
                        help=f"a KernelTuner cache JSON (default: {DEFAULT_SOURCE})")
    g = parser.add_argument_group("--gpu-table: the data sheet of the GPU")
    g.add_argument("--gpu-table", action="store_true",
                   help="write a table for mapeval import gpu-table (block-size sweeps)")
    g.add_argument("--cc", default="8.9", help="compute capability (default 8.9)")
    g.add_argument("--sms", type=int, default=48, help="multiprocessors (default 48)")
    g.add_argument("--bandwidth", type=float, default=360.0,
                   help="DRAM bandwidth, GB/s (default 360)")
    g.add_argument("--bus", type=int, default=160, help="memory bus, bits (default 160)")
    g.add_argument("--clock", type=float, default=None,
                   help="core clock, MHz, where the cache has none")
    args = parser.parse_args(argv)
    source = Path(args.source)
    if not source.exists():
        print(f"convert_kerneltuner: no such file: {source}", file=sys.stderr)
        return 2
    data = json.loads(source.read_text())
    table = list(gpu_rows(data, args) if args.gpu_table else rows(data))
    columns = list(dict.fromkeys(k for r in table for k in r))
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, columns, lineterminator="\n")
        w.writeheader()
        w.writerows(table)
    print(f"wrote {args.out}: {len(table)} rows of {data.get('kernel_name', '?')} on "
          f"{data.get('device_name', '?')} ({', '.join(columns)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
