"""``mapeval check``: parse and analyse files."""
from __future__ import annotations

import dsl
from moc import activity, check_deadlock, repetition_vector
from mapping.inputs import classify
from mapping.output import print_json


def add_parser(subparsers, name):
    p = subparsers.add_parser(name, help="parse and analyse .sdf, .moa and .map files",
                              description="Parse each file and analyse it: for .sdf, the "
                              "repetition vector, deadlock and the tokens of one iteration; "
                              "for .moa, its elements, links and cost models; for .map, the "
                              "mappings it holds.")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(run=run)


def check_file(path) -> list[dict]:
    """One entry per graph, architecture or ``.map`` file, as ``mapeval check --json``."""
    suffix = path.suffix.lower()
    if suffix == ".sdf":
        entries = []
        for graph in dsl.load_sdf(path):
            bound = graph.bind()
            q = repetition_vector(bound)
            check_deadlock(bound, q)
            counts = activity(bound, q).token_counts
            entries.append({"file": str(path), "kind": "sdf", "name": graph.name,
                            "actors": list(graph.actors), "channels": list(graph.channels),
                            "repetitions": q, "tokens": counts})
        return entries
    if suffix == ".moa":
        entries = []
        for arch in dsl.load_moa(path):
            arch.bind()  # validates every cost model with its default parameters
            entries.append({"file": str(path), "kind": "moa", "name": arch.name,
                            "pes": arch.pes, "cns": arch.cns, "links": len(arch.links)})
        return entries
    return [{"file": str(path), "kind": "map",
             "mappings": [m.name for m in dsl.load_map(path)]}]


def run(args):
    inputs = classify(args.files, ("sdf", "moa", "map"))
    entries = [e for kind in ("sdf", "moa", "map") for path in getattr(inputs, kind)
               for e in check_file(path)]
    if args.json:
        print_json({"files": entries})
        return 0
    for e in entries:
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
    return 0
