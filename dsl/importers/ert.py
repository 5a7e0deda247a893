"""Empirical Roofline Toolkit results (``roofline.json``) as roofline parameters.

ERT writes, under ``empirical``, ``gflops.data`` (``[label, GFLOP/s]``, usually one
``GFLOPs`` row) and ``gbytes.data`` (``[level, GB/s]``, one row per memory level from the
fastest, e.g. L1, L2, L3, DRAM), and under ``spec`` the vendor's figures in the same
form (often empty).  :func:`read_ert` keeps the numbers exactly as written (GFLOP/s and
GB/s); :func:`ert_moa` turns them into a ``.moa`` with one ``roofline`` PE (Gables
eq. 9: ``peak`` in FLOP/s, ``bandwidth`` in B/s of one chosen level) and one
``bandwidth`` CN for its memory.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from dsl.csv_table import csv_rows
from dsl.errors import ParseError
from dsl.files import read_text
from dsl.importers import Imported, Importer
from dsl.names import identifier


@dataclass(frozen=True)
class ErtRoofline:
    """One ERT result: ``ceilings`` ``((label, GFLOP/s), ...)``, ``levels``
    ``((level, GB/s), ...)`` fastest first as in the file, and the vendor's ``spec_*``
    (empty when the file has none)."""

    name: str
    ceilings: tuple[tuple[str, float], ...]
    levels: tuple[tuple[str, float], ...]
    spec_ceilings: tuple[tuple[str, float], ...] = ()
    spec_levels: tuple[tuple[str, float], ...] = ()
    source: str = ""

    @property
    def peak(self) -> float:
        """The highest compute ceiling, GFLOP/s."""
        return max(v for _, v in self.ceilings)

    def bandwidth(self, level: str) -> float:
        """GB/s of memory ``level`` (case-insensitive)."""
        for name, value in self.levels:
            if name.lower() == level.lower():
                return value
        raise ParseError(f"{self.source or self.name}: no memory level '{level}' "
                         f"(levels: {', '.join(n for n, _ in self.levels)})")


def _rows(node, where: str, path: str) -> tuple[tuple[str, float], ...]:
    data = node.get("data") if isinstance(node, dict) else None
    if not isinstance(data, list):
        raise ParseError(f"{path}: '{where}' has no 'data' list of [name, value] rows")
    rows = []
    for i, row in enumerate(data):
        if (not isinstance(row, list) or len(row) != 2 or not isinstance(row[0], str)
                or isinstance(row[1], bool) or not isinstance(row[1], (int, float))
                or not math.isfinite(row[1]) or row[1] <= 0):
            raise ParseError(f"{path}: {where}.data[{i}] must be [name, positive number], "
                             f"got {json.dumps(row)}")
        rows.append((row[0], float(row[1])))
    names = [n.lower() for n, _ in rows]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise ParseError(f"{path}: {where} lists '{dup}' twice")
    return tuple(rows)


def read_ert(path: str | Path) -> ErtRoofline:
    """The empirical (and, when present, vendor) ceilings and bandwidths of an ERT
    ``roofline.json``; a :class:`ParseError` naming the file for anything else."""
    path = Path(path)
    text = read_text(path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"not JSON: {exc.msg}", (str(path), exc.lineno, exc.colno)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("empirical"), dict):
        raise ParseError(f"{path}: expected an ERT roofline.json with an 'empirical' object")
    emp = doc["empirical"]
    ceilings = _rows(emp.get("gflops"), "empirical.gflops", str(path))
    levels = _rows(emp.get("gbytes"), "empirical.gbytes", str(path))
    if not ceilings or not levels:
        raise ParseError(f"{path}: needs at least one GFLOP/s ceiling and one memory level")
    spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
    spec_c = _rows(spec["gflops"], "spec.gflops", str(path)) if "gflops" in spec else ()
    spec_l = _rows(spec["gbytes"], "spec.gbytes", str(path)) if "gbytes" in spec else ()
    meta = emp.get("metadata") if isinstance(emp.get("metadata"), dict) else {}
    host = meta.get("HOSTNAME") if isinstance(meta.get("HOSTNAME"), str) else None
    return ErtRoofline(host or path.stem, ceilings, levels, spec_c, spec_l, str(path))


def _giga(value: float) -> str:
    """``value`` x 1e9 written exactly (decimal shift, no binary rounding)."""
    return format(Decimal(repr(value)).scaleb(9).normalize(), "f")


def ert_moa(ert: ErtRoofline, level: str | None = None, name: str | None = None) -> str:
    """A ``.moa`` for ``ert``: a parameter per ceiling (``peak_*``, FLOP/s) and per
    memory level (``bw_*``, B/s); PE ``cpu`` is ``roofline(peak, bandwidth = bw_LEVEL,
    memory = mem)``, CN ``mem`` is ``bandwidth(B = bw_LEVEL)``; ``level`` defaults to the
    last (slowest) one.  Times come out in seconds."""
    level = level or ert.levels[-1][0]
    ert.bandwidth(level)
    lvl = next(n for n, _ in ert.levels if n.lower() == level.lower())
    top = max(ert.ceilings, key=lambda row: row[1])[0]
    lines = [f"# Imported by 'mapeval import ert' from {ert.source}: peaks in FLOP/s,",
             "# bandwidths in B/s (ERT's GFLOP/s and GB/s x 1e9); time in seconds.",
             f"moa {identifier(name or ert.name)} {{"]
    for label, value in ert.ceilings:
        lines.append(f"    param {identifier('peak_' + label)} = {_giga(value)} "
                     f"[unit = \"FLOP/s\"]    # {value} GFLOP/s")
    for label, value in ert.levels:
        lines.append(f"    param {identifier('bw_' + label)} = {_giga(value)} "
                     f"[unit = \"B/s\"]    # {value} GB/s")
    peak, bw = identifier("peak_" + top), identifier("bw_" + lvl)
    lines += ["    aggregate = max", '    metric time [unit = "s"]', "",
              f"    cn mem [time = bandwidth(B = {bw})]    # {lvl}",
              f"    pe cpu [time = roofline(peak = {peak}, bandwidth = {bw}, "
              "memory = mem)]",
              "    cpu -- mem", "}"]
    return "\n".join(lines) + "\n"


def read_working_set(path: str | Path) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """``(working sets in bytes, GB/s)`` of an ERT bandwidth-against-working-set file
    (``..._bandwidth_vs_wss.max.txt``): rows of 11 numbers -- working set, trials, three
    times (us), three GB/s, three GFLOP/s -- up to ``META_DATA``; the middle GB/s column
    is the one ERT's summary takes.  Errors point at ``file:line:col``."""
    path = Path(path)
    ws, gbs = [], []
    for number, line in enumerate(read_text(path).splitlines(), 1):
        words = line.split()
        if not words:
            continue
        if words[0] == "META_DATA":
            break
        if len(words) != 11:
            raise ParseError(f"expected 11 numbers (working set, trials, 3 times, 3 GB/s, "
                             f"3 GFLOP/s), got {len(words)}", (str(path), number, 1))
        try:
            w, b = float(words[0]), float(words[6])
        except ValueError:
            at = next(i for i in (0, 6) if not _is_number(words[i]))
            col = [m.start() for m in re.finditer(r"\S+", line)][at] + 1
            raise ParseError(f"not a number: '{words[at]}'", (str(path), number, col)) from None
        if not (math.isfinite(w) and w > 0 and math.isfinite(b) and b > 0):
            raise ParseError("working set and bandwidth must be finite numbers > 0",
                             (str(path), number, 1))
        ws.append(w)
        gbs.append(b)
    if not ws:
        raise ParseError(f"{path}: no rows of working set and bandwidth")
    return tuple(ws), tuple(gbs)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


KERNEL_COLUMNS = ("kernel", "flops", "bytes")


def read_kernels(path: str | Path):
    """Kernels for a roofline plot from a CSV with a header row (``#`` lines are
    comments): ``kernel,flops,bytes`` and optionally ``seconds`` (a measured time: the
    attained performance) and ``level`` (the memory level the bytes are counted at;
    default the slowest).  Errors point at ``file:line:col``."""
    from moa.roofline_analysis import Kernel

    path = Path(path)
    kernels = []
    for line, cells in csv_rows(path, KERNEL_COLUMNS, optional=("seconds", "level")):

        def number(name):
            text, col = cells.get(name, ("", 1))
            if not text:
                return None
            try:
                value = float(text)
            except ValueError:
                raise ParseError(f"{name} must be a number, got '{text}'",
                                 (str(path), line, col)) from None
            if not math.isfinite(value) or value <= 0:
                # a kernel without flops or bytes has no place on a roofline
                raise ParseError(f"{name} must be a finite positive number, got '{text}'",
                                 (str(path), line, col))
            return value

        level = cells.get("level", ("", 1))[0] or None
        kernels.append(Kernel(cells["kernel"][0], number("flops"), number("bytes"),
                              number("seconds"), level))
    return tuple(kernels)


# --------------------------------------------------------------------------- mapeval import

HELP = """\
FILE is the roofline.json the Empirical Roofline Toolkit writes: GFLOP/s ceilings under
empirical.gflops, GB/s per memory level (L1, L2, ..., DRAM) under empirical.gbytes.
The .moa keeps every number (x 1e9, in FLOP/s and B/s; time in seconds) as a parameter
peak_NAME or bw_LEVEL, and models the machine as one roofline PE 'cpu' (peak = the
highest ceiling, bandwidth = the --level's) whose traffic goes to a bandwidth CN 'mem'.
--json prints instead the ceilings, the bandwidths, the ridge point of every level
(peak / bandwidth, FLOP/B) and, with --kernels, each kernel's intensity, roof and
compute- or memory-bound classification. KERNELS.csv: kernel,flops,bytes[,seconds][,level].

example: mapeval import ert roofline.json -o machine.moa
"""


def options(p) -> None:
    """``--level`` and ``--kernels``, shared with ``mapeval plot roofline``."""
    p.add_argument("--level", metavar="LEVEL",
                   help="memory level of the PE's bandwidth, and of kernels without a "
                   "level (default: the last, usually DRAM)")
    p.add_argument("--kernels", metavar="KERNELS.csv",
                   help="kernels to place: kernel,flops,bytes[,seconds][,level]")


def analysis(args):
    """The :class:`~moa.roofline_analysis.RooflineAnalysis` of ``args.path`` (and
    ``--kernels``, ``--level``), with the ERT result it was read from."""
    from dataclasses import replace

    from moa.roofline_analysis import analyse

    ert = read_ert(args.path)
    if args.level is not None:
        ert.bandwidth(args.level)
    kernels = read_kernels(args.kernels) if args.kernels else ()
    if args.level is not None:
        kernels = tuple(k if k.level else replace(k, level=args.level) for k in kernels)
    return ert, analyse(ert.name, ert.ceilings, ert.levels, kernels)


def arguments(p) -> None:
    p.add_argument("path", metavar="FILE.json")
    p.add_argument("-o", "--output", metavar="ARCH.moa",
                   help="write the .moa here (default: standard output)")
    options(p)
    p.add_argument("--name", help="name of the architecture (default: ERT's host name)")
    p.add_argument("--json", action="store_true",
                   help="print the roofline analysis as JSON (the .moa only with -o)")


def convert(args) -> Imported:
    """The ``.moa`` of ``args.path`` (and, with ``--json``, its roofline analysis)."""
    ert, result = analysis(args)
    return Imported(ert_moa(ert, args.level, args.name), (".moa",), (Path(args.path),),
                    note=f"peak {ert.peak} GFLOP/s, "
                    + ", ".join(f"{n} {v} GB/s" for n, v in ert.levels),
                    document=result.as_dict() if args.json else None)


IMPORTER = Importer(arguments, convert, "Read Empirical Roofline Toolkit results "
                    "(roofline.json) into roofline PE parameters (.moa).", HELP)
