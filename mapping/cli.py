"""The ``mapeval`` command: one program, one subcommand per task (as ``sdf3analysis``)."""
from __future__ import annotations

import argparse
import importlib
import sys

from mapping.diagnostics import BAD_INPUT_ERRORS, report_error

USAGE = """\
mapeval: evaluate, search and check mappings of SDF applications onto models of architecture.

Describe the application as an SDF graph (.sdf), the platform as a model of architecture
(.moa: PEs and CNs with cost models), and mappings of one onto the other (.map). Then:

  mapeval check   FILE...                      parse and analyse files (repetition vector, tokens)
  mapeval eval    APP.sdf ARCH.moa [MAP.map]   cost of one mapping (time, energy, power, ...)
  mapeval search  APP.sdf ARCH.moa             find the best mappings
  mapeval fidelity APP.sdf ARCH.moa DATA.csv   does the model rank alternatives like measurements?
  mapeval fit     APP.sdf ARCH.moa DATA.csv    fit cost parameters to measurements
  mapeval sweep   APP.sdf ARCH.moa [MAP.map]   evaluate over a grid of parameters
  mapeval logca   --L .. --o .. --C .. --A ..  LogCA accelerator analysis
  mapeval import  sdf3|profile ...             read other formats
  mapeval export  sdf3|dot|json ...            write other formats
  mapeval plot    KIND ... -o FILE             the plots of the field

Example:
  mapeval eval examples/odroid/stereo.sdf examples/odroid/odroid.moa \\
               examples/odroid/mappings.map --mapping big_only --json

Run 'mapeval COMMAND --help' for the options of a command.
Exit status: 0 success, 2 bad input, 1 internal error (add --debug for a traceback).
"""

# Subcommand name -> module in mapping.commands exposing add_parser(subparsers) and run(args).
COMMANDS = {
    "check": "check",
    "eval": "evaluate",
    "search": "search",
    "fidelity": "fidelity",
    "fit": "fit",
    "logca": "logca",
    "plot": "plot",
    "sweep": "sweep",
    "import": "import_",
    "export": "export",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mapeval", usage="mapeval COMMAND [options]", description=USAGE,
                     formatter_class=argparse.RawDescriptionHelpFormatter, add_help=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser,
                                prog="mapeval")
    for name, module in COMMANDS.items():
        importlib.import_module(f"mapping.commands.{module}").add_parser(sub, name)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    parser = build_parser()
    if not argv:
        print(USAGE, end="")
        return 2
    args = parser.parse_args(argv)
    if args.command is None:
        print(USAGE, end="")
        return 2
    try:
        return args.run(args) or 0
    except BAD_INPUT_ERRORS as exc:
        if debug:
            raise
        report_error(exc)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (``| head``): not an error of ours; keep Python quiet on exit.
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # noqa: BLE001 - the last resort of a CLI
        if debug:
            raise
        print(f"mapeval: internal error: {type(exc).__name__}: {exc} "
              "(run again with --debug for a traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
