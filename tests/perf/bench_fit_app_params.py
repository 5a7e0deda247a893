"""Fits of free ``.sdf`` parameters through the row batch: prints one JSON object.

    python tests/perf/bench_fit_app_params.py [--base COMMIT]

The streaming study (``examples/calibration/streaming``) fits the 8 per-actor quanta
``q_<actor>`` of ``audio.sdf`` and 4 alphas of ``board_lsla.moa`` (12 parameters) with
``mapeval fidelity ... --fit F1``: on its 200 rows (one 160/40 split, the default 8
random starts), and on the fuzzer's input 2675 (``tests/fuzz/fuzz.py``, seed 34: 27
mutated rows of that table) with no random start, which took 36 s at a load of 5 before.  Each runs in a fresh process,
once with this tree's code and once with the code of ``--base`` (default ``80d5387``,
where free ``.sdf`` parameters went row by row), extracted by ``git archive``.  Times
are CPU seconds of the child process; ``max_rel_diff`` is the largest relative
difference of a fitted value between the two codes.
"""
from __future__ import annotations

import one_core  # noqa: F401  (first: one thread before numpy loads)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

from previous import child_cpu, extract  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
STREAM = ROOT / "examples" / "calibration" / "streaming"
BASE = "80d5387"
F1 = ("q_src,q_deint,q_fir_l,q_fir_r,q_mix,q_eq,q_comp,q_sink,A15.time.alpha,"
      "l2_little.time.alpha,l2_big.time.alpha,cci.time.alpha")


def run(code: Path, table: Path, starts: list[str]) -> dict:
    argv = [sys.executable, "-m", "mapping.cli.main", "fidelity", str(STREAM / "audio.sdf"),
            str(STREAM / "board_lsla.moa"), str(table), "--measured", "time_us",
            "--actor-column", "t_{actor}", "--fit", F1, "--json", *starts]
    proc, cpu = child_cpu(argv, code)
    out = json.loads(proc.stdout)
    return {"cpu_s": cpu, "fitted": out["fitted"], "tau": out["tau"], "mape": out["mape"]}


def rel_diff(a: dict, b: dict) -> float:
    return max(abs(a[k] - b[k]) / max(abs(a[k]), abs(b[k]), 1e-300) for k in a)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--base", default=BASE)
    args = p.parse_args()
    out: dict = {"load": os.getloadavg()[0], "base": args.base, "cases": []}
    with tempfile.TemporaryDirectory() as tmp:
        base = extract(args.base, Path(tmp))
        import fuzz.fuzz as fuzz
        small = Path(tmp) / "input2675.csv"
        small.write_text(fuzz.make_csv_cases(2676, 34)[2675]["text"], encoding="utf-8")
        for name, table, starts in (("200 rows, 8 starts", STREAM / "measurements.csv", []),
                                    ("fuzz input 2675, no start", small, ["--starts", "0"])):
            old, new = run(base, table, starts), run(ROOT, table, starts)
            out["cases"].append({
                "case": name, "params": 12, "old_cpu_s": old["cpu_s"],
                "new_cpu_s": new["cpu_s"], "speedup": old["cpu_s"] / new["cpu_s"],
                "max_rel_diff": rel_diff(old["fitted"], new["fitted"]),
                "tau": [old["tau"], new["tau"]], "mape": [old["mape"], new["mape"]]})
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
