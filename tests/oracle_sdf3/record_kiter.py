"""Run Kiter's K-periodic throughput (Bodin, Munier-Kordon & de Dinechin, DAC 2016) on
the cyclo-static graphs of ``tests/data/csdf/`` and ``examples/csdf/``, and record the
period it prints in ``tests/data/kiter_csdf.json``.

    git clone https://github.com/bbodin/kiter KITER && make -C KITER release
    PYTHONPATH=$PWD python tests/oracle_sdf3/record_kiter.py KITER

(Kiter needs cmake, a C++ compiler, libxml2 and the Boost graph and filesystem
libraries.)  Each graph goes to Kiter as ``mapeval export sdf3`` writes it; Kiter's
period is the time of one iteration of the smallest repetition vector, as ours.
"""
from __future__ import annotations

import datetime
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, write_records  # noqa: E402

DATA = ROOT / "tests" / "data" / "kiter_csdf.json"
GRAPHS = sorted((ROOT / "tests" / "data" / "csdf").glob("*.sdf")) + \
    [ROOT / "examples" / "csdf" / "pair.sdf", ROOT / "examples" / "csdf" / "orders.sdf"]
TIMEOUT = 120


def main(argv):
    checkout = Path(argv[1])
    kiter = checkout / "Release" / "bin" / "kiter"
    commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    from mapping.cli.main import main as mapeval
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        for sdf in GRAPHS:
            xml = Path(tmp) / f"{sdf.stem}.xml"
            assert mapeval(["export", "sdf3", str(sdf), "-o", str(xml)]) == 0
            start = time.monotonic()
            out = subprocess.run([str(kiter), "-f", str(xml), "-a", "KPeriodicThroughput"],
                                 capture_output=True, text=True, timeout=TIMEOUT).stdout
            line = re.search(r"^KPeriodic Period is\s+(\S+)$", out, re.M)
            period = float(line.group(1))
            records.append({"file": str(sdf.relative_to(ROOT)),
                            "command": f"mapeval export sdf3 {sdf.relative_to(ROOT)} -o "
                                       f"{xml.name}; kiter -f {xml.name} -a "
                                       f"KPeriodicThroughput",
                            "printed": line.group(0), "seconds": round(
                                time.monotonic() - start, 3),
                            "period": str(int(period)) if period.is_integer() else
                            line.group(1)})
            print(sdf.name, records[-1]["period"])
    write_records(DATA, {"kiter": {
        "repository": "https://github.com/bbodin/kiter", "commit": commit,
        "program": "kiter -a KPeriodicThroughput, built by 'make release'",
        "date": datetime.date.today().isoformat(),
        "period": "time of one iteration (smallest repetition vector), as printed"}},
        records)


if __name__ == "__main__":
    main(sys.argv)
