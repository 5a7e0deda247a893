"""``mapeval plot gsla``: measured points and the fitted surface over (S, gamma)."""
from __future__ import annotations

from mapping.commands.measured import add_measurement_options, load_study, report_problems


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="measured points and the model surface over (S, gamma)",
        description="Takes the options of 'mapeval fidelity' and draws, as in the GSLA "
        "paper's Figs. 5-9, the mean measurement of each (S, gamma) configuration against "
        "the (fitted, with --fit) model surface, and the model's error per configuration.",
        epilog="example: mapeval plot gsla examples/gsla/opencl.sdf examples/gsla/gpu.moa "
        "examples/gsla/mappings.map examples/gsla/measurements.csv --mapping gpu_offload "
        "--measured time_s --fit gpu.time.alpha,gpu.time.beta -o gsla.png")
    add_measurement_options(p, "--fit")
    p.add_argument("--x", default="S", metavar="PARAM",
                   help="parameter column on the first axis (default S)")
    p.add_argument("--y", default="gamma", metavar="PARAM",
                   help="parameter column on the second axis (default gamma)")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="the plot: .png, .svg or .pdf")
    p.set_defaults(run=run)


def run(args):
    from mapping.plots.figure_io import plot_format
    from mapping.plots.gsla import plot_gsla

    plot_format(args.output)
    study = load_study(args, "plot gsla")
    report_problems(study)
    plot_gsla(study.assessment, args.output, x=args.x, y=args.y, inputs=args.files,
              measured_label=f"measured {args.measured}")
    return 0
