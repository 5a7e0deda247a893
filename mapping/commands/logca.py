"""``mapeval logca``: the LogCA analysis of one accelerator (Altaf & Wood, ISCA 2017).

Not a mapping: the five LogCA parameters in, break-even granularity ``g1``, ``g_{A/2}``,
the speedup limit, compute- or latency-bound and the optimization regions out, each both
exactly (root finding) and by the paper's closed forms. ``add_logca_options`` is shared
with ``mapeval plot logca``.
"""
from __future__ import annotations

import argparse
import re

from moa.logca_analysis import GMAX, GMIN, LATENCIES, LogCAAnalysis, analyse

_SIZE = re.compile(r"^\s*([0-9][0-9_]*\.?[0-9_]*(?:[eE][-+]?[0-9]+)?)\s*([kKmMgG]i?[bB]?|[bB])?\s*$")
_UNITS = {"": 1, "b": 1, "k": 2 ** 10, "m": 2 ** 20, "g": 2 ** 30}


def granularity(text: str) -> float:
    """A size in bytes: ``4096``, ``1e6``, or with a binary suffix ``2K``, ``32KB``, ``32MiB``."""
    match = _SIZE.match(text)
    if not match:
        raise argparse.ArgumentTypeError(f"'{text}' is not a size in bytes (e.g. 4096, 2K, 32MB)")
    unit = (match.group(2) or "").lower()[:1]
    return float(match.group(1)) * _UNITS[unit]


def add_logca_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``mapeval logca`` that describe the accelerator and the range."""
    g = parser.add_argument_group(
        "LogCA parameters (LogCA Table 1; the one-letter spellings --L, --o, --C, --A "
        "are kept as aliases)")
    g.add_argument("--interface-latency", "--L", dest="L", type=float, required=True,
                   metavar="L", help="L: cycles per byte to move data to the accelerator "
                   "(--latency dependent) or cycles (independent)")
    g.add_argument("--overhead", "--o", dest="o", type=float, required=True, metavar="o",
                   help="o: host cycles to set up one offload")
    g.add_argument("--compute-index", "--C", dest="C", type=float, required=True,
                   metavar="C", help="C: host cycles per byte (per g^beta)")
    g.add_argument("--acceleration", "--A", dest="A", type=float, required=True,
                   metavar="A", help="A: peak speedup of the accelerator over the host (> 0)")
    g.add_argument("--beta", type=float, default=1.0,
                   help="complexity exponent: host time C·g^beta (default 1)")
    g.add_argument("--latency", choices=LATENCIES, default="dependent",
                   help="latency L·g (dependent, default) or L (independent: pipelined)")
    r = parser.add_argument_group("granularities (bytes; suffixes K, M, G are powers of 2)")
    r.add_argument("--gmin", type=granularity, default=GMIN, metavar="G",
                   help="smallest granularity of the optimization regions (default 16)")
    r.add_argument("--gmax", type=granularity, default=GMAX, metavar="G",
                   help="largest granularity of the optimization regions (default 33554432)")
    r.add_argument("--at", type=granularity, action="append", default=[], metavar="G",
                   help="also report the speedup at granularity G (repeatable)")


def analysis_from_args(args) -> LogCAAnalysis:
    return analyse(args.L, args.o, args.C, args.A, beta=args.beta, latency=args.latency,
                   gmin=args.gmin, gmax=args.gmax, at=args.at)


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="LogCA accelerator analysis",
        description="LogCA (Altaf & Wood, ISCA 2017) analysis of one accelerator: the "
        "break-even granularity g1 (speedup 1), g_A/2 (speedup A/2) both exactly and by the "
        "paper's closed forms (eqs. 5-6, 11-12), the speedup limit, whether the kernel is "
        "compute- or latency-bound, and the optimization regions: granularities where a 10x "
        "better L, o, C or A raises speedup by 20% or more (paper §3.2).",
        epilog="example (UltraSPARC T2, AES, Table 5): mapeval logca --interface-latency 1500 "
        "--overhead 2.9e4 --compute-index 90 --acceleration 19 --latency independent "
        "--at 4K --plot aes.png")
    add_logca_options(p)
    p.add_argument("--plot", metavar="FILE",
                   help="also draw speedup and optimization regions (.png, .svg or .pdf)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(run=run)
    return p


def plot_from_args(args, path, analysis: LogCAAnalysis | None = None):
    """Draw the LogCA figure of the options of :func:`add_logca_options` to ``path``
    (for ``mapeval logca --plot`` and ``mapeval plot logca -o``)."""
    from mapping.plots.logca import plot_analysis
    return plot_analysis(analysis or analysis_from_args(args), path)


def run(args):
    if args.plot:
        from mapping.plots.figure_io import plot_format
        plot_format(args.plot)               # a bad file name fails before any work
    analysis = analysis_from_args(args)
    if args.plot:
        plot_from_args(args, args.plot, analysis)
    if args.json:
        from mapping.output import print_json
        print_json(analysis.to_dict())
    else:
        print(analysis)
        if args.plot:
            print(f"\nplot written to {args.plot}")
    return 0
