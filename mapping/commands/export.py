"""``mapeval export FORMAT``: a ``.sdf`` (or ``.moa``/``.map``) in other formats.

A format is one :class:`ExportFormat` in :data:`EXPORT_FORMATS`: the kinds of file it
reads, the extension it writes and a function from the loaded object(s) to text."""
from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from mapping.errors import InputError
from mapping.inputs import choose_named
from mapping.output import check_output, print_json, write_atomically
from mapping.registry import Registry


@dataclass(frozen=True)
class ExportFormat:
    kinds: tuple[str, ...]          # "sdf", "moa", "map"
    extension: str
    text: Callable[[object], str]   # the chosen object (a list of mappings for map JSON)
    every_mapping: bool = False     # without --name, a .map file's mappings all go out


def _sdf3_text(graph) -> str:
    from dsl.sdf3 import format_sdf3
    return format_sdf3(graph)


def _dot_text(obj) -> str:
    import dsl
    return dsl.to_dot(obj)


def _json_text(obj) -> str:
    import dsl
    buffer = io.StringIO()
    print_json(dsl.to_json(obj), buffer)
    return buffer.getvalue()


EXPORT_FORMATS: Registry[ExportFormat] = Registry("export format")
EXPORT_FORMATS.add("sdf3", ExportFormat(("sdf",), ".xml", _sdf3_text),
                   "SDF3 XML of a .sdf graph")
EXPORT_FORMATS.add("dot", ExportFormat(("sdf", "moa"), ".dot", _dot_text),
                   "Graphviz DOT of a .sdf graph or a .moa architecture")
EXPORT_FORMATS.add("json", ExportFormat(("sdf", "moa", "map"), ".json", _json_text, True),
                   "JSON of a .sdf graph, a .moa architecture or .map mappings")

WHAT = {"sdf": "graph", "moa": "architecture", "map": "mapping"}


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="write a .sdf (or .moa, .map) file in another format",
        description="Write an application (.sdf), an architecture (.moa) or mappings (.map) "
        "in another format: " + EXPORT_FORMATS.describe() + ".")
    kinds = p.add_subparsers(dest="format", metavar="FORMAT", parser_class=type(p))
    for fmt in EXPORT_FORMATS:
        spec = EXPORT_FORMATS.get(fmt)
        files = " | ".join(f"FILE.{k}" for k in spec.kinds)
        k = kinds.add_parser(fmt, help=EXPORT_FORMATS.help(fmt),
                             description=f"Write {files} as {fmt} ({spec.extension}).",
                             epilog=f"example: mapeval export {fmt} app.{spec.kinds[0]} "
                             f"-o app{spec.extension}")
        k.add_argument("path", metavar="FILE")
        k.add_argument("-o", "--output", metavar=f"FILE{spec.extension}",
                       help=f"write here, a {spec.extension} file, a FIFO or a device "
                       "(default: standard output)")
        k.add_argument("--name", help="which graph/architecture/mapping of a file that "
                       "holds several")
        k.set_defaults(run=run)
    p.set_defaults(run=lambda args: p.error("choose a format: " + ", ".join(EXPORT_FORMATS)))


def run(args):
    import dsl

    path = Path(args.path)
    kind = path.suffix.lower().lstrip(".")
    spec = EXPORT_FORMATS.get(args.format)
    if kind not in spec.kinds:
        raise InputError(f"'{path}': 'mapeval export {args.format}' reads "
                         f"{' or '.join('.' + k for k in spec.kinds)} files")
    if not path.exists():
        raise InputError(f"'{path}': no such file")
    loader = {"sdf": dsl.load_sdf, "moa": dsl.load_moa, "map": dsl.load_map}[kind]
    objects = loader(path)
    if spec.every_mapping and kind == "map" and args.name is None:
        obj = objects
    else:
        obj = choose_named(objects, path, args.name, WHAT[kind], "--name NAME")
    what = f"'export {args.format}'"
    if args.output is not None:
        check_output(args.output, [path], (spec.extension,), what)
    text = spec.text(obj)
    if not text.endswith("\n"):
        text += "\n"
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_atomically(args.output, text, inputs=[path], suffixes=(spec.extension,),
                         what=what)
    return 0

