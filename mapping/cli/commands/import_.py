"""``mapeval import FORMAT``: other formats into mapeval's files.

The formats are :data:`IMPORT_FORMATS`, one line each naming the format's
:class:`dsl.importers.Importer` (its options and its conversion, in ``dsl/importers/``);
every format's files are written here, the same way: ``-o`` atomically and never over an
input, standard output without it.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dsl.importers import Importer
from mapping.output import check_output, print_json, write_atomically
from mapping.registry import Registry

#: format -> its importer ("module:IMPORTER", a :class:`dsl.importers.Importer`; or a
#: function(parser) setting the options and ``run``) and a one-line help
IMPORT_FORMATS: Registry = Registry("import format")
IMPORT_FORMATS.add("profile", "dsl.importers.profile:IMPORTER",
                   "a function-level profile (Kim & Edwards) as a single-rate SDF graph")
IMPORT_FORMATS.add("sdf3", "dsl.importers.sdf3:IMPORTER", "an SDF3 XML graph as a .sdf file")
IMPORT_FORMATS.add("preesm", "dsl.importers.preesm:IMPORTER",
                   "a PREESM PiSDF graph, S-LAM architecture and scenario as .sdf and .moa")
IMPORT_FORMATS.add("ert", "dsl.importers.ert:IMPORTER",
                   "Empirical Roofline Toolkit results as roofline PE parameters (.moa)")
IMPORT_FORMATS.add("gpu-table", "dsl.importers.gpu_table:IMPORTER",
                   "GPU measurement tables of one kernel as a study (application, GPUs, "
                   "mappings, measurements)")
IMPORT_FORMATS.add("onnx", "dsl.importers.onnx:IMPORTER",
                   "an ONNX neural network as a single-rate SDF graph with each operator's "
                   "arithmetic and bytes (needs the onnx extra)")


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="read other formats (" + ", ".join(IMPORT_FORMATS) + ") into .sdf, "
        ".moa, .map and .csv files",
        description="Read another format into mapeval's files: "
        + IMPORT_FORMATS.describe() + ".")
    kinds = p.add_subparsers(dest="kind", metavar="FORMAT", parser_class=type(p))
    for fmt in IMPORT_FORMATS:
        kinds.add_parser(fmt, help=IMPORT_FORMATS.help(fmt)).set_defaults(
            configure=lambda parser, fmt=fmt: configure(parser, fmt))
    p.set_defaults(run=lambda args: p.error("choose what to import: "
                                            + ", ".join(IMPORT_FORMATS)))


def configure(parser, fmt: str) -> None:
    """The options of ``mapeval import FMT``, from its importer."""
    importer = IMPORT_FORMATS.get(fmt)
    if not isinstance(importer, Importer):
        importer(parser)        # a function defining the options and ``run`` itself
        return
    parser.description = importer.description
    if importer.epilog:
        parser.epilog = importer.epilog
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
    importer.arguments(parser)
    parser.set_defaults(run=run, importer=importer)


def run(args) -> int:
    """Convert, then write what the importer made."""
    what = f"the output of 'mapeval import {args.kind}'"
    output = getattr(args, "output", None)
    result = args.importer.convert(args)
    inputs = [Path(p) for p in result.inputs]
    if result.text is not None and output is not None:
        check_output(output, inputs, result.suffixes or None, what)
    for target in result.files:
        check_output(target, inputs, None, what)
    for target, text in result.files.items():
        write_atomically(target, text, inputs=inputs, what=what)
    if result.text is not None:
        if output is not None:
            write_atomically(output, result.text, inputs=inputs,
                             suffixes=result.suffixes or None, what=what, note=result.note)
        elif result.document is None:
            sys.stdout.write(result.text)
    for message in result.messages:
        print(message, file=sys.stderr)
    if result.document is not None:
        print_json(result.document)
    return 0


def run_format(fmt: str, **options) -> int:
    """``mapeval import FMT`` with ``options`` as its parsed arguments (for commands that
    end by importing, as ``mapeval profile --sdf``)."""
    return run(argparse.Namespace(kind=fmt, importer=IMPORT_FORMATS.get(fmt), **options))


# --------------------------------------------------------------------------- plots of imports

def profile_plot_options(p) -> None:
    """The options of ``mapeval plot breakdown|heatmap``: runs as imported profiles."""
    p.add_argument("files", nargs="+", metavar="RUN",
                   help="an imported profile (.sdf from 'mapeval import profile') or a "
                   "profile's directory, one per run")
    p.add_argument("--inclusive", action="store_true",
                   help="for profile directories: each entry function absorbs its callees")
    p.add_argument("--entry", action="append", metavar="F1,F2,...",
                   help="for profile directories: the entry functions of --inclusive")


def profile_plot_source(args, command: str) -> dict:
    """``runs``: the :class:`~moc.breakdown.Breakdown` of every RUN."""
    import dsl
    from dsl.importers.profile import entry_names, import_profile
    from moc.breakdown import breakdown

    entries = entry_names(args.entry)
    runs = []
    for item in args.files:
        path = Path(item)
        if path.suffix.lower() == ".sdf":
            for graph in dsl.load_sdf(path):
                runs.append(breakdown(graph.bind()))
        else:
            graph = import_profile(path, inclusive=args.inclusive, entries=entries).graph
            runs.append(breakdown(graph))
    return {"runs": runs}


def ert_plot_options(p) -> None:
    """The options of ``mapeval plot roofline``."""
    from dsl.importers.ert import options
    p.add_argument("path", metavar="FILE.json", help="ERT's roofline.json")
    options(p)


def ert_plot_source(args, command: str) -> dict:
    from dsl.importers.ert import analysis
    return {"analysis": analysis(args)[1]}


def working_set_options(p) -> None:
    """The options of ``mapeval plot working-set``."""
    p.add_argument("path", metavar="FILE.txt",
                   help="ERT's bandwidth-against-working-set file (..._bandwidth_vs_wss.max.txt)")
    from mapping.options import POSITIVE_WHOLE
    p.add_argument("--levels", type=POSITIVE_WHOLE, default=3, metavar="N",
                   help="cache levels to fit above the last level (default 3)")
    p.add_argument("--json", action="store_true", help="print the fit as JSON")


def working_set_source(args, command: str) -> dict:
    """The :class:`~moa.working_set.WorkingSetFit` of ``args.path``, printed."""
    from dsl.importers.ert import read_working_set
    from mapping.errors import InputError
    from moa.working_set import fit_working_set

    ws, gbs = read_working_set(args.path)
    try:
        fit = fit_working_set(ws, gbs, args.levels)
    except ValueError as exc:
        raise InputError(f"{command}: {args.path}: {exc}") from None
    if args.json:
        print_json(fit.to_dict())
    else:
        print(fit)
    return {"fit": fit, "all_ws": ws, "all_bandwidths": gbs}
