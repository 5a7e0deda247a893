"""Run SDF3's ``sdf3analysis --algo buffersize`` (the storage-throughput trade-off of
Stuijk, Geilen & Basten, DAC 2006) on the shared SDF3 graphs and on SDF3's own example
graphs, and record its Pareto points in ``tests/data/sdf3_buffersize.json``.

    tests/oracle_sdf3/build.sh /tmp/sdf3-build
    PYTHONPATH=$PWD python tests/oracle_sdf3/record_buffersize.py /tmp/sdf3-build

Run from the repository root.  Each graph gets at most ``TIMEOUT`` seconds; one SDF3
does not answer in that time is recorded as such (``"answered": false``, with the time
waited).  For every point SDF3 prints (``distributionsSet``): the total size, the
throughput as the stock program prints it (6 digits) and as the precise build prints
it (17 digits), the exact rational it stands for (graph iterations per time unit), and
every distribution of channel capacities listed.  SDF3's example graphs are restated
under ``tests/data/sdf3_examples/`` (see ``record.py``); the tests time those.
"""
from __future__ import annotations

import datetime
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, SHARED, exact, write_records  # noqa: E402

DATA = ROOT / "tests" / "data" / "sdf3_buffersize.json"
TIMEOUT = 60


def buffersize(binary: Path, graph: Path) -> tuple[ET.Element | None, float]:
    """SDF3's trade-off document for ``graph`` (None past :data:`TIMEOUT`) and the
    seconds it took."""
    start = time.monotonic()
    try:
        out = subprocess.run([str(binary), "--graph", str(graph), "--algo", "buffersize"],
                             capture_output=True, text=True, timeout=TIMEOUT).stdout
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - start
    return ET.fromstring(out), time.monotonic() - start


def points(doc: ET.Element) -> list[dict]:
    return [{"size": int(s.get("sz")), "thr": s.get("thr"),
             "distributions": [{ch.get("name"): int(ch.get("sz")) for ch in d}
                               for d in s.findall("distribution")]}
            for s in doc.iter("distributionsSet")]


def main(argv):
    work = Path(argv[1] if len(argv) > 1 else "/tmp/sdf3-build")
    stock, precise, src = work / "sdf3analysis", work / "sdf3analysis-precise", work / "sdf3"
    commit = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    graphs = [("shared", p.name, p) for p in sorted(SHARED.glob("*.xml"))]
    graphs += [("sdf3", f"sdf/testbench/{p.name}", p)
               for p in sorted((src / "sdf" / "testbench").glob("*.xml"))]
    records = []
    for base, relative, path in graphs:
        record = {"file": relative, "base": base,
                  "command": f"sdf3analysis --graph {relative} --algo buffersize"}
        doc, seconds = buffersize(precise, path)
        record["seconds"] = round(seconds, 3)
        record["answered"] = doc is not None
        if doc is not None:
            shown, _ = buffersize(stock, path)
            found = points(doc)
            for point, printed in zip(found, points(shown)):
                point["printed"] = printed["thr"]
                point["precise"] = point.pop("thr")
                point["throughput"] = exact(point["precise"])
            record["points"] = found
        if base == "sdf3":
            record["restated"] = f"tests/data/sdf3_examples/{path.stem}.sdf"
        records.append(record)
        print(relative, record["answered"], record["seconds"], len(record.get("points", ())))
    write_records(DATA, {
        "sdf3": {"repository": "https://github.com/rhishi/SDF3", "commit": commit,
                 "program": "sdf3analysis-sdf 1.0 --algo buffersize, built by "
                            "tests/oracle_sdf3/build.sh (throughputs from the precise "
                            "build, 17 digits)",
                 "date": datetime.date.today().isoformat(),
                 "timeout_seconds": TIMEOUT,
                 "shared": "paths relative to ../shared/data/graphs/",
                 "sdf3": "paths relative to the SDF3 source tree; restated in "
                         "tests/data/sdf3_examples/",
                 "throughput": "graph iterations per time unit, exact",
                 "size": "total capacity of the channels in tokens (self-loops "
                         "included)"}}, records)


if __name__ == "__main__":
    main(sys.argv)
