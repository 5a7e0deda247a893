"""Start-up time of the command line (issue 8): prints JSON of the median wall time, in
seconds, of a few calls (a measurement, not a test).

    python tests/perf/startup.py [--repeat 5]

Targets: ``mapeval --help`` and ``mapeval --version`` under 0.5 s; ``mapeval eval`` of
the README quick-start example under 1 s.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ODROID = ROOT / "examples" / "odroid"
CALLS = {
    "help": ["--help"],
    "version": ["--version"],
    "eval_quick_start": ["eval", str(ODROID / "stereo.sdf"), str(ODROID / "odroid.moa"),
                         str(ODROID / "mappings.map"), "--mapping", "mixed"],
    "python_alone": None,
}


def seconds(argv: list[str] | None) -> float:
    command = [sys.executable, "-c", "pass"] if argv is None else \
        [sys.executable, "-m", "mapping.cli.main", *argv]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    out = {}
    for name, argv in CALLS.items():
        seconds(argv)                                    # warm the file cache
        out[name] = round(statistics.median(seconds(argv) for _ in range(args.repeat)), 3)
    out["repeat"] = args.repeat
    print(json.dumps(out))


if __name__ == "__main__":
    main()
