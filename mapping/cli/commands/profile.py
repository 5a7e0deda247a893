"""``mapeval profile``: run a compiled program under mapeval's Valgrind tool and write the
four logs of Kim & Edwards' pintool, optionally importing them at once."""
from __future__ import annotations

import argparse
import os
import sys

HELP = """\
The program runs under Valgrind with mapeval's tool (built with gcc on first use into
$XDG_CACHE_HOME/mapeval or ~/.cache/mapeval). Its standard input, output and error are
yours. From the first call of --root (default main) down, the tool records
  function   ID NAME                    every invocation, in call order
  subcalls   ID: CHILD CHILD ...        the call tree
  icount     ID ARITH OTHER             arithmetic/logic and other instructions of the
                                        invocation itself (not its callees)
  xfers      CONSUMER PRODUCER BYTES    bytes CONSUMER read that PRODUCER last wrote
                                        (re-reading a byte before a new write: once)
Library functions (getchar, putchar, memcpy) are functions like the program's own.
An instruction is arithmetic/logic when it sets the condition codes or computes a value
with an integer or floating-point arithmetic, logic, shift or compare operation and
writes it to a register (not the stack or instruction pointer) or to memory.

OUTDIR is written whole once the run is over (a previous profile there is replaced;
a directory holding other files is refused). The program's exit status is reported; a
failing program still gives its profile (mapeval exits 0).

--exclude F drops every invocation of F with its whole call tree: their instructions and
every transfer from or to them are gone from the logs.
--sdf APP.sdf also imports the logs, as 'mapeval import profile OUTDIR -o APP.sdf' with
--inclusive, --entry and --name.
"""


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="profile a compiled program into the logs 'import profile' reads",
        description="Run a compiled program under mapeval's Valgrind tool and write a "
        "function-level profile (Kim & Edwards): instructions per function and bytes "
        "between producer and consumer functions.",
        epilog=HELP + "\nexample: mapeval profile -o prof --sdf rotate.sdf --inclusive -- "
        "./rotate < image.ppm > rotated.ppm",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", metavar="OUTDIR", required=True,
                   help="the directory of the four logs")
    p.add_argument("--root", default="main", metavar="F",
                   help="record from the first call of F down (default: main)")
    p.add_argument("--exclude", action="append", default=[], metavar="F1,F2,...",
                   help="drop these functions with their call trees")
    p.add_argument("--sdf", metavar="APP.sdf", help="also import the profile into APP.sdf")
    p.add_argument("--inclusive", action="store_true",
                   help="with --sdf: each entry function absorbs its callees")
    p.add_argument("--entry", action="append", metavar="F1,F2,...",
                   help="with --sdf: the entry functions of --inclusive (implies it)")
    p.add_argument("--name", help="with --sdf: the graph's name (default: OUTDIR's name)")
    p.add_argument("program", nargs=argparse.REMAINDER, metavar="-- PROGRAM ARGS",
                   help="the program to run and its arguments")
    p.set_defaults(run=run)


def _names(items) -> list[str]:
    return [n.strip() for item in items or () for n in item.split(",") if n.strip()]


def run(args):
    from mapping.cli.diagnostics import report
    from mapping.errors import InputError
    from mapping.output import announce, check_output
    from mapping.profiler import profile_program

    command = list(args.program)
    if command and command[0] == "--":
        command = command[1:]
    if args.sdf is None and (args.inclusive or args.entry or args.name):
        raise InputError("--inclusive, --entry and --name shape the import: give --sdf "
                         "APP.sdf too (or run 'mapeval import profile' on the logs)")
    if args.sdf is not None:
        check_output(args.sdf, [c for c in command[:1]], (".sdf",),
                     "the output of 'mapeval profile --sdf'")
        if os.path.realpath(args.sdf).startswith(os.path.realpath(args.output) + os.sep):
            raise InputError(f"refusing to write '{args.sdf}' inside '{args.output}': the "
                             "profile directory holds the four logs only")
    result = profile_program(command, args.output, root=args.root,
                             exclude=_names(args.exclude))
    status = result.status
    how = f"exited with status {status}" if status >= 0 else f"was killed by signal {-status}"
    print(f"mapeval profile: {command[0]} {how} ({result.seconds:.2f} s under Valgrind)",
          file=sys.stderr)
    announce(args.output, f"{result.invocations} invocations of {result.functions} "
             "functions")
    if result.excluded:
        print(f"mapeval profile: excluded {result.excluded} invocations", file=sys.stderr)
    for name in result.not_called:
        report(f"--exclude {name}: never called", "warning", program="mapeval profile")
    if args.sdf is not None:
        from mapping.cli.commands.import_ import run_format
        run_format("profile", path=args.output, output=args.sdf, inclusive=args.inclusive,
                   entry=args.entry, name=args.name)
    return 0
