"""The ``mapeval`` command: one program, one subcommand per task (as ``sdf3analysis``).

Start-up is kept short: only the module of the command that runs is imported, and
option definitions import nothing heavy (numpy, scipy and matplotlib load in ``run``).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time

from mapping.output import announce_writes
from mapping.registry import Registry

#: subcommand -> ``"module:add_parser"`` (``add_parser(subparsers, name)`` defines its
#: options and ``run``); imported only when the subcommand is chosen
COMMANDS: Registry = Registry("command")
#: subcommand -> its arguments in the overview
SYNOPSIS: dict[str, str] = {}
#: subcommands whose linear algebra is none or a few small products, which one BLAS
#: thread does as fast (see :func:`_one_blas_thread`)
NO_LINEAR_ALGEBRA: set[str] = set()


def _command(name: str, module: str, synopsis: str, help: str,
             linear_algebra: bool = True) -> None:
    COMMANDS.add(name, f"mapping.cli.commands.{module}:add_parser", help)
    SYNOPSIS[name] = synopsis
    if not linear_algebra:
        NO_LINEAR_ALGEBRA.add(name)


_command("check", "check", "FILE...", "parse and analyse files (repetition vector, tokens)",
         linear_algebra=False)
_command("eval", "evaluate", "APP.sdf ARCH.moa [MAP.map]",
         "cost of one mapping (time, energy, power, ...)")
_command("search", "search", "APP.sdf ARCH.moa", "find the best mappings")
_command("analyse", "analyse", "APP.sdf [ARCH.moa MAP.map]",
         "dataflow timing: throughput, latency, buffers, schedule", linear_algebra=False)
_command("fidelity", "fidelity", "APP.sdf ARCH.moa DATA.csv",
         "does the model rank alternatives like measurements?")
_command("fit", "fit", "APP.sdf ARCH.moa DATA.csv", "fit cost parameters to measurements")
_command("sweep", "sweep", "APP.sdf ARCH.moa [MAP.map]", "evaluate over a grid of parameters")
_command("logca", "logca", "--overhead .. | --fit CSV | --table CSV",
         "LogCA accelerator analysis (or fitted to measurements)")
_command("import", "import_", "FORMAT FILE", "read other formats into .sdf/.moa/.map/.csv files")
_command("export", "export", "FORMAT FILE", "write a .sdf, .moa or .map in other formats")
_command("plot", "plot", "KIND ... -o FILE", "the plots of the field")
_command("platforms", "platforms", "[NAME]", "the built-in boards, or one board's .moa")
_command("profile", "profile", "-o OUTDIR -- PROGRAM", "profile a compiled program (its logs)")


def overview() -> str:
    width = max(len(n) + 1 + len(SYNOPSIS[n]) for n in COMMANDS)
    lines = "\n".join(f"  mapeval {(n + ' ' + SYNOPSIS[n]):<{width}}  {COMMANDS.help(n)}"
                      for n in COMMANDS)
    return f"""\
mapeval: evaluate, search and check mappings of SDF applications onto models of architecture.

Describe the application as an SDF graph (.sdf), the platform as a model of architecture
(.moa: PEs and CNs with cost models), and mappings of one onto the other (.map). Then:

{lines}

Example:
  mapeval eval examples/odroid/stereo.sdf examples/odroid/odroid.moa \\
               examples/odroid/mappings.map --mapping big_only --json

Run 'mapeval COMMAND --help' for the options of a command; 'mapeval --version'.
Every command takes --limit NAME=N (repeatable) to raise a stated limit, and --debug.
Exit status: 0 success, 2 bad input (or an output that cannot be written: a full disk),
1 internal error (add --debug for a traceback), 130 on Ctrl-C, 143 on SIGTERM.
"""


class _Parser(argparse.ArgumentParser):
    def _get_formatter(self):
        # argparse's formatter asks shutil for the terminal's width, and shutil's import
        # (zlib, bz2, lzma) is a few ms of a small graph's whole start-up
        return self.formatter_class(prog=self.prog, width=_columns() - 2)

    def _get_values(self, action, arg_strings):
        # argparse drops a value '--' (``--seed=--``) and hands the option a list
        # that its type never saw
        if action.option_strings and action.nargs is None and arg_strings == ["--"]:
            return self._get_value(action, "--")
        return super()._get_values(action, arg_strings)

    def error(self, message):
        from mapping.cli.diagnostics import BAD_INPUT, report
        self.print_usage(sys.stderr)
        report(message, program=self.prog)
        sys.exit(BAD_INPUT)


def _columns() -> int:
    """``shutil.get_terminal_size().columns`` (``COLUMNS``, else the terminal's, else
    80) without importing shutil."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def version() -> str:
    from importlib.metadata import PackageNotFoundError, version as package_version
    try:
        return package_version("mapeval")
    except PackageNotFoundError:
        return "unknown"


class _Version(argparse.Action):
    """``--version``, which reads the installed metadata only when asked
    (``importlib.metadata`` costs a tenth of the start-up)."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"mapeval {version()}")
        parser.exit()


def _command_name(argv: list[str]) -> str | None:
    for arg in argv:
        if not arg.startswith("-"):
            return arg
    return None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``mapeval``: with a ``command``, that subcommand alone with its
    options (its module imported); without, every subcommand's name and help."""
    parser = _Parser(prog="mapeval", usage="mapeval COMMAND [options]", description=overview(),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="show the program's version number and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser,
                                prog="mapeval")
    for name in COMMANDS:
        if name == command:
            COMMANDS.get(name)(sub, name)
        elif command is None:
            sub.add_parser(name, help=COMMANDS.help(name))
    return parser


def _subparsers(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def parse(parser: argparse.ArgumentParser, argv: list[str],
          namespace: argparse.Namespace | None = None) -> argparse.Namespace:
    """Parse ``argv`` down the subcommands, then the chosen one's options and files in
    any order (files may stand anywhere among the options)."""
    namespace = namespace or argparse.Namespace()
    action = _subparsers(parser)
    if action is None:
        configure = parser._defaults.pop("configure", None)
        if configure is not None:       # a lazily defined subcommand (plot KIND, ...)
            configure(parser)
        _add_common_options(parser)
        try:
            return parser.parse_intermixed_args(argv, namespace)
        except TypeError:
            # argparse cannot intermix a REMAINDER positional (``-- PROGRAM ARGS...``)
            return parser.parse_args(argv, namespace)
    at = next((i for i, a in enumerate(argv) if not a.startswith("-")), None)
    if at is None or at > 0 or argv[at] not in action.choices:
        return parser.parse_args(argv, namespace)   # help, or argparse's own error
    name = argv[at]
    if action.dest != argparse.SUPPRESS:
        setattr(namespace, action.dest, name)
    namespace = parse(action.choices[name], argv[at + 1:], namespace)
    for key, value in parser._defaults.items():
        if not hasattr(namespace, key):
            setattr(namespace, key, value)
    return namespace


def _add_common_options(parser: argparse.ArgumentParser) -> None:
    from mapping.cli.limits import LIMITS
    g = parser.add_argument_group("every command")
    g.add_argument("--limit", action="append", default=[], metavar="NAME=N",
                   help="raise (or lower) a stated limit for this run, repeatable; "
                   + LIMITS.describe())
    g.add_argument("--debug", action="store_true",
                   help="show the traceback of an error")


def _one_blas_thread(command: str | None) -> None:
    """One BLAS thread for a command of :data:`NO_LINEAR_ALGEBRA`, unless the user chose a
    number (``OPENBLAS_NUM_THREADS``): numpy's OpenBLAS starts a pool of threads when it
    loads, whose waiting for work busies a second core (0.05-0.07 s of CPU a process,
    against 0.075 s for the rest of numpy's import).  OpenBLAS reads the variable once,
    when it loads: only before numpy is imported."""
    if command in NO_LINEAR_ALGEBRA and "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _terminate(signum, frame):
    from mapping.errors import Terminated
    raise Terminated()


@contextlib.contextmanager
def _sigterm_as_interrupt():
    """SIGTERM raises :class:`mapping.errors.Terminated` (a KeyboardInterrupt) while the
    command runs, so that it cleans up as on Ctrl-C (the main thread only: elsewhere
    ``signal.signal`` refuses with a ValueError, and the handler stays as it was)."""
    try:
        old = signal.signal(signal.SIGTERM, _terminate)
    except ValueError:
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _interrupt_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C or SIGTERM that ``exc`` wraps, if any: Python turns one raised while a
    class is created (a ``__set_name__``, as pydantic's validators have) into a
    ``RuntimeError`` whose cause it is."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _silence_stdout() -> None:
    """Point stdout at /dev/null: what is left in its buffer cannot be written (the
    reader went away, the disk is full) and Python must not complain again on exit."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def main(argv: list[str] | None = None) -> int:
    with _sigterm_as_interrupt():
        return _main(argv)


#: when the running command began (``time.time()``): time limits count from here
STARTED: float | None = None


def process_start() -> float:
    """When this process started (``time.time()``; Linux's ``/proc``), so that a time
    limit counts the interpreter's start and the imports too; elsewhere, now."""
    now = time.time()
    try:
        with open("/proc/self/stat") as f:
            ticks = float(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return min(now, now - (uptime - ticks / os.sysconf("SC_CLK_TCK")))
    except (OSError, ValueError, IndexError, AttributeError):
        return now


def _main(argv: list[str] | None) -> int:
    global STARTED
    # a command line counts from the process's start, a call (tests) from the call
    from_command_line = argv is None
    STARTED = process_start() if from_command_line else time.time()
    argv = sys.argv[1:] if argv is None else list(argv)
    # after "--" the words belong to the profiled program (mapeval profile -- PROG ARGS)
    cut = argv.index("--") if "--" in argv else len(argv)
    debug = "--debug" in argv[:cut]
    argv = [a for a in argv[:cut] if a != "--debug"] + argv[cut:]
    announce_writes()                   # every file a command writes: "wrote FILE" on stderr
    if not argv:
        print(overview(), end="")
        return 0
    try:
        command = _command_name(argv)
        if from_command_line:
            _one_blas_thread(command)
        parser = build_parser(command if command in COMMANDS else None)
        args = parse(parser, argv)
        if args.command is None:
            print(overview(), end="")
            return 0
        if getattr(args, "limit", None):
            from mapping.cli.limits import limits_set
            with limits_set(args.limit):
                code = args.run(args) or 0
        else:
            code = args.run(args) or 0
        sys.stdout.flush()          # a full disk under stdout: found here, not at exit
        return code
    except KeyboardInterrupt as exc:
        from mapping.errors import interrupted_status
        return interrupted_status(exc)
    except MemoryError as exc:
        # the frames that hold the memory go before a module is imported to say so
        exc.__traceback__ = None
        from mapping.cli.diagnostics import BAD_INPUT, report
        report("out of memory: the input is too large for this machine (a measurement "
               "table takes about 4 KB per row; lower --limit rows=N to refuse such "
               "tables before reading them)")
        return BAD_INPUT
    except BrokenPipeError:
        # The reader went away (``| head``): not an error of ours; keep Python quiet on exit.
        _silence_stdout()
        return 0
    except Exception as exc:  # noqa: BLE001 - the last resort of a CLI
        from mapping.cli.diagnostics import (BAD_INPUT, BAD_INPUT_ERRORS, report,
                                             report_error)
        from mapping.output import output_failure
        interrupt = _interrupt_behind(exc)
        if interrupt is not None:
            from mapping.errors import interrupted_status
            return interrupted_status(interrupt)
        if debug:
            raise
        if output_failure(exc):
            report(f"cannot write the standard output: {exc.strerror}")
            _silence_stdout()
            return BAD_INPUT
        if isinstance(exc, BAD_INPUT_ERRORS):
            report_error(exc)
            return BAD_INPUT
        report(f"{type(exc).__name__}: {exc} (run again with --debug for a traceback)",
               "internal error")
        return 1


if __name__ == "__main__":
    sys.exit(main())
