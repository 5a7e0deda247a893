"""``mapeval plot logca``: LogCA speedup curve and optimization regions (Figs. 3, 6)."""
from __future__ import annotations

from mapping.commands.logca import add_logca_options, plot_from_args


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="LogCA speedup against granularity, and the optimization regions",
        description="Draw the LogCA speedup of one accelerator against granularity (log "
        "axes) with g1, g_A/2 and the speedup limit marked, beside the optimization-regions "
        "chart (Altaf & Wood, ISCA 2017, Figs. 3 and 6). Takes the options of mapeval logca.",
        epilog="example: mapeval plot logca --L 1500 --o 2.9e4 --C 90 --A 19 "
        "--latency independent -o aes.png")
    add_logca_options(p)
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="the plot: .png, .svg or .pdf")
    p.set_defaults(run=run)


def run(args):
    plot_from_args(args, args.output)
    return 0
