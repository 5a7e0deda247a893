"""Fuzzer of the text formats through the command line.

    python tests/fuzz/fuzz.py --format sdf|moa|map --count N --seed S [--quick] [--jobs J]

Inputs are mutations of valid files (the examples and the snippets of the SPEC) and
files generated at random from the grammar.  Each runs through ``mapping.cli.main``
in-process (``check FILE``, or ``eval APP ARCH MAP`` with the input in place of one of
an example's files), in a pool of worker processes, with its output captured and a time
budget.  Each run falls in one class:

- ``ok``: exit 0;
- ``bad input``: exit 2 with a ``FILE:LINE:COL: error:`` diagnostic;
- ``unpositioned``: exit 2 without a position;
- ``exit 1``: an internal error;
- ``timeout``: longer than the budget (5 s);
- ``wrong line``: the input has an error injected at a known line, and the diagnostic
  names another line (or none);
- ``missed``: the input has an error injected and the run succeeds.

It prints one JSON document: the count of each class and, for the bad classes (exit 1,
timeout, wrong line, missed), a few example inputs with their diagnostics.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing
import os
import random
import re
import signal
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORMATS = ("sdf", "moa", "map")
BAD_CLASSES = ("exit 1", "timeout", "wrong line", "missed")
CLASSES = ("ok", "bad input", "unpositioned") + BAD_CLASSES
BUDGET = 5  # seconds per input

#: example triples (application, architecture, mappings), relative to the repository
TRIPLES = [
    ("tests/data/chain.sdf", "tests/data/chain.moa", "tests/data/chain.map"),
    ("examples/gables/snapdragon835.sdf", "examples/gables/snapdragon835.moa",
     "examples/gables/snapdragon835.map"),
    ("examples/gables/two_ip.sdf", "examples/gables/two_ip.moa", "examples/gables/two_ip.map"),
    ("examples/odroid/stereo.sdf", "examples/odroid/odroid.moa", "examples/odroid/mappings.map"),
    ("examples/gsla/opencl.sdf", "examples/gsla/gpu.moa", "examples/gsla/mappings.map"),
    ("examples/logca/aes.sdf", "examples/logca/aes_offload.moa", "examples/logca/aes.map"),
    ("examples/accelerator_store/decoder.sdf", "examples/accelerator_store/private.moa",
     "examples/accelerator_store/mappings.map"),
]

#: the examples of the SPEC (sections 3, 4 and 6), as seeds: those of the dsl tests, and a
#: mapping with a fixed route
sys.path.insert(0, str(ROOT / "tests" / "dsl"))
from test_dsl_moa import SPEC_MOA  # noqa: E402
from test_dsl_sdf import SPEC_SDF  # noqa: E402

SNIPPETS = {
    "sdf": [SPEC_SDF],
    "moa": [SPEC_MOA],
    "map": ["""\
mapping gpu_offload {
    io -> big[0]
    kernel -> gpu
    channel back2 via cci
}
mapping all_big { io -> big[0]; kernel -> big[1] }
"""],
}

# ---------------------------------------------------------------------------------------
# Generation


def _name(rng, prefix):
    return f"{prefix}{rng.randrange(1000)}"


def _number(rng):
    return rng.choice(["0", "1", "2", "3", "8", "0.5", "1e-9", "2.5e3", "0x10", "1_000", "7"])


def _expr(rng, names, depth=0):
    """A random expression over ``names`` (parameters)."""
    roll = rng.random()
    if depth > 2 or roll < 0.4:
        return rng.choice(names) if names and rng.random() < 0.5 else _number(rng)
    if roll < 0.75:
        op = rng.choice(["+", "-", "*", "/", "**"])
        return f"{_expr(rng, names, depth + 1)} {op} {_expr(rng, names, depth + 1)}"
    if roll < 0.85:
        return f"-{_expr(rng, names, depth + 1)}"
    if roll < 0.93:
        return f"({_expr(rng, names, depth + 1)})"
    func = rng.choice(["min", "max", "abs", "sqrt", "ceil", "floor", "exp", "log"])
    args = [_expr(rng, names, depth + 1) for _ in range(2 if func in ("min", "max") else 1)]
    return f"{func}({', '.join(args)})"


def generate(fmt: str, rng: random.Random) -> str:
    """A random file of format ``fmt``, mostly valid."""
    if fmt == "sdf":
        params = [_name(rng, "p") for _ in range(rng.randrange(3))]
        params = list(dict.fromkeys(params))
        lines = [f"sdf {_name(rng, 'g')} {{"]
        lines += [f"    param {p} = {_number(rng)}" for p in params]
        actors = list(dict.fromkeys(_name(rng, "a") for _ in range(rng.randrange(1, 6))))
        for a in actors:
            attrs = [f"quanta = {_expr(rng, params)}"] if rng.random() < 0.8 else []
            if rng.random() < 0.5:
                attrs.append(f"{rng.choice(['ops', 'S', 'gamma', 'bytes'])} = "
                             f"{_expr(rng, params)}")
            lines.append(f"    actor {a}" + (f" [{', '.join(attrs)}]" if attrs else ""))
        for i in range(rng.randrange(len(actors) + 1)):
            src, dst = rng.choice(actors), rng.choice(actors)
            attrs = [f"prod = {rng.randrange(1, 4)}", f"cons = {rng.randrange(1, 4)}"]
            if src == dst or rng.random() < 0.3:
                attrs.append(f"delay = {rng.randrange(0, 5)}")
            if rng.random() < 0.5:
                attrs.append(f"size = {_expr(rng, params)}")
            lines.append(f"    channel c{i} : {src} -> {dst} [{', '.join(attrs)}]")
        return "\n".join(lines) + "\n}\n"
    if fmt == "moa":
        params = list(dict.fromkeys(_name(rng, "p") for _ in range(rng.randrange(3))))
        lines = [f"moa {_name(rng, 'm')} {{"]
        lines += [f"    param {p} = {_number(rng)}" for p in params]
        if rng.random() < 0.3:
            lines.append(f"    lambda = {_expr(rng, params)}")
        if rng.random() < 0.3:
            lines.append(f"    aggregate = {rng.choice(['sum', 'max', 'exclusive', 'avg'])}")

        def model():
            kind = rng.choice(["lsla", "gsla", "bandwidth", "roofline", "gsla_power"])
            if kind == "lsla" and rng.random() < 0.5:
                return f"lsla({_expr(rng, params)}, {_expr(rng, params)})"
            if kind == "bandwidth":
                return f"bandwidth({_expr(rng, params)})"
            if kind == "roofline":
                return f"roofline(peak = {_expr(rng, params)}, bandwidth = inf)"
            if kind == "gsla_power":
                return f"gsla_power(a = {_expr(rng, params)})"
            return f"{kind}(alpha = {_expr(rng, params)}, beta = {_number(rng)})"

        types = list(dict.fromkeys(_name(rng, "T") for _ in range(rng.randrange(3))))
        for t in types:
            lines.append(f"    type {t} [time = {model()}]")
        pes, cns = [], []
        for _ in range(rng.randrange(1, 5)):
            name = _name(rng, "pe")
            if rng.random() < 0.3:
                lo = rng.randrange(3)
                hi = lo + rng.randrange(4)
                decl = f"{name}[{lo}..{hi}]"
                pes.append(f"{name}[*]")
            else:
                decl = name
                pes.append(name)
            typ = f" : {rng.choice(types)}" if types and rng.random() < 0.5 else ""
            attrs = f" [time = {model()}]" if rng.random() < 0.6 else ""
            lines.append(f"    pe {decl}{typ}{attrs}")
        for _ in range(rng.randrange(1, 3)):
            name = _name(rng, "cn")
            cns.append(name)
            lines.append(f"    cn {name} [time = {model()}]")
        for pe in pes:
            lines.append(f"    {pe} -- {rng.choice(cns)}")
        for a, b in zip(cns, cns[1:]):
            lines.append(f"    {a} -- {b}")
        return "\n".join(dict.fromkeys(lines)) + "\n}\n"
    blocks = []
    for _ in range(rng.randrange(1, 3)):
        lines = [f"mapping {_name(rng, 'm')} {{"]
        for actor in dict.fromkeys(_name(rng, "a") for _ in range(rng.randrange(1, 5))):
            pe = _name(rng, "pe")
            if rng.random() < 0.3:
                pe += f"[{rng.randrange(4)}]"
            lines.append(f"    {actor} -> {pe}")
        if rng.random() < 0.3:
            lines.append(f"    channel {_name(rng, 'c')} via {_name(rng, 'cn')}")
        blocks.append("\n".join(lines) + "\n}\n")
    return "".join(dict.fromkeys(blocks))


# ---------------------------------------------------------------------------------------
# Mutation

_TOKENS = ["[", "]", "(", ")", "{", "}", ",", ";", "=", "->", "--", "..", ":", "*", "-", "+",
           "**", "/", '"', "#", "\n", "\\", "0", "1e400", "nan", "inf", "actor", "pe", "cn",
           "param", "type", "mapping", "channel", "via", "lambda", "aggregate", "é", "\t",
           "\x00", "[*]", "[0..3]", "x", "quanta"]
_WEIRD_NUMBERS = ["0", "-1", "1e308", "1e400", "1e-320", "inf", "-inf", "inf - inf",
                  "0 * inf", "9223372036854775807", "1" + "0" * 30, "1.5", "0x7f", "1_0",
                  "(1 - 0.8 - 0.2)", "1e-300 * 1e-300", "2 ** 2000", "2 ** 0.5", "-0"]
_NUMBER = re.compile(r"(?<![\w.])\d+(\.\d+)?([eE][-+]?\d+)?(?![\w.])")
_IDENT = re.compile(r"[A-Za-z_]\w*")


def mutate(text: str, rng: random.Random, quick: bool) -> str:
    """``text`` with one to three random edits."""
    for _ in range(rng.choice((1, 1, 2, 3))):
        lines = text.split("\n")
        kind = rng.randrange(11)
        if kind == 0 and text:                          # delete a span
            i = rng.randrange(len(text))
            text = text[:i] + text[i + rng.randrange(1, 4):]
        elif kind == 1:                                 # insert a token
            i = rng.randrange(len(text) + 1)
            text = text[:i] + rng.choice(_TOKENS) + text[i:]
        elif kind == 2 and lines:                       # duplicate a line
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
            text = "\n".join(lines)
        elif kind == 3 and lines:                       # delete a line
            del lines[rng.randrange(len(lines))]
            text = "\n".join(lines)
        elif kind == 4 and len(lines) > 1:              # swap two lines
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        elif kind == 5:                                 # a weird number
            matches = list(_NUMBER.finditer(text))
            if matches:
                m = rng.choice(matches)
                text = text[:m.start()] + rng.choice(_WEIRD_NUMBERS) + text[m.end():]
        elif kind == 6:                                 # one name for another
            names = list(_IDENT.finditer(text))
            if names:
                m = rng.choice(names)
                text = text[:m.start()] + rng.choice(names).group() + text[m.end():]
        elif kind == 7:                                 # a deep expression
            matches = list(_NUMBER.finditer(text))
            if matches:
                m = rng.choice(matches)
                n = rng.randrange(10, 50 if quick else 3000)
                deep = rng.choice([" + ".join(["1"] * n), "-" * n + "1", "- " * n + "1",
                                   "(" * n + "1" + ")" * n, "1 * (" * n + "1" + ")" * n])
                text = text[:m.start()] + deep + text[m.end():]
        elif kind == 8:                                 # a large array
            big = rng.choice(["0..3", "0..99999", "0..100000", "5..2", "0..1" + "0" * 30,
                              "0..1000000"])
            text = re.sub(r"\d+\.\.\d+", big, text, count=1) if ".." in text else \
                text.replace("pe ", f"pe big[{big}] ", 1)
        elif kind == 9:                                 # split attribute lists
            text = reflow(text, rng)
        elif kind == 10 and text:                       # truncate
            text = text[:rng.randrange(len(text))]
    return text


def reflow(text: str, rng: random.Random) -> str:
    """``text`` with some attribute and argument lists split over several lines after
    their commas (as the README allows)."""
    out, depth = [], 0
    for line in text.split("\n"):
        pieces, in_comment = [], False
        for ch in line:
            pieces.append(ch)
            if ch == "#":
                in_comment = True
            if in_comment:
                continue
            if ch in "[(":
                depth += 1
            elif ch in ")]":
                depth = max(0, depth - 1)
            elif ch == "," and depth > 0 and rng.random() < 0.5:
                pieces.append("\n" + " " * rng.randrange(1, 12) + ("\n" if rng.random() < 0.2
                                                                   else ""))
        out.append("".join(pieces))
    return "\n".join(out)


def _statement_lines(text: str) -> list[int]:
    """1-based line numbers before which a new statement may be inserted: inside a block
    (one ``{`` deep) and outside brackets, parentheses and strings."""
    ok, braces, depth = [], 0, 0
    for number, line in enumerate(text.split("\n"), 1):
        if braces == 1 and depth == 0 and number > 1:
            ok.append(number)
        in_string = False
        for ch in line:
            if ch == '"':
                in_string = not in_string
            if in_string:
                continue
            if ch == "#":
                break
            if ch == "{":
                braces += 1
            elif ch == "}":
                braces -= 1
            elif ch in "[(":
                depth += 1
            elif ch in ")]":
                depth = max(0, depth - 1)
    return ok


_INJECTED = {
    "sdf": ["actor zz_injected [quanta = zz_undefined]", "actor zz_injected [prod = ]",
            "zz_a -> zz_b", "param zz_p = 1 +", "actor zz_injected [quanta = 1 / 0]"],
    "moa": ["pe zz_injected [x = zz_undefined]", "pe zz_injected : zz_no_type",
            "zz_unknown -- zz_other", "pe zz_injected [time = lsla(1, alpha = 2)]",
            "pe zz_injected [time = bandwdith(1)]", "pe zz_injected[0..1" + "0" * 30 + "]"],
    "map": ["zz_actor -> zz_pe[x]", "channel -> zz", "zz_actor ->"],
}


def inject(text: str, fmt: str, rng: random.Random) -> tuple[str, int] | None:
    """``text`` with an error at a known line: ``(text, line)``, or ``None``."""
    if rng.random() < 0.5:
        text = reflow(text, rng)
    lines = text.split("\n")
    candidates = _statement_lines(text)
    if candidates and rng.random() < 0.7:
        k = rng.choice(candidates)
        statement = rng.choice(_INJECTED[fmt])
    else:
        k = rng.randrange(1, len(lines) + 1)
        statement = "  $ stray"
    lines.insert(k - 1, statement)
    return "\n".join(lines), k


# ---------------------------------------------------------------------------------------
# Running


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


_POSITION = re.compile(r"^(?P<file>[^\n:]+):(?P<line>\d+):(?P<col>\d+): error:", re.M)


def run_case(case: dict) -> dict:
    """Run one input; ``case`` holds ``text``, ``fmt``, ``argv`` (with ``{}`` where the
    input file goes) and ``line`` (the injected error's line, or ``None``)."""
    from mapping.cli import main
    workdir = tempfile.mkdtemp(prefix="mapeval-fuzz-")
    path = os.path.join(workdir, f"input.{case['fmt']}")
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write(case["text"])
    argv = [path if a == "{}" else a for a in case["argv"]]
    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(BUDGET)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as exc:
                rc = exc.code if isinstance(exc.code, int) else 2
        signal.alarm(0)
    except _Timeout:
        rc = "timeout"
    except BaseException:   # an escape past main() is an internal error too
        signal.alarm(0)
        rc = 1
        err.write(traceback.format_exc())
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    stderr = err.getvalue()
    if rc == 1 and "--debug" not in argv:
        # the traceback, for the report
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(BUDGET)
        try:
            err2 = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err2):
                try:
                    main(["--debug"] + argv)
                except BaseException:
                    err2.write(traceback.format_exc())
            stderr += "\n" + err2.getvalue()[-3000:]
        except _Timeout:
            pass
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
    for name in os.listdir(workdir):
        os.unlink(os.path.join(workdir, name))
    os.rmdir(workdir)
    return {"class": classify(rc, stderr, case.get("line"), path), "rc": rc,
            "stderr": stderr.replace(path, "INPUT")[:4000]}


def classify(rc, stderr: str, line: int | None, path: str) -> str:
    if rc == "timeout":
        return "timeout"
    if rc == 1 or rc not in (0, 2):
        return "exit 1"
    if line is not None:
        if rc == 0:
            return "missed"
        where = [m for m in _POSITION.finditer(stderr) if m.group("file") == path]
        if not where or int(where[0].group("line")) != line:
            return "wrong line"
        return "bad input"
    if rc == 0:
        return "ok"
    return "bad input" if _POSITION.search(stderr) else "unpositioned"


def _good_triples() -> list[tuple[str, str, str, str | None]]:
    """The example triples that evaluate cleanly, with a mapping name where needed."""
    import dsl
    out = []
    for triple in TRIPLES:
        paths = [str(ROOT / p) for p in triple]
        if not all(os.path.exists(p) for p in paths):
            continue
        try:
            names = [m.name for m in dsl.load_map(paths[2])]
        except Exception:
            continue
        out.append((*paths, names[0] if len(names) > 1 else None))
    return out


def seeds(fmt: str) -> list[str]:
    """The valid files of format ``fmt``: the examples and the SPEC's snippets."""
    files = sorted((ROOT / "examples").rglob(f"*.{fmt}")) + \
        sorted((ROOT / "tests" / "data").glob(f"*.{fmt}"))
    return [f.read_text(encoding="utf-8") for f in files] + SNIPPETS[fmt]


def make_cases(fmt: str, count: int, seed: int, quick: bool) -> list[dict]:
    rng = random.Random(seed)
    bases = seeds(fmt)
    triples = _good_triples()
    slot = FORMATS.index(fmt)
    cases = []
    for i in range(count):
        roll = rng.random()
        if roll < 0.2:
            text = generate(fmt, rng)
            if rng.random() < 0.5:
                text = mutate(text, rng, quick)
            line = None
        elif roll < 0.45:
            text, line = inject(rng.choice(bases), fmt, rng)
        else:
            text, line = mutate(rng.choice(bases), rng, quick), None
        if triples and rng.random() < 0.35:
            app, arch, maps, name = rng.choice(triples)
            files = [app, arch, maps]
            files[slot] = "{}"
            argv = ["eval", *files] + (["--mapping", name] if name else [])
        else:
            argv = ["check", "{}"]
        cases.append({"id": i, "fmt": fmt, "text": text, "argv": argv, "line": line})
    return cases


def _warm_up():
    """Import what the commands import on first use, so that the first input of a worker
    is not charged for it."""
    import mapping.cli
    for app, arch, maps, name in _good_triples()[:2]:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            mapping.cli.main(["eval", app, arch, maps] + (["--mapping", name] if name else []))


def _start_worker():
    _limit_memory()
    _warm_up()


def _limit_memory():
    try:
        import resource
        limit = 4 * 1024 ** 3
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass


def run(fmt: str, count: int, seed: int, quick: bool = False, jobs: int = 1,
        examples: int = 3) -> dict:
    """Fuzz ``count`` inputs of format ``fmt``; the summary as a dict."""
    cases = make_cases(fmt, count, seed, quick)
    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs, initializer=_start_worker,
                                                      maxtasksperchild=200) as pool:
            results = pool.map(run_case, cases, chunksize=8)
    else:
        _warm_up()
        results = [run_case(c) for c in cases]
    counts = dict.fromkeys(CLASSES, 0)
    shown: dict[str, list] = {}
    for case, result in zip(cases, results):
        cls = result["class"]
        counts[cls] += 1
        if cls in BAD_CLASSES + ("unpositioned",) and len(shown.setdefault(cls, [])) < examples:
            shown[cls].append({"argv": case["argv"], "injected_line": case["line"],
                               "input": case["text"][:1500], "stderr": result["stderr"]})
    return {"format": fmt, "count": count, "seed": seed, "quick": quick, "classes": counts,
            "examples": shown}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--format", choices=FORMATS, required=True)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true",
                        help="small deep expressions only (for the test suite)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--examples", type=int, default=3,
                        help="example inputs shown per bad class")
    args = parser.parse_args(argv)
    os.environ.setdefault("MPLBACKEND", "Agg")
    summary = run(args.format, args.count, args.seed, args.quick, args.jobs, args.examples)
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
