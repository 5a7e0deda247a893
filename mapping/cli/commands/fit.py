"""``mapeval fit``: fit cost-model parameters to measurements, write the fitted .moa."""
from __future__ import annotations

from pathlib import Path

import dsl
from mapping.cli.commands.measured import add_measurement_options, load_study, report_problems
from mapping.calibration.fidelity import figure_text
from mapping.errors import InputError
from mapping.output import check_output, print_json, write_atomically


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="fit cost parameters to measurements",
        description="Fit the free parameters (--fit ELEMENT.METRIC.PARAM, "
        "TYPE.METRIC.PARAM or the bare name of a param of the .sdf or .moa, "
        "comma-separated; --free is an alias) to the measured "
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
        "--measured time_s --fit gpu.time.alpha,gpu.time.beta -o fitted.moa")
    add_measurement_options(p, "--fit", fit_required=True)
    add_element_option(p)
    p.add_argument("-o", "--output", metavar="FITTED.moa",
                   help="write the fitted architecture to this new .moa file; a fit with "
                   "values per group (--fit-by, PARAM@COLUMN) writes one file per group, "
                   "named with {group} (fitted_{group}.moa)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(run=run)


#: the field of ``-o`` that names a group's file
GROUP_FIELD = "{group}"


def _moa_output(path: str, files) -> Path:
    """``path`` once :func:`~mapping.output.check_output` has let the fitted .moa be
    written there, before any work."""
    check_output(path, files, (".moa",), "the fitted architecture")
    return Path(path)


def _header(study, args, fit, result, values, apply: str, label: str | None = None) -> str:
    """The comment lines a fitted .moa starts with: where its values come from."""
    group = f" (group {label})" if label is not None else ""
    text = (f"# {fit.architecture.name}: parameters fitted by mapeval fit to "
            f"{study.measurements.path} (column {_column(study.measurements)}), {fit.method} on "
            f"{result.n_train} rows{group}\n"
            f"# {', '.join(f'{k} = {v!r}' for k, v in values.items())}\n")
    if apply:
        text += f"# parameters of the .sdf, not in this file: apply them with {apply}\n"
    return text


def _column(data) -> str:
    """The measured column and, when it was converted, from which unit to which."""
    converted = data.column_unit is not None and data.unit != data.column_unit
    return f"'{data.column}'" + (f" read from {data.column_unit} into {data.unit}"
                                 if converted else "")


def conversion_line(study, metric: str) -> str | None:
    """What the text output says of a measured column converted to the metric's unit."""
    data = study.measurements
    if data.column_unit is None or data.unit == data.column_unit:
        return None
    return f"measured column {_column(data)}: {metric} in the .moa's unit"


def units(study, metric: str) -> dict:
    """The ``units`` of a JSON document: the metric's (what predictions, measurements
    and fitted model parameters are in), the measured column's as read, and each fitted
    bare param's declared unit."""
    data = study.measurements
    return {"metric": study.arch.unit(metric), "measured": data.unit,
            "measured_column": data.column_unit,
            "params": {p: u for p in study.assessment.fit.values
                       if (u := study.arch.units.get(p)) is not None}
            if study.assessment.fit is not None else {}}


def _group_outputs(template: str, fit, columns: list[str], study):
    """``(label, path, values, architecture)`` for each group of a fit with one value
    per group (``--fit-by``, ``PARAM@COLUMN``): ``template`` names the files with
    ``{group}``, the group's value of the column (characters a file name should not
    hold become ``_``)."""
    import re

    from mapping.calibration.free import fitted_architecture, group_parameters

    if len(columns) > 1:
        raise InputError(f"-o {template}: the fit has one value per group of each of "
                         f"{', '.join(columns)}; one file per group needs a single column")
    if GROUP_FIELD not in template:
        raise InputError(f"-o {template}: the fit has one value per group of {columns[0]} "
                         "for some parameters, and one .moa file holds one value of each: "
                         f"name the files with {GROUP_FIELD} (e.g. fitted_{GROUP_FIELD}.moa), "
                         "one per group")
    column = columns[0]
    labels = list(dict.fromkeys(fp.label for fp in fit.free if fp.by == column))
    out, seen = [], {}
    for label in labels:
        name = re.sub(r"[^A-Za-z0-9._+-]", "_", label) or "_"
        if name in seen:
            raise InputError(f"-o {template}: groups '{seen[name]}' and '{label}' of "
                             f"{column} would write the same file ({name})")
        seen[name] = label
        path = _moa_output(template.replace(GROUP_FIELD, name), study.files)
        held = group_parameters(fit.free, column, label)
        values = {plain.spec: fit.values[spec] for plain, spec in held}
        arch = fitted_architecture(study.arch, [plain for plain, _ in held], list(values.values()))
        out.append((label, path, values, arch))
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
        lines.append(f"  {e.element:<{width}}  {column}: R^2 = {figure_text(r.r2)}, MAPE = "
                     f"{figure_text(r.mape, '.3g')} %, tau = {figure_text(r.tau)}")
    return lines


def run(args):
    out = _moa_output(args.output, args.files) if args.output else None
    study = load_study(args, "fit")
    report_problems(study)
    fit = study.assessment.fit
    result = study.assessment.result
    # A fitted parameter of the .sdf has no place in the written .moa: say how to apply it.
    elsewhere = {fp.target: fit.values[fp.spec] for fp in fit.free
                 if fp.level == "param" and fp.target not in study.arch.params}
    apply = " ".join(f"-p {k}={v!r}" for k, v in elsewhere.items())
    grouped = sorted({fp.by for fp in fit.free if fp.label is not None})
    written: list[str] = []
    if out is not None and grouped:
        for label, path, values, arch in _group_outputs(args.output, fit, grouped, study):
            write_atomically(path, _header(study, args, fit, result, values, apply, label)
                             + dsl.format_moa(arch), inputs=args.files)
            written.append(str(path))
    elif out is not None:
        write_atomically(out, _header(study, args, fit, result, fit.values, apply)
                         + dsl.format_moa(fit.architecture), inputs=args.files)
        written.append(str(out))
    if args.json:
        document = {**fit.to_dict(), **{k: v for k, v in result.to_dict().items()
                                        if k != "fitted"}}
        document["output"] = (written[0] if len(written) == 1 else written) \
            if written else None
        document["not_in_moa"] = dict(elsewhere)
        document["units"] = units(study, args.metric)
        if args.skip_bad_rows:
            document["skipped"] = study.skipped
        if study.assessment.elements:
            document["elements"] = [e.to_dict() for e in study.assessment.elements]
        print_json(document)
        return 0
    width = max(len(k) for k in fit.values)
    how = fit.method if fit.residuals == "absolute" else \
        f"{fit.method} on {fit.residuals} residuals"
    if (line := conversion_line(study, args.metric)) is not None:
        print(line)
    print(f"fitted by {how} on {len(fit.train)} of {result.n} rows "
          f"(rank {fit.rank} of {len(fit.free)}):")
    at = dict(fit.at_bound)
    bounds = {fp.spec: b for fp, b in zip(fit.free, fit.bounds)}
    for k, v in fit.values.items():
        mark = f"  (on its {at[k]} bound: {bounds[k]})" if k in at else ""
        declared = f" {study.arch.units[k]}" if k in study.arch.units else ""
        print(f"  {k:<{width}}  {v!r}{declared}{mark}")
    if fit.starts:
        won = "the files' values" if fit.best_start == 0 else f"random start {fit.best_start}"
        print(f"best of {fit.starts} starts: {won}")
    if result.splits is not None:
        kind = "folds" if result.folds is not None else "repeated splits"
        on = f"mean over {len(result.splits)} {kind} (refitted on each)"
    else:
        which = "test" if result.n_test and result.n_test != result.n else "training"
        on = f"on the {result.n_test} {which} rows"
    print(f"{on}: tau = {figure_text(result.tau)}, fidelity = "
          f"{figure_text(result.fidelity)}, MAPE = {figure_text(result.mape, '.3g')} %, "
          f"R^2 = {figure_text(result.r2)}")
    if result.within is not None:
        print(f"within rows of equal {result.within}: tau_within = "
              f"{figure_text(result.tau_within)}, "
              f"fidelity_within = {figure_text(result.fidelity_within)}")
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


