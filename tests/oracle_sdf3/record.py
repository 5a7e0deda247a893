"""Run SDF3's ``sdf3analysis --algo throughput`` on the shared SDF3 graphs and on SDF3's
own example graphs, and record what it prints in ``tests/data/sdf3_throughput.json``.

    tests/oracle_sdf3/build.sh /tmp/sdf3-build
    PYTHONPATH=$PWD python tests/oracle_sdf3/record.py /tmp/sdf3-build

Run from the repository root.  For every graph it records the line SDF3 printed, the
same value to 17 digits, the exact rational it is (graph iterations per time unit), and
the round trip ``mapeval import sdf3`` -> ``.sdf`` -> ``mapeval export sdf3`` ->
``sdf3analysis`` (same value? export valid against SDF3's schema?).  Our own small
graphs in ``tests/data/sdf3_oracle/`` (self-loops, several cycles, missing and zero
times) go to SDF3 as ``mapeval export sdf3`` writes them.  SDF3's example
graphs are restated as ``.sdf`` files under ``tests/data/sdf3_examples/`` (their
structure and times, which are facts; none of SDF3's text), so that CI needs no SDF3.

What SDF3 prints (sdf/analysis/throughput/selftimed_throughput.cc at the commit built):
the state space of the self-timed execution with unlimited auto-concurrency is explored
until a state recurs at the end of an iteration (counted by the completions of the actor
with the smallest repetition count); throughput = iterations in the cycle / its time.
A graph that is not strongly connected is split into strongly connected components;
components without a channel are skipped (an actor without a self-loop never limits the
throughput), each other component's throughput is scaled to iterations of the whole
graph, and the minimum is printed; with no such component SDF3 prints INT_MAX
(2.14748e+09), its stand-in for infinity, recorded here as ``inf``.  Deadlock prints 0.
An actor's time is that of its default processor (the last ``processor`` carrying a
``default`` attribute), 0 if it has none.
"""
from __future__ import annotations

import datetime
import json
import math
import re
import subprocess
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT / ".." / "shared" / "data" / "graphs"
EXAMPLES_OUT = ROOT / "tests" / "data" / "sdf3_examples"
OURS = ROOT / "tests" / "data" / "sdf3_oracle"
DATA = ROOT / "tests" / "data" / "sdf3_throughput.json"
SDF3_INFINITY = 2147483647  # TDTIME_MAX = INT_MAX in sdf/basic_types.h


def sdf3(binary: Path, graph: Path) -> tuple[str, str]:
    """The line ``thr(NAME) = VALUE`` that ``binary`` prints, and VALUE."""
    out = subprocess.run([str(binary), "--graph", str(graph), "--algo", "throughput"],
                         capture_output=True, text=True, timeout=600).stdout
    match = re.search(r"^(thr\(.*\) = (\S+))$", out, re.M)
    if not match:
        raise RuntimeError(f"{graph}: no throughput in the output of {binary}:\n{out}")
    return match.group(1), match.group(2)


def exact(value: str) -> str:
    """The rational SDF3's double stands for: iterations per time unit."""
    x = float(value)
    if x == SDF3_INFINITY or math.isinf(x):
        return "inf"
    q = Fraction(value).limit_denominator(10**12)
    if float(q) != x:
        raise RuntimeError(f"{value} is not a small rational")
    return str(q)


def valid(xml: Path, xsd: Path) -> bool:
    return subprocess.run(["xmllint", "--noout", "--schema", str(xsd), str(xml)],
                          capture_output=True).returncode == 0


def round_trip(path: Path, work: Path, precise: Path, xsd: Path, tmp: Path) -> dict:
    from mapping.cli.main import main
    sdf, xml = tmp / (path.stem + ".sdf"), tmp / (path.stem + ".back.xml")
    assert main(["import", "sdf3", str(path), "-o", str(sdf)]) == 0
    assert main(["export", "sdf3", str(sdf), "-o", str(xml)]) == 0
    return {"printed": sdf3(precise, xml)[0], "valid": valid(xml, xsd), "sdf": sdf}


def restate(path: Path, relative: str, commit: str, sdf: Path) -> Path:
    """``tests/data/sdf3_examples/<stem>.sdf``: the graph of SDF3's ``relative``."""
    text = sdf.read_text().split("\n", 1)[1]
    out = EXAMPLES_OUT / (path.stem + ".sdf")
    out.write_text(f"# The SDF graph of SDF3's {relative} (github.com/rhishi/SDF3 at "
                   f"{commit[:7]}):\n# actors, port rates, initial tokens, token sizes and "
                   "execution times, restated\n# by 'mapeval import sdf3'. Throughput per "
                   "SDF3: tests/data/sdf3_throughput.json.\n" + text)
    return out


def write_records(path: Path, provenance: dict, records: list) -> None:
    """``path``: the ``provenance`` of a recording and its ``records`` (under
    ``graphs``), as indented JSON."""
    path.write_text(json.dumps({**provenance, "graphs": records}, indent=1) + "\n")
    print(f"wrote {path.relative_to(ROOT)}: {len(records)} graphs")


def main(argv):
    work = Path(argv[1] if len(argv) > 1 else "/tmp/sdf3-build")
    stock, precise = work / "sdf3analysis", work / "sdf3analysis-precise"
    xsd, src = work / "sdf3-sdf-deterministic.xsd", work / "sdf3"
    commit = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    graphs = [("shared", p.name, p) for p in sorted(SHARED.glob("*.xml"))]
    graphs += [("sdf3", f"sdf/testbench/{p.name}", p)
               for p in sorted((src / "sdf" / "testbench").glob("*.xml"))]
    graphs += [("ours", p.relative_to(ROOT).as_posix(), p) for p in sorted(OURS.glob("*.sdf"))]
    EXAMPLES_OUT.mkdir(exist_ok=True)
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        for base, relative, path in graphs:
            command = f"sdf3analysis --graph {relative} --algo throughput"
            if base == "ours":      # our own .sdf: what SDF3 says of its export
                from mapping.cli.main import main as mapeval
                xml = Path(tmp) / (path.stem + ".xml")
                assert mapeval(["export", "sdf3", str(path), "-o", str(xml)]) == 0
                path = xml
                command = (f"mapeval export sdf3 {relative} -o {xml.name}; "
                           f"sdf3analysis --graph {xml.name} --algo throughput")
            printed, _ = sdf3(stock, path)
            line, value = sdf3(precise, path)
            back = round_trip(path, work, precise, xsd, Path(tmp))
            record = {"file": relative, "base": base,
                      "command": command,
                      "printed": printed, "precise": line, "throughput": exact(value),
                      "round_trip": {"printed": back["printed"],
                                     "same": back["printed"] == line,
                                     "export_valid": back["valid"]}}
            if base == "sdf3":
                record["restated"] = str(restate(path, relative, commit, back["sdf"])
                                         .relative_to(ROOT))
            records.append(record)
            print(relative, record["throughput"], record["round_trip"])
    write_records(DATA, {
        "sdf3": {"repository": "https://github.com/rhishi/SDF3", "commit": commit,
                 "program": "sdf3analysis-sdf 1.0, built by tests/oracle_sdf3/build.sh",
                 "date": datetime.date.today().isoformat(),
                 "shared": "paths relative to ../shared/data/graphs/",
                 "sdf3": "paths relative to the SDF3 source tree; restated in "
                         "tests/data/sdf3_examples/",
                 "ours": "our own .sdf graphs, given to SDF3 as 'mapeval export sdf3' "
                         "writes them",
                 "throughput": "graph iterations per time unit, exact ('inf': SDF3 "
                               "printed INT_MAX, no cycle limits the throughput)"}}, records)


if __name__ == "__main__":
    main(sys.argv)
