"""``mapeval plot fidelity``: predicted against measured, tau and fidelity in the title."""
from __future__ import annotations

from mapping.commands.measured import add_measurement_options, load_study, report_problems


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="predicted against measured values (tau in the title)",
        description="Takes the options of 'mapeval fidelity' and draws predicted against "
        "measured values, one point per row (test rows in colour when fitting).",
        epilog="example: mapeval plot fidelity examples/gsla/opencl.sdf examples/gsla/gpu.moa "
        "examples/gsla/mappings.map examples/gsla/measurements.csv --mapping gpu_offload "
        "--measured time_s --fit gpu.time.alpha,gpu.time.beta -o fidelity.png")
    add_measurement_options(p, "--fit")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="the plot: .png, .svg or .pdf")
    p.set_defaults(run=run)


def run(args):
    from mapping.plots.figure_io import plot_format
    from mapping.plots.fidelity import plot_fidelity

    plot_format(args.output)
    study = load_study(args, "plot fidelity")
    report_problems(study)
    plot_fidelity(study.assessment, args.output, inputs=args.files,
                  measured_label=f"measured {args.measured}", metric=args.metric)
    return 0
