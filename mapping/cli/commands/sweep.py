"""``mapeval sweep``: evaluate a mapping over a grid of parameter values, streamed."""
from __future__ import annotations

import sys

from mapping.cli.inputs import (add_aggregate_option, add_choice_options, add_mapping_options,
                            add_metric_option, add_param_option, load_mapped_inputs,
                            parse_params)
from mapping.progress import add_progress_option


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="evaluate a mapping over a grid of parameters",
        description="Evaluate one mapping at every point of a grid of parameter values (the "
        "product of the --range options) and write one CSV row per point as it is "
        "evaluated: the parameter values, value, throughput and performance (metric time), "
        "then one column per element. A grid larger than the sweep limit is refused "
        "(--limit sweep=N raises it). -p/--param NAME=VALUE sets a parameter that is not "
        "swept; the old spelling --param NAME=START:STOP:N[:log] of a range still works.",
        epilog="example: mapeval sweep examples/gables/fig8.sdf examples/gables/"
        "snapdragon835.moa examples/gables/fig8.map --range f=0:1:9 --range I=1:1024:6:log "
        "-o out/fig8.csv --plot out/fig8.png --y performance")
    p.add_argument("files", nargs="+", metavar="FILE", help="APP.sdf ARCH.moa [MAP.map]")
    add_mapping_options(p)
    add_choice_options(p)
    add_metric_option(p)
    add_aggregate_option(p)
    add_param_option(p)
    p.add_argument("-r", "--range", dest="ranges", action="append", default=[],
                   metavar="NAME=START:STOP:N[:log]",
                   help="a swept parameter: N values from START to STOP (geometric with "
                   ":log); repeat for a grid (the first varies slowest)")
    p.add_argument("-o", "--output", metavar="OUT.csv",
                   help="write the CSV here, or to a FIFO or device (default: standard "
                   "output)")
    p.add_argument("--plot", metavar="FILE",
                   help="also plot a column against the first parameter, one line per value "
                   "of the second (.png, .svg or .pdf)")
    p.add_argument("--y", default="value", metavar="COLUMN",
                   help="the column the plot draws (default: value; e.g. performance)")
    p.add_argument("--logy", action="store_true", help="log scale for the plot's y axis")
    p.add_argument("--normalize", action="store_true",
                   help="plot the column divided by its value at the first grid point "
                   "(as Gables Fig. 8, normalized to f = 0, I = 1)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document (columns, rows) instead of the CSV on "
                   "standard output")
    add_progress_option(p)
    p.set_defaults(run=run)


def split_params(items: list[str], ranges: list[str]) -> tuple[list[str], list[str]]:
    """``-p NAME=VALUE`` values and ranges: a ``-p/--param`` whose value holds ``:`` is a
    range in the old spelling ``--param NAME=START:STOP:N[:log]``."""
    values = [item for item in items if ":" not in item]
    return values, [item for item in items if ":" in item] + list(ranges)


def run(args):
    from mapping.errors import InputError
    from mapping.output import check_output, open_output
    from mapping.evaluation.sweep import iter_grid, iter_sweep, parse_range, write_csv

    values, range_texts = split_params(args.param, args.ranges)
    if not range_texts:
        raise InputError("mapeval sweep: give at least one --range NAME=START:STOP:N[:log]")
    ranges = [parse_range(text) for text in range_texts]
    iter_grid(ranges)                         # duplicates and the sweep limit, before work
    if args.plot:
        from mapping.plots.figure_io import plot_format
        plot_format(args.plot)                # a bad extension fails before the evaluations
        check_output(args.plot, args.files, what="the plot")
    if args.output:
        check_output(args.output, args.files, (".csv",), "the sweep")
    app, arch, mapping = load_mapped_inputs(args, "sweep")
    points = iter_sweep(app, arch, mapping, ranges, metric=args.metric,
                        aggregate=args.aggregate, params=parse_params(values))
    first = next(points)                      # a bad metric or parameter: before any output
    rows: list[dict] = []
    keep = rows.append if args.plot or args.json else None

    def streamed():
        yield first
        yield from points

    from mapping.progress import progress_bar
    from mapping.evaluation.sweep import grid_size
    bar = progress_bar(args, grid_size(ranges), "sweep", "points")
    if args.output:
        with open_output(args.output, inputs=args.files, suffixes=(".csv",),
                         what="the sweep") as stream, bar:
            columns = write_csv(stream, ranges, streamed(), args.metric, keep, bar)
    elif args.json:
        import io
        with bar:
            columns = write_csv(io.StringIO(), ranges, streamed(), args.metric, keep, bar)
    else:
        with bar:
            columns = write_csv(sys.stdout, ranges, streamed(), args.metric, keep, bar)
    if args.json:
        from mapping.output import print_json
        print_json({"columns": list(columns), "rows": [[r.get(c) for c in columns]
                                                       for r in rows]})
    if args.plot:
        from mapping.plots.sweep import plot_sweep, sweep_units
        ev = first[1]
        title = f"{args.y} of '{ev.mapping}' ({ev.metric}, {ev.aggregate})"
        plot_sweep(columns, rows, ranges, args.plot, y=args.y, logy=args.logy,
                   normalize=args.normalize, title=title, inputs=args.files,
                   units=sweep_units(arch, args.metric, columns, ranges))
    return 0
