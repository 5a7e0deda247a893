"""``mapeval analyse``: the dataflow timing (throughput, period, critical
cycle, latency, buffer occupancy and the schedule), of the application alone (actor
execution times from an attribute, as SDF3's ``throughput`` analysis) or of one mapping
onto an architecture (list-scheduled PEs, channels delayed by their routes).

The analyses live in :mod:`moc.timing` and :mod:`mapping.evaluation.timing`; this module loads the
inputs, hands them over and prints the result."""
from __future__ import annotations

import argparse
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path

from mapping.options import POSITIVE_WHOLE, SECONDS_OR_ZERO
from mapping.output import print_json, print_json_line
from mapping.progress import add_progress_option
from moc.exact_times import exact_string, exact_text
from moc.record import is_record, record, replace

#: firings shown per row of the readable schedule (``--json`` has them all)
SHOWN_FIRINGS = 8
#: the names of ``moc.csdf_kperiodic.ORDERS`` (kept here: options import nothing heavy)
CSDF_ORDERS = ("ends", "starts")


DESCRIPTION = """\
Analyse the self-timed execution of an SDF application: its throughput
(iterations per time unit), period (1/throughput), a critical cycle (the actors that
bound the throughput), the latency of one iteration, the largest number of tokens every
channel holds, and the schedule (every firing with its start and end).

Without an architecture, the actor attribute --exec (default exec) is the time of one
firing and processors are unlimited, as in SDF3's throughput analysis; an actor fires
concurrently with itself unless a self-loop forbids it.

With ARCH.moa and a mapping (MAP.map with --mapping NAME, or --map A=PE,...), a firing
takes its PE's time cost, the firings of one PE never overlap (a static order found by
list scheduling), and a channel between two PEs delays its tokens by the time cost of
its route; the schedule is then per PE and CN, and the makespan of one iteration is
given too (eval --aggregate schedule; --aggregate period is the period).

Files may come in any order; an SDF3 .xml file is read directly. Several graphs (.sdf or
.xml files, or folders of them) without an architecture are analysed one by one in one
process, each reported on its own (a bad one does not stop the others; the exit status
is then 2); --json-lines prints one JSON object per graph and line, for scripts."""

EXAMPLES = """\
examples:
  mapeval analyse examples/timing/video.sdf
  mapeval analyse examples/timing/video.sdf examples/timing/duo.moa \\
                  examples/timing/mappings.map --mapping split --json
  mapeval analyse graph.xml --exec exec_A15 --no-simulate
  mapeval analyse tests/data/csdf --no-simulate --json-lines
  mapeval analyse tests/data/sdf3_examples/samplerate.sdf --tradeoff -o bounded.sdf
  mapeval analyse examples/csdf/orders.sdf --csdf-order starts --tradeoff
  mapeval analyse app.sdf arch.moa --map a=p0,b=p1 -p N=64
  mapeval plot schedule examples/timing/video.sdf examples/timing/duo.moa \\
                  examples/timing/mappings.map --mapping split -o gantt.png"""


def add_analyse_options(p) -> None:
    """The inputs of ``analyse`` (shared with ``mapeval plot schedule``)."""
    from mapping.cli.inputs import add_choice_options, add_mapping_options, add_param_option
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="APP.sdf or APP.xml (SDF3), optionally ARCH.moa and MAP.map")
    add_mapping_options(p)
    add_choice_options(p)
    add_param_option(p)
    p.add_argument("--exec", metavar="ATTR", dest="exec_attr",
                   help="without an architecture: the actor attribute that is the time of "
                   "one firing (default: exec, which 'mapeval import sdf3' fills)")
    p.add_argument("--csdf-order", choices=CSDF_ORDERS, metavar="{ends,starts}",
                   help="without an architecture: the order of a cyclo-static actor's "
                   "own firings when they overlap. ends (default, as SDF3): they start "
                   "in order and end in order, a short phase started after a long one "
                   "ending with it; starts (as Kiter): they start in order and each ends "
                   "its phase time after its start. JSON says which: csdf_order")


#: default seconds of search before the front found so far is given
DEFAULT_BUDGET = 60.0


def add_tradeoff_options(p, output: bool = True) -> None:
    """The options of ``--tradeoff`` (run by :mod:`mapping.cli.commands.tradeoff`; shared
    with ``mapeval plot tradeoff``): ``--budget`` (and, for ``analyse``, ``--point`` and
    ``-o``)."""
    p.add_argument("--budget", type=SECONDS_OR_ZERO, default=DEFAULT_BUDGET, metavar="SECONDS",
                   help="with --tradeoff: stop the search after this long and give the "
                   f"front found so far, with the size up to which it is proven "
                   f"(default {DEFAULT_BUDGET:g}; 0: no limit)")
    p.add_argument("--timing", choices=("auto", "state-space", "kperiodic"), default="auto",
                   help="with --tradeoff: how each distribution of capacities is timed: its "
                   "bounded state space, as SDF3, or K-periodic scheduling of the graph "
                   "with back-edges, as Kiter's KDSE (fewer distributions, each dearer); "
                   "the front is the same; auto (default) runs both in turn and keeps "
                   "the first to end")
    if output:
        p.add_argument("--point", type=POSITIVE_WHOLE, metavar="N",
                       help="with --tradeoff -o: the point to write (1 = the smallest "
                       "storage; default: the last, the largest throughput found)")
        p.add_argument("-o", "--output", metavar="APP.sdf",
                       help="with --tradeoff: write the application with the capacities "
                       "of a point as back-edges (channel NAME_space)")


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="throughput, latency, buffers and schedule of a dataflow execution",
        description=DESCRIPTION, epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_analyse_options(p)
    add_progress_option(p)
    p.add_argument("--no-simulate", action="store_true",
                   help="without an architecture: throughput, period and critical cycle "
                   "only (no latency, buffers or schedule), for graphs too large to "
                   "simulate")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document: throughput, period, critical_cycle, "
                   "latency, buffers, schedule, application, architecture, mapping, exec "
                   "(and makespan with a mapping; without one method, and "
                   "schedule_missing: why schedule is null; exact: the rational values "
                   "as 'n/d')")
    p.add_argument("--json-lines", action="store_true",
                   help="print the --json document of each graph on one line, with its "
                   "'file' (a bad file: its 'error'), as soon as it is analysed")
    p.add_argument("--tradeoff", action="store_true",
                   help="without an architecture: the storage-throughput trade-off, the "
                   "Pareto points (throughput, total buffer size in tokens) with their "
                   "capacities per channel, as SDF3's buffersize")
    add_tradeoff_options(p)
    p.set_defaults(run=run)


@record
class Analysed:
    """A timing analysis (``moc.timing.TimingAnalysis`` or ``mapping.evaluation.timing.MappedTiming``)
    with the names of what was analysed (``pes`` and ``cns`` empty without a mapping)."""

    application: str
    architecture: str | None
    mapping: str | None
    exec: str | None
    analysis: object
    actors: tuple[str, ...]
    pes: tuple[str, ...] = ()
    cns: tuple[str, ...] = ()
    #: the architecture's unit of time (``metric time [unit = "s"]``), a label
    time_unit: str | None = None
    #: the order of a cyclo-static actor's own firings (None with a mapping)
    csdf_order: str | None = None

    @property
    def rows(self) -> tuple[str, ...]:
        """The rows of the schedule: the PEs and CNs of a mapping, else the actors."""
        return self.pes + self.cns if self.architecture is not None else self.actors

    def to_dict(self) -> dict:
        document = {"application": self.application, "architecture": self.architecture,
                    "mapping": self.mapping, "exec": self.exec}
        if self.time_unit is not None:
            document["time_unit"] = self.time_unit
        if self.csdf_order is not None:
            document["csdf_order"] = self.csdf_order
        document.update(self.analysis.to_dict())     # numbers as JSON holds them
        document["exact"] = {key: exact_string(getattr(self.analysis, key, None))
                             for key in ("throughput", "period", "latency", "makespan")
                             if hasattr(self.analysis, key)}
        return document

    def __str__(self) -> str:
        # the table shows a few firings per row: converting a million costs seconds
        schedule = getattr(self.analysis, "schedule", None)
        if not isinstance(schedule, Mapping) or not is_record(self.analysis):
            return table(self.to_dict(), self.rows)
        counts = {name: len(firings or ()) for name, firings in schedule.items()}
        shown = replace(self.analysis, schedule={
            name: None if firings is None else tuple(firings[:SHOWN_FIRINGS])
            for name, firings in schedule.items()})
        return table(replace(self, analysis=shown).to_dict(), self.rows, counts)


def load_analysis(args, command: str, simulate: bool = True) -> Analysed:
    """Load ``args.files`` and run the analysis they call for (see :func:`add_parser`)."""
    from mapping.errors import InputError
    from mapping.cli.inputs import classify, choose_mapping, load_single, one, parse_params
    from mapping.overrides import check_overrides

    inputs = classify(args.files, ("sdf", "moa", "map"))
    app = load_single(one(inputs.sdf, "sdf", command), "sdf", args.graph)
    arch_path = one(inputs.moa, "moa", command, required=False)
    map_path = one(inputs.map, "map", command, required=False)
    params = parse_params(args.param)
    if arch_path is None:
        if map_path is not None or args.map is not None or args.mapping is not None:
            raise InputError(f"mapeval {command}: a mapping needs an architecture: give "
                             "ARCH.moa too")
        check_overrides(params, app.params)
        from moc.timing import analyse
        attr = args.exec_attr or "exec"
        from mapping.progress import progress_bar
        order = getattr(args, "csdf_order", None) or "ends"
        with progress_bar(args, None, "analyse", "firings or states") as bar:
            # analyse binds the graph itself: once more here only for -p's overrides
            analysis = analyse(app.bind(params) if params else app, exec_attr=attr,
                               simulate=simulate, progress=bar, order=order)
        return Analysed(app.name, None, None, attr, analysis, tuple(app.actors),
                        csdf_order=order)
    if args.exec_attr is not None:
        raise InputError(f"mapeval {command}: --exec is for the application alone; with "
                         "an architecture a firing takes its PE's time cost")
    if getattr(args, "csdf_order", None) is not None:
        raise InputError(f"mapeval {command}: --csdf-order is for the application alone; "
                         "with an architecture a PE runs its firings one at a time")
    if not simulate:
        raise InputError(f"mapeval {command}: --no-simulate is for the application alone; "
                         "a mapped analysis always schedules the firings")
    from mapping.semantics.problem import bind_problem
    arch = load_single(arch_path, "moa", args.architecture)
    mapping = choose_mapping(map_path, args.mapping, args.map)
    problem = bind_problem(app, arch, params)
    from mapping.evaluation.timing import mapped_analysis
    analysis = mapped_analysis(problem, mapping)
    return Analysed(app.name, arch.name, mapping.name, None, analysis, tuple(app.actors),
                    tuple(problem.arch.pes), tuple(problem.arch.cns),
                    problem.arch.unit("time"))


def _number(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _rate(document: dict, key: str) -> str:
    """A value with its exact form beside it when that says more (``1/6 (0.166667)``)."""
    rational = document["exact"].get(key)
    return exact_text(Fraction(rational)) if rational else _number(document[key])


def table(document: dict, rows: tuple[str, ...], counts=None) -> str:
    """The readable form of an ``analyse`` document: the figures, then the buffers, then
    the schedule, one line per actor (or PE and CN), at most :data:`SHOWN_FIRINGS` each
    (``counts``: per row, its firings where the document holds only the first ones)."""
    mapped = document["architecture"] is not None
    title = (f"timing of mapping '{document['mapping']}' of '{document['application']}' on "
             f"'{document['architecture']}'" if mapped else
             f"timing of '{document['application']}' (firing times: actor attribute "
             f"'{document['exec']}', unlimited processors)")
    unit = document.get("time_unit")
    timed = (lambda key: f"{_rate(document, key)} {unit}") if unit else \
        (lambda key: _rate(document, key))
    figures = [("throughput", _rate(document, "throughput") +
                f" iterations per {unit or 'time unit'}"), ("period", timed("period"))]
    if "makespan" in document:
        figures.append(("makespan", timed("makespan")))
    figures += [("critical cycle", " -> ".join(document["critical_cycle"] or []) or "-"),
                ("latency", timed("latency"))]
    if document.get("method"):
        figures.append(("method", document["method"]))
    width = max(len(name) for name, _ in figures)
    lines = [title] + [f"  {name:<{width}}  {text}" for name, text in figures]
    buffers = document.get("buffers")
    if buffers:
        lines.append("buffers (largest number of tokens held"
                     + ("; -: not explored" if None in buffers.values() else "") + "):")
        width = max(map(len, buffers))
        lines += [f"  {name:<{width}}  {_number(n)}" for name, n in buffers.items()]
    schedule = document.get("schedule")
    if schedule:
        lines.append("schedule (firing start-end)" + (", per PE and CN:" if mapped else
                                                       ", per actor:"))
        names = [r for r in rows if r in schedule] + [r for r in schedule if r not in rows]
        width = max(map(len, names))
        for name in names:
            slots = schedule[name] or []
            shown = [f"{s['firing']} {_number(s['start'])}-{_number(s['end'])}"
                     for s in slots[:SHOWN_FIRINGS]]
            total = len(slots) if counts is None else counts.get(name, len(slots))
            if total > SHOWN_FIRINGS:
                shown.append(f"... ({total - SHOWN_FIRINGS} more)")
            lines.append(f"  {name:<{width}}  {', '.join(shown) or 'idle'}")
    elif schedule is None and not mapped and document.get("latency") is None and \
            buffers is None and "not computed" not in (document.get("method") or ""):
        lines.append("(latency, buffers and schedule not simulated: --no-simulate)")
    return "\n".join(lines)


def run(args):
    if args.tradeoff:
        from mapping.cli.commands.tradeoff import run_tradeoff
        return run_tradeoff(args)
    if args.output is not None or args.point is not None:
        from mapping.errors import InputError
        raise InputError("mapeval analyse: -o and --point write a point of --tradeoff")
    from mapping.cli.inputs import expand_folders
    files = expand_folders(args.files, (".sdf", ".xml"))
    if len(files) > 1 and all(Path(f).suffix.lower() in (".sdf", ".xml") for f in files):
        return _run_many(args, files)
    result = load_analysis(args, "analyse", simulate=not args.no_simulate)
    if args.json_lines:
        print_json_line({"file": files[0], **result.to_dict()})
    elif args.json:
        print_json(result.to_dict())
    else:
        print(result)
    return 0


def _run_many(args, files) -> int:
    """Analyse each graph file on its own (see DESCRIPTION)."""
    from mapping.cli.diagnostics import (BAD_INPUT, BAD_INPUT_ERRORS, error_entry,
                                         report_error)
    failed, documents = False, []
    for name in files:
        try:
            result = load_analysis(argparse.Namespace(**{**vars(args), "files": [name]}),
                                   "analyse", simulate=not args.no_simulate)
        except BAD_INPUT_ERRORS as exc:
            failed = True
            document = {"file": name, "error": error_entry(exc)}
            if not (args.json or args.json_lines):
                report_error(exc)
        else:
            document = {"file": name, **result.to_dict()}
            if not (args.json or args.json_lines):
                print(f"{name}:\n{result}\n")
        if args.json_lines:
            print_json_line(document)
        documents.append(document)
    if args.json:
        print_json({"graphs": documents})
    return BAD_INPUT if failed else 0
