"""What classifying unoptimised IR costs ``mapeval profile`` (issue 32): prints one JSON
object (a measurement, not a test).

    python tests/perf/profiler_bench.py [--repeat 3]

The tool as shipped turns Valgrind's IR optimiser off (iropt level 0) so that each
instruction is classified on its own IR; the baseline is the same source with that line
removed (Valgrind's default, level 2), built in the same run.  For each workload: the
CPU seconds (user + system of the valgrind process, best of ``--repeat``) of the
shipped tool, of the baseline, of ``--tool=none`` and of callgrind, the ratio
shipped / baseline, and the arithmetic/logic instructions each tool counted.

- ``sha1``: SHA-1's compression function at -O2, 200,000 blocks (about 540 million
  instructions; compute-bound, values chained in registers: the worst case);
- ``rotate``: the rotation example at -O2 on a 256 x 256 image (stdio and memory).
"""
from __future__ import annotations

import one_core  # noqa: F401  (first: the repository on sys.path)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import mapping.profiler.build as build  # noqa: E402
from dsl.importers.profile import read_logs  # noqa: E402
from test_profiler import KERNELS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ROTATE = ROOT / "examples" / "accelerator_store" / "rotate"
LEVEL0 = "   VG_(clo_vex_control).iropt_level = 0;\n"


def cpu_seconds(command, env, stdin_path=None) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(stdin_path or os.devnull, "rb") as stdin:
        subprocess.run(command, env=env, stdin=stdin, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def build_variant(toolchain, source: Path, cache: Path) -> Path:
    build.SOURCE = source
    try:
        return build.build_tool(toolchain, cache)
    finally:
        build.SOURCE = Path(build.__file__).with_name(f"{build.TOOL}.c")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    toolchain = build.find_toolchain()
    work = Path(tempfile.mkdtemp(prefix="profiler_bench."))
    shipped = build.SOURCE.read_text()
    if LEVEL0 not in shipped:
        sys.exit("the tool no longer sets iropt_level = 0; update the benchmark")
    (work / "baseline").mkdir()
    baseline_src = work / "baseline" / build.SOURCE.name
    baseline_src.write_text(shipped.replace(LEVEL0, ""))
    tools = {"shipped": build.build_tool(toolchain, work / "cache"),
             "baseline": build_variant(toolchain, baseline_src, work / "cache")}

    (work / "kernels.c").write_text(KERNELS)
    subprocess.run([toolchain.gcc, "-O2", "-g", "-o", str(work / "kernels"),
                    str(work / "kernels.c")], check=True)
    subprocess.run([toolchain.gcc, "-O2", "-fno-inline", "-g", "-o", str(work / "rotate"),
                    str(ROTATE / "rotate.c")], check=True)
    sys.path.insert(0, str(ROTATE))
    from make_ppm import image
    (work / "image.ppm").write_bytes(image(256))
    workloads = {"sha1": ([str(work / "kernels"), "200000", "0"], None),
                 "rotate": ([str(work / "rotate"), "i"], work / "image.ppm")}

    env = dict(os.environ, LD_BIND_NOW="1")
    result = {"load": os.getloadavg()[0], "valgrind": toolchain.version}
    for name, (program, stdin) in workloads.items():
        row = {}
        for tool, libdir in tools.items():
            out = work / f"{name}-{tool}"
            out.mkdir()
            command = [toolchain.valgrind, "-q", f"--tool={build.TOOL}", f"--outdir={out}",
                       "--root=main", "--demangle=no", *program]
            tool_env = dict(env, VALGRIND_LIB=str(libdir))
            row[f"{tool}_s"] = min(cpu_seconds(command, tool_env, stdin)
                                   for _ in range(args.repeat))
            row[f"{tool}_alu"] = sum(read_logs(out).icount.values())
        for tool in ("none", "callgrind"):
            command = [toolchain.valgrind, "-q", f"--tool={tool}",
                       f"--callgrind-out-file={work / 'cg.out'}" if tool == "callgrind"
                       else "--trace-children=no", *program]
            row[f"{tool}_s"] = min(cpu_seconds(command, env, stdin)
                                   for _ in range(args.repeat))
        row["shipped_over_baseline"] = round(row["shipped_s"] / row["baseline_s"], 3)
        result[name] = row
    shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
