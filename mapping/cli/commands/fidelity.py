"""``mapeval fidelity``: does the model order alternatives as the measurements do?"""
from __future__ import annotations

from mapping.cli.commands.fit import add_element_option, element_lines
from mapping.cli.commands.measured import add_measurement_options, load_study, report_problems
from mapping.output import print_json


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="rank agreement (Kendall tau) between model and measurements",
        description="Predict every row of a measurement table (.csv) with the model "
        "(.sdf + .moa) and report how well the predictions order the rows as the "
        "measurements do: Kendall's tau-b with its p-value, the fraction of pairs ordered "
        "alike, Spearman's rho, MAPE (percent) and R^2. With --fit (or --free), free parameters are first "
        "fitted on a seeded random train split and the figures are those of the test rows; "
        "--folds K and --repeats R average them over K folds or R splits, --within COLUMN "
        "adds the figures within groups of rows sharing a value (fidelity_within, "
        "tau_within). "
        "Columns named like a parameter set it for their row.",
        epilog="example: mapeval fidelity examples/gsla/opencl.sdf examples/gsla/gpu.moa "
        "examples/gsla/mappings.map examples/gsla/measurements.csv --mapping gpu_offload "
        "--measured time_s --fit gpu.time.alpha,gpu.time.beta --json")
    add_measurement_options(p, "--fit")
    add_element_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(run=run)


def run(args):
    study = load_study(args, "fidelity")
    report_problems(study)
    result = study.assessment.result
    if args.json:
        document = result.to_dict()
        if args.skip_bad_rows:
            document["skipped"] = study.skipped
        if study.assessment.elements:
            document["elements"] = [e.to_dict() for e in study.assessment.elements]
        print_json(document)
    else:
        print(result)
        for line in element_lines(study.assessment):
            print(line)
        if args.skip_bad_rows:
            print(f"skipped rows: {study.skipped}")
    return 0
