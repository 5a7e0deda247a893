"""Command-line inputs: files told apart by extension, parameters, the chosen mapping."""
from __future__ import annotations

import argparse
from pathlib import Path

from dsl.files import check_readable
from mapping.errors import InputError
from mapping.options import parse_number
from moc.record import field, record

KINDS = {".sdf": "sdf", ".moa": "moa", ".map": "map", ".csv": "csv", ".xml": "xml"}


@record
class Inputs:
    """The positional files of a command, sorted by kind."""

    sdf: list[Path] = field(default_factory=list)
    moa: list[Path] = field(default_factory=list)
    map: list[Path] = field(default_factory=list)
    csv: list[Path] = field(default_factory=list)
    xml: list[Path] = field(default_factory=list)


def board_file(name: str) -> Path | None:
    """The ``.moa`` file that ``name`` stands for when it has no extension and names a
    built-in board (:mod:`moa.boards`): a file of that name, if there is one, wins over
    the built-in board; any other name is ``None``."""
    from moa import boards
    if Path(name).suffix or name not in boards.names():
        return None
    return Path(name) if Path(name).exists() else boards.board(name).path


def classify(files: list[str], allowed: tuple[str, ...]) -> Inputs:
    """The files sorted by extension; an SDF3 ``.xml`` file counts as an application
    (``sdf``) wherever one is accepted, the name of a built-in board (:func:`board_file`)
    as a ``.moa`` file wherever one is."""
    inputs = Inputs()
    for name in files:
        kind = KINDS.get(Path(name).suffix.lower())
        if kind is None and "moa" in allowed and (board := board_file(name)) is not None:
            inputs.moa.append(board)
            continue
        if kind == "xml" and "xml" not in allowed and "sdf" in allowed:
            kind = "sdf"
        if kind is None or kind not in allowed:
            wanted = ", ".join(f".{k}" for k in allowed)
            if "sdf" in allowed and "xml" not in allowed:
                wanted += ", .xml (SDF3)"
            raise InputError(f"'{name}': expected a file ending in {wanted}")
        path = check_readable(name)
        getattr(inputs, kind).append(path)
    return inputs


def expand_folders(names, suffixes) -> list[str]:
    """``names`` with each folder replaced by its files ending in one of ``suffixes``
    (case-insensitive), sorted by name, not recursively.  A folder named like one of
    those files (``dir.moa``) stays, to be refused as what it is; a folder without
    such files is an error."""
    files = []
    for name in names:
        path = Path(name)
        if path.is_dir() and path.suffix.lower() not in suffixes:
            found = sorted(str(f) for f in path.iterdir()
                           if f.is_file() and f.suffix.lower() in suffixes)
            if not found:
                raise InputError(f"'{name}': a folder without any "
                                 f"{', '.join(suffixes)} file")
            files += found
        else:
            files.append(name)
    return files


def one(paths: list[Path], kind: str, command: str, required: bool = True) -> Path | None:
    if len(paths) > 1:
        raise InputError(f"mapeval {command}: give one .{kind} file, got "
                         f"{', '.join(map(str, paths))}")
    if not paths:
        if required:
            raise InputError(f"mapeval {command}: a .{kind} file is required")
        return None
    return paths[0]


def choose_named(objects: list, path: Path, name: str | None, what: str, option: str):
    """The object called ``name`` among those of ``path``, or its only one."""
    if name is not None:
        for obj in objects:
            if obj.name == name:
                return obj
        raise InputError(f"{path}: no {what} named '{name}' "
                         f"(found: {', '.join(o.name for o in objects)})")
    if len(objects) != 1:
        raise InputError(f"{path} holds {len(objects)} {what}s "
                         f"({', '.join(o.name for o in objects)}); choose one with {option}")
    return objects[0]


#: the block keyword of each text format, for the message of a file without blocks
BLOCK_KEYWORDS = {"sdf": "sdf", "moa": "moa", "map": "mapping"}


def load_blocks(path: Path, kind: str) -> list:
    """The graphs (``kind="sdf"``, SDF3 ``.xml`` too), architectures (``"moa"``) or
    mappings (``"map"``) of a file; a file without any is an error naming it."""
    import dsl
    path = Path(path)
    if kind == "sdf" and path.suffix.lower() == ".xml":
        return [dsl.read_sdf3(path)]
    objects = {"sdf": dsl.load_sdf, "moa": dsl.load_moa, "map": dsl.load_map}[kind](path)
    if kind == "moa":
        from mapping.semantics.aggregation import check_aggregate
        for arch in objects:
            check_aggregate(arch)
    if not objects:
        raise InputError(f"the file holds no '{BLOCK_KEYWORDS[kind]} NAME {{ ... }}' block",
                         (str(path), None, None))
    return objects


def load_single(path: Path, kind: str, name: str | None = None):
    """The one graph (``kind="sdf"``) or architecture (``"moa"``) of a file; ``name``
    (from ``--graph`` or ``--architecture``) chooses among several."""
    if kind == "sdf":
        return choose_named(load_blocks(path, "sdf"), path, name, "graph", "--graph NAME")
    return choose_named(load_blocks(path, "moa"), path, name, "architecture",
                        "--architecture NAME")


def parse_params(items: list[str] | None) -> dict[str, float]:
    """``-p NAME=VALUE`` options as numbers (:func:`mapping.options.parse_number`;
    ``inf`` too: a parameter may be infinite, and the model that reads it checks it)."""
    params = {}
    for item in items or []:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise InputError(f"-p {item}: expected NAME=VALUE")
        value = parse_number(text, finite=False)
        if value is None:
            raise InputError(f"-p {item}: '{text.strip()}' is not a number")
        params[name] = value
    return params


def choose_mapping(map_path: Path | None, mapping_name: str | None, inline: str | None):
    """The mapping (:class:`dsl.mappings.Mapping`) from ``--map``, or from a ``.map``
    file (``--mapping`` among several)."""
    from dsl.mappings import Mapping
    if inline is not None:
        if map_path is not None:
            raise InputError("give either a .map file or --map, not both")
        return Mapping.from_text(inline)
    if map_path is None:
        raise InputError("a mapping is needed: give a .map file or --map ACTOR=PE,...")
    mappings = load_blocks(map_path, "map")
    names = [m.name for m in mappings]
    if mapping_name is None:
        if len(mappings) == 1:
            return mappings[0]
        raise InputError(f"{map_path} holds {len(mappings)} mappings; choose one with "
                         f"--mapping NAME (one of: {', '.join(names)})")
    for m in mappings:
        if m.name == mapping_name:
            return m
    raise InputError(f"{map_path}: no mapping named '{mapping_name}' (one of: {', '.join(names)})")


def add_metric_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--metric", default="time",
                        help="metric to evaluate (default: time; e.g. energy, power)")


def add_aggregate_option(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """``--aggregate``, its choices and their help from the aggregation registry."""
    from mapping.semantics.aggregation import AGGREGATIONS
    parser.add_argument("--aggregate", choices=AGGREGATIONS.names(),
                        help=(help or "how element values combine (default: the "
                              "architecture's)") + ". " + AGGREGATIONS.describe())


def add_param_option(parser: argparse.ArgumentParser, dest: str = "param") -> None:
    parser.add_argument("-p", "--param", dest=dest, action="append", metavar="NAME=VALUE",
                        default=[], help="set a parameter of the .sdf and/or .moa to a value "
                        "(repeatable)")


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """``--metric``, ``--aggregate`` and ``-p``, shared by the commands that evaluate."""
    add_metric_option(parser)
    add_aggregate_option(parser)
    add_param_option(parser)
    add_choice_options(parser)


def load_mapped_inputs(args, command: str):
    """``(app, arch, mapping)`` from a command's positional ``APP.sdf ARCH.moa [MAP.map]``
    and its ``--graph``, ``--architecture``, ``--mapping`` and ``--map`` options."""
    inputs = classify(args.files, ("sdf", "moa", "map"))
    app = load_single(one(inputs.sdf, "sdf", command), "sdf", args.graph)
    arch = load_single(one(inputs.moa, "moa", command), "moa", args.architecture)
    mapping = choose_mapping(one(inputs.map, "map", command, required=False), args.mapping,
                             args.map)
    return app, arch, mapping


def add_choice_options(parser: argparse.ArgumentParser) -> None:
    """``--graph`` and ``--architecture``, for files that hold several blocks."""
    parser.add_argument("--graph", metavar="NAME",
                        help="which graph of the .sdf file, if it holds several")
    parser.add_argument("--architecture", metavar="NAME",
                        help="which architecture of the .moa file, if it holds several")


def add_mapping_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mapping", metavar="NAME", help="which mapping of the .map file")
    parser.add_argument("--map", metavar="ACTOR=PE,...", help="a mapping given inline")
