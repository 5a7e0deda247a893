"""Options and input loading shared by ``fidelity``, ``fit`` and ``plot fidelity|gsla``."""
from __future__ import annotations

import sys
from pathlib import Path

import dsl
from dsl.diagnostics import format_located
from mapping.calibration.assessment import Assessment
from mapping.calibration.measurements import Measurements, read_measurements
from mapping.calibration.residuals import RESIDUALS
from mapping.calibration.row_model import RowModel
from mapping.calibration.study import run_study
from mapping.calibration.validation import FOLDS
from mapping.cli.diagnostics import report
from mapping.cli.inputs import (add_mapping_options, add_model_options, choose_mapping,
                                classify, load_single, one, parse_params)
from mapping.errors import InputError
from mapping.options import FRACTION, NATURAL, POSITIVE_WHOLE
from mapping.progress import add_progress_option, progress_bar
from moc.record import record

FILES_HELP = "APP.sdf ARCH.moa DATA.csv [MAP.map] (the .sdf is optional with --quanta-column)"


def add_measurement_options(p, fit_option: str = "--fit", fit_required: bool = False) -> None:
    """The options of ``mapeval fidelity`` (``fit_option``, ``--fit`` or ``--free``, names
    the free parameters; the other spelling is its alias, so that scripts written for
    either command work with both).  The positional files may stand anywhere among the
    options (argparse's intermixed parsing)."""
    p.add_argument("files", nargs="+", metavar="FILE", help=FILES_HELP)
    p.add_argument("--measured", required=True, metavar="COLUMN",
                   help="the CSV column holding the measured value of each row; a unit in "
                   "its header ('time [ms]', named with or without it) is converted to "
                   "the metric's unit in the .moa")
    p.add_argument("--measured-unit", metavar="UNIT",
                   help="the unit of the measured column when its header gives none "
                   "(ms, us, J, mW, ...), converted to the metric's unit in the .moa")
    g = p.add_argument_group("the mapping of each row (one of)")
    g.add_argument("--mapping-column", metavar="COLUMN",
                   help="a column whose cells name mappings of the .map file")
    g.add_argument("--actor-column", metavar="TEMPLATE",
                   help="one column per actor naming its PE, e.g. 't_{actor}'")
    g.add_argument("--quanta-column", metavar="TEMPLATE",
                   help="per-element activity instead of a mapping, e.g. 'quanta_{element}'")
    g.add_argument("--tokens-column", metavar="TEMPLATE",
                   help="token counts per element with --quanta-column, e.g. 'tokens_{element}' "
                   "(default: one token per element)")
    g.add_argument("--attribute-column", action="append", metavar="NAME=TEMPLATE",
                   help="with --quanta-column, a token attribute per element, e.g. "
                   "'gamma=gamma_{element}' (GSLA's parallelism) or 'S=S_{element}'; "
                   "repeat for several; an element without the column has tokens "
                   "without the attribute (its model's default)")
    add_mapping_options(p)
    add_model_options(p)
    free_help = ("free parameters ELEMENT.METRIC.PARAM, TYPE.METRIC.PARAM or the bare name "
                 "of a param of the .sdf or .moa, comma-separated "
                 "(e.g. gpu.time.alpha,gpu.time.beta,p_static); * and ? are wildcards over "
                 "every name these accept ('*.time.efficiency', 'hide_*', "
                 "'big[*].time.alpha', 'A15.*'); each value stays "
                 "within the bounds its model declares")
    if fit_option == "--fit":
        free_help += ": fit them on the train rows, report fidelity on the test rows"
    alias = {"--fit": "--free", "--free": "--fit"}[fit_option]
    free_help += f" ({alias} is an alias)"
    p.add_argument(fit_option, alias, dest="free", metavar="PARAMS", required=fit_required,
                   help=free_help)
    p.add_argument("--starts", type=NATURAL, default=8, metavar="N",
                   help="seeded random starts of a non-linear fit besides the files' values, "
                   "each start value times 10^U(-2,2) within the bounds; the best fit is "
                   "kept (default 8)")
    p.add_argument("--residuals", choices=RESIDUALS.names(), default="absolute",
                   help="what a fit minimises: " + RESIDUALS.describe() + ". Use relative "
                   "when the measurements span decades (microseconds to seconds) and the "
                   "small ones matter, e.g. ranking within one input size (--within), and "
                   "a robust rule when a few rows are far off the rest (default absolute)")
    p.add_argument("--test-fraction", type=FRACTION, default=0.2, metavar="F",
                   help="fraction of the rows held out for testing when fitting (default 0.2)")
    p.add_argument("--seed", type=NATURAL, default=0,
                   help="seed of the train/test split, the folds and the repeats (default 0)")
    v = p.add_argument_group("validation")
    v.add_argument("--folds", type=FOLDS, metavar="K",
                   help="K-fold cross-validation: fit on K-1 folds, rank the held-out one; "
                   "each figure is the mean over the folds (without --fit: the model's "
                   "own figures on each fold; --test-fraction does not apply)")
    v.add_argument("--folds-by", metavar="COLUMN",
                   help="leave one group out: each value of COLUMN (e.g. gpu) is the test "
                   "fold in turn, the model fitted on the other rows; the JSON's folds give "
                   "each group's tau, median relative error (mdape) and value (group)")
    v.add_argument("--repeats", type=POSITIVE_WHOLE, metavar="R",
                   help="the mean over R seeded train/test splits of --test-fraction "
                   "(split r uses seed --seed + r)")
    v.add_argument("--within", metavar="COLUMN",
                   help="also rank within groups of rows sharing this column's value "
                   "(fidelity_within, tau_within: the alternatives of one workload) and "
                   "report each group's own figures ('groups' in JSON)")
    v.add_argument("--fit-by", metavar="COLUMN",
                   help="one parameter set per value of this column: each group fitted on "
                   "its own training rows, the splits (and folds) made within each group; "
                   "--within defaults to it. To share some parameters and not others, "
                   "fit one pooled model with PARAM@COLUMN for the group-specific ones "
                   "(e.g. --fit A7.energy.alpha,A15.energy.alpha@config,p_static)")
    p.add_argument("--skip-bad-rows", action="store_true",
                   help="skip rows with a bad cell instead of stopping, and say how many")
    add_progress_option(p)


@record
class Study:
    """Everything a measurement command loaded and computed."""

    app: object | None
    arch: object
    files: list[Path]
    moa_path: Path
    measurements: Measurements
    assessment: Assessment
    skipped: int
    problems: list[str]


def load_study(args, command: str) -> Study:
    inputs = classify(args.files, ("sdf", "moa", "map", "csv"))
    csv_path = one(inputs.csv, "csv", command)
    moa_path = one(inputs.moa, "moa", command)
    arch = load_single(moa_path, "moa", args.architecture)
    columns = [c for c in (args.mapping_column, args.actor_column, args.quanta_column) if c]
    if len(columns) > 1:
        raise InputError(f"mapeval {command}: give only one of --mapping-column, "
                         "--actor-column and --quanta-column")
    if columns and (args.mapping or args.map):
        raise InputError(f"mapeval {command}: --mapping/--map fix one mapping for every row; "
                         "they do not go with a per-row mapping column")
    sdf_path = one(inputs.sdf, "sdf", command, required=args.quanta_column is None)
    app = load_single(sdf_path, "sdf", args.graph) if sdf_path is not None else None
    map_path = one(inputs.map, "map", command, required=False)

    kwargs = {}
    if args.mapping_column:
        if map_path is None:
            raise InputError(f"mapeval {command}: --mapping-column needs a .map file")
        kwargs = dict(mapping_column=args.mapping_column, mappings=dsl.load_map(map_path))
    elif args.actor_column:
        kwargs = dict(actor_column=args.actor_column, actors=list(app.actors),
                      pes=arch.pes, cns=arch.cns)
    elif args.quanta_column:
        kwargs = dict(quanta_column=args.quanta_column, tokens_column=args.tokens_column,
                      attribute_columns=_attribute_columns(args.attribute_column),
                      elements=list(arch.elements))
    else:
        if map_path is None and args.map is None:
            raise InputError(f"mapeval {command}: say where each row's mapping comes from: "
                             "a .map file (--mapping NAME among several, or "
                             "--mapping-column COLUMN), --map ACTOR=PE,..., --actor-column "
                             "'t_{actor}' or --quanta-column 'quanta_{element}'")
        kwargs = dict(mapping=choose_mapping(map_path, args.mapping, args.map))
    if args.tokens_column and not args.quanta_column:
        raise InputError("--tokens-column needs --quanta-column")
    if args.attribute_column and not args.quanta_column:
        raise InputError("--attribute-column needs --quanta-column")
    params = list(app.params) if app is not None else []
    params += [p for p in arch.params if p not in params]
    data = read_measurements(csv_path, args.measured, params=params,
                             skip_bad_rows=args.skip_bad_rows, measured_unit=args.measured_unit,
                             metric_unit=arch.unit(args.metric), metric=args.metric, **kwargs)
    rows = list(data.rows)
    problems = list(data.problems)
    overrides = parse_params(args.param)
    if args.skip_bad_rows:
        # Rows whose evaluation fails (a route missing, a parameter out of range) go too.
        model = RowModel(arch, rows, args.metric, args.aggregate, app, overrides, str(csv_path))
        good = []
        for i, row in enumerate(rows):
            try:
                model.value(i)
                good.append(row)
            except InputError as exc:
                problems.append(format_located(str(exc),
                                               exc.origin or (str(csv_path), row.line)))
        rows = good
        if not rows:
            raise InputError(f"{csv_path}: no row left to evaluate ({len(problems)} skipped); "
                             f"the first: {problems[0]}")
    assessment = _assess(args, arch, rows, app, overrides, str(csv_path), data)
    files = [Path(f) for f in args.files]
    return Study(app, arch, files, moa_path, data, assessment, len(problems), problems)


def _attribute_columns(items) -> dict[str, str]:
    """``['gamma=gamma_{element}', ...]`` → ``{'gamma': 'gamma_{element}'}``."""
    out: dict[str, str] = {}
    for item in items or ():
        name, eq, template = (part.strip() for part in item.partition("="))
        if not eq or not name or not template:
            raise InputError(f"--attribute-column '{item}': expected NAME=TEMPLATE, e.g. "
                             "gamma=gamma_{element}")
        if name in ("quanta", "count"):
            raise InputError(f"--attribute-column '{item}': '{name}' is not an attribute "
                             "(--quanta-column and --tokens-column give it)")
        if name in out:
            raise InputError(f"--attribute-column: attribute '{name}' is given twice")
        out[name] = template
    return out


def _assess(args, arch, rows, app, overrides, source, data) -> Assessment:
    """The study the options ask for (:func:`~mapping.calibration.study.run_study`)."""
    if getattr(args, "measured_element", None) and data.unit != data.column_unit:
        raise InputError("--measured-element reads its columns as they are, so the table "
                         f"must be in the metric's unit ({data.unit}), not {data.column_unit}")
    with progress_bar(args, None, "fit", "starts") as bar:
        return run_study(
            arch, rows, app=app, metric=args.metric, aggregate=args.aggregate, fit=args.free,
            folds=getattr(args, "folds", None), repeats=getattr(args, "repeats", None),
            folds_by=getattr(args, "folds_by", None), within=getattr(args, "within", None),
            fit_by=getattr(args, "fit_by", None),
            measured_element=getattr(args, "measured_element", None),
            residuals=getattr(args, "residuals", "absolute"), starts=args.starts,
            seed=args.seed, test_fraction=args.test_fraction, params=overrides,
            source=source, columns=data.columns, progress=bar)


def report_problems(study: Study, stream=None) -> None:
    """Skipped rows and fit warnings on stderr (never on stdout)."""
    stream = stream or sys.stderr
    if study.skipped:
        print(f"mapeval: skipped {study.skipped} bad row{'s' if study.skipped != 1 else ''} "
              f"of {study.measurements.path}", file=stream)
        for text in study.problems[:5]:
            print(f"  {text}", file=stream)
        if len(study.problems) > 5:
            print(f"  ... and {len(study.problems) - 5} more", file=stream)
    fit = study.assessment.fit
    for text in (fit.warnings if fit else ()):
        report(text, "warning", stream=stream)
