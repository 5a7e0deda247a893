"""A function-level program profile as a single-rate SDF application (Kim & Edwards).

The profile of one program run becomes one iteration of an SDF graph: an actor per
function whose ``ops`` and ``quanta`` are its arithmetic and logic instructions, and a
channel per producer → consumer pair whose ``size`` is the bytes the consumer read that
the producer wrote (``prod = cons = 1``).  Two input forms, both in one directory:

**The four text logs of the paper's pintool** (files named ``function``, ``subcalls``,
``icount`` and ``xfers``).  Every line holds whitespace-separated fields; ``#`` starts a
comment; blank lines are ignored.  An invocation id is any token without whitespace,
``:`` or ``#`` (the pintool writes integers).

- ``function``: ``ID NAME`` — invocation ``ID`` runs function ``NAME``, one line per
  invocation, in call order (the order matters, see *order* below).
- ``subcalls``: ``ID: CHILD CHILD ...`` — the invocations ``ID`` made, in order; an
  ``ID`` may have several lines (children are appended).  Optional unless
  ``inclusive``; when present it is checked (known ids, one parent each, no cycle).
- ``icount``: ``ID COUNT [OTHER]`` — arithmetic and logic instructions of the invocation
  itself (not of its callees); an invocation without a line counts 0.  The optional
  third field, all its other instructions (``mapeval profile`` writes it), is checked and
  kept in :attr:`CallTrace.other` but does not enter the graph.
- ``xfers``: ``CONSUMER PRODUCER BYTES`` — bytes invocation ``CONSUMER`` read that
  invocation ``PRODUCER`` wrote; repeated pairs add up (the pintool writes them in part
  at each return).

Invocations are merged per function name.  With ``inclusive``, a set of *entry*
functions absorb their call trees: every invocation belongs to the **outermost**
invocation on its call path (from the root down to itself, itself included) whose
function is an entry, and to its own function when there is none.  So an entry
function's actor counts the instructions of its whole call tree, and transfers
from/to any invocation of that tree are attributed to it.  The entries are given
(``entries``) or, by default, the functions called directly by a root invocation (one
that is nobody's child, e.g. ``main``): the roots stay exclusive and each of their
callees becomes one accelerator candidate with everything below it.  Transfers between
two invocations with the same owner (a function and its callees, or two invocations of
the same function) are that actor's own traffic: its self-loop channel (see below).

**Two CSV files** with a header row (columns in any order, names case-insensitive,
other columns ignored): ``functions.csv`` with ``function,instructions`` (one row per
function) and ``transfers.csv`` with ``producer,consumer,bytes`` (repeated pairs add
up; every function must be listed in ``functions.csv``).  There is no call tree, so
``inclusive`` is refused.

**The graph.**  Actors come in *order*: the order of first call (the first line of the
``function`` log naming an invocation the actor owns), or the row order of
``functions.csv``.  A channel whose producer comes after its consumer in this order, or
is the consumer (a self-loop: a function's transfers to itself), carries one initial
token (``delay = 1``); forward channels carry none.  So every cycle holds a token and
one iteration never deadlocks (main passes arguments to a callee, and reads the values it
returns, in the same run).  Pairs with 0 bytes give no channel.

**Names.**  Actor names are names that may be written bare in every format: a function
name that is one (an identifier and not a keyword of the languages) is kept; any other
is made one by :func:`dsl.names.identifier` (each character outside ``[A-Za-z0-9_]``
replaced by ``_``, a leading digit prefixed by ``_``, a keyword suffixed by ``_``), and
``_2``, ``_3``, ... appended until it differs from every other actor name.
:attr:`ImportResult.renamed` maps each changed actor name to the original function name
(``mapeval import profile`` lists them in comments at the top of the ``.sdf`` file).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from moc import SDFGraph
from dsl.csv_table import csv_rows
from dsl.errors import ParseError
from dsl.files import open_text
from dsl.importers import Imported, Importer, output_option
from dsl.names import KEYWORDS, identifier, is_identifier, unique

LOG_FILES = ("function", "subcalls", "icount", "xfers")
CSV_FILES = ("functions.csv", "transfers.csv")


@dataclass
class Profile:
    """A profile merged per actor: ``ops`` per actor (in actor order), bytes per
    ``(producer, consumer)`` pair, and the function names each actor stands for."""

    ops: dict[str, int] = field(default_factory=dict)
    transfers: dict[tuple[str, str], int] = field(default_factory=dict)


@dataclass
class ImportResult:
    """The imported ``graph`` and ``renamed``: actor name → original function name, for
    every function whose name had to change."""

    graph: SDFGraph
    renamed: dict[str, str]

    def header(self, source: str | Path | None = None) -> str:
        """Comment lines for the top of the ``.sdf`` file (source and renamings)."""
        lines = []
        if source is not None:
            lines.append(f"# Imported by 'mapeval import profile' from {source}")
        lines.append("# One iteration = one program run; actors: ops = quanta = arithmetic and "
                     "logic instructions;")
        lines.append("# channels: size = bytes the consumer read that the producer wrote.")
        for actor, original in self.renamed.items():
            lines.append(f"# actor {actor} is function {original}")
        return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- reading

def _lines(path: Path):
    """``(line number, fields with their 1-based columns)`` of the non-blank lines."""
    with open_text(path) as f:
        for number, text in enumerate(f, 1):
            body = text.split("#", 1)[0]
            fields = [(m.group(), m.start() + 1) for m in re.finditer(r"\S+", body)]
            if fields:
                yield number, fields, body


def _count(token: str, col: int, what: str, path: Path, line: int) -> int:
    try:
        value = int(token.replace("_", ""), 10)
    except ValueError:
        value = None
    if value is None or value < 0:
        raise ParseError(f"{what} must be a non-negative integer, got '{token}'",
                         (str(path), line, col))
    return value


def _expect(fields, n: int, form: str, path: Path, line: int):
    if len(fields) != n:
        col = fields[n][1] if len(fields) > n else fields[0][1]
        raise ParseError(f"expected '{form}' ({n} fields), got {len(fields)}",
                         (str(path), line, col))


@dataclass
class CallTrace:
    """The four logs read as they are, per invocation (ids are strings)."""

    names: dict[str, str] = field(default_factory=dict)      # in call order
    children: dict[str, list[str]] = field(default_factory=dict)
    parent: dict[str, str] = field(default_factory=dict)
    icount: dict[str, int] = field(default_factory=dict)
    other: dict[str, int] = field(default_factory=dict)      # icount's optional third field
    xfers: dict[tuple[str, str], int] = field(default_factory=dict)  # (producer, consumer)
    has_subcalls: bool = False


def _known(trace, inv, col, path, line, role="invocation"):
    """``inv``, an invocation the ``function`` log lists; else an error at its place."""
    if inv not in trace.names:
        raise ParseError(f"unknown {role} '{inv}' (not in the 'function' log)",
                         (str(path), line, col))
    return inv


def read_call_tree(directory: str | Path) -> CallTrace:
    """The invocations (``function``) and their calls (``subcalls``, if present) of the
    logs in ``directory``, the instruction counts and transfers left empty; errors name
    ``file:line:column``."""
    directory = Path(directory)
    trace = CallTrace()
    path = directory / "function"
    where = {}
    for line, fields, _ in _lines(path):
        _expect(fields, 2, "ID NAME", path, line)
        (inv, _), (name, _) = fields
        if inv in trace.names:
            raise ParseError(f"invocation {inv} listed twice (first at line {where[inv]})",
                             (str(path), line, fields[0][1]))
        trace.names[inv] = name
        where[inv] = line

    path = directory / "subcalls"
    if path.exists():
        trace.has_subcalls = True
        for line, fields, body in _lines(path):
            head, colon, rest = body.partition(":")
            parent_fields = head.split()
            if not colon or len(parent_fields) != 1:
                raise ParseError("expected 'ID: CHILD CHILD ...'", (str(path), line, fields[0][1]))
            inv = _known(trace, parent_fields[0], fields[0][1], path, line)
            offset = len(head) + 1
            trace.children.setdefault(inv, [])
            for m in re.finditer(r"\S+", rest):
                child, col = m.group(), offset + m.start() + 1
                _known(trace, child, col, path, line, "child invocation")
                if child in trace.parent:
                    raise ParseError(f"invocation {child} has two callers: "
                                     f"{trace.parent[child]} and {inv}", (str(path), line, col))
                if child == inv:
                    raise ParseError(f"invocation {inv} calls itself", (str(path), line, col))
                trace.parent[child] = inv
                trace.children[inv].append(child)
        for inv in trace.parent:           # the call tree must be a forest
            seen, node = {inv}, trace.parent[inv]
            while node is not None:
                if node in seen:
                    raise ParseError(f"the call tree of {path} has a cycle through invocation "
                                     f"{inv}", (str(path), 1, 1))
                seen.add(node)
                node = trace.parent.get(node)
    return trace


def read_logs(directory: str | Path) -> CallTrace:
    """Read ``function``, ``subcalls`` (if present), ``icount`` and ``xfers`` from
    ``directory``; errors name ``file:line:column``."""
    directory = Path(directory)
    trace = read_call_tree(directory)

    path = directory / "icount"
    for line, fields, _ in _lines(path):
        _expect(fields, 2 if len(fields) < 3 else 3, "ID COUNT [OTHER]", path, line)
        inv = _known(trace, fields[0][0], fields[0][1], path, line)
        if inv in trace.icount:
            raise ParseError(f"invocation {inv} has a second instruction count",
                             (str(path), line, fields[0][1]))
        trace.icount[inv] = _count(fields[1][0], fields[1][1], "an instruction count", path, line)
        if len(fields) == 3:      # all other instructions: checked, not imported
            trace.other[inv] = _count(fields[2][0], fields[2][1], "an instruction count",
                                      path, line)

    path = directory / "xfers"
    for line, fields, _ in _lines(path):
        _expect(fields, 3, "CONSUMER PRODUCER BYTES", path, line)
        consumer = _known(trace, fields[0][0], fields[0][1], path, line, "consumer invocation")
        producer = _known(trace, fields[1][0], fields[1][1], path, line, "producer invocation")
        size = _count(fields[2][0], fields[2][1], "a byte count", path, line)
        trace.xfers[producer, consumer] = trace.xfers.get((producer, consumer), 0) + size
    return trace


def default_entries(trace: CallTrace) -> list[str]:
    """The functions called directly by a root invocation, in call order."""
    entries = []
    for inv in trace.names:
        parent = trace.parent.get(inv)
        if parent is not None and parent not in trace.parent:
            name = trace.names[inv]
            if name not in entries:
                entries.append(name)
    return entries


def owners(trace: CallTrace, inclusive: bool = False,
           entries: Iterable[str] | None = None) -> dict[str, str]:
    """Invocation → the function (name) whose actor it belongs to.

    Exclusive: its own function.  Inclusive: the function of the outermost invocation on
    its call path (root … itself) whose function is an entry; its own if none is."""
    if not inclusive:
        return dict(trace.names)
    if not trace.has_subcalls:
        raise ParseError("--inclusive needs the call tree: the 'subcalls' log is missing")
    entries = set(default_entries(trace) if entries is None else entries)
    unknown = sorted(entries - set(trace.names.values()))
    if unknown:
        raise ParseError(f"entry function{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(unknown)} not in the 'function' log")
    entry_of: dict[str, str | None] = {}

    def resolve(inv):
        path = []
        while inv not in entry_of:
            path.append(inv)
            parent = trace.parent.get(inv)
            if parent is None:
                break
            inv = parent
        above = entry_of.get(inv) if inv in entry_of else None
        for node in reversed(path):
            if above is None and trace.names[node] in entries:
                above = trace.names[node]
            entry_of[node] = above

    for inv in trace.names:
        resolve(inv)
    return {inv: entry_of[inv] or name for inv, name in trace.names.items()}


def merge(trace: CallTrace, owner: Mapping[str, str]) -> Profile:
    """Instructions and transfers summed per owner, owners in order of first call."""
    profile = Profile()
    for inv in trace.names:                     # call order
        who = owner[inv]
        profile.ops[who] = profile.ops.get(who, 0) + trace.icount.get(inv, 0)
    for (producer, consumer), size in trace.xfers.items():
        key = owner[producer], owner[consumer]
        profile.transfers[key] = profile.transfers.get(key, 0) + size
    return profile


def read_csv_profile(directory: str | Path) -> Profile:
    """Read ``functions.csv`` and ``transfers.csv`` from ``directory``."""
    directory = Path(directory)
    profile = Profile()
    path = directory / "functions.csv"
    where = {}
    for line, cells in csv_rows(path, ("function", "instructions")):
        name, col = cells["function"]
        if name in profile.ops:
            raise ParseError(f"function '{name}' listed twice (first at line {where[name]})",
                             (str(path), line, col))
        text, col = cells["instructions"]
        profile.ops[name] = _count(text, col, "an instruction count", path, line)
        where[name] = line
    path = directory / "transfers.csv"
    for line, cells in csv_rows(path, ("producer", "consumer", "bytes")):
        ends = []
        for role in ("producer", "consumer"):
            name, col = cells[role]
            if name not in profile.ops:
                raise ParseError(f"unknown {role} function '{name}' (not in functions.csv)",
                                 (str(path), line, col))
            ends.append(name)
        text, col = cells["bytes"]
        size = _count(text, col, "a byte count", path, line)
        profile.transfers[tuple(ends)] = profile.transfers.get(tuple(ends), 0) + size
    return profile


# --------------------------------------------------------------------------- the graph

def identifier_names(names: Iterable[str]) -> dict[str, str]:
    """Function name → a unique identifier usable as an actor name (see module doc)."""
    names = list(dict.fromkeys(names))
    taken = {n for n in names if is_identifier(n, KEYWORDS)}
    result = {}
    for name in names:
        result[name] = name if name in taken else unique(identifier(name), taken)
        taken.add(result[name])
    return result


def profile_to_sdf(profile: Profile, name: str = "app") -> ImportResult:
    """The single-rate SDF graph of a merged profile (see module doc for delays)."""
    actor_of = identifier_names(profile.ops)
    graph = SDFGraph(identifier_names([name])[name])
    for function, ops in profile.ops.items():
        graph.add_actor(actor_of[function], ops=ops, quanta=ops)
    position = {function: i for i, function in enumerate(profile.ops)}
    pairs = sorted((key for key, size in profile.transfers.items() if size > 0),
                   key=lambda k: (position[k[0]], position[k[1]]))
    for producer, consumer in pairs:
        delay = 1 if position[producer] >= position[consumer] else 0
        graph.add_channel(actor_of[producer], actor_of[consumer],
                          size=profile.transfers[producer, consumer], delay=delay)
    renamed = {actor: function for function, actor in actor_of.items() if actor != function}
    return ImportResult(graph, renamed)


def profile_form(path: str | Path) -> tuple[str, Path]:
    """``("logs" | "csv", directory)`` for ``path``: a directory, or one of its files."""
    path = Path(path)
    if not path.exists():
        raise ParseError(f"'{path}': no such file or directory")
    directory = path if path.is_dir() else path.parent
    logs = all((directory / f).is_file() for f in ("function", "icount", "xfers"))
    csvs = all((directory / f).is_file() for f in CSV_FILES)
    if path.is_file():
        if path.name in CSV_FILES:
            logs = False
        elif path.name in LOG_FILES:
            csvs = False
    if logs and csvs:
        raise ParseError(f"'{directory}' holds both the text logs and the CSV files; "
                         "name one file of the form to import (e.g. DIR/functions.csv)")
    if logs:
        return "logs", directory
    if csvs:
        return "csv", directory
    raise ParseError(f"'{path}': expected a directory holding the pintool logs "
                     f"'function', 'icount', 'xfers' (and 'subcalls'), or "
                     f"'functions.csv' and 'transfers.csv'")


def import_profile(path: str | Path, inclusive: bool = False,
                   entries: Iterable[str] | None = None, name: str | None = None
                   ) -> ImportResult:
    """Read the profile at ``path`` (either form) and build its SDF graph.

    ``entries`` (implies ``inclusive``) are the functions that absorb their call trees;
    ``name`` names the graph (default: the directory's name)."""
    form, directory = profile_form(path)
    if entries is not None:
        entries = list(entries)
        inclusive = True
    if form == "csv":
        if inclusive:
            raise ParseError("--inclusive needs a call tree, which the CSV form lacks; "
                             "give the per-function counts already inclusive instead")
        profile = read_csv_profile(directory)
    else:
        trace = read_logs(directory)
        profile = merge(trace, owners(trace, inclusive, entries))
    if name is None:
        name = directory.resolve().name or "app"
    return profile_to_sdf(profile, name)


# --------------------------------------------------------------------------- mapeval import

HELP = """\
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

example: mapeval import profile prof/ --inclusive -o app.sdf
"""


def entry_names(items) -> list[str] | None:
    """The functions of ``--entry F1,F2 --entry F3`` (None without any)."""
    if not items:
        return None
    return [e.strip() for item in items for e in item.split(",") if e.strip()]


def arguments(p) -> None:
    p.add_argument("path", metavar="PATH", help="the profile's directory (or a file in it)")
    output_option(p)
    p.add_argument("--inclusive", action="store_true",
                   help="each entry function absorbs its callees (its call tree)")
    p.add_argument("--entry", action="append", metavar="F1,F2,...",
                   help="the entry functions of --inclusive (implies it; default: the "
                   "functions called by the root invocation)")
    p.add_argument("--name", help="name of the graph (default: the directory's name)")


def convert(args):
    """The ``.sdf`` text of the profile at ``args.path``."""
    from dsl.printer import format_sdf

    result = import_profile(args.path, inclusive=args.inclusive,
                            entries=entry_names(args.entry), name=args.name)
    form, directory = profile_form(args.path)
    files = ("function", "subcalls", "icount", "xfers") if form == "logs" else CSV_FILES
    text = result.header(args.path) + format_sdf(result.graph)
    g = result.graph
    return Imported(text if text.endswith("\n") else text + "\n",
                    inputs=tuple(directory / f for f in files),
                    note=f"graph '{g.name}', {len(g.actors)} actors, "
                    f"{len(g.channels)} channels")


IMPORTER = Importer(arguments, convert, "Read a function-level program profile into a "
                    "single-rate SDF graph.", HELP)
