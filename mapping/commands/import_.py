"""``mapeval import profile|sdf3``: other formats into a ``.sdf`` application."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mapping.errors import InputError
from mapping.output import check_output, write_atomically
from mapping.registry import Registry

PROFILE_HELP = """\
PATH is a directory (or one file in it) holding either
  the text logs of Kim & Edwards' pintool, whitespace-separated, '#' comments:
    function   ID NAME                    one line per invocation, in call order
    subcalls   ID: CHILD CHILD ...        the call tree (needed by --inclusive)
    icount     ID COUNT [OTHER]           arithmetic/logic (and optionally all other) instructions
    xfers      CONSUMER PRODUCER BYTES    bytes CONSUMER read that PRODUCER wrote
  or two CSV files with a header row:
    functions.csv  function,instructions
    transfers.csv  producer,consumer,bytes

The .sdf graph is single-rate (one iteration = one program run): an actor per function
with ops = quanta = its instructions; a channel per producer -> consumer pair with
size = bytes. A self-loop (a function's transfers to itself), or a channel back to a
function called earlier, carries one initial token (delay = 1).

--inclusive: every invocation belongs to the outermost invocation on its call path whose
function is an entry (default entries: the functions the root, e.g. main, calls
directly); an entry's actor counts its whole call tree, and traffic within that tree
becomes its self-loop (local communication).
"""


def _profile_arguments(prof) -> None:
    prof.description = "Read a function-level program profile into a single-rate SDF graph."
    prof.epilog = PROFILE_HELP + "\nexample: mapeval import profile prof/ --inclusive -o app.sdf"
    prof.formatter_class = argparse.RawDescriptionHelpFormatter
    prof.add_argument("path", metavar="PATH", help="the profile's directory (or a file in it)")
    _output_option(prof)
    prof.add_argument("--inclusive", action="store_true",
                      help="each entry function absorbs its callees (its call tree)")
    prof.add_argument("--entry", action="append", metavar="F1,F2,...",
                      help="the entry functions of --inclusive (implies it; default: the "
                      "functions called by the root invocation)")
    prof.add_argument("--name", help="name of the graph (default: the directory's name)")
    prof.set_defaults(run=run_profile)


def _sdf3_arguments(sdf3) -> None:
    sdf3.description = ("Read an SDF3 XML file (actors, port rates, channels, initial "
                        "tokens, token sizes) and write it as .sdf. Execution times become "
                        "actor attributes exec_<type> (read by lookup()), the time on SDF3's "
                        "default processor (the last marked default) exec and quanta (exec "
                        "= 0 for an actor without one, as SDF3 times it), and the "
                        "processor types the actor's allowed list. Errors point at "
                        "FILE:LINE:COL.")
    sdf3.epilog = "example: mapeval import sdf3 h263.xml -o h263.sdf"
    sdf3.add_argument("path", metavar="FILE.xml")
    _output_option(sdf3)
    sdf3.set_defaults(run=run_sdf3)


def _output_option(p) -> None:
    p.add_argument("-o", "--output", metavar="APP.sdf",
                   help="write the .sdf here, or to a FIFO or device (default: standard "
                   "output)")


#: format -> the function defining its options (and its ``run``)
IMPORT_FORMATS: Registry = Registry("import format")
IMPORT_FORMATS.add("profile", _profile_arguments,
                   "a function-level profile (Kim & Edwards) as a single-rate SDF graph")
IMPORT_FORMATS.add("sdf3", _sdf3_arguments, "an SDF3 XML graph as a .sdf file")


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="read other formats (a program profile, SDF3 XML) into a .sdf file",
        description="Read another format into an SDF application (.sdf): "
        + IMPORT_FORMATS.describe() + ".")
    kinds = p.add_subparsers(dest="kind", metavar="FORMAT", parser_class=type(p))
    for fmt in IMPORT_FORMATS:
        kinds.add_parser(fmt, help=IMPORT_FORMATS.help(fmt)).set_defaults(
            configure=IMPORT_FORMATS.get(fmt))
    p.set_defaults(run=lambda args: p.error("choose what to import: "
                                            + ", ".join(IMPORT_FORMATS)))


def _emit(text: str, output: str | None, inputs, note: str = "") -> None:
    if output is None:
        sys.stdout.write(text)
        return
    write_atomically(output, text, inputs=inputs, suffixes=(".sdf",),
                     what="the output of 'mapeval import'", note=note)


def run_profile(args):
    import dsl
    from dsl.profile import import_profile, profile_form

    if args.output is not None:
        check_output(args.output, (), (".sdf",), "the output of 'mapeval import'")
    entries = None
    if args.entry:
        entries = [e.strip() for item in args.entry for e in item.split(",") if e.strip()]
    result = import_profile(args.path, inclusive=args.inclusive, entries=entries,
                            name=args.name)
    form, directory = profile_form(args.path)
    files = ("function", "subcalls", "icount", "xfers") if form == "logs" else \
        ("functions.csv", "transfers.csv")
    text = result.header(args.path) + dsl.format_sdf(result.graph)
    if not text.endswith("\n"):
        text += "\n"
    g = result.graph
    _emit(text, args.output, [directory / f for f in files],
          f"graph '{g.name}', {len(g.actors)} actors, {len(g.channels)} channels")
    return 0


def run_sdf3(args):
    import dsl

    path = Path(args.path)
    if path.suffix.lower() != ".xml":
        raise InputError(f"'{path}': expected an SDF3 .xml file")
    if not path.exists():
        raise InputError(f"'{path}': no such file")
    if args.output is not None:
        check_output(args.output, [path], (".sdf",), "the output of 'mapeval import'")
    graph = dsl.read_sdf3(path)
    text = f"# Imported by 'mapeval import sdf3' from {path}\n" + dsl.format_sdf(graph)
    if not text.endswith("\n"):
        text += "\n"
    _emit(text, args.output, [path])
    return 0
