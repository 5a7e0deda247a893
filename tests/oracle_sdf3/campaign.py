"""A differential campaign of ``mapeval analyse`` and ``check`` against SDF3, on graphs
made by SDF3's own random generators (``sdf3generate`` for SDF, ``sdf3generate-csdf``
for cyclo-static graphs).

    tests/oracle_sdf3/build.sh /tmp/sdf3-build
    python tests/oracle_sdf3/campaign.py /tmp/sdf3-build OUTDIR [--count N] [--seed S]

Run from the repository root, with mapeval installed.  It exits at once (status 0,
saying why) where the SDF3 programs are absent.  For each of ``N`` random settings of
the generator (2-30 actors, degrees, rates, a repetition vector sum or not, the share of
extra initial tokens, strongly connected or not, acyclic or not, execution times from 0,
1-5 phases) it writes the graph into ``OUTDIR``, and beside some of them a variant
without initial tokens, one with a token less on one channel and one with one rate
doubled (inconsistent where the channel closes an undirected cycle).  Each graph goes
through SDF3's ``consistency``, ``repetition_vector``, ``deadlock`` (SDF only) and
``throughput`` (the precise build), ``mapeval check --json`` and ``mapeval analyse
--json`` (cyclo-static graphs under both ``--csdf-order``), and, where one iteration
has at most ``--tradeoff-firings`` firings, SDF3's ``buffersize`` against ``analyse
--tradeoff``; at the end all graphs go through one ``--json-lines`` process of each
command, and damaged copies of a few files (cut short, a rate that is not a number)
through both commands.  Throughputs are compared per firing of an actor
(``throughput * q(a)``), since SDF3's cyclo-static repetition vector is not always the
smallest.  Every comparison and the whole-process times go to ``OUTDIR/results.jsonl``;
a summary is printed.  Generated graphs are random: keep them out of the repository.

``--patched BINARY`` adds a second cyclo-static reference, an SDF3 build with local
fixes of its own (see docs/notes.md), reported beside the stock one.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

MAPEVAL = [sys.executable, "-m", "mapping.cli"]
#: what SDF3 prints for an unbounded throughput (INT_MAX)
SDF3_INFINITY = "2147483647"


def run(argv, timeout):
    """(exit status or None past ``timeout``, stdout, stderr, seconds)."""
    start = time.monotonic()
    try:
        done = subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", "", time.monotonic() - start
    return done.returncode, done.stdout, done.stderr, time.monotonic() - start


def settings(rng: random.Random, phases: int, kind: str, wide: bool = False,
             large: bool = False) -> str:
    """A settings file for SDF3's generator (``<settings type="generate">`` for SDF;
    its cyclo-static generator reads ``type="none"`` under ``<sdf3 type="csdf">``);
    ``wide``: up to 40 actors, degrees up to 6 and rates up to 40; ``large``: 30-80
    actors of degree 3-8 (more channels per actor)."""
    n = rng.choice([2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30] + ([40] if wide else []))
    dmax = rng.randint(1, 6 if wide else 4)
    if large:
        n, dmax = rng.choice([30, 40, 60, 80]), rng.randint(3, 8)
    davg = rng.uniform(1, dmax)
    rmax = rng.choice([1, 1, 2, 3, 4, 6, 8, 12, 20] + ([30, 40] if wide else []))
    ravg = rng.uniform(1, rmax)
    acyclic = kind == "sdf" and rng.random() < 0.1
    strong = not acyclic and rng.random() < 0.5
    rvs = ""
    if rng.random() < 0.3:
        rvs = f' repetitionVectorSum="{rng.randint(n, 4 * n) * phases}"'
    structure = (f'<structure stronglyConnected="{str(strong).lower()}" '
                 f'acyclic="{str(acyclic).lower()}"'
                 + (' multigraph="false"' if kind == "sdf" and rng.random() < 0.3 else "")
                 + "/>")
    tmin = rng.choice([0, 0, 1, 1, 5])
    tmax = tmin + rng.choice([0, 3, 10, 30])
    types = 2 if rng.random() < 0.05 else 1
    period = f' period="{phases}"' if kind == "csdf" else ""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<sdf3 type="{kind}" version="1.0">
  <settings type="{'generate' if kind == 'sdf' else 'none'}">
    <graph{period}>
      <actors nr="{n}"/>
      <degree avg="{davg:.2f}" var="1" min="1" max="{dmax}"/>
      <rate avg="{ravg:.2f}" var="{rng.choice([0, 1, 2])}" min="1" max="{rmax}"{rvs}/>
      <initialTokens prop="{rng.choice([0, 0.1, 0.3, 0.6, 0.9])}"/>
      {structure}
    </graph>
    <graphProperties>
      <procs nrTypes="{types}" mapChance="{1 if types == 1 else 0.5}"/>
      <execTime avg="{(tmin + tmax) / 2}" var="{(tmax - tmin) / 2}" min="{tmin}" max="{tmax}"/>
    </graphProperties>
  </settings>
</sdf3>
"""


def variants(text: str, rng: random.Random) -> dict[str, str]:
    """Deadlocked, one-token-less and inconsistent variants of a generated file."""
    found = {}
    tokens = list(re.finditer(r' initialTokens="(\d+)"', text))
    if tokens:
        found["dead"] = re.sub(r' initialTokens="\d+"', "", text)
        m = rng.choice(tokens)
        less = int(m.group(1)) - 1
        found["less"] = text[:m.start()] + f' initialTokens="{less}"' + text[m.end():]
    ports = list(re.finditer(r'(<port name="[^"]*" type="in" rate=")([^"]*)"', text))
    if ports:
        m = rng.choice(ports)
        rates = []
        for part in m.group(2).split(","):
            count, _, value = part.rpartition("*")
            rates += [int(value)] * int(count or 1)
        i = max(range(len(rates)), key=lambda k: rates[k])
        rates[i] = 2 * rates[i] if rates[i] else 1
        found["rate"] = text[:m.start(2)] + ",".join(map(str, rates)) + text[m.end(2):]
    return found


def sdf3_facts(tools: dict, path: Path, kind: str, timeout: float) -> dict:
    binary = tools["csdf" if kind == "csdf" else "sdf"]
    facts, seconds = {}, 0.0
    rc, out, _, s = run([binary, "--graph", path, "--algo", "consistency"], timeout)
    seconds += s
    facts["consistent"] = None if rc is None else "not consistent" not in out
    rc, out, _, s = run([binary, "--graph", path, "--algo", "repetition_vector"], timeout)
    seconds += s
    facts["q"] = {m.group(1): int(m.group(2))
                  for m in re.finditer(r"\[(\S+)\] = (\d+)", out)} or None
    if kind == "sdf":
        rc, out, _, s = run([binary, "--graph", path, "--algo", "deadlock"], timeout)
        seconds += s
        facts["deadlock"] = None if rc is None else ("deadlocks" in out)
    if facts["consistent"]:
        rc, out, err, s = run([binary, "--graph", path, "--algo", "throughput"], timeout)
        seconds += s
        m = re.search(r"thr\(\S*\) = (\S+)", out)
        facts["thr"] = m.group(1) if m else ("timeout" if rc is None else "error")
        facts["thr_seconds"] = round(s, 4)
        if kind == "csdf" and tools.get("patched"):
            _, out, _, _ = run([tools["patched"], "--graph", path, "--algo", "throughput"],
                               timeout)
            m = re.search(r"thr\(\S*\) = (\S+)", out)
            facts["thr_patched"] = m.group(1) if m else "error"
    facts["seconds"] = round(seconds, 4)
    return facts


def mapeval_facts(path: Path, kind: str, timeout: float) -> dict:
    facts = {}
    rc, out, err, s = run(MAPEVAL + ["check", "--json", path], timeout)
    facts["check_seconds"] = round(s, 3)
    facts["check_rc"] = rc
    facts["traceback"] = "Traceback" in err
    if rc in (0, 2) and out:
        (entry,) = json.loads(out)["files"]
        facts["q"] = entry.get("repetitions")
        facts["deadlock"] = entry.get("deadlock")
        facts["check_error"] = (entry.get("error") or {}).get("message")
    for order in (["ends", "starts"] if kind == "csdf" else ["ends"]):
        rc, out, err, s = run(MAPEVAL + ["analyse", "--json", "--csdf-order", order, path],
                              timeout)
        facts[f"{order}_seconds"] = round(s, 3)
        facts[f"{order}_rc"] = rc
        facts["traceback"] |= "Traceback" in err
        if rc == 0:
            doc = json.loads(out)
            facts[order] = doc["exact"].get("throughput") or doc["throughput"]
        else:
            facts[order] = None
            facts[f"{order}_error"] = err.strip().splitlines()[0] if err.strip() else None
    return facts


def per_firing(thr, q: dict | None):
    """``thr * q(a)`` for the first actor of ``q`` (firings per time unit)."""
    if thr in (None, "timeout", "error") or not q:
        return None
    if thr in ("inf", SDF3_INFINITY):
        return "inf"
    value = Fraction(thr) if "/" in str(thr) else Fraction(float(thr))
    return value * next(iter(q.values()))


def same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    if "inf" in (a, b):
        return a == b
    return abs(a - b) <= Fraction(1, 10**9) * max(abs(a), abs(b), Fraction(1, 10**12))


def fronts(binary, path, timeout, scale=1):
    """SDF3's buffersize points (their throughput times ``scale``, SDF3's iterations
    per one of mapeval's) and mapeval's trade-off points, (size, throughput,
    distributions) each, or None where one did not end."""
    rc, out, _, s1 = run([binary, "--graph", path, "--algo", "buffersize"], timeout)
    theirs = None
    if rc == 0 and "</sdf3>" in out:
        doc = ET.fromstring(out[:out.rindex("</sdf3>") + 7])
        theirs = [(int(p.get("sz")), float(p.get("thr")) * scale,
                   sorted(sorted((c.get("name"), int(c.get("sz"))) for c in d)
                          for d in p.findall("distribution")))
                  for p in doc.iter("distributionsSet")]
    rc, out, err, s2 = run(MAPEVAL + ["analyse", "--tradeoff", "--json", "--budget",
                                      str(int(timeout)), path], timeout + 30)
    ours = None
    if rc == 0:
        doc = json.loads(out)
        if doc["complete"]:
            ours = [(p["size"], float(Fraction(p["exact"])) if p["exact"] else float("inf"),
                     sorted(sorted(d.items()) for d in p["distributions"]))
                    for p in doc["points"]]
    return theirs, ours, round(s1, 3), round(s2, 3)


def front_equal(theirs, ours) -> bool:
    if len(theirs) != len(ours):
        return False
    return all(a[0] == b[0] and abs(a[1] - b[1]) <= 1e-9 * max(a[1], b[1], 1e-12)
               and [list(map(list, d)) for d in a[2]] == [list(map(list, d)) for d in b[2]]
               for a, b in zip(theirs, ours))


def verdict(rec: dict) -> str:
    """One word for how SDF3 and mapeval compare on ``rec``."""
    t, m = rec["sdf3"], rec["mapeval"]
    if m.get("traceback") or m.get("check_rc") not in (0, 2):
        return "mapeval-crash"
    if t["consistent"] is None:
        return "sdf3-timeout"
    if t.get("thr") == "error" and m.get("check_error") and m.get("ends_rc") == 2:
        return "agree-rejected"
    if not t["consistent"]:
        return "agree-inconsistent" if m.get("q") is None else "differ-consistency"
    if t["q"] and m.get("q"):
        ratio = {a: Fraction(t["q"][a], m["q"][a]) for a in m["q"]}
        if len(set(ratio.values())) != 1 or set(t["q"]) != set(m["q"]):
            return "differ-repetition"
    if rec["kind"] == "sdf" and t.get("deadlock") is not None \
            and t["deadlock"] != m.get("deadlock"):
        return "differ-deadlock"
    thr = t.get("thr")
    if thr in ("timeout", None):
        return "sdf3-timeout"
    theirs = per_firing(thr, t["q"])
    if theirs == 0:
        return "agree-deadlock" if m.get("deadlock") else "differ-throughput"
    if m.get("deadlock"):
        return "differ-throughput"
    ours = per_firing(m.get("ends"), m.get("q"))
    if ours is None:
        return "mapeval-no-answer"
    return "agree" if same(theirs, ours) else "differ-throughput"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--tradeoff-firings", type=int, default=12)
    parser.add_argument("--patched", type=Path)
    parser.add_argument("--large", action="store_true", help="30-80 actors of degree "
                        "3-8")
    parser.add_argument("--csdf-share", type=float, default=0.4,
                        help="the share of cyclo-static graphs")
    parser.add_argument("--wide", action="store_true", help="wider settings: 2-8 "
                        "phases, up to 40 actors, degrees up to 6, rates up to 40")
    args = parser.parse_args(argv)
    tools = {"sdf": args.workdir / "sdf3analysis-precise",
             "csdf": args.workdir / "sdf3analysis-csdf-precise",
             "gen-sdf": args.workdir / "sdf3generate",
             "gen-csdf": args.workdir / "sdf3generate-csdf",
             "patched": args.patched}
    missing = [str(p) for k, p in tools.items() if p is not None and not p.is_file()]
    if missing:
        print("SDF3 is absent (build it with tests/oracle_sdf3/build.sh):",
              ", ".join(missing))
        return 0
    rng = random.Random(args.seed)
    args.outdir.mkdir(parents=True, exist_ok=True)
    graphs = []
    for i in range(args.count):
        kind = "csdf" if rng.random() < args.csdf_share else "sdf"
        phases = rng.randint(2, 8 if args.wide else 5) if kind == "csdf" else 1
        opt = args.outdir / f"g{i:04d}.opt.xml"
        opt.write_text(settings(rng, phases, kind, args.wide, args.large))
        path = args.outdir / f"g{i:04d}.xml"
        rc, _, err, _ = run([tools[f"gen-{kind}"], "--settings", opt, "--output", path], 10)
        if rc != 0 or not path.is_file() or path.stat().st_size == 0:
            print(f"{opt.name}: the generator failed ({err.strip()[:80] or rc})")
            path.unlink(missing_ok=True)
            continue
        graphs.append((path, kind, "generated"))
        if rng.random() < 0.5:
            for name, text in variants(path.read_text(), rng).items():
                if rng.random() < 0.6:
                    extra = args.outdir / f"g{i:04d}-{name}.xml"
                    extra.write_text(text)
                    graphs.append((extra, kind, name))
    results = []
    with open(args.outdir / "results.jsonl", "w") as log:
        for path, kind, origin in graphs:
            rec = {"file": path.name, "kind": kind, "origin": origin}
            rec["sdf3"] = sdf3_facts(tools, path, kind, args.timeout)
            rec["mapeval"] = mapeval_facts(path, kind, args.timeout)
            rec["verdict"] = verdict(rec)
            q = rec["mapeval"].get("q")
            binary = tools["patched"] if kind == "csdf" else tools["sdf"]
            if (binary and q and sum(q.values()) <= args.tradeoff_firings
                    and rec["verdict"] in ("agree", "differ-throughput")
                    and rec["mapeval"]["ends"] != "inf"):
                a = next(iter(q))
                theirs, ours, s1, s2 = fronts(binary, path, 20,
                                              Fraction(rec["sdf3"]["q"][a], q[a]))
                rec["tradeoff"] = {"sdf3_seconds": s1, "mapeval_seconds": s2,
                                   "answered": [theirs is not None, ours is not None]}
                if theirs is not None and ours is not None:
                    rec["tradeoff"]["equal"] = front_equal(theirs, ours)
                    if not rec["tradeoff"]["equal"]:
                        rec["tradeoff"]["sdf3"] = theirs
                        rec["tradeoff"]["mapeval"] = ours
            if kind == "csdf" and "thr_patched" in rec["sdf3"]:
                theirs = per_firing(rec["sdf3"]["thr_patched"], rec["sdf3"]["q"])
                # no answer from either side is no agreement
                rec["patched_agrees"] = theirs is not None and (
                    (theirs == 0 and rec["mapeval"].get("deadlock"))
                    or same(theirs, per_firing(rec["mapeval"].get("ends"),
                                               rec["mapeval"].get("q"))))
            results.append(rec)
            log.write(json.dumps(rec, default=str) + "\n")
            log.flush()
            print(path.name, kind, origin, rec["verdict"],
                  rec["sdf3"].get("thr"), rec["mapeval"].get("ends"),
                  rec["mapeval"].get("starts", ""), rec.get("tradeoff", {}).get("equal", ""))
    summary = {"graphs": len(results)}
    for rec in results:
        key = f"{rec['kind']}:{rec['verdict']}"
        summary[key] = summary.get(key, 0) + 1
        if "patched_agrees" in rec:
            key = f"csdf:{rec['verdict']}:patched-agrees:{rec['patched_agrees']}"
            summary[key] = summary.get(key, 0) + 1
        if "tradeoff" in rec:
            key = "tradeoff:" + str(rec["tradeoff"].get("equal", "unanswered"))
            summary[key] = summary.get(key, 0) + 1
    summary["json_lines"] = json_lines(results, args.outdir, args.timeout)
    summary["bad_input"] = bad_inputs([p for p, _, _ in graphs[:10]], args.outdir,
                                      args.timeout)
    for tool, keys in (("sdf3", ["seconds"]), ("mapeval", ["check_seconds", "ends_seconds"])):
        times = sorted(rec[tool].get(k, 0) for rec in results for k in keys)
        if times:
            summary[f"{tool}_seconds"] = {"median": times[len(times) // 2], "max": times[-1],
                                          "total": round(sum(times), 1)}
    print(json.dumps(summary, indent=1))
    (args.outdir / "summary.json").write_text(json.dumps(summary, indent=1))
    return 0


def json_lines(results, outdir: Path, timeout: float) -> dict:
    """Every file through one ``--json-lines`` process: the same throughput, deadlock and
    repetitions as the process per file."""
    files = [outdir / rec["file"] for rec in results]
    by_name = {rec["file"]: rec for rec in results}
    found = {"files": len(files), "differ": []}
    rc, out, err, s = run(MAPEVAL + ["analyse", "--json-lines", *files], 20 * timeout)
    found["analyse_seconds"] = round(s, 2)
    found["traceback"] = "Traceback" in err
    for line in out.splitlines():
        doc = json.loads(line)
        rec = by_name[Path(doc["file"]).name]
        got = doc.get("exact", {}).get("throughput") or doc.get("throughput")
        if got != rec["mapeval"].get("ends"):
            found["differ"].append([doc["file"], "analyse", got, rec["mapeval"].get("ends")])
    rc, out, err, s = run(MAPEVAL + ["check", "--json-lines", *files], 20 * timeout)
    found["check_seconds"] = round(s, 2)
    found["traceback"] |= "Traceback" in err
    for line in out.splitlines():
        doc = json.loads(line)
        rec = by_name[Path(doc["file"]).name]
        if (doc.get("deadlock"), doc.get("repetitions")) != \
                (rec["mapeval"].get("deadlock"), rec["mapeval"].get("q")):
            found["differ"].append([doc["file"], "check"])
    return found


def bad_inputs(paths, outdir: Path, timeout: float) -> dict:
    """Damaged copies: each must give exit status 2, ``file:line:col: error:`` and no
    traceback, from both commands."""
    found = {"files": 0, "bad": []}
    for path in paths:
        text = path.read_text()
        cut = text[:len(text) * 2 // 3]
        rate = re.sub(r'rate="[^"]*"', 'rate="x"', text, count=1)
        actor = re.sub(r'dstActor="[^"]*"', 'dstActor="nowhere"', text, count=1)
        for name, damaged in (("cut", cut), ("rate", rate), ("actor", actor)):
            bad = outdir / f"bad-{name}-{path.name}"
            bad.write_text(damaged)
            found["files"] += 1
            for command in ("check", "analyse"):
                rc, _, err, _ = run(MAPEVAL + [command, bad], timeout)
                if rc != 2 or "Traceback" in err or ": error: " not in err:
                    found["bad"].append([bad.name, command, rc, err[-200:]])
    return found


if __name__ == "__main__":
    sys.exit(main())
