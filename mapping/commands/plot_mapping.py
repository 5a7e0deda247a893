"""``mapeval plot mapping``: the per-element load of a mapping, bottleneck highlighted."""
from __future__ import annotations

from mapping.inputs import (add_mapping_options, add_model_options, choose_mapping, classify,
                            load_single, one, parse_params)


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

    inputs = classify(args.files, ("sdf", "moa", "map"))
    app = load_single(one(inputs.sdf, "sdf", "plot mapping"), "sdf", args.graph)
    arch = load_single(one(inputs.moa, "moa", "plot mapping"), "moa", args.architecture)
    mapping = choose_mapping(one(inputs.map, "map", "plot mapping", required=False),
                             args.mapping, args.map)
    plot_mapping_load(app, arch, mapping, args.output, metric=args.metric,
                      aggregate=args.aggregate, params=parse_params(args.param),
                      logy=args.logy, inputs=args.files)
    return 0
