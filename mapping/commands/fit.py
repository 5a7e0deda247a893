"""``mapeval fit``: fit cost-model parameters to measurements, write the fitted .moa."""
from __future__ import annotations

from pathlib import Path

import dsl
from mapping.commands.measured import add_measurement_options, load_study, report_problems
from mapping.errors import InputError
from mapping.output import print_json, write_atomically


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="fit cost parameters to measurements",
        description="Fit the free parameters (--free ELEMENT.METRIC.PARAM, "
        "TYPE.METRIC.PARAM or the bare name of a param of the .sdf or .moa, "
        "comma-separated; --fit is another spelling) to the measured "
        "column of a .csv table, each of which must be able to change the evaluated metric: "
        "bounded linear least squares where the prediction is linear in them (LSLA, "
        "GSLA, GSLA power with aggregate sum; NNLS when the bounds are >= 0), bounded "
        "non-linear least squares otherwise "
        "(max, exclusive, charge, bare params), from the files' values and --starts N "
        "random starts, keeping the best. Every value stays within the bounds its model "
        "declares (an efficiency in (0, 1]); one that ends on a bound is marked. "
        "The fit uses the train rows of a seeded split (--test-fraction 0 uses every row) "
        "and reports fidelity on the test rows. -o writes the architecture with the "
        "fitted values as a new .moa file (never over an input); a fitted param of the "
        ".moa becomes its new default there, one of the .sdf is reported with the "
        "-p NAME=VALUE that applies it.",
        epilog="example: mapeval fit examples/gsla/opencl.sdf examples/gsla/gpu.moa "
        "examples/gsla/mappings.map examples/gsla/measurements.csv --mapping gpu_offload "
        "--measured time_s --free gpu.time.alpha,gpu.time.beta -o fitted.moa")
    add_measurement_options(p, "--free", fit_required=True)
    add_element_option(p)
    p.add_argument("-o", "--output", metavar="FITTED.moa",
                   help="write the fitted architecture to this new .moa file")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(run=run)


def _check_output(path: str, files) -> Path:
    out = Path(path)
    if out.suffix.lower() != ".moa":
        raise InputError(f"-o {path}: the fitted architecture is written as a .moa file")
    for f in files:
        if out.exists() and Path(f).exists() and out.resolve() == Path(f).resolve():
            raise InputError(f"-o {path}: refusing to write over '{f}', an input of this "
                             "command; choose a new file name")
    return out


def add_element_option(p) -> None:
    """``--measured-element``, shared with ``mapeval fidelity``."""
    p.add_argument("--measured-element", action="append", metavar="ELEMENT=COLUMN,...",
                   help="fit each element on its own measured column, as the GSLA paper "
                   "fits host, kernel and interconnect on t_1, t_k and t_c "
                   "(host=t_1,gpu=t_k,pcie=-; '-' is the --measured total minus the other "
                   "columns, t_c = t_w - t_1 - t_k); the element's prediction is its own "
                   "part of the system value; every free parameter must belong to one of "
                   "these elements; fidelity is then reported on the --measured total")


def element_lines(assessment) -> list[str]:
    """The per-element fits in words (nothing without ``--measured-element``)."""
    if not assessment.elements:
        return []
    first = assessment.elements[0].result
    which = "test" if first.n_test and first.n_test != first.n else "training"
    lines = [f"per element, each on its own column (on the {first.n_test} {which} rows):"]
    width = max(len(e.element) for e in assessment.elements)
    for e in assessment.elements:
        column = "the rest" if e.column == "-" else e.column
        r = e.result
        lines.append(f"  {e.element:<{width}}  {column}: R^2 = {_f(r.r2)}, MAPE = "
                     f"{_f(r.mape, '.3g')} %, tau = {_f(r.tau)}")
    return lines


def run(args):
    out = _check_output(args.output, args.files) if args.output else None
    study = load_study(args, "fit")
    report_problems(study)
    fit = study.assessment.fit
    result = study.assessment.result
    # A fitted parameter of the .sdf has no place in the written .moa: say how to apply it.
    elsewhere = {fp.target: fit.values[fp.spec] for fp in fit.free
                 if fp.level == "param" and fp.target not in study.arch.params}
    apply = " ".join(f"-p {k}={v!r}" for k, v in elsewhere.items())
    grouped = sorted({fp.by for fp in fit.free if fp.label is not None})
    if out is not None and grouped:
        raise InputError(f"-o {args.output}: the fit has one value per group of "
                         f"{', '.join(grouped)} for some parameters, and one .moa file holds "
                         "one value of each; the values are in the output ('fitted', and "
                         "each group's in 'groups' with --json)")
    if out is not None:
        text = dsl.format_moa(fit.architecture)
        header = (f"# {fit.architecture.name}: parameters fitted by mapeval fit to "
                  f"{study.measurements.path} (column {args.measured}), {fit.method} on "
                  f"{result.n_train} rows\n# {', '.join(f'{k} = {v!r}' for k, v in fit.values.items())}\n")
        if elsewhere:
            header += f"# parameters of the .sdf, not in this file: apply them with {apply}\n"
        write_atomically(out, header + text, inputs=args.files)
    if args.json:
        document = {**fit.to_dict(), **{k: v for k, v in result.to_dict().items()
                                        if k != "fitted"}}
        document["output"] = str(out) if out is not None else None
        document["not_in_moa"] = dict(elsewhere)
        if args.skip_bad_rows:
            document["skipped"] = study.skipped
        if study.assessment.elements:
            document["elements"] = [e.to_dict() for e in study.assessment.elements]
        print_json(document)
        return 0
    width = max(len(k) for k in fit.values)
    how = fit.method if fit.residuals == "absolute" else \
        f"{fit.method} on {fit.residuals} residuals"
    print(f"fitted by {how} on {len(fit.train)} of {result.n} rows "
          f"(rank {fit.rank} of {len(fit.free)}):")
    at = dict(fit.at_bound)
    bounds = {fp.spec: b for fp, b in zip(fit.free, fit.bounds)}
    for k, v in fit.values.items():
        mark = f"  (on its {at[k]} bound: {bounds[k]})" if k in at else ""
        print(f"  {k:<{width}}  {v!r}{mark}")
    if fit.starts:
        won = "the files' values" if fit.best_start == 0 else f"random start {fit.best_start}"
        print(f"best of {fit.starts} starts: {won}")
    if result.splits is not None:
        kind = "folds" if result.folds is not None else "repeated splits"
        on = f"mean over {len(result.splits)} {kind} (refitted on each)"
    else:
        which = "test" if result.n_test and result.n_test != result.n else "training"
        on = f"on the {result.n_test} {which} rows"
    print(f"{on}: tau = {_f(result.tau)}, fidelity = "
          f"{_f(result.fidelity)}, MAPE = {_f(result.mape, '.3g')} %, R^2 = {_f(result.r2)}")
    if result.within is not None:
        print(f"within rows of equal {result.within}: tau_within = {_f(result.tau_within)}, "
              f"fidelity_within = {_f(result.fidelity_within)}")
        for line in result.group_lines()[1:]:
            print(line)
    for line in element_lines(study.assessment):
        print(line)
    if args.skip_bad_rows:
        print(f"skipped rows: {study.skipped}")
    if elsewhere:
        print(f"{', '.join(elsewhere)}: parameter{'s' if len(elsewhere) > 1 else ''} of the "
              f".sdf{', not written into ' + str(out) if out is not None else ''}; "
              f"apply with {apply}")
    return 0


def _f(value, spec=".4f"):
    import math
    return "n/a" if value is None or not math.isfinite(value) else format(value, spec)
