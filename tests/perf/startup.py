"""Start-up of the command line (issues 8 and 42): prints one JSON object of the CPU and
wall seconds of whole ``mapeval`` processes with this tree's code and with the code of
``--base``, beside the floors measured in the same run (a measurement, not a test).

    python tests/perf/startup.py [--repeat 15] [--base COMMIT] [--only NAME...]

Each call runs ``--repeat`` times per code, the two codes alternated (and which goes
first swapped every round) so that both see the same load; ``new_*`` and ``old_*`` are
medians over the runs of the child's CPU seconds (user and system, all its threads) and
of the wall seconds, ``cpu_speedup`` and ``wall_speedup`` their ratios (old / new).  The
floors are ``python -c pass`` and ``python -c 'import numpy'`` (with numpy's default
BLAS threads and with one), run in the same rounds; ``new_beyond_numpy_cpu_s`` and
``old_beyond_numpy_cpu_s`` are what a call takes beyond the interpreter and numpy as
each code imports it (one BLAS thread for ``check`` and ``analyse`` now, the default
before; negative for calls that do not import numpy).  Bytecode is written and one run of each call
comes first, as for an installed package; each code has its own parser cache
(:func:`dsl.lalr.cache_file`) in a temporary folder, filled by that first run.
``check`` and ``analyse`` of small graphs are issue 42's target (Kiter takes 0.005 s a
graph).  ``OPENBLAS_NUM_THREADS`` is removed from the environment, as for a user who
never set it.

On a loaded machine the medians of CPU seconds move by 10-20% from run to run, more
than a few milliseconds of start-up gained.  ``--instructions`` counts instead the
instructions each process executes (all its threads), once per call and code, under
valgrind's callgrind (``valgrind`` on the path; 50-100 times slower, so ``--only`` a
few calls): the same count in every run, whatever the load.  ``new_instructions`` and
``old_instructions``, their ratio ``instruction_speedup`` (old / new), and
``new_beyond_numpy`` and ``old_beyond_numpy``, beyond ``import numpy`` with one BLAS
thread (OpenBLAS's waiting threads would count their spinning).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from previous import cli_module, extract

ROOT = Path(__file__).resolve().parents[2]
#: main before issue 42's fourth item (the command's start-up trimmed to its use)
BASE = "10a3a30"
EXAMPLES = ROOT / "examples"
ODROID = EXAMPLES / "odroid"
#: small graphs: SDF, cyclo-static, SDF3's samplerate, Kiter's Echo, an SDF3 file
GRAPHS = {
    "video": EXAMPLES / "timing" / "video.sdf",
    "orders_csdf": EXAMPLES / "csdf" / "orders.sdf",
    "samplerate": ROOT / "tests" / "data" / "sdf3_examples" / "samplerate.sdf",
    "echo_csdf": ROOT / "tests" / "data" / "csdf" / "Echo.sdf",
    "audio_xml": EXAMPLES / "sdf3_lookup" / "audio.xml",
}
FLOORS = {
    "python_alone": ([sys.executable, "-c", "pass"], {}),
    "python_numpy": ([sys.executable, "-c", "import numpy"], {}),
    "python_numpy_one_blas_thread": ([sys.executable, "-c", "import numpy"],
                                     {"OPENBLAS_NUM_THREADS": "1"}),
}
CALLS: dict[str, list[str]] = {"help": ["--help"]}
for _name, _path in GRAPHS.items():
    CALLS[f"check_{_name}"] = ["check", str(_path)]
    CALLS[f"analyse_no_simulate_{_name}"] = ["analyse", "--no-simulate", str(_path)]
    CALLS[f"analyse_{_name}"] = ["analyse", str(_path)]
CALLS["eval_quick_start"] = ["eval", str(ODROID / "stereo.sdf"), str(ODROID / "odroid.moa"),
                             str(ODROID / "mappings.map"), "--mapping", "mixed"]


def timed(command: list[str], env: dict, cwd: Path) -> tuple[float, float]:
    """``(cpu, wall)`` seconds of one process running ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(command, env=env, cwd=str(cwd), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command[:6])} ... failed:\n{proc.stderr[-3000:]}")
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), wall


def instructions(command: list[str], env: dict, cwd: Path) -> int:
    """The instructions that one process running ``command`` executes (all its threads),
    counted by valgrind's callgrind."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           *command], env=env, cwd=str(cwd), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command[:6])} ... failed:\n{proc.stderr[-3000:]}")
    return int(proc.stderr.rsplit("Collected :", 1)[1].split()[0])


def medians(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return (statistics.median(c for c, _ in runs), statistics.median(w for _, w in runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--base", default=BASE)
    parser.add_argument("--only", nargs="*", metavar="NAME",
                        help="the calls whose names contain one of these words")
    parser.add_argument("--instructions", action="store_true",
                        help="count each process's instructions (valgrind) instead of "
                        "timing it: once per call and code, the same whatever the load")
    args = parser.parse_args()
    base_env = {k: v for k, v in os.environ.items()
                if k not in ("PYTHONDONTWRITEBYTECODE", "OPENBLAS_NUM_THREADS")}
    base_env["MPLBACKEND"] = "Agg"
    calls = {n: a for n, a in CALLS.items()
             if not args.only or any(word in n for word in args.only)}
    out: dict = {"base": args.base, "repeat": args.repeat, "python": sys.version.split()[0],
                 "load": os.getloadavg()[0], "floors": {}, "calls": {}}
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"new": ROOT, "old": extract(args.base, Path(tmp))}
        envs = {k: {**base_env, "PYTHONPATH": str(tree),
                    "XDG_CACHE_HOME": str(Path(tmp) / f"cache-{k}")}
                for k, tree in trees.items()}

        def run(name: str, which: str) -> tuple[float, float]:
            command = [sys.executable, "-m", cli_module(trees[which]), *calls[name]]
            return timed(command, envs[which], trees[which])

        for name in calls:                      # bytecode, file cache, parser cache
            run(name, "new"), run(name, "old")
        if args.instructions:
            out["instructions"] = counted(calls, trees, envs, base_env)
            del out["repeat"], out["floors"], out["calls"]
            out["load_after"] = os.getloadavg()[0]
            print(json.dumps(out, indent=1))
            return
        for command, extra in FLOORS.values():
            timed(command, {**base_env, **extra}, ROOT)
        floors = {n: [] for n in FLOORS}
        times = {n: {"new": [], "old": []} for n in calls}
        for i in range(args.repeat):
            for name, (command, extra) in FLOORS.items():
                floors[name].append(timed(command, {**base_env, **extra}, ROOT))
            for name in calls:
                for which in (("new", "old") if i % 2 == 0 else ("old", "new")):
                    times[name][which].append(run(name, which))
        floor = {}
        for name, runs in floors.items():
            cpu, wall = medians(runs)
            floor[name] = cpu
            out["floors"][name] = {"cpu_s": round(cpu, 4), "wall_s": round(wall, 4)}
        for name, runs in times.items():
            new_cpu, new_wall = medians(runs["new"])
            old_cpu, old_wall = medians(runs["old"])
            out["calls"][name] = {
                "new_cpu_s": round(new_cpu, 4), "old_cpu_s": round(old_cpu, 4),
                "cpu_speedup": round(old_cpu / new_cpu, 2),
                "new_wall_s": round(new_wall, 4), "old_wall_s": round(old_wall, 4),
                "wall_speedup": round(old_wall / new_wall, 2),
                # what each code takes beyond the interpreter and numpy as it imports it
                "new_beyond_numpy_cpu_s": round(
                    new_cpu - floor["python_numpy_one_blas_thread"], 4),
                "old_beyond_numpy_cpu_s": round(old_cpu - floor["python_numpy"], 4)}
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))


def counted(calls: dict, trees: dict, envs: dict, base_env: dict) -> dict:
    """``--instructions``: the floors' and each call's instruction counts, per code."""
    floors = {name: instructions(command, {**base_env, **extra}, ROOT)
              for name, (command, extra) in FLOORS.items()}
    numpy = floors["python_numpy_one_blas_thread"]
    found: dict = {"floors": floors}
    for name, argv in calls.items():
        new, old = (instructions([sys.executable, "-m", cli_module(trees[which]), *argv],
                                 envs[which], trees[which]) for which in ("new", "old"))
        found[name] = {"new_instructions": new, "old_instructions": old,
                       "instruction_speedup": round(old / new, 3),
                       "new_beyond_numpy": new - numpy, "old_beyond_numpy": old - numpy}
    return found


if __name__ == "__main__":
    main()
