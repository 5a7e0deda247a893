"""``mapeval plot KIND``: the plots of the field, one per entry of
:data:`mapping.plots.PLOTS`.

A kind takes the options of the command it draws for (``eval``, ``fidelity``,
``search``, ``logca`` or ``analyse``); this module loads what that command loads and
hands it to the kind's drawing function.  Only the chosen kind's options are defined."""
from __future__ import annotations

import importlib

from mapping.cli.commands import import_
from mapping.plots import PLOTS


def _eval_options(p) -> None:
    from mapping.cli.inputs import add_mapping_options, add_model_options
    p.add_argument("files", nargs="+", metavar="FILE", help="APP.sdf ARCH.moa [MAP.map]")
    add_mapping_options(p)
    add_model_options(p)


def _eval_source(args, command: str) -> dict:
    from mapping.cli.inputs import load_mapped_inputs, parse_params
    app, arch, mapping = load_mapped_inputs(args, command)
    return {"app": app, "arch": arch, "mapping": mapping, "metric": args.metric,
            "aggregate": args.aggregate, "params": parse_params(args.param)}


def _fidelity_options(p) -> None:
    from mapping.cli.commands.fit import add_element_option
    from mapping.cli.commands.measured import add_measurement_options
    add_measurement_options(p, "--fit")
    add_element_option(p)


def _fidelity_source(args, command: str) -> dict:
    from mapping.cli.commands.measured import load_study, report_problems
    study = load_study(args, command)
    report_problems(study)
    return {"assessment": study.assessment, "measured_label": f"measured {args.measured}",
            "metric": args.metric}


def _search_options(p) -> None:
    from mapping.cli.commands.search import add_search_options
    add_search_options(p)


def _search_source(args, command: str) -> dict:
    from mapping.cli.commands.search import run_search
    from mapping.errors import InputError
    if not args.objectives:
        args.objectives = "time,energy"
    if len([m for m in args.objectives.split(",") if m.strip()]) < 2:
        raise InputError(f"{command}: --objectives needs at least two metrics")
    result = run_search(args, command)
    return {"result": result, "units": _units(args, result.objectives)}


def _arch(args):
    """The architecture named by ``args`` (already loaded once by the command: no
    error left to report), for the units of the axes; None without a .moa file."""
    from mapping.cli.inputs import classify, load_single
    moa = classify(args.files, ("sdf", "moa", "map")).moa
    return load_single(moa[0], "moa", getattr(args, "architecture", None)) if moa else None


def _units(args, names) -> dict:
    """The unit of each metric in ``names`` by the architecture of ``args.files``."""
    arch = _arch(args)
    return {n: arch.unit(n) for n in names} if arch is not None else {}


def _logca_options(p) -> None:
    from mapping.cli.commands.logca import add_logca_options
    add_logca_options(p)


def _logca_source(args, command: str) -> dict:
    from mapping.cli.commands.logca import analysis_from_args
    return {"analysis": analysis_from_args(args)}


def _analyse_options(p) -> None:
    from mapping.cli.commands.analyse import add_analyse_options
    add_analyse_options(p)


def _analyse_source(args, command: str) -> dict:
    from mapping.cli.commands.analyse import load_analysis
    analysed = load_analysis(args, command)
    arch = _arch(args) if analysed.architecture is not None else None
    return {"analysed": analysed, "time_unit": arch.unit("time") if arch else None}


def _tradeoff_options(p) -> None:
    from mapping.cli.commands.analyse import add_analyse_options, add_tradeoff_options
    add_analyse_options(p)
    add_tradeoff_options(p, output=False)


def _tradeoff_source(args, command: str) -> dict:
    from mapping.cli.commands.tradeoff import load_front
    return {"front": load_front(args, command)}


#: the command whose options a plot takes -> (define them, load what they name)
TAKES = {
    "eval": (_eval_options, _eval_source),
    "fidelity": (_fidelity_options, _fidelity_source),
    "search": (_search_options, _search_source),
    "logca": (_logca_options, _logca_source),
    "analyse": (_analyse_options, _analyse_source),
    "tradeoff": (_tradeoff_options, _tradeoff_source),
    "roofline": (import_.ert_plot_options, import_.ert_plot_source),
    "working-set": (import_.working_set_options, import_.working_set_source),
    "profile": (import_.profile_plot_options, import_.profile_plot_source),
}


def _configure(kind: str):
    def configure(p) -> None:
        spec = PLOTS.get(kind)
        p.description = spec.description
        p.epilog = f"example: {spec.example}"
        TAKES[spec.takes][0](p)
        for flags, options in spec.options:
            p.add_argument(*flags, **options)
        p.add_argument("-o", "--output", required=True, metavar="FILE",
                       help="the plot: .png, .svg or .pdf")
        p.set_defaults(run=run, kind=kind)
    return configure


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="draw a plot (PNG, SVG or PDF by the extension of -o)",
        description="Draw one of the plots of the field. The format follows the extension "
        "of -o FILE: .png, .svg or .pdf.")
    kinds = p.add_subparsers(dest="kind", metavar="KIND", parser_class=type(p))
    for kind in PLOTS:
        kinds.add_parser(kind, help=PLOTS.help(kind)).set_defaults(configure=_configure(kind))
    p.set_defaults(run=lambda args: p.error("choose a plot kind: " + ", ".join(PLOTS)))


def run(args):
    from mapping.output import check_output
    from mapping.plots.figure_io import FORMATS, plot_format

    spec = PLOTS.get(args.kind)
    command = f"plot {args.kind}"
    plot_format(args.output)                 # a bad extension fails before any work
    check_output(args.output, getattr(args, "files", ()), tuple(FORMATS), "a plot")
    source = TAKES[spec.takes][1](args, command)
    dests = [kw.get("dest", flags[-1].lstrip("-").replace("-", "_"))
             for flags, kw in spec.options]
    options = {dest: getattr(args, dest) for dest in dests}
    module, _, function = spec.draw.partition(":")
    draw = getattr(importlib.import_module(module), function)
    draw(args.output, inputs=getattr(args, "files", ()), **source, **options)
    return 0
