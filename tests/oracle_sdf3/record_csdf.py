"""Restate cyclo-static graphs of SDF3's and Kiter's sources as ``.sdf`` files under
``tests/data/csdf/``, run SDF3's cyclo-static ``sdf3analysis`` on them (throughput,
repetition vector, buffersize), and record what it prints in
``tests/data/sdf3_csdf.json``.

    tests/oracle_sdf3/build.sh /tmp/sdf3-build
    PYTHONPATH=$PWD python tests/oracle_sdf3/record_csdf.py /tmp/sdf3-build KITER_CHECKOUT

``build.sh`` builds the CSDF tool from ``csdf/`` (without
``csdf/analysis/statespace``, which does not compile and which the tool does not use)
and ``csdf/tools/sdf3analysis`` with its throughput printed to 17 digits, linked with
the objects of ``base`` and ``sdf`` into ``WORKDIR/sdf3analysis-csdf-precise`` (and
``sdf3analysis-csdf`` as distributed).  (``tests/data/sdf3_csdf.json`` was recorded
with an earlier build whose ``buffersize`` printed 6 digits.)  SDF3 gets each
graph as ``mapeval export sdf3`` writes it (a ``<csdf>`` element: SDF3 rejects Kiter's
files, which hold the graph in an ``<sdf>`` element).  Each run has ``TIMEOUT`` seconds.

SDF3's cyclo-static repetition vector is not always the smallest (5 times it on
BlackScholes): its throughput counts those larger iterations, so the tests compare
firings per time unit, ``throughput · q(a)``, which the iteration does not change.
"""
from __future__ import annotations

import datetime
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, exact, write_records  # noqa: E402
from record_buffersize import points  # noqa: E402

DATA = ROOT / "tests" / "data" / "sdf3_csdf.json"
OUT = ROOT / "tests" / "data" / "csdf"
TIMEOUT = 60
#: (repository, path) of the graphs restated
SOURCES = [("sdf3", "csdf/testbench/buffersizing/simple_example.xml"),
           ("kiter", "benchmarks/mp3_csdf.xml"),
           ("kiter", "benchmarks/IB5CSDF/BlackScholes.xml"),
           ("kiter", "benchmarks/IB5CSDF/Echo.xml"),
           ("kiter", "benchmarks/IB5CSDF/PDectect.xml"),
           ("ours", "examples/csdf/pair.sdf")]
REPOSITORIES = {"sdf3": "https://github.com/rhishi/SDF3",
                "kiter": "https://github.com/bbodin/kiter"}
#: ``ours``: a graph of this repository, given to SDF3 as exported


def run(tool: Path, xml: Path, algo: str):
    """What ``tool`` prints for ``--algo algo`` (None past :data:`TIMEOUT`), and the
    seconds it took."""
    start = time.monotonic()
    try:
        out = subprocess.run([str(tool), "--graph", str(xml), "--algo", algo],
                             capture_output=True, text=True, timeout=TIMEOUT).stdout
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - start
    return out, time.monotonic() - start


def restate(repo, relative, commit, source, sdf):
    """``sdf``: the graph of ``repo``'s file ``relative`` as ``mapeval import sdf3``
    reads it, under a header naming where it comes from."""
    from mapping.cli.main import main as mapeval
    assert mapeval(["import", "sdf3", str(source), "-o", str(sdf)]) == 0
    text = sdf.read_text().split("\n", 1)[1]
    sdf.write_text(f"# The cyclo-static graph of {repo}'s {relative}\n# "
                   f"({REPOSITORIES[repo]} at {commit}): actors, port rates per phase, "
                   f"initial\n# tokens and execution times, restated by 'mapeval import "
                   f"sdf3'.\n# SDF3's analyses of it: tests/data/sdf3_csdf.json.\n" + text)


def main(argv):
    work = Path(argv[1] if len(argv) > 1 else "/tmp/sdf3-build")
    checkouts = {"sdf3": work / "sdf3", "kiter": Path(argv[2]), "ours": ROOT}
    tool = work / "sdf3analysis-csdf-precise"
    commits = {k: subprocess.run(["git", "-C", str(p), "rev-parse", "HEAD"],
                                 capture_output=True, text=True, check=True).stdout.strip()
               for k, p in checkouts.items() if k != "ours"}
    from mapping.cli.main import main as mapeval
    OUT.mkdir(exist_ok=True)
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        for repo, relative in SOURCES:
            source = checkouts[repo] / relative
            stem = Path(relative).stem
            sdf = source if repo == "ours" else OUT / f"{stem}.sdf"
            if repo != "ours":
                restate(repo, relative, commits[repo][:7], source, sdf)
            xml = Path(tmp) / f"{stem}.xml"
            assert mapeval(["export", "sdf3", str(sdf), "-o", str(xml)]) == 0
            record = {"file": str(sdf.relative_to(ROOT)), "source": relative,
                      "repository": repo, "command": f"mapeval export sdf3 "
                      f"{sdf.relative_to(ROOT)} -o {stem}.xml; sdf3analysis-csdf --graph "
                      f"{stem}.xml --algo ALGO"}
            out, seconds = run(tool, xml, "throughput")
            line = re.search(r"^thr\(.*\) = (\S+)$", out or "", re.M)
            record["throughput_seconds"] = round(seconds, 3)
            if line:
                record["printed"] = line.group(0)
                try:
                    record["throughput"] = exact(line.group(1))
                except RuntimeError:    # SDF3's division in doubles, not a small rational
                    record["throughput"] = line.group(1)
            out, _ = run(tool, xml, "repetition_vector")
            record["repetition_vector"] = {m.group(1): int(m.group(2)) for m in
                                           re.finditer(r"\[(.*?)\] = (\d+)", out or "")}
            out, seconds = run(tool, xml, "buffersize")
            record["buffersize_seconds"] = round(seconds, 3)
            record["buffersize_answered"] = out is not None
            if out is not None:
                found = points(ET.fromstring(out[:out.index("</sdf3>") + 7]))
                for point in found:
                    point["printed"] = point.pop("thr")
                record["points"] = found
            records.append(record)
            print(relative, record.get("throughput"), record["buffersize_answered"])
    write_records(DATA, {
        "sdf3": {"repository": REPOSITORIES["sdf3"], "commit": commits["sdf3"],
                 "program": "sdf3analysis-csdf 1.0 (csdf/tools/sdf3analysis), built as "
                            "the docstring of tests/oracle_sdf3/record_csdf.py says; "
                            "throughputs printed to 17 digits",
                 "date": datetime.date.today().isoformat(), "timeout_seconds": TIMEOUT,
                 "kiter": {"repository": REPOSITORIES["kiter"], "commit": commits["kiter"]},
                 "throughput": "iterations of SDF3's repetition_vector per time unit "
                               "(exact); compare throughput * q(a)"}}, records)


if __name__ == "__main__":
    main(sys.argv)
