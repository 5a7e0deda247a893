"""``mapeval export sdf3|dot|json``: a ``.sdf`` (or ``.moa``/``.map``) in other formats."""
from __future__ import annotations

import io
import os
import sys
import tempfile
from pathlib import Path

from mapping.errors import InputError
from mapping.inputs import choose_named
from mapping.output import print_json, write_atomically

# Format -> (kinds of input it accepts, extension of its output).
FORMATS = {
    "sdf3": (("sdf",), ".xml"),
    "dot": (("sdf", "moa"), ".dot"),
    "json": (("sdf", "moa", "map"), ".json"),
}


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="write a .sdf (or .moa, .map) file in another format (SDF3, DOT, JSON)",
        description="Write an application (.sdf) as SDF3 XML, Graphviz DOT or JSON; an "
        "architecture (.moa) as DOT or JSON; mappings (.map) as JSON.")
    kinds = p.add_subparsers(dest="format", metavar="FORMAT", parser_class=type(p))
    for fmt, (accepted, ext) in FORMATS.items():
        files = " | ".join(f"FILE.{k}" for k in accepted)
        k = kinds.add_parser(fmt, help=f"{fmt} ({files})",
                             description=f"Write {files} as {fmt}.",
                             epilog=f"example: mapeval export {fmt} app.{accepted[0]} "
                             f"-o app{ext}")
        k.add_argument("path", metavar="FILE")
        k.add_argument("-o", "--output", metavar=f"FILE{ext}",
                       help="write here (default: standard output)")
        k.add_argument("--name", help="which graph/architecture/mapping of a file that "
                       "holds several")
        k.set_defaults(run=run)
    p.set_defaults(run=lambda args: p.error("choose a format: " + ", ".join(FORMATS)))


def _sdf3_text(graph) -> str:
    import dsl
    fd, tmp = tempfile.mkstemp(suffix=".xml")
    os.close(fd)
    try:
        dsl.write_sdf3(graph, tmp)
        return Path(tmp).read_text(encoding="utf-8")
    finally:
        os.unlink(tmp)


def run(args):
    import dsl

    path = Path(args.path)
    kind = path.suffix.lower().lstrip(".")
    accepted, _ = FORMATS[args.format]
    if kind not in accepted:
        raise InputError(f"'{path}': 'mapeval export {args.format}' reads "
                         f"{' or '.join('.' + k for k in accepted)} files")
    if not path.exists():
        raise InputError(f"'{path}': no such file")
    if args.output is not None and Path(args.output).resolve() == path.resolve():
        raise InputError(f"refusing to write '{args.output}': it is the input of this command")
    loader = {"sdf": dsl.load_sdf, "moa": dsl.load_moa, "map": dsl.load_map}[kind]
    what = {"sdf": "graph", "moa": "architecture", "map": "mapping"}[kind]
    objects = loader(path)
    if args.format == "json" and kind == "map" and args.name is None:
        document = [dsl.to_json(m) for m in objects]
        obj = None
    else:
        obj = choose_named(objects, path, args.name, what, "--name NAME")
    if args.format == "sdf3":
        text = _sdf3_text(obj)
    elif args.format == "dot":
        text = dsl.to_dot(obj)
    else:
        if obj is not None:
            document = dsl.to_json(obj)
        buffer = io.StringIO()
        print_json(document, buffer)
        text = buffer.getvalue()
    if not text.endswith("\n"):
        text += "\n"
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_atomically(args.output, text, inputs=[path])
    return 0
