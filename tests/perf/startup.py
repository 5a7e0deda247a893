"""Start-up of the command line (issues 8 and 42): prints one JSON object of the CPU
seconds of whole ``mapeval`` processes with this tree's code and with the code of
``--base`` (a measurement, not a test).

    python tests/perf/startup.py [--repeat 5] [--base COMMIT]

Each call runs ``--repeat`` times per code, alternated so that both see the same load;
``new_cpu_s`` and ``old_cpu_s`` are the medians of the child's CPU seconds (user and
system), ``speedup`` their ratio, ``new_wall_s`` this tree's median wall time.  Bytecode
is written and one run of each call comes first, as for an installed package; the
parser's cache (:func:`dsl.lalr.cache_file`) lives in a temporary folder, so the first
run fills it.  ``check`` and ``analyse --no-simulate`` of a small graph are issue 42's
target: well under 0.3 s of CPU (Kiter takes 0.007 s).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from previous import child_cpu, cli_module, extract

ROOT = Path(__file__).resolve().parents[2]
#: main before issue 42's start-up work
BASE = "54ce135"
EXAMPLES = ROOT / "examples"
ODROID = EXAMPLES / "odroid"
CALLS = {
    "python_alone": None,
    "help": ["--help"],
    "version": ["--version"],
    "check_sdf": ["check", str(EXAMPLES / "timing" / "video.sdf")],
    "check_csdf": ["check", str(EXAMPLES / "csdf" / "orders.sdf")],
    "analyse_no_simulate_sdf": ["analyse", "--no-simulate",
                                str(EXAMPLES / "timing" / "video.sdf")],
    "analyse_no_simulate_csdf": ["analyse", "--no-simulate",
                                 str(EXAMPLES / "csdf" / "orders.sdf")],
    "eval_quick_start": ["eval", str(ODROID / "stereo.sdf"), str(ODROID / "odroid.moa"),
                         str(ODROID / "mappings.map"), "--mapping", "mixed"],
}


def timed(argv: list[str] | None, code: Path) -> tuple[float, float]:
    """``(cpu, wall)`` seconds of one process running ``mapeval argv`` with ``code``."""
    command = [sys.executable, "-c", "pass"] if argv is None else \
        [sys.executable, "-m", cli_module(code), *argv]
    start = time.perf_counter()
    cpu = child_cpu(command, code)[1]
    return cpu, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--base", default=BASE)
    args = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["MPLBACKEND"] = "Agg"
    out: dict = {"base": args.base, "repeat": args.repeat, "load": os.getloadavg()[0],
                 "calls": {}}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        base = extract(args.base, Path(tmp))
        for name, argv in CALLS.items():
            timed(argv, ROOT), timed(argv, base)       # bytecode, file cache, parser cache
            new, old = [], []
            for _ in range(args.repeat):
                new.append(timed(argv, ROOT))
                old.append(timed(argv, base))
            new_cpu = statistics.median(c for c, _ in new)
            old_cpu = statistics.median(c for c, _ in old)
            out["calls"][name] = {"new_cpu_s": round(new_cpu, 3), "old_cpu_s": round(old_cpu, 3),
                                  "speedup": round(old_cpu / new_cpu, 2),
                                  "new_wall_s": round(statistics.median(w for _, w in new), 3)}
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
