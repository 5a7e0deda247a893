"""``mapeval plot gables``: Gables' scaled rooflines of a mapping (Fig. 6 style)."""
from __future__ import annotations

from mapping.inputs import (add_choice_options, add_mapping_options, load_mapped_inputs,
                            parse_params)


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="Gables scaled rooflines of every IP and of memory",
        description="Draw the scaled rooflines of every roofline PE and of every bandwidth CN "
        "(memory, buses) of a mapping on log-log axes, with drop lines at each IP's "
        "operational intensity and at the harmonic-mean intensity I_avg, and the attainable "
        "performance marked (Gables, HPCA 2019, Fig. 6).",
        epilog="example: mapeval plot gables examples/gables/two_ip.sdf "
        "examples/gables/two_ip.moa examples/gables/two_ip.map -p f=0.75 -o fig6b.png")
    p.add_argument("files", nargs="+", metavar="FILE", help="APP.sdf ARCH.moa [MAP.map]")
    add_mapping_options(p)
    add_choice_options(p)
    p.add_argument("--aggregate", choices=["sum", "max", "exclusive", "schedule"],
                   help="aggregation of the marked attainable performance "
                   "(default: the architecture's)")
    p.add_argument("-p", "--param", action="append", metavar="NAME=VALUE", default=[],
                   help="override a parameter of the .sdf and/or .moa (repeatable)")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="the plot: .png, .svg or .pdf")
    p.set_defaults(run=run)


def run(args):
    from mapping.plots.gables import plot_gables

    app, arch, mapping = load_mapped_inputs(args, "plot gables")
    plot_gables(app, arch, mapping, args.output, params=parse_params(args.param),
                aggregate=args.aggregate, inputs=args.files)
    return 0
