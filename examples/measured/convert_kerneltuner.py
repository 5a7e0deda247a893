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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the CSV file to write")
    parser.add_argument("--source", default=str(DEFAULT_SOURCE),
                        help=f"a KernelTuner cache JSON (default: {DEFAULT_SOURCE})")
    args = parser.parse_args(argv)
    source = Path(args.source)
    if not source.exists():
        print(f"convert_kerneltuner: no such file: {source}", file=sys.stderr)
        return 2
    data = json.loads(source.read_text())
    table = list(rows(data))
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
