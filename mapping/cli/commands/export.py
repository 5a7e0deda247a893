"""``mapeval export FORMAT``: a ``.sdf`` (or ``.moa``/``.map``) in other formats, and
``mapeval export dot APP.sdf ARCH.moa MAP.map``: the picture of a mapping.

A format is one :class:`ExportFormat` in :data:`EXPORT_FORMATS`: the kinds of file it
reads, the extension it writes, a function from the loaded object(s) to text, and for
formats that draw mappings, a function from ``(app, arch, mapping, metric, aggregate,
params)`` to text."""
from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Callable

from dsl.files import check_readable
from mapping.errors import InputError
from mapping.cli.inputs import choose_named
from mapping.output import check_output, print_json, write_atomically
from mapping.registry import Registry
from moc.record import record


@record
class ExportFormat:
    kinds: tuple[str, ...]          # "sdf", "moa", "map"
    extension: str
    text: Callable[[object], str]   # the chosen object (a list of mappings for map JSON)
    every_mapping: bool = False     # without --name, a .map file's mappings all go out
    mapped: Callable[..., str] | None = None   # APP.sdf ARCH.moa MAP.map → text


def _sdf3_text(graph) -> str:
    from dsl.importers.sdf3 import format_sdf3
    return format_sdf3(graph)


def _dot_text(obj) -> str:
    import dsl
    return dsl.to_dot(obj)


def _mapping_dot_text(app, arch, mapping, metric, aggregate, params) -> str:
    from mapping.evaluation.diagram import mapping_diagram
    return mapping_diagram(app, arch, mapping, metric, aggregate, params)


def _json_text(obj) -> str:
    import dsl
    buffer = io.StringIO()
    print_json(dsl.to_json(obj), buffer)
    return buffer.getvalue()


EXPORT_FORMATS: Registry[ExportFormat] = Registry("export format")
EXPORT_FORMATS.add("sdf3", ExportFormat(("sdf",), ".xml", _sdf3_text),
                   "SDF3 XML of a .sdf graph")
EXPORT_FORMATS.add("dot", ExportFormat(("sdf", "moa"), ".dot", _dot_text,
                                        mapped=_mapping_dot_text),
                   "Graphviz DOT of a .sdf graph, a .moa architecture or a mapping "
                   "(APP.sdf ARCH.moa MAP.map)")
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
        example = f"mapeval export {fmt} app.{spec.kinds[0]} -o app{spec.extension}"
        if spec.mapped is not None:
            files += " (or a mapping: APP.sdf ARCH.moa MAP.map)"
            example += (f"; mapeval export {fmt} examples/timing/video.sdf "
                        "examples/timing/duo.moa examples/timing/mappings.map --mapping split")
        k = kinds.add_parser(fmt, help=EXPORT_FORMATS.help(fmt),
                             description=f"Write {files} as {fmt} ({spec.extension}).",
                             epilog=f"example: {example}")
        if spec.mapped is None:
            k.add_argument("path", metavar="FILE")
        else:
            from mapping.cli.inputs import add_mapping_options, add_model_options
            k.add_argument("path", metavar="FILE", nargs="+",
                           help="one file, or APP.sdf ARCH.moa MAP.map for a mapping (actors "
                           "grouped by PE, channels over their CNs, the bottleneck of "
                           "--metric highlighted)")
            add_mapping_options(k)
            add_model_options(k)
        k.add_argument("-o", "--output", metavar=f"FILE{spec.extension}",
                       help=f"write here, a {spec.extension} file, a FIFO or a device "
                       "(default: standard output)")
        k.add_argument("--name", help="which graph/architecture/mapping of a file that "
                       "holds several")
        k.set_defaults(run=run)
    p.set_defaults(run=lambda args: p.error("choose a format: " + ", ".join(EXPORT_FORMATS)))


def run(args):
    import dsl

    spec = EXPORT_FORMATS.get(args.format)
    if isinstance(args.path, list):
        if len(args.path) > 1 or Path(args.path[0]).suffix.lower() == ".map":
            return run_mapped(args, spec)
        args.path = args.path[0]
    path = Path(args.path)
    kind = path.suffix.lower().lstrip(".")
    if kind not in spec.kinds:
        raise InputError(f"'{path}': 'mapeval export {args.format}' reads "
                         f"{' or '.join('.' + k for k in spec.kinds)} files")
    check_readable(path)
    loader = {"sdf": dsl.load_sdf, "moa": dsl.load_moa, "map": dsl.load_map}[kind]
    objects = loader(path)
    if spec.every_mapping and kind == "map" and args.name is None:
        obj = objects
    else:
        obj = choose_named(objects, path, args.name, WHAT[kind], "--name NAME")
    what = f"'export {args.format}'"
    if args.output is not None:
        check_output(args.output, [path], (spec.extension,), what)
    return _write(args, spec, spec.text(obj), [path])


def run_mapped(args, spec: ExportFormat):
    """``export FORMAT APP.sdf ARCH.moa MAP.map``: the text of the chosen mapping."""
    from mapping.cli.inputs import load_mapped_inputs, parse_params

    command = f"export {args.format}"
    if args.name is not None:
        raise InputError(f"'{command}' of a mapping: choose with --mapping, --graph and "
                         "--architecture (not --name)")
    args.files = args.path
    paths = [Path(p) for p in args.path]
    suffixes = {p.suffix.lower() for p in paths}
    if not suffixes & {".sdf", ".xml"} or ".moa" not in suffixes or \
            ".map" not in suffixes and args.map is None:
        raise InputError(f"'{command}' of a mapping needs APP.sdf ARCH.moa MAP.map "
                         "(or APP.sdf ARCH.moa --map ACTOR=PE,...)")
    app, arch, mapping = load_mapped_inputs(args, command)
    if args.output is not None:
        check_output(args.output, paths, (spec.extension,), f"'{command}'")
    text = spec.mapped(app, arch, mapping, args.metric, args.aggregate,
                       parse_params(args.param))
    return _write(args, spec, text, paths)


def _write(args, spec: ExportFormat, text: str, inputs: list[Path]) -> int:
    if not text.endswith("\n"):
        text += "\n"
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_atomically(args.output, text, inputs=inputs, suffixes=(spec.extension,),
                         what=f"'export {args.format}'")
    return 0

