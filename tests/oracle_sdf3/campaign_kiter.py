"""A differential campaign of ``mapeval analyse`` and ``check`` against Kiter, on graphs
made by Kiter's own random generator (``kiter -g GenerateRandomSDF``, issue 42).

    python tests/oracle_sdf3/campaign_kiter.py KITER_BINARY OUTDIR [--count N] [--seed S]

Run from the repository root, with mapeval installed; ``KITER_BINARY`` is Kiter's
``Release/bin/kiter`` (github.com/bbodin/kiter, ``make release``).  It exits at once
(status 0, saying why) where that program is absent.  For each of ``N`` random settings
of the generator (SDF or 2-5 phases, 2-40 actors, sparse or dense, weights up to 1-50,
durations up to 1-20; no initialisation phases unless ``--init``) it writes Kiter's graph into
``OUTDIR`` and, beside some of them, variants: no initial tokens but those of the
self-loops (``dead``), a token less on one channel (``less``), one phase's rate of one
port changed (``rate``, inconsistent where the channel closes an undirected cycle),
the self-loops removed so that an actor's firings overlap (``reent``), and one
self-loop emptied (``zero``).  A graph of several components is also cut into one file
per component (``component``), since Kiter's iteration of a disconnected graph is not
the smallest (docs/notes.md).  ``--shapes`` adds ``loops`` (every self-loop with 2-4
times its tokens), ``joined`` (the graph and the one drawn before it joined by a chain
of new actors) and ``joined-loops``; ``--init N`` asks the generator for up to ``N``
initialisation phases per actor.

Each file goes through Kiter's ``-a KPeriodicThroughput`` (period, ``inf`` for a
deadlock), ``-a SymbExec`` (throughput, 0 for a deadlock) and ``-a
1PeriodicThroughput`` (a lower bound of the throughput), each as a timed process; and
through three ``mapeval`` processes over all files, ``analyse --json-lines`` (by
default and ``--csdf-order starts``) and ``check --json-lines``, whose lines are read
as they come so that each file's time is the time since the line before (the first
holds the start-up).  A file that gives no line within ``--timeout`` is recorded as
such and the process started again after it.  Kiter's period is compared with the
``starts`` one (Kiter's order of an actor's own firings); the default's differences
from ``starts`` are counted.  Every record goes to ``OUTDIR/results.jsonl``, a summary
is printed and written to ``OUTDIR/summary.json``.  Generated graphs are random: keep
them out of the repository.
"""
from __future__ import annotations

import argparse
import json
import os
import queue
import random
import re
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from campaign import MAPEVAL, run  # noqa: E402  (SDF3's campaign, beside this one)


def draw(rng: random.Random, wide: bool = False) -> dict[str, int]:
    """The generator's settings of one graph (``wide``: more phases, larger weights and
    durations, up to 60 actors)."""
    if wide:
        v = rng.choice([2, 3, 4, 6, 8, 12, 20, 30, 45, 60])
        e = max(1, v - 1 + rng.randint(0, 3)) if rng.random() < 0.5 else \
            rng.randint(v, 3 * v)
        return {"min_vertices_count": v, "max_vertices_count": v,
                "min_edges_count": e, "max_edges_count": e,
                "max_weight": rng.choice([2, 7, 13, 50, 100, 200]),
                "max_duration": rng.choice([1, 3, 20, 50, 100]),
                "max_phase_quantity": rng.choice([1, 2, 6, 8, 10]),
                "seed": rng.randint(1, 10 ** 6)}
    v = rng.choice([2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40])
    if rng.random() < 0.5:                        # sparse
        e = max(1, v - 1 + rng.randint(0, 2))
    else:                                          # dense
        e = rng.randint(v, 3 * v)
    return {"min_vertices_count": v, "max_vertices_count": v,
            "min_edges_count": e, "max_edges_count": e,
            "max_weight": rng.choice([1, 2, 3, 5, 10, 10, 20, 30, 50]),
            "max_duration": rng.choice([1, 2, 5, 10, 20]),
            "max_phase_quantity": 1 if rng.random() < 0.35 else rng.randint(2, 5),
            "seed": rng.randint(1, 10 ** 6)}


def generate(kiter: Path, settings: dict, path: Path) -> str | None:
    """Kiter's graph of ``settings`` written to ``path``; else why not (Kiter searches
    a live marking, which can take long)."""
    argv = [kiter]
    for key, value in settings.items():
        argv += ["-p", f"{key}={value}"]
    rc, out, err, _ = run(argv + ["-g", "GenerateRandomSDF", "-a", "PrintXML"], 5)
    if rc is None:
        return "timeout"
    if rc or "</sdf3>" not in out:
        return (err.strip().splitlines() or [f"exit {rc}"])[-1][:120]
    path.write_text(out[:out.rindex("</sdf3>") + 7] + "\n")
    return None


# Variants, by regular expressions on Kiter's own layout of the file.

CHANNEL = re.compile(r'<channel name="([^"]*)" srcActor="([^"]*)" srcPort="([^"]*)" '
                     r'dstActor="([^"]*)" dstPort="([^"]*)"[^>]*?/>')


def variants(text: str, rng: random.Random) -> dict[str, str]:
    found = {}
    loops = [m for m in CHANNEL.finditer(text) if m.group(2) == m.group(4)]
    others = [m for m in CHANNEL.finditer(text) if m.group(2) != m.group(4)]

    def without_tokens(m):
        return re.sub(r' initialTokens="\d+"', "", m.group(0))
    dead = text
    for m in reversed(others):
        dead = dead[:m.start()] + without_tokens(m) + dead[m.end():]
    if dead != text:
        found["dead"] = dead
    marked = [m for m in others if 'initialTokens="' in m.group(0)]
    if marked:
        m = rng.choice(marked)
        n = int(re.search(r'initialTokens="(\d+)"', m.group(0)).group(1))
        found["less"] = text[:m.start()] + m.group(0).replace(
            f'initialTokens="{n}"', f'initialTokens="{n - 1}"') + text[m.end():]
    if others:
        m = rng.choice(others)
        actor, port = (m.group(2), m.group(3)) if rng.random() < 0.5 else \
            (m.group(4), m.group(5))
        block = re.search(rf'<actor name="{re.escape(actor)}"[\s\S]*?</actor>', text)
        p = re.search(rf'<port name="{re.escape(port)}" type="\w+" rate="([^"]*)"',
                      block.group(0))
        init, _, periodic = p.group(1).rpartition(";")   # the periodic phases' rates
        rates = [int(r) for r in periodic.split(",")]
        i = rng.randrange(len(rates))
        rates[i] = rates[i] + 1 if rng.random() < 0.5 else 2 * rates[i]
        start = block.start() + p.start(1)
        found["rate"] = text[:start] + (init + ";" if init else "") + \
            ",".join(map(str, rates)) + text[block.start() + p.end(1):]
    if loops:
        cut = text
        for m in reversed(loops):
            cut = cut[:m.start()] + cut[m.end():]
        for m in loops:
            cut = re.sub(rf'\s*<port name="(?:{re.escape(m.group(3))}|'
                         rf'{re.escape(m.group(5))})" type="\w+" rate="[^"]*"/>', "", cut)
        found["reent"] = cut
        m = rng.choice(loops)
        found["zero"] = text[:m.start()] + without_tokens(m) + text[m.end():]
    return found


def several_tokens(text: str, rng: random.Random) -> str | None:
    """``text`` with every self-loop holding 2-4 times its tokens, so that as many
    firings of its actor may run at once (``loops``; None without self-loops)."""
    loops = [m for m in CHANNEL.finditer(text) if m.group(2) == m.group(4)]
    for m in reversed(loops):
        k = rng.randint(2, 4)
        channel = re.sub(r'initialTokens="(\d+)"',
                         lambda t: f'initialTokens="{k * int(t.group(1))}"', m.group(0))
        text = text[:m.start()] + channel + text[m.end():]
    return text if loops else None


def _rates(rng: random.Random, phases: tuple[int, int]) -> str:
    """Random rates for an actor of ``phases`` (initialisation, periodic) phases, the
    periodic ones summing to at least 1."""
    init, periodic = phases
    values = [rng.randint(0, 3) for _ in range(periodic)]
    values[rng.randrange(periodic)] = rng.randint(1, 3)
    text = ",".join(map(str, values))
    return ",".join(str(rng.randint(0, 2)) for _ in range(init)) + ";" + text \
        if init else text


def _phase_counts(root) -> dict[str, tuple[int, int]]:
    """Per actor, (initialisation, periodic) phases, read off its first port's rate."""
    found = {}
    for actor in root.iter("actor"):
        port = actor.find("port")
        first, _, periodic = (port.get("rate") if port is not None else "1").rpartition(";")
        found[actor.get("name")] = (len(first.split(",")) if first else 0,
                                    len(periodic.split(",")))
    return found


def joined(first: str, second: str, rng: random.Random) -> str:
    """One graph of ``first`` and ``second`` (its names prefixed ``B_``) joined by a
    chain of 1-3 new single-phase actors, each with a self-loop of 1-2 tokens: an
    actor of the first drives the chain, whose last actor drives one of the second
    (``joined``: several strongly connected components in a row).  A chain closes no
    cycle, so the rates keep the graph consistent."""
    a_root, b_root = ET.fromstring(first), ET.fromstring(second)
    for el in b_root.iter():
        for key in ("name", "srcActor", "dstActor", "actor", "channel"):
            if el.tag != "applicationGraph" and el.tag != "csdf" and el.get(key) \
                    and not (el.tag == "port" and key == "name"):
                el.set(key, "B_" + el.get(key))
    graph_a, graph_b = a_root.find(".//csdf"), b_root.find(".//csdf")
    props_a, props_b = a_root.find(".//csdfProperties"), b_root.find(".//csdfProperties")
    phases = {**_phase_counts(a_root), **_phase_counts(b_root)}
    firsts, seconds = sorted(_phase_counts(a_root)), sorted(_phase_counts(b_root))
    for actor in graph_b.findall("actor"):
        graph_a.insert(len(graph_a.findall("actor")), actor)
    for channel in graph_b.findall("channel"):
        graph_a.append(channel)
    for child in list(props_b):
        props_a.append(child)
    chain = [f"Chain_{j}" for j in range(rng.randint(1, 3))]
    ends = [rng.choice(firsts), *chain, rng.choice(seconds)]
    for j, name in enumerate(chain):
        phases[name] = (0, 1)
        graph_a.insert(len(graph_a.findall("actor")), ET.Element("actor", {"name": name,
                                                                          "type": ""}))
        ap = ET.SubElement(props_a, "actorProperties", {"actor": name})
        proc = ET.SubElement(ap, "processor", {"type": "cluster_0", "default": "true"})
        ET.SubElement(proc, "executionTime", {"time": str(rng.randint(1, 20))})
    actors = {a.get("name"): a for a in graph_a.findall("actor")}
    for j, name in enumerate(chain):
        port = actors[name]
        ET.SubElement(port, "port", {"name": "loop_out", "type": "out", "rate": "1"})
        ET.SubElement(port, "port", {"name": "loop_in", "type": "in", "rate": "1"})
        ET.SubElement(graph_a, "channel", {
            "name": f"{name}_loop", "srcActor": name, "srcPort": "loop_out",
            "dstActor": name, "dstPort": "loop_in", "initialTokens": str(rng.randint(1, 2))})
    for j, (src, dst) in enumerate(zip(ends, ends[1:])):
        ET.SubElement(actors[src], "port", {"name": f"chain_out_{j}", "type": "out",
                                            "rate": _rates(rng, phases[src])})
        ET.SubElement(actors[dst], "port", {"name": f"chain_in_{j}", "type": "in",
                                            "rate": _rates(rng, phases[dst])})
        ET.SubElement(graph_a, "channel", {
            "name": f"chain_{j}", "srcActor": src, "srcPort": f"chain_out_{j}",
            "dstActor": dst, "dstPort": f"chain_in_{j}"})
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(a_root, "unicode") + "\n"


def components(text: str) -> list[set[str]]:
    """The actors of each connected component of the graph in ``text``."""
    root = ET.fromstring(text)
    parent = {a.get("name"): a.get("name") for a in root.iter("actor")}

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a
    for c in root.iter("channel"):
        parent[find(c.get("srcActor"))] = find(c.get("dstActor"))
    groups: dict[str, set[str]] = {}
    for a in parent:
        groups.setdefault(find(a), set()).add(a)
    return sorted(groups.values(), key=lambda g: sorted(g))


def component_file(text: str, actors: set[str]) -> str:
    """``text`` with only ``actors`` and their channels and properties."""
    root = ET.fromstring(text)
    kept = {c.get("name") for c in root.iter("channel") if c.get("srcActor") in actors}
    for holder in root.iter():
        for child in list(holder):
            if child.tag == "actor" and child.get("name") not in actors or \
                    child.tag == "channel" and child.get("srcActor") not in actors or \
                    child.tag == "actorProperties" and child.get("actor") not in actors or \
                    child.tag == "channelProperties" and child.get("channel") not in kept:
                holder.remove(child)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


# Kiter's answers.

def number(text: str):
    """Kiter's printed float as a Fraction, or ``"inf"``."""
    if text in ("inf", "-inf", "nan", "-nan"):
        return text.lstrip("-")
    return Fraction(text)


def kiter_facts(kiter: Path, path: Path, timeout: float, lone: bool) -> dict:
    facts = {}
    for algo, pattern, key in (
            ("KPeriodicThroughput", r"^KPeriodic Period is\s+(\S+)", "period"),
            ("SymbExec", r"^Symbolic Execution Throughput is\s+(\S+)", "symb"),
            ("1PeriodicThroughput", r"^1Periodic throughput is\s+(\S+)", "one")):
        if key == "symb" and lone:
            continue            # Kiter's symbolic execution does not end on a lone actor
        rc, out, err, s = run([kiter, "-f", path, "-a", algo],
                              min(timeout, 5) if key == "symb" else timeout)
        facts[f"{key}_seconds"] = round(s, 4)
        m = re.search(pattern, out, re.M)
        if rc is None:
            facts[key] = "timeout"
        elif m:
            facts[key] = str(number(m.group(1)))
        else:
            facts[key] = "failed"
            facts[f"{key}_message"] = ((err or out).strip().splitlines() or
                                       [f"exit {rc}"])[-1][:160]
        if algo == "KPeriodicThroughput" and "UNKNOWN HOWARD ERROR" in out + err:
            facts["howard_error"] = True
    return facts


# mapeval: one process over many files, its lines read as they come.

def streamed(argv: list, files: list[Path], timeout: float) -> dict[str, dict]:
    """``argv`` (a ``--json-lines`` command) over ``files``: per file name its JSON line
    with ``seconds`` (since the line before), or ``{"timeout": ...}``; a process that
    stops early is started again after the last file it answered.  ``_processes``
    lists each process's exit status, wall seconds and whether stderr held a
    traceback."""
    found: dict[str, dict] = {}
    processes = []
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg"}
    rest = list(files)
    while rest:
        start = last = time.monotonic()
        proc = subprocess.Popen([*map(str, argv), *map(str, rest)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env,
                                start_new_session=True)
        lines: queue.Queue = queue.Queue()
        errors: list[str] = []
        threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout] + [
            lines.put(None)], daemon=True).start()
        threading.Thread(target=lambda: errors.append(proc.stderr.read()),
                         daemon=True).start()
        answered = 0
        stuck = False
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                stuck = True
                break
            if line is None:
                break
            now = time.monotonic()
            doc = json.loads(line)
            doc["seconds"] = round(now - last, 4)
            last = now
            found[Path(doc["file"]).name] = doc
            answered += 1
        if stuck:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        time.sleep(0.1)
        err = "".join(errors)
        processes.append({"exit": proc.returncode, "files": answered,
                          "seconds": round(time.monotonic() - start, 2),
                          "traceback": "Traceback" in err,
                          "stderr": err[-300:] if "Traceback" in err else ""})
        rest = rest[answered:]
        if stuck and rest:
            found[rest[0].name] = {"timeout": timeout}
            rest = rest[1:]
        elif not stuck and rest:
            # the process ended without answering every file: record and go on
            found[rest[0].name] = {"died": proc.returncode}
            rest = rest[1:]
    found["_processes"] = processes
    return found


def answer(doc: dict | None):
    """(period as a Fraction, or an error message) of one ``analyse`` line."""
    if doc is None:
        return None, "missing"
    if "error" in doc:
        return None, doc["error"]["message"]
    if "timeout" in doc or "died" in doc:
        return None, "timeout" if "timeout" in doc else "died"
    period = doc.get("exact", {}).get("period")
    return (None if period is None else Fraction(period)), None


def close(a, b, rel=Fraction(1, 10 ** 6)) -> bool:
    """Kiter prints six decimals."""
    return abs(a - b) <= rel * max(abs(a), abs(b), 1)


def verdict(rec: dict) -> str:
    """One word for how Kiter and mapeval compare on ``rec``."""
    k, m = rec["kiter"], rec["mapeval"]
    if m.get("crash"):
        return "mapeval-crash"
    if m.get("timeout"):
        return "mapeval-timeout"
    period, error = m["starts"], m.get("starts_error")
    kp = k.get("period")
    if kp in ("timeout",):
        return "kiter-timeout"
    if error and "inconsistent" in error:
        return "agree-inconsistent" if kp == "failed" else "differ-consistency"
    if kp == "failed":
        return "kiter-failed"
    if m.get("deadlock"):
        return "agree-deadlock" if kp == "inf" else "differ-deadlock"
    if error:
        return "mapeval-refused"
    if kp == "inf":
        return "differ-deadlock"
    if rec.get("components", 1) > 1:
        # Kiter's iteration of a disconnected graph is not the smallest: compared
        # component by component
        return "disconnected"
    if rec["actors"] == 1 and not close(period, Fraction(kp)):
        return "kiter-lone-actor"
    if period == 0 or Fraction(kp) == 0:       # an unbounded throughput
        return "agree-unbounded" if period == Fraction(kp) else "differ-period"
    return "agree" if close(period, Fraction(kp)) else "differ-period"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kiter", type=Path)
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--kiter-timeout", type=float, default=30)
    parser.add_argument("--wide", action="store_true", help="wider settings: 2-10 "
                        "phases, weights up to 200, durations up to 100, 60 actors")
    parser.add_argument("--shapes", action="store_true", help="also the variants "
                        "'loops' (self-loops with 2-4 times their tokens) and 'joined' "
                        "(the graph and the one drawn before it joined by a chain)")
    parser.add_argument("--init", type=int, default=0, help="up to this many "
                        "initialisation phases per actor (Kiter's generator)")
    args = parser.parse_args(argv)
    if not args.kiter.is_file():
        print(f"Kiter's program is absent ({args.kiter}): build github.com/bbodin/kiter "
              "with 'make release' and give its Release/bin/kiter")
        return 0
    rng = random.Random(args.seed)
    args.outdir.mkdir(parents=True, exist_ok=True)
    graphs, skipped = [], {}
    previous = None
    for i in range(args.count):
        settings = draw(rng, args.wide)
        if args.init:
            settings["max_init_phase_quantity"] = rng.randint(0, args.init)
        path = args.outdir / f"k{i:04d}.xml"
        why = generate(args.kiter, settings, path)
        if why:
            skipped[why] = skipped.get(why, 0) + 1
            continue
        text = path.read_text()
        graphs.append({"file": path.name, "origin": "generated", "settings": settings})
        parts = components(text)
        if len(parts) > 1:
            graphs[-1]["components"] = len(parts)
            for j, actors in enumerate(parts):
                extra = args.outdir / f"k{i:04d}-c{j}.xml"
                extra.write_text(component_file(text, actors))
                graphs.append({"file": extra.name, "origin": "component",
                               "settings": settings})
        more = {}
        if args.shapes:
            more["loops"] = several_tokens(text, rng)
            if previous is not None:
                more["joined"] = joined(text, previous, rng)
                more["joined-loops"] = several_tokens(more["joined"], rng)
            previous = text
            for name, variant in more.items():
                if variant is not None and rng.random() < 0.7:
                    extra = args.outdir / f"k{i:04d}-{name}.xml"
                    extra.write_text(variant)
                    rec = {"file": extra.name, "origin": name, "settings": settings}
                    if len(components(variant)) > 1:
                        rec["components"] = len(components(variant))
                    graphs.append(rec)
        if rng.random() < 0.6:
            for name, variant in variants(text, rng).items():
                if rng.random() < 0.5:
                    extra = args.outdir / f"k{i:04d}-{name}.xml"
                    extra.write_text(variant)
                    rec = {"file": extra.name, "origin": name, "settings": settings}
                    if len(parts) > 1:           # none of them joins components
                        rec["components"] = len(parts)
                    graphs.append(rec)
    print(f"{len(graphs)} files ({args.count} draws; not made: {skipped})", flush=True)
    for rec in graphs:
        rec["actors"] = (args.outdir / rec["file"]).read_text().count("<actor ")
        rec["kiter"] = kiter_facts(args.kiter, args.outdir / rec["file"],
                                   args.kiter_timeout, rec["actors"] == 1)
    files = [args.outdir / rec["file"] for rec in graphs]
    runs = {"ends": streamed(MAPEVAL + ["analyse", "--json-lines"], files, args.timeout),
            "starts": streamed(MAPEVAL + ["analyse", "--json-lines", "--csdf-order",
                                          "starts"], files, args.timeout),
            "check": streamed(MAPEVAL + ["check", "--json-lines"], files, args.timeout)}
    results = []
    with open(args.outdir / "results.jsonl", "w") as log:
        for rec in graphs:
            m = rec["mapeval"] = {}
            # a process that ended without a line for this file (not one we stopped)
            m["crash"] = any("died" in (runs[x].get(rec["file"]) or {}) for x in runs)
            for order in ("ends", "starts"):
                doc = runs[order].get(rec["file"])
                m[order], error = answer(doc)
                if error:
                    m[f"{order}_error"] = error
                m[f"{order}_seconds"] = (doc or {}).get("seconds")
                m["timeout"] = m.get("timeout") or error == "timeout"
                if doc and "schedule" in doc:
                    m[f"{order}_firings"] = sum(len(v) for v in
                                                (doc["schedule"] or {}).values())
            doc = runs["check"].get(rec["file"]) or {}
            m["deadlock"] = doc.get("deadlock")
            m["repetitions"] = sum((doc.get("repetitions") or {}).values()) or None
            m["check_error"] = (doc.get("error") or {}).get("message")
            m["check_seconds"] = doc.get("seconds")
            m["timeout"] |= "timeout" in doc
            for key in ("ends", "starts"):
                if m[key] is not None and not isinstance(m[key], str):
                    m[key] = str(m[key])
            rec["mapeval"]["ends_differs"] = m["ends"] != m["starts"]
            m["starts"] = None if m["starts"] is None else Fraction(m["starts"])
            rec["verdict"] = verdict(rec)
            m["starts"] = None if m["starts"] is None else str(m["starts"])
            one = rec["kiter"].get("one")
            if one not in (None, "failed", "timeout", "inf") and m["starts"] not in (
                    None, "0") and Fraction(one) > 0:
                # a 1-periodic schedule is one schedule: its throughput is at most ours
                rec["one_periodic_below"] = Fraction(one) <= \
                    (1 + Fraction(1, 10 ** 6)) / Fraction(m["starts"])
            results.append(rec)
            log.write(json.dumps(rec, default=str) + "\n")
    summary = {"draws": args.count, "not_made": skipped, "files": len(results),
               "verdicts": {}, "by_origin": {}}
    for rec in results:
        summary["verdicts"][rec["verdict"]] = summary["verdicts"].get(rec["verdict"], 0) + 1
        key = f"{rec['origin']}:{rec['verdict']}"
        summary["by_origin"][key] = summary["by_origin"].get(key, 0) + 1
    summary["ends_differs_from_starts"] = sorted(
        r["file"] for r in results if r["mapeval"]["ends_differs"])
    summary["one_periodic_above"] = sorted(r["file"] for r in results
                                           if r.get("one_periodic_below") is False)
    summary["processes"] = {k: v["_processes"] for k, v in runs.items()}
    slow = []
    for r in results:
        for key in ("ends_seconds", "starts_seconds", "check_seconds"):
            if (r["mapeval"].get(key) or 0) > 10:
                slow.append([r["file"], key, r["mapeval"][key],
                             r["mapeval"].get("repetitions")])
    summary["over_10_s"] = slow
    for key in ("ends_seconds", "starts_seconds", "check_seconds"):
        times = sorted(r["mapeval"][key] for r in results if r["mapeval"].get(key))
        if times:
            summary[f"mapeval_{key}"] = {"median": times[len(times) // 2],
                                         "max": times[-1], "total": round(sum(times), 1)}
    times = sorted(r["kiter"]["period_seconds"] for r in results)
    summary["kiter_period_seconds"] = {"median": times[len(times) // 2], "max": times[-1],
                                       "total": round(sum(times), 1)}
    summary["differ"] = [[r["file"], r["verdict"], r["kiter"].get("period"),
                          r["mapeval"]["starts"], r["mapeval"].get("starts_error")]
                         for r in results if r["verdict"].startswith(("differ", "mapeval",
                                                                      "kiter"))]
    print(json.dumps(summary, indent=1, default=str))
    (args.outdir / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
