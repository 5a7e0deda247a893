"""``mapeval plot mapping``: the per-element load of a mapping, bottleneck highlighted."""
from __future__ import annotations

from mapping.inputs import (add_mapping_options, add_model_options, load_mapped_inputs,
                            parse_params)


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="per-element load of a mapping (bar chart)",
        description="Draw one bar per element of the architecture: its value of the metric "
        "under the mapping (CNs scaled by lambda), the bottleneck highlighted.",
        epilog="example: mapeval plot mapping examples/gables/two_ip.sdf "
        "examples/gables/two_ip.moa examples/gables/two_ip.map -p f=0.75 -o load.svg")
    p.add_argument("files", nargs="+", metavar="FILE", help="APP.sdf ARCH.moa [MAP.map]")
    add_mapping_options(p)
    add_model_options(p)
    p.add_argument("--logy", action="store_true", help="log scale for the values")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="the plot: .png, .svg or .pdf")
    p.set_defaults(run=run)


def run(args):
    from mapping.plots.mapping_load import plot_mapping_load

    app, arch, mapping = load_mapped_inputs(args, "plot mapping")
    plot_mapping_load(app, arch, mapping, args.output, metric=args.metric,
                      aggregate=args.aggregate, params=parse_params(args.param),
                      logy=args.logy, inputs=args.files)
    return 0
