"""``mapeval check``: parse and analyse files, each on its own (one bad file does not hide
the others' results)."""
from __future__ import annotations

from pathlib import Path

from mapping.output import print_json, print_json_line


def add_parser(subparsers, name):
    p = subparsers.add_parser(name, help="parse and analyse .sdf, .xml, .moa and .map files",
                              description="Parse each file and analyse it: for .sdf (or SDF3 "
                              ".xml), the repetition vector, deadlock and the tokens of one "
                              "iteration; for .moa, its elements, links and cost models; for "
                              ".map, the mappings it holds. A .moa whose PEs cannot all "
                              "reach each other through communication nodes gets a warning "
                              "(exit status 0). Every file is checked even when "
                              "another is bad; the exit status is 2 if any is. A folder "
                              "stands for the .sdf, .xml, .moa and .map files in it.")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print one JSON document: one entry "
                   "per graph, architecture or .map file; a bad file gets an entry with its "
                   "'error' (message, line, column)")
    p.add_argument("--json-lines", action="store_true", help="print each entry of --json "
                   "as one line of JSON as soon as its file is checked")
    p.set_defaults(run=run)


def _sdf_entries(path: Path, graphs) -> list[dict]:
    from moc import activity, repetition_vector
    from moc.errors import DeadlockError
    from moc.liveness import check_live
    from mapping.cli.diagnostics import error_entry
    entries = []
    for graph in graphs:
        bound = graph.bind()
        q = repetition_vector(bound)
        entry = {"file": str(path), "kind": "sdf", "name": graph.name,
                 "actors": list(graph.actors), "channels": list(graph.channels),
                 "repetitions": q, "deadlock": False}
        try:
            check_live(bound, q)
        except DeadlockError as exc:
            entries.append({**entry, "deadlock": True, "tokens": None, "error": error_entry(exc)})
            continue
        entry["tokens"] = activity(bound, q).token_counts
        entries.append(entry)
    return entries


def check_file(path, kind: str | None = None) -> list[dict]:
    """One entry per graph, architecture or ``.map`` file, as ``mapeval check --json``;
    ``kind`` (``sdf``, ``moa``, ``map``) defaults to the one of the extension.
    A deadlocked graph's entry has ``deadlock: true`` and an ``error``."""
    from mapping.cli.inputs import load_blocks
    path = Path(path)
    kind = kind or _kind(path.name)
    if kind == "sdf":
        return _sdf_entries(path, load_blocks(path, "sdf"))
    if kind == "moa":
        entries = []
        for arch in load_blocks(path, "moa"):
            arch.bind()  # validates every cost model with its default parameters
            entries.append({"file": str(path), "kind": "moa", "name": arch.name,
                            "pes": arch.pes, "cns": arch.cns, "links": len(arch.links),
                            "warnings": route_warnings(arch)})
        return entries
    return [{"file": str(path), "kind": "map",
             "mappings": [m.name for m in load_blocks(path, "map")]}]


def route_warnings(arch) -> list[dict]:
    """A warning (``message``, ``file``, ``line``, ``column`` at the first PE named) for
    each pair of groups of PEs that no route joins (:func:`moa.routing.unrouted_pes`): a
    channel between them would fail to evaluate with "no route"."""
    from mapping.cli.diagnostics import located_entry
    from moa.routing import unrouted_pes

    def pes(group: list[str]) -> str:
        shown = ", ".join(f"'{p}'" for p in group[:4])
        more = f", ... ({len(group)} in all)" if len(group) > 4 else ""
        return f"PE{'s' if len(group) > 1 else ''} {shown}{more}"

    out = []
    for a, b in unrouted_pes(arch.graph()):
        linked = {p for p in a + b if arch.graph().degree(p)}
        alone = [p for p in dict.fromkeys(a + b) if p not in linked]
        why = f" ({pes(alone)} {'has' if len(alone) == 1 else 'have'} no link)" if alone \
            else ""
        message = (f"no route joins {pes(a)} to each other{why}" if a is b else
                   f"no route joins {pes(a)} to {pes(b)}{why}") + \
            ": a channel between them cannot be evaluated"
        out.append(located_entry(message, arch.elements[(alone or b)[0]].origin))
    return out


def _kind(name: str) -> str | None:
    return {".sdf": "sdf", ".xml": "sdf", ".moa": "moa", ".map": "map"}.get(
        Path(name).suffix.lower())


def run(args):
    import sys

    from dsl.diagnostics import format_diagnostic
    from dsl.files import check_readable
    from mapping.cli.diagnostics import (BAD_INPUT, BAD_INPUT_ERRORS, error_entry,
                                         report_error)
    from mapping.errors import InputError

    from mapping.cli.inputs import board_file, expand_folders
    entries, failed = [], False
    quiet = args.json or args.json_lines
    for name in expand_folders(args.files, (".sdf", ".xml", ".moa", ".map")):
        kind = _kind(name)
        if kind is None and (board := board_file(name)) is not None:
            kind, name = "moa", str(board)
        try:
            if kind is None:
                raise InputError(f"'{name}': expected a file ending in .sdf, .xml (SDF3), "
                                 ".moa or .map")
            check_readable(name)
            found = check_file(name, kind)
        except BAD_INPUT_ERRORS as exc:
            failed = True
            entries.append({"file": name, "kind": kind, "error": error_entry(exc)})
            if args.json_lines:
                print_json_line(entries[-1])
            elif not args.json:
                report_error(exc)
            continue
        for e in found:
            if args.json_lines:
                print_json_line(e)
            if "error" in e:
                failed = True
                if not quiet:
                    err = e["error"]
                    report_error(InputError(err["message"],
                                            (err["file"], err["line"], err["column"])))
        entries += found
        if not quiet:
            for e in found:
                for w in e.get("warnings", ()):
                    print(format_diagnostic(w["message"], (w["file"], w["line"], w["column"]),
                                            severity="warning"), file=sys.stderr)
    if quiet:
        if args.json:
            print_json({"files": entries})
        return BAD_INPUT if failed else 0
    for e in entries:
        if "error" in e:
            continue
        if e["kind"] == "sdf":
            q = ", ".join(f"{a}={n}" for a, n in e["repetitions"].items())
            print(f"{e['file']}: sdf {e['name']}: {len(e['actors'])} actors, "
                  f"{len(e['channels'])} channels, consistent, no deadlock")
            print(f"  repetitions: {q}")
            print(f"  tokens per iteration: {e['tokens']['processing']} processing, "
                  f"{e['tokens']['communication']} communication")
        elif e["kind"] == "moa":
            print(f"{e['file']}: moa {e['name']}: {len(e['pes'])} PEs ({', '.join(e['pes'])}), "
                  f"{len(e['cns'])} CNs ({', '.join(e['cns'])}), {e['links']} links")
        else:
            print(f"{e['file']}: {len(e['mappings'])} mappings: {', '.join(e['mappings'])}")
    return BAD_INPUT if failed else 0
