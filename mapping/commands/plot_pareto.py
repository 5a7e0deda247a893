"""``mapeval plot pareto``: the Pareto front of a multi-objective search."""
from __future__ import annotations

from mapping.commands.search import add_search_options
from mapping.errors import InputError


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="Pareto front of a multi-objective search",
        description="Takes the options of 'mapeval search' (--objectives defaults to "
        "time,energy) and draws the non-dominated mappings it finds.",
        epilog="example: mapeval plot pareto app.sdf arch.moa --objectives time,energy "
        "--strategy genetic --budget 50000 -o front.png")
    add_search_options(p)
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="the plot: .png, .svg or .pdf")
    p.set_defaults(run=run)


def run(args):
    from mapping.commands.search import run_search
    from mapping.plots.figure_io import plot_format
    from mapping.plots.pareto import plot_pareto

    plot_format(args.output)
    if not args.objectives:
        args.objectives = "time,energy"
    if len([m for m in args.objectives.split(",") if m.strip()]) < 2:
        raise InputError("plot pareto: --objectives needs at least two metrics")
    result = run_search(args, "plot pareto")
    plot_pareto(result, args.output, inputs=args.files)
    return 0
