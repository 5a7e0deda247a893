"""``mapeval sweep`` against the previous code: prints one JSON object.

    python tests/perf/bench_sweep.py [--points N] [--base COMMIT]

Sweeps the odroid example's mapping ``big_only`` over N points (default 20,000) of a
parameter of the ``.moa`` (``f``, the clock scaling: the application's binding can be
kept) and of the ``.sdf`` (``D``, the disparity levels 1 to N: every point binds the
application), each in a fresh process, with this tree's code and with the code of
``--base`` (default ``9fa9fb0``, main before issue 39), extracted by ``git archive``,
``--repeat`` times alternated.  Times are the least CPU seconds of the child
(``median_speedup``: the ratio of the medians, which shows the spread);
``identical`` says whether the two CSV files are byte for byte the same.
"""
from __future__ import annotations

import one_core  # noqa: F401  (first: one thread before numpy loads)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

from previous import BASE, child_cpu, cli_module, extract  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ODROID = ROOT / "examples" / "odroid"


def run(code: Path, sweep_range: str, out: Path) -> float:
    argv = [sys.executable, "-m", cli_module(code), "sweep", str(ODROID / "stereo.sdf"),
            str(ODROID / "odroid.moa"), str(ODROID / "mappings.map"), "--mapping",
            "big_only", "-r", sweep_range, "-o", str(out)]
    return child_cpu(argv, code)[1]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--points", type=int, default=20_000)
    p.add_argument("--base", default=BASE)
    p.add_argument("--repeat", type=int, default=3,
                   help="runs of each code, alternated; the least CPU time counts")
    args = p.parse_args()
    out: dict = {"load": os.getloadavg()[0], "base": args.base, "points": args.points,
                 "cases": []}
    with tempfile.TemporaryDirectory() as tmp:
        base = extract(args.base, Path(tmp))
        for name, sweep_range in (("parameter of the .moa", f"f=0.5:2:{args.points}"),
                                  ("parameter of the .sdf", f"D=1:{args.points}:{args.points}")):
            old_csv, new_csv = Path(tmp) / "old.csv", Path(tmp) / "new.csv"
            olds, news = [], []
            for _ in range(args.repeat):    # alternated, so that both see the same load
                olds.append(run(base, sweep_range, old_csv))
                news.append(run(ROOT, sweep_range, new_csv))
            old, new = min(olds), min(news)
            out["cases"].append({
                "case": name, "range": sweep_range, "old_cpu_s": old, "new_cpu_s": new,
                "speedup": old / new,
                "median_speedup": statistics.median(olds) / statistics.median(news),
                "new_us_per_point": 1e6 * new / args.points,
                "identical": old_csv.read_bytes() == new_csv.read_bytes()})
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
