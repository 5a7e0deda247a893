"""``mapeval logca``: the LogCA analysis of one accelerator (Altaf & Wood, ISCA 2017).

Not a mapping: the five LogCA parameters in, break-even granularity ``g1``, ``g_{A/2}``,
the speedup limit, compute- or latency-bound and the optimization regions out, each both
exactly (root finding) and by the paper's closed forms. The parameters come from the
options, from measurements (``--fit DATA.csv``, paper §4, :mod:`mapping.calibration.logca`) or,
for several accelerators at once, from a table (``--table``, as the paper's Table 5).
``add_logca_options`` is shared with ``mapeval plot logca``.
"""
from __future__ import annotations

import argparse
import re

from pathlib import Path

from mapping.errors import InputError
from mapping.options import NON_NEGATIVE, POSITIVE, PROBABILITY
from moa.logca_analysis import GMAX, GMIN, LATENCIES, LogCAAnalysis, LogCAError, analyse
from moa.units import BINARY_PREFIXES

_SIZE = re.compile(r"^\s*([0-9][0-9_]*\.?[0-9_]*(?:[eE][-+]?[0-9]+)?)\s*"
                   r"([kKmMgGtT]i?[bB]?|[bB])?\s*$")
_UNITS = {"": 1, "b": 1, **{prefix.lower(): size for prefix, size in BINARY_PREFIXES}}


def granularity(text: str) -> float:
    """A size in bytes: ``4096``, ``1e6``, or with a binary prefix
    (:data:`moa.units.BINARY_PREFIXES`) ``2K``, ``32KB``, ``32MiB``, ``1TiB``."""
    match = _SIZE.match(text)
    if not match:
        raise argparse.ArgumentTypeError(f"'{text}' is not a size in bytes (e.g. 4096, 2K, 32MB)")
    unit = (match.group(2) or "").lower()[:1]
    value = float(match.group(1).replace("_", "")) * _UNITS[unit]
    if not POSITIVE.fits(value):
        raise argparse.ArgumentTypeError(f"'{text}': a size in bytes must be "
                                         f"{POSITIVE.description}")
    return value


def add_logca_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``mapeval logca`` that describe the accelerator and the range."""
    g = parser.add_argument_group(
        "LogCA parameters (LogCA Table 1; the one-letter spellings --L, --o, --C, --A "
        "are kept as aliases)")
    g.add_argument("--interface-latency", "--L", dest="L", type=NON_NEGATIVE,
                   metavar="L", help="L: cycles per byte to move data to the accelerator "
                   "(--latency dependent) or cycles (independent); with --fit, the L that "
                   "splits o + L")
    g.add_argument("--overhead", "--o", dest="o", type=NON_NEGATIVE, metavar="o",
                   help="o: host cycles to set up one offload")
    g.add_argument("--compute-index", "--C", dest="C", type=POSITIVE,
                   metavar="C", help="C: host cycles per byte (per g^beta)")
    g.add_argument("--acceleration", "--A", dest="A", type=POSITIVE,
                   metavar="A", help="A: peak speedup of the accelerator over the host (> 0)")
    g.add_argument("--beta", type=POSITIVE, default=1.0,
                   help="complexity exponent: host time C·g^beta (default 1)")
    g.add_argument("--latency", choices=LATENCIES + ("auto",), default=None,
                   help="latency L·g (dependent, the default) or L (independent: "
                   "pipelined); with --fit also auto (the default there: the L·g term is "
                   "kept only if significant)")
    f = parser.add_argument_group(
        "parameters from measurements (LogCA §4) or from a table (Table 5)")
    f.add_argument("--fit", metavar="DATA.csv", action="append", default=[],
                   help="fit C, beta, A and the overheads to a CSV of granularity, host "
                   "time and accelerator time (weighted least squares, confidence "
                   "intervals); repeatable: one accelerator per file, one chart")
    f.add_argument("--granularity-column", default="granularity", metavar="NAME",
                   help="the column of g in bytes (default granularity)")
    f.add_argument("--host-column", default="host", metavar="NAME",
                   help="the column of host time T0, cycles (default host)")
    f.add_argument("--accelerator-column", default="accelerator", metavar="NAME",
                   help="the column of accelerator time T1, cycles (default accelerator)")
    f.add_argument("--peak-ratio", type=POSITIVE, metavar="A",
                   help="take A as given (the paper's peak-FLOPS ratio for GPUs), not fitted")
    f.add_argument("--bandwidth", type=POSITIVE, metavar="BYTES_PER_CYCLE",
                   help="take L = 1/bandwidth (the paper's GPU latency), not fitted")
    f.add_argument("--host-overhead", choices=("auto", "none", "fit", "range"), default="auto",
                   help="with --fit: the host's fixed cost o0, T0 = o0 + C·g^beta (an "
                   "extension of LogCA for library calls whose time is flat at small g): "
                   "fit it, none (the paper's T0 = C·g^beta), auto (the default: kept "
                   "only if significant, F-test at 1%%), or range (the paper's form on the "
                   "granularities where it holds: o0, fitted on every row, below 5%% of T0)")
    f.add_argument("--confidence", type=PROBABILITY, default=0.95,
                   help="level of the confidence intervals (default 0.95)")
    f.add_argument("--table", metavar="TABLE.csv",
                   help="analyse the accelerators of a table with columns "
                   "name,L,o,C,A,beta,latency (examples/logca/table5.csv) and optionally "
                   "o0, a host's fixed cost (an extension)")
    f.add_argument("--row", action="append", default=[], metavar="NAME",
                   help="with --table: only this row (repeatable; default every row)")
    r = parser.add_argument_group("granularities (bytes; suffixes K, M, G are powers of 2)")
    r.add_argument("--gmin", type=granularity, default=GMIN, metavar="G",
                   help="smallest granularity of the optimization regions (default 16)")
    r.add_argument("--gmax", type=granularity, default=GMAX, metavar="G",
                   help="largest granularity of the optimization regions (default 33554432)")
    r.add_argument("--at", type=granularity, action="append", default=[], metavar="G",
                   help="also report the speedup at granularity G (repeatable)")


_PARAMETER_FLAGS = {"L": "--interface-latency", "o": "--overhead", "C": "--compute-index",
                    "A": "--acceleration"}


def _range(args) -> dict:
    return {"gmin": args.gmin, "gmax": args.gmax, "at": args.at}


def analysis_from_args(args):
    """What the options describe: a :class:`LogCAAnalysis` for one accelerator given by
    its parameters, else a tuple of :class:`mapping.calibration.logca.Curve` (one per ``--fit``
    file, or per row of ``--table``) — what ``mapeval plot logca`` draws."""
    if args.fit and args.table:
        raise InputError("give --fit or --table, not both")
    if args.fit:
        return tuple(fit_from_args(args, path) for path in args.fit)
    if args.table:
        return table_from_args(args)
    missing = [flag for name, flag in _PARAMETER_FLAGS.items() if getattr(args, name) is None]
    if missing:
        raise InputError(f"logca: missing {', '.join(missing)} (or give --fit DATA.csv or "
                         "--table TABLE.csv)")
    latency = args.latency or "dependent"
    if latency == "auto":
        raise InputError("logca: --latency auto needs --fit (it chooses from measurements)")
    return analyse(args.L, args.o, args.C, args.A, beta=args.beta, latency=latency,
                   **_range(args))


def _column(m, name, option):
    if name not in m.columns:
        raise InputError(f"{m.path}: no column '{name}' ({option}; columns: "
                         f"{', '.join(m.columns)})", (str(m.path), 1, 1))
    return name


def fit_from_args(args, path):
    """The :class:`Curve` of one ``--fit`` file: read it, fit (paper §4), analyse."""
    from mapping.calibration.logca import Curve, analyse_fit, fit_logca
    from mapping.calibration.measurements import read_measurements

    gcol, hcol, acol = args.granularity_column, args.host_column, args.accelerator_column
    m = read_measurements(path, acol, params=(gcol, hcol),
                          measured_option="--accelerator-column")
    _column(m, gcol, "--granularity-column")
    _column(m, hcol, "--host-column")
    for row in m.rows:
        for column, value in ((gcol, row.params[gcol]), (hcol, row.params[hcol]),
                              (acol, row.measured)):
            if not value > 0:
                raise row.error(f"must be > 0, got {value:g}", column)
    L = args.L
    if args.bandwidth is not None:
        if L is not None:
            raise InputError("give --interface-latency or --bandwidth, not both")
        L = 1.0 / args.bandwidth                       # LogCA §4: L = 1/BW_peak
    for name in ("o", "C", "A"):
        if getattr(args, name) is not None:
            raise InputError(f"--fit fits {_PARAMETER_FLAGS[name]}: do not give it "
                             "(--peak-ratio gives A)")
    fit = fit_logca([r.params[gcol] for r in m.rows], [r.params[hcol] for r in m.rows],
                    m.measured, latency=args.latency or "auto", L=L, A=args.peak_ratio,
                    confidence=args.confidence, host_overhead=args.host_overhead)
    return Curve(Path(path).stem, analyse_fit(fit, **_range(args)), fit)


def table_from_args(args):
    """One :class:`Curve` per row of ``--table`` (name,L,o,C,A,beta,latency)."""
    from mapping.calibration.logca import Curve
    from mapping.calibration.measurements import read_measurements

    m = read_measurements(args.table, "A", params=("L", "o", "C", "beta"))
    for column in ("name", "L", "o", "C", "beta", "latency"):
        _column(m, column, "--table")
    rows = {r.cells["name"].strip(): r for r in m.rows}
    wanted = args.row or list(rows)
    unknown = [name for name in wanted if name not in rows]
    if unknown:
        raise InputError(f"{args.table}: no row named {', '.join(map(repr, unknown))} "
                         f"(rows: {', '.join(rows)})", (str(args.table), 1, 1))
    curves = []
    for name in wanted:
        r = rows[name]
        latency = r.cells.get("latency", "").strip()     # a short row has no cell
        if latency not in LATENCIES:
            raise r.error(f"latency must be one of {', '.join(LATENCIES)}", "latency")
        o0 = 0.0
        if r.cells.get("o0", "").strip():           # optional: a host's fixed cost
            o0 = r.number("o0")
        try:
            a = analyse(r.params["L"], r.params["o"], r.params["C"], r.measured,
                        r.params["beta"], latency, **_range(args), o0=o0)
        except LogCAError as exc:
            raise r.error(str(exc)) from None
        curves.append(Curve(name, a))
    return tuple(curves)


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="LogCA accelerator analysis",
        description="LogCA (Altaf & Wood, ISCA 2017) analysis of one accelerator: the "
        "break-even granularity g1 (speedup 1), g_A/2 (speedup A/2) both exactly and by the "
        "paper's closed forms (eqs. 5-6, 11-12), the speedup limit, whether the kernel is "
        "compute- or latency-bound, and the optimization regions: granularities where a 10x "
        "better L, o, C or A raises speedup by 20% or more (paper §3.2). The parameters "
        "come from the options, from measurements (--fit DATA.csv: granularity, host and "
        "accelerator time; paper §4, with confidence intervals; with a latency independent "
        "of g only o + L is identified) or from a table of accelerators (--table).",
        epilog="examples (UltraSPARC T2, AES, Table 5): mapeval logca --interface-latency 1500 "
        "--overhead 2.9e4 --compute-index 90 --acceleration 19 --latency independent "
        "--at 4K --plot aes.png; mapeval logca --fit examples/logca/t2_aes_measured.csv "
        "--interface-latency 1500; mapeval logca --table examples/logca/table5.csv")
    add_logca_options(p)
    p.add_argument("--plot", metavar="FILE",
                   help="also draw speedup and optimization regions (.png, .svg or .pdf)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(run=run)
    return p


def plot_from_args(args, path, analysis: LogCAAnalysis | None = None):
    """Draw the LogCA figure of the options of :func:`add_logca_options` to ``path``
    (for ``mapeval logca --plot`` and ``mapeval plot logca -o``)."""
    from mapping.plots.logca import plot_from_inputs
    return plot_from_inputs(path, analysis=analysis or analysis_from_args(args))


def run(args):
    if args.plot:
        from mapping.plots.figure_io import plot_format
        plot_format(args.plot)               # a bad file name fails before any work
    analysis = analysis_from_args(args)
    if args.plot:
        plot_from_args(args, args.plot, analysis)
    if args.json:
        from mapping.output import print_json
        print_json(_document(analysis))
    else:
        print(_text(analysis))
    return 0


def _document(analysis) -> dict:
    if isinstance(analysis, LogCAAnalysis):
        return analysis.to_dict()
    if len(analysis) == 1 and analysis[0].fit is not None:
        return {"fit": analysis[0].fit.to_dict(), **analysis[0].analysis.to_dict()}
    return {"accelerators": [{"name": c.label, "latency": c.analysis.latency,
                              "beta": c.analysis.beta, **c.analysis.to_dict(),
                              **({"fit": c.fit.to_dict()} if c.fit else {})}
                             for c in analysis]}


def _size(value) -> str:
    return "none" if value is None else f"{value:.4g}"


def _text(analysis) -> str:
    if isinstance(analysis, LogCAAnalysis):
        return str(analysis)
    if len(analysis) == 1 and analysis[0].fit is not None:
        return f"{analysis[0].fit}\n\n{analysis[0].analysis}"
    if analysis[0].fit is not None:
        return "\n\n".join(f"== {c.label}\n{c.fit}\n\n{c.analysis}" for c in analysis)
    rows = [f"{'accelerator':<28}{'latency':<12}{'beta':>5}  {'C/L':>9}  {'g1 (B)':>10}"
            f"{'eq. 5/11':>10}  {'g_A/2 (B)':>10}{'eq. 6/12':>10}  {'limit':>8}  bound",
            "exact by root finding beside the paper's closed forms; none = never reached"]
    for c in analysis:
        a = c.analysis
        ratio = ("-" if a.latency == "independent" else   # C/L bounds only L·g (eq. 9)
                 f"{a.C / a.L:.3g}" if a.L > 0 else "inf")
        rows.append(f"{c.label:<28}{a.latency:<12}{a.beta:>5g}  {ratio:>9}  {_size(a.g1):>10}"
                    f"{_size(a.g1_closed_form):>10}  {_size(a.g_half):>10}"
                    f"{_size(a.g_half_closed_form):>10}  {a.speedup_limit:>8.3g}  {a.bound}")
    return "\n".join(rows)
