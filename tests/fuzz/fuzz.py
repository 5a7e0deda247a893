"""Fuzzer of the input formats and the options, through the command line.

    python tests/fuzz/fuzz.py --format FORMAT --count N --seed S [--quick] [--jobs J]
                              [--timeout SECONDS]

FORMAT is one of:

- ``sdf``, ``moa``, ``map``: mutations of valid files (the examples and the snippets of
  the SPEC), files generated at random from the grammar, and (``moa``) links between
  arrays that expand past the ``links`` limit; run as ``check FILE`` or ``eval APP ARCH
  MAP`` with the input in place of one of an example's files;
- ``csv``: mutations of the examples' measurement tables (a slice of their rows), run
  by the ``fidelity``, ``fit`` and ``logca --fit/--table`` commands the examples show;
- ``options``: a valid command with one option given a weird value (negative, zero,
  ``nan``, ``inf``, ``1e400``, text, empty, fractional where whole; small valid ones),
  for every option with a typed value of every command the examples use;
- ``sdf3``, ``onnx``, ``preesm``: mutations of SDF3 XML graphs (``import sdf3
  --processors ...``, ``check``), of ONNX models (``import onnx``) and of one file of a
  PREESM project (``import preesm``), see ``tests/fuzz/importers.py``;
- ``signals``: ``sweep -o out.csv`` or ``search -o best.map`` over an existing output,
  in a subprocess sent SIGTERM or SIGINT after a random delay.

Text inputs run through ``mapping.cli.main.main`` in-process, in a pool of worker processes,
with output captured and a time budget (``--timeout``, 5 s by default).  Each run falls
in one class:

- ``ok``: exit 0;
- ``bad input``: exit 2 with a ``FILE:LINE:COL: error:`` diagnostic;
- ``unpositioned``: exit 2 without a position;
- ``interrupted``: (signals) exit 130 or 143, the old output intact, nothing left behind;
- ``exit 1``: an internal error (any other status, too);
- ``traceback``: a Python traceback on stderr, whatever the status;
- ``timeout``: longer than the budget;
- ``wrong line``: the input has an error injected at a known line, and the diagnostic
  names another line (or none);
- ``missed``: the input has an error injected and the run succeeds;
- ``left behind``: (signals) a temporary file left, or the old output damaged.

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
import shutil
import signal
import subprocess
import sys
import time
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEXT_FORMATS = ("sdf", "moa", "map")
#: the importers' formats (cases made by tests/fuzz/importers.py)
IMPORT_FORMATS = ("sdf3", "onnx", "preesm")
FORMATS = TEXT_FORMATS + ("csv", "options", "signals") + IMPORT_FORMATS
BAD_CLASSES = ("exit 1", "traceback", "timeout", "wrong line", "missed", "left behind")
CLASSES = ("ok", "bad input", "unpositioned", "interrupted") + BAD_CLASSES
BUDGET = 5  # seconds per input (--timeout)

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


def edit_lines(text: str, kind: int, rng: random.Random, tokens: list[str], span: int,
               split, join) -> str | None:
    """Edit ``kind`` (0-4) of every format: delete a span (up to ``span - 1``
    characters), insert one of ``tokens``, duplicate, delete or swap lines (``split``
    into lines, ``join`` them back); ``None`` for another kind or one that does not
    apply."""
    lines = split(text)
    if kind == 0 and text:                              # delete a span
        i = rng.randrange(len(text))
        return text[:i] + text[i + rng.randrange(1, span):]
    if kind == 1:                                       # insert a token
        i = rng.randrange(len(text) + 1)
        return text[:i] + rng.choice(tokens) + text[i:]
    if kind == 2 and lines:                             # duplicate a line
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
        return join(lines)
    if kind == 3 and lines:                             # delete a line
        del lines[rng.randrange(len(lines))]
        return join(lines)
    if kind == 4 and len(lines) > 1:                    # swap two lines
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return join(lines)
    return None


def mutate(text: str, rng: random.Random, quick: bool) -> str:
    """``text`` with one to three random edits."""
    for _ in range(rng.choice((1, 1, 2, 3))):
        kind = rng.randrange(12)
        edited = edit_lines(text, kind, rng, _TOKENS, 4, lambda t: t.split("\n"),
                            "\n".join)
        if edited is not None:
            text = edited
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
        elif kind == 11 and "moa" in text:              # a link between two arrays
            text = blow_up_links(text, rng, quick)
    return text


def blow_up_links(text: str, rng: random.Random, quick: bool = False) -> str:
    """``text`` with two arrays and links between all their members added before the
    last ``}``: from a few links to 10^24 (past the ``array``, ``elements`` and ``links``
    limits); ``quick``: those within the limits at most 10^5 links (a million take
    about 1.5 s)."""
    sizes = ["3", "30", "3000", "999999", "1" + "0" * 12] if quick else \
        ["3", "999", "9999", "99999", "999999", "1" + "0" * 12]
    n, m = (rng.choice(sizes) for _ in range(2))
    more = "" if rng.random() < 0.5 else f"\n    zz_pe[*] -- zz_cn[0]"
    block = (f"\n    pe zz_pe[0..{n}] [time = lsla(alpha = 1)]\n    cn zz_cn[0..{m}]"
             f"\n    zz_pe[*] -- zz_cn[*]{more}\n")
    at = text.rfind("}")
    return text + block if at < 0 else text[:at] + block + text[at:]


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
    """Run one input; ``case`` holds ``text`` (or ``data``, bytes), ``fmt``, ``argv``
    (with ``{}`` where the input file goes, ``{dir}`` for the case's directory) and
    ``line`` (the injected error's line, or ``None``); with ``tree`` (a directory of the
    repository, copied into the case's directory) the input is its file ``name``."""
    from mapping.cli.main import main
    if case["fmt"] == "signals":
        return run_signal_case(case)
    workdir = tempfile.mkdtemp(prefix="mapeval-fuzz-")
    if case.get("tree"):        # a project: the input replaces one of its files
        shutil.copytree(ROOT / case["tree"], workdir, dirs_exist_ok=True)
        path = os.path.join(workdir, case["name"])
    else:
        path = os.path.join(workdir, f"input.{case.get('suffix', case['fmt'])}")
    if case.get("data") is not None:
        with open(path, "wb") as fh:
            fh.write(case["data"])
    elif case["text"] is not None:
        with open(path, "w", encoding="utf-8", errors="surrogatepass") as fh:
            fh.write(case["text"])
    argv = [path if a == "{}" else a.replace("{dir}", workdir) for a in case["argv"]]
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
    shutil.rmtree(workdir, ignore_errors=True)
    return {"class": classify(rc, stderr, case.get("line"), path), "rc": rc,
            "stderr": stderr.replace(path, "INPUT")[:4000]}


def classify(rc, stderr: str, line: int | None, path: str) -> str:
    if rc == "timeout":
        return "timeout"
    if rc == 1 or rc not in (0, 2):
        return "exit 1"
    if "Traceback (most recent call last)" in stderr:
        return "traceback"
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


# ---------------------------------------------------------------------------------------
# CSV tables: the examples' measurements, run by the commands their READMEs show

_GSLA, _BIG, _STREAM = "examples/gsla", "examples/calibration/biglittle", \
    "examples/calibration/streaming"
_F1 = ("q_src,q_deint,q_fir_l,q_fir_r,q_mix,q_eq,q_comp,q_sink,A15.time.alpha,"
       "l2_little.time.alpha,l2_big.time.alpha,cci.time.alpha")

#: (table, its measured column, the command with ``{}`` for the table, extra options
#: added to half the runs)
CSV_CONTEXTS = [
    (f"{_GSLA}/measurements.csv", "time_s",
     ["fidelity", f"{_GSLA}/opencl.sdf", f"{_GSLA}/gpu.moa", f"{_GSLA}/mappings.map", "{}",
      "--mapping", "gpu_offload", "--measured", "time_s"],
     ["--fit", "gpu.time.alpha,gpu.time.beta", "--starts", "1"]),
    (f"{_GSLA}/element_measurements.csv", "t_w",
     ["fit", f"{_GSLA}/opencl.sdf", f"{_GSLA}/gpu.moa", f"{_GSLA}/mappings.map", "{}",
      "--mapping", "gpu_offload", "--measured", "t_w", "--measured-element",
      "host=t_1,gpu=t_k,pcie=-", "--free", "host.time.alpha,host.time.beta,"
      "gpu.time.alpha,gpu.time.beta,pcie.time.alpha,pcie.time.beta"],
     ["--test-fraction", "0"]),
    (f"{_BIG}/measurements.csv", "energy_J",
     ["fidelity", f"{_BIG}/stereo.sdf", f"{_BIG}/lsla.moa", "{}", "--measured", "energy_J",
      "--actor-column", "t_{actor}", "--within", "workload", "--metric", "energy"],
     ["--fit", "A7.energy.alpha,A15.energy.alpha", "--starts", "1"]),
    (f"{_BIG}/measurements.csv", "energy_J",
     ["fit", f"{_BIG}/stereo.sdf", f"{_BIG}/static.moa", "{}", "--measured", "energy_J",
      "--actor-column", "t_{actor}", "--metric", "energy_total", "--free",
      "A7.energy.alpha,A15.energy.alpha,p_static", "--starts", "1"],
     ["--skip-bad-rows"]),
    (f"{_STREAM}/measurements.csv", "time_us",
     ["fidelity", f"{_STREAM}/audio.sdf", f"{_STREAM}/board_lsla.moa", "{}", "--measured",
      "time_us", "--actor-column", "t_{actor}"],
     ["--fit", _F1, "--starts", "0"]),
    ("examples/logca/t2_aes_measured.csv", "accelerator",
     ["logca", "--fit", "{}", "--interface-latency", "1500"], ["--latency", "independent"]),
    ("examples/logca/table5.csv", "A", ["logca", "--table", "{}"], ["--at", "4K"]),
    (f"{_GSLA}/element_measurements.csv", "t_w",
     ["fidelity", f"{_GSLA}/opencl.sdf", f"{_GSLA}/gpu.moa", f"{_GSLA}/mappings.map", "{}",
      "--mapping", "gpu_offload", "--measured", "t_w", "--measured-element",
      "host=t_1,gpu=t_k,pcie=-", "--fit", "host.time.alpha,gpu.time.alpha,pcie.time.beta",
      "--folds", "3"],
     ["--within", "S"]),
    (f"{_BIG}/measurements.csv", "energy_J",
     ["fidelity", f"{_BIG}/stereo.sdf", f"{_BIG}/lsla.moa", "{}", "--measured", "energy_J",
      "--actor-column", "t_{actor}", "--metric", "energy", "--fit",
      "A7.energy.alpha,A15.energy.alpha", "--starts", "0", "--residuals", "robust"],
     ["--residuals", "robust-relative"]),
]

_CSV_TOKENS = [",", '"', "\n", "\r\n", "#", ";", "\t", " ", "nan", "inf", "-inf", "-1", "0",
               "1e400", "1e-400", "x", "é", "\udcff", "\x00", "little[9]", "big[0]",
               "zz_unknown", "\ufeff", ",,,", '""', "1,2"]
_CSV_CELLS = ["", " ", "nan", "inf", "-inf", "-1", "0", "1e400", "1e-320", "x", "1,5",
              '"1"', "little[9]", "big[0]", "gpu_offload", "zz", "1_000", "0x10", "9" * 400]


def _csv_seed(path: Path, rng: random.Random) -> str:
    """The header (and comments before it) of the table at ``path`` and a random slice of
    8 to 40 of its rows: small enough for a fit to run in a fraction of a second."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    head = 0
    while head < len(lines) and lines[head].lstrip().startswith("#"):
        head += 1
    rows = lines[head + 1:]
    n = min(len(rows), rng.randrange(8, 41))
    start = rng.randrange(len(rows) - n + 1)
    return "".join(lines[:head + 1] + rows[start:start + n])


def _cells(line: str) -> list[str]:
    return line.rstrip("\r\n").split(",")


def mutate_csv(text: str, rng: random.Random) -> str:
    """``text`` with one to three random edits, generic and CSV-specific."""
    for _ in range(rng.choice((1, 1, 2, 3))):
        lines = text.splitlines(keepends=True)
        kind = rng.randrange(11)
        edited = edit_lines(text, kind, rng, _CSV_TOKENS, 6,
                            lambda t: t.splitlines(keepends=True), "".join)
        if edited is not None:
            text = edited
        elif kind in (5, 6) and lines:                  # a weird cell (header too)
            i = rng.randrange(len(lines))
            cells = _cells(lines[i])
            cells[rng.randrange(len(cells))] = rng.choice(_CSV_CELLS)
            lines[i] = ",".join(cells) + "\n"
            text = "".join(lines)
        elif kind == 7 and lines:                       # a cell more or less
            i = rng.randrange(len(lines))
            cells = _cells(lines[i])
            if rng.random() < 0.5 and len(cells) > 1:
                del cells[rng.randrange(len(cells))]
            else:
                cells.insert(rng.randrange(len(cells) + 1), rng.choice(_CSV_CELLS))
            lines[i] = ",".join(cells) + "\n"
            text = "".join(lines)
        elif kind == 8:                                 # line endings, BOM, delimiter
            text = rng.choice([text.replace("\n", "\r\n"), "\ufeff" + text,
                               text.replace(",", ";"), text.replace(",", "\t"),
                               text.replace("\n", "\r")])
        elif kind == 9 and text:                        # truncate
            text = text[:rng.randrange(len(text))]
        elif kind == 10 and 1 < len(lines) < 100:       # more rows (a few hundred)
            text = "".join(lines + lines[1:] * rng.randrange(1, 5))
    return text


def inject_csv(text: str, measured: str, rng: random.Random) -> tuple[str, int] | None:
    """``text`` with the measured cell of one data row made bad: ``(text, its line)``."""
    lines = text.splitlines(keepends=True)
    head = 0
    while head < len(lines) and lines[head].lstrip().startswith("#"):
        head += 1
    header = [c.strip() for c in _cells(lines[head])]
    if measured not in header or head + 1 >= len(lines):
        return None
    k = rng.randrange(head + 1, len(lines))
    cells = _cells(lines[k])
    column = header.index(measured)
    if column >= len(cells):
        return None
    cells[column] = rng.choice(["zz", "nan", "1e400", "-", "inf"])
    lines[k] = ",".join(cells) + "\n"
    return "".join(lines), k + 1


def make_csv_cases(count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        table, measured, argv, extra = rng.choice(CSV_CONTEXTS)
        argv = [a if a == "{}" or a.startswith("-") or "/" not in a else str(ROOT / a)
                for a in argv]
        if rng.random() < 0.5:
            argv += extra
        text, line = _csv_seed(ROOT / table, rng), None
        if rng.random() < 0.3 and "--skip-bad-rows" not in argv:
            injected = inject_csv(text, measured, rng)
            if injected:
                text, line = injected
        else:
            text = mutate_csv(text, rng)
        cases.append({"id": i, "fmt": "csv", "text": text, "argv": argv, "line": line})
    return cases


# ---------------------------------------------------------------------------------------
# Option values: every typed option of the commands the examples show

_ODROID = ["examples/odroid/stereo.sdf", "examples/odroid/odroid.moa"]
#: valid commands; each run adds one option with a weird value after them
OPTION_BASES = [
    ["search", *_ODROID, "--strategy", "anneal", "--budget", "300"],
    ["search", *_ODROID, "--strategy", "exact", "--budget", "300"],
    ["search", *_ODROID, "--strategy", "genetic", "--budget", "300", "-o", "{dir}/b.map"],
    CSV_CONTEXTS[0][2] + ["--fit", "gpu.time.alpha,gpu.time.beta"],
    CSV_CONTEXTS[3][2],
    ["sweep", *_ODROID, "examples/odroid/mappings.map", "--mapping", "big_only",
     "-r", "f=0.5:2:5", "-o", "{dir}/s.csv"],
    ["logca", "--interface-latency", "1500", "--overhead", "2.9e4", "--compute-index",
     "90", "--acceleration", "19"],
    CSV_CONTEXTS[5][2],
    ["eval", *_ODROID, "examples/odroid/mappings.map", "--mapping", "big_only"],
    ["analyse", "examples/timing/video.sdf"],
    ["check", "examples/odroid/odroid.moa"],
]
#: options that start a Dask cluster: their values are tested in test_distributed*
_NOT_FUZZED = {"--workers", "--scheduler", "--retries", "--connect-timeout"}
#: weird values of a typed option, and small valid ones (a huge valid count is a request
#: for that much work, not a fault: only seeds get one)
_VALUES = ["-1", "0", "1", "2", "3", "0.5", "0.95", "-0", "nan", "inf", "-inf", "1e400",
           "-1e400", "1e-400", "x", "", " ", "1_0", "0x10", "1e1", "2.5", "1/2", "--", "é"]
_HUGE = ["1" + "0" * 30, "1" + "0" * 5000]
#: string-valued options with numbers inside, and their weird values
_TEXT_OPTIONS = {
    "--limit": ["links=-1", "links=0", "links=nan", "links=1e400", "nope=3", "array=2.5",
                "links", "=3", "elements=1"],
    "--param": ["f=nan", "f=-1", "f=1e400", "f=x", "f=", "=1", "zz=1", "f=inf", "f=1e-400"],
}
_SWEEP_RANGES = ["f=0:1:0", "f=nan:1:3", "f=0:1:1e9", "f=1:0:3:log", "f=-1:1:3:log",
                 "f=0:1:2.5", "f=0:inf:3", "f=0:1", "f=0:1:3:lin", "zz=0:1:3"]


def typed_options(argv: list[str]) -> list[str]:
    """The options with a typed value (an argparse ``type=``) of the command ``argv``
    starts with (descending ``plot KIND`` and ``import FORMAT``)."""
    from mapping.cli import main as cli
    parser = cli.build_parser(argv[0])
    for word in argv:
        action = cli._subparsers(parser)
        if action is None or word not in action.choices:
            break
        parser = action.choices[word]
    configure = parser._defaults.get("configure")
    if configure is not None:
        configure(parser)
    return [a.option_strings[-1] if a.option_strings[-1].startswith("--")
            else a.option_strings[0]
            for a in parser._actions if a.option_strings and a.type is not None]


def make_option_cases(count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    menu = []
    for base in OPTION_BASES:
        base = [str(ROOT / a) if a.startswith("examples/") else a for a in base]
        options = [o for o in typed_options(base) if o not in _NOT_FUZZED]
        options += list(_TEXT_OPTIONS) + (["--range"] if base[0] == "sweep" else [])
        menu += [(base, option) for option in options]
    cases = []
    for i in range(count):
        base, option = rng.choice(menu)
        if option in _TEXT_OPTIONS:
            value = rng.choice(_TEXT_OPTIONS[option])
        elif option == "--range":
            value = rng.choice(_SWEEP_RANGES)
        else:
            value = rng.choice(_VALUES + (_HUGE if option == "--seed" else []))
        cases.append({"id": i, "fmt": "options", "text": None,
                      "argv": base + [f"{option}={value}"], "line": None})
    return cases


# ---------------------------------------------------------------------------------------
# Signals: SIGTERM or SIGINT to a command writing an existing output

SIGNAL_BASES = [
    (["sweep", *_ODROID, "examples/odroid/mappings.map", "--mapping", "big_only",
      "-r", "f=0.5:2:300000"], "out.csv"),
    (["search", *_ODROID, "--strategy", "anneal", "--budget", "20000000"], "best.map"),
]


def _complete(path: str, text: str) -> bool:
    """Whether ``text`` is a whole output of a :data:`SIGNAL_BASES` command (a signal
    after the output was replaced, before the exit, leaves it so)."""
    if path.endswith(".csv"):
        return text.count("\n") == 300001 and text.endswith("\n")
    import dsl
    try:
        return bool(dsl.parse_map(text, path))
    except Exception:
        return False
OLD = "old output\n"


def make_signal_cases(count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        base, output = rng.choice(SIGNAL_BASES)
        argv = [str(ROOT / a) if a.startswith("examples/") else a for a in base]
        cases.append({"id": i, "fmt": "signals", "text": None, "line": None,
                      "argv": argv + ["-o", "{dir}/" + output], "output": output,
                      "signal": rng.choice(["SIGTERM", "SIGINT"]),
                      "delay": round(rng.uniform(0.2, 6.0), 2)})
    return cases


def _interruptible() -> None:
    """SIGINT as a terminal sends it: a fuzzer started in the background (``cmd &``)
    ignores SIGINT, its children inherit that, and Python then never raises
    KeyboardInterrupt (the first run of 200 signals: 41 sweeps ran on, timed out)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_signal_case(case: dict) -> dict:
    """Run ``case`` in a subprocess, signal it after ``delay`` seconds, and look at what
    it leaves: exit 0 (done first) with a new output, or 130/143 with the old one, never
    a temporary file or a traceback."""
    workdir = tempfile.mkdtemp(prefix="mapeval-fuzz-")
    output = os.path.join(workdir, case["output"])
    with open(output, "w", encoding="utf-8") as fh:
        fh.write(OLD)
    argv = [a.replace("{dir}", workdir) for a in case["argv"]]
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    proc = subprocess.Popen([sys.executable, "-m", "mapping.cli.main", *argv], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_interruptible)
    time.sleep(case["delay"])
    proc.send_signal(getattr(signal, case["signal"]))
    try:
        _, stderr = proc.communicate(timeout=BUDGET)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        proc.kill()
        _, stderr = proc.communicate()
        rc = "timeout"
    with open(output, encoding="utf-8", errors="replace") as fh:
        now = fh.read()
    left = sorted(set(os.listdir(workdir)) - {case["output"]})
    shutil.rmtree(workdir, ignore_errors=True)
    if rc == "timeout":
        cls = "timeout"
    elif "Traceback (most recent call last)" in stderr:
        cls = "traceback"
    elif left or (now != OLD and not _complete(output, now)) or (rc == 0 and now == OLD):
        cls = "left behind"
        stderr += f"\nleft: {left}; output {'unchanged' if now == OLD else 'replaced'}"
    elif rc == 0:
        cls = "ok"
    elif rc in (130, 143, -2, -15):
        cls = "interrupted"     # -2/-15: the signal came before Python installed handlers
    else:
        cls = "exit 1"
    return {"class": cls, "rc": rc, "stderr": stderr[-4000:]}


def make_cases(fmt: str, count: int, seed: int, quick: bool) -> list[dict]:
    if fmt == "csv":
        return make_csv_cases(count, seed)
    if fmt == "options":
        return make_option_cases(count, seed)
    if fmt == "signals":
        return make_signal_cases(count, seed)
    if fmt in IMPORT_FORMATS:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import importers
        return getattr(importers, f"make_{fmt}_cases")(count, seed)
    rng = random.Random(seed)
    bases = seeds(fmt)
    triples = _good_triples()
    slot = TEXT_FORMATS.index(fmt)
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
    import mapping.cli.main
    for app, arch, maps, name in _good_triples()[:2]:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            mapping.cli.main.main(["eval", app, arch, maps] + (["--mapping", name] if name else []))


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
                               "input": (case["text"] or repr(case.get("data") or b""))[:1500], "stderr": result["stderr"]})
    return {"format": fmt, "count": count, "seed": seed, "quick": quick, "classes": counts,
            "examples": shown}


def main(argv=None) -> int:
    global BUDGET
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--format", choices=FORMATS, required=True)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true",
                        help="small deep expressions only (for the test suite)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--examples", type=int, default=3,
                        help="example inputs shown per bad class")
    parser.add_argument("--timeout", type=float, default=BUDGET,
                        help=f"seconds allowed per input (default {BUDGET})")
    args = parser.parse_args(argv)
    BUDGET = max(1, round(args.timeout))
    os.environ.setdefault("MPLBACKEND", "Agg")
    summary = run(args.format, args.count, args.seed, args.quick, args.jobs, args.examples)
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
