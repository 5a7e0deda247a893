"""``mapeval import profile|sdf3``: other formats into a ``.sdf`` application."""
from __future__ import annotations

import sys
from pathlib import Path

from mapping.errors import InputError
from mapping.output import write_atomically

PROFILE_HELP = """\
PATH is a directory (or one file in it) holding either
  the text logs of Kim & Edwards' pintool, whitespace-separated, '#' comments:
    function   ID NAME                    one line per invocation, in call order
    subcalls   ID: CHILD CHILD ...        the call tree (needed by --inclusive)
    icount     ID COUNT                   arithmetic/logic instructions of the invocation
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


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="read other formats (a program profile, SDF3 XML) into a .sdf file",
        description="Read another format into an SDF application (.sdf).")
    kinds = p.add_subparsers(dest="kind", metavar="KIND", parser_class=type(p))

    prof = kinds.add_parser(
        "profile", help="a function-level profile (Kim & Edwards) as a single-rate SDF graph",
        description="Read a function-level program profile into a single-rate SDF graph.",
        epilog=PROFILE_HELP + "\nexample: mapeval import profile prof/ --inclusive -o app.sdf",
        formatter_class=_raw())
    prof.add_argument("path", metavar="PATH", help="the profile's directory (or a file in it)")
    prof.add_argument("-o", "--output", metavar="APP.sdf",
                      help="write the .sdf here (default: standard output)")
    prof.add_argument("--inclusive", action="store_true",
                      help="each entry function absorbs its callees (its call tree)")
    prof.add_argument("--entry", action="append", metavar="F1,F2,...",
                      help="the entry functions of --inclusive (implies it; default: the "
                      "functions called by the root invocation)")
    prof.add_argument("--name", help="name of the graph (default: the directory's name)")
    prof.set_defaults(run=run_profile)

    sdf3 = kinds.add_parser(
        "sdf3", help="an SDF3 XML graph as a .sdf file",
        description="Read an SDF3 XML file (actors, port rates, channels, initial tokens, "
        "token sizes, execution times as actor attributes) and write it as .sdf.",
        epilog="example: mapeval import sdf3 h263.xml -o h263.sdf")
    sdf3.add_argument("path", metavar="FILE.xml")
    sdf3.add_argument("-o", "--output", metavar="APP.sdf",
                      help="write the .sdf here (default: standard output)")
    sdf3.set_defaults(run=run_sdf3)
    p.set_defaults(run=lambda args: p.error("choose what to import: profile or sdf3"))


def _raw():
    import argparse
    return argparse.RawDescriptionHelpFormatter


def _emit(text: str, output: str | None, inputs) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    if Path(output).suffix.lower() != ".sdf":
        raise InputError(f"-o {output}: the output of 'mapeval import' is a .sdf file")
    write_atomically(output, text, inputs=inputs)


def run_profile(args):
    import dsl
    from dsl.profile import import_profile, profile_form

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
    _emit(text, args.output, [directory / f for f in files])
    if args.output is not None:
        g = result.graph
        print(f"wrote {args.output}: graph '{g.name}', {len(g.actors)} actors, "
              f"{len(g.channels)} channels", file=sys.stderr)
    return 0


def run_sdf3(args):
    import dsl

    path = Path(args.path)
    if path.suffix.lower() != ".xml":
        raise InputError(f"'{path}': expected an SDF3 .xml file")
    if not path.exists():
        raise InputError(f"'{path}': no such file")
    graph = dsl.read_sdf3(path)
    text = f"# Imported by 'mapeval import sdf3' from {path}\n" + dsl.format_sdf(graph)
    if not text.endswith("\n"):
        text += "\n"
    _emit(text, args.output, [path])
    return 0
