"""``mapeval sweep``: evaluate a mapping over a grid of parameter values."""
from __future__ import annotations

import sys

from mapping.inputs import (add_choice_options, add_mapping_options, load_mapped_inputs,
                            parse_params)
from mapping.output import write_atomically
from mapping.sweep import parse_range, sweep, to_csv


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="evaluate a mapping over a grid of parameters",
        description="Evaluate one mapping at every point of a grid of parameter values (the "
        "product of the --param ranges) and write one CSV row per point: the parameter "
        "values, value, throughput and performance (metric time), then one column per "
        "element.",
        epilog="example: mapeval sweep examples/gables/fig8.sdf examples/gables/"
        "snapdragon835.moa examples/gables/fig8.map --param f=0:1:9 --param I=1:1024:6:log "
        "-o fig8.csv --plot fig8.png --y performance")
    p.add_argument("files", nargs="+", metavar="FILE", help="APP.sdf ARCH.moa [MAP.map]")
    add_mapping_options(p)
    add_choice_options(p)
    p.add_argument("--metric", default="time", help="metric to evaluate (default: time)")
    p.add_argument("--aggregate", choices=["sum", "max", "exclusive", "schedule"],
                   help="how element values combine (default: the architecture's)")
    p.add_argument("-p", dest="fixed", action="append", metavar="NAME=VALUE", default=[],
                   help="fix a parameter that is not swept (repeatable)")
    p.add_argument("--param", dest="ranges", action="append", default=[], required=True,
                   metavar="NAME=START:STOP:N[:log]",
                   help="a swept parameter: N values from START to STOP (geometric with "
                   ":log); repeat for a grid")
    p.add_argument("-o", "--output", metavar="OUT.csv",
                   help="write the CSV here (default: standard output)")
    p.add_argument("--plot", metavar="FILE",
                   help="also plot a column against the first parameter, one line per value "
                   "of the second (.png, .svg or .pdf)")
    p.add_argument("--y", default="value", metavar="COLUMN",
                   help="the column the plot draws (default: value; e.g. performance)")
    p.add_argument("--logy", action="store_true", help="log scale for the plot's y axis")
    p.add_argument("--normalize", action="store_true",
                   help="plot the column divided by its value at the first grid point "
                   "(as Gables Fig. 8, normalized to f = 0, I = 1)")
    p.set_defaults(run=run)


def run(args):
    app, arch, mapping = load_mapped_inputs(args, "sweep")
    ranges = [parse_range(text) for text in args.ranges]
    if args.plot:
        from mapping.plots.figure_io import plot_format
        plot_format(args.plot)  # a bad extension fails before the evaluations
    result = sweep(app, arch, mapping, ranges, metric=args.metric, aggregate=args.aggregate,
                   params=parse_params(args.fixed))
    text = to_csv(result)
    if args.output:
        write_atomically(args.output, text, inputs=args.files)
    else:
        sys.stdout.write(text)
    if args.plot:
        from mapping.plots.sweep import plot_sweep
        ev = result.evaluations[0]
        title = f"{args.y} of '{ev.mapping}' ({ev.metric}, {ev.aggregate})"
        plot_sweep(result.columns, result.rows, ranges, args.plot, y=args.y, logy=args.logy,
                   normalize=args.normalize, title=title, inputs=args.files)
    return 0
