"""PREESM's files into mapeval's: a PiSDF graph (``.pi``) into a ``.sdf``, an S-LAM
architecture (``.slam``) into a ``.moa``, a scenario's timings, constraints, data type
sizes and parameter values into both (see :mod:`dsl.importers.preesm.pisdf`,
:mod:`dsl.importers.preesm.slam`, :mod:`dsl.importers.preesm.scenario`).

Each actor gets ``exec_<type>`` (its scenario time on operator type ``<type>``, read by
``lookup()``) and ``allowed`` (the operators the scenario's constraints let run it); a
special actor's time on a type is PREESM's memory-copy rule ``setup + floor(n ·
time_per_token)`` with ``n`` the larger of the tokens it reads and writes.  A channel's
``size`` is its data type's size in bytes."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from dsl.errors import ParseError
from dsl.files import check_readable
from dsl.importers import Imported, Importer
from dsl.importers.preesm.jep import evaluate
from dsl.importers.preesm.pisdf import SPECIAL, Flat, flatten
from dsl.importers.preesm.scenario import Allowed, Scenario, default_type_bytes, read_scenario
from dsl.importers.preesm.slam import Slam, format_moa, read_slam
from dsl.names import identifier
from moc.graph import SDFGraph

#: PREESM's memory copy speed of an operator type the scenario does not give one for:
#: setup time, time per token
DEFAULT_MEMCPY = (1, 1 / 1000)
#: bytes of a file's name that file systems allow (the .sdf written into -o DIR/ is named
#: after the graph)
NAME_MAX = 255

__all__ = ["import_preesm", "output_files", "PreesmImport", "read_scenario", "read_slam",
           "flatten",
           "format_moa"]


@dataclass(frozen=True)
class PreesmImport:
    """What ``import preesm`` produced: the flat ``graph``, the architecture (or None)
    and each flat actor's firings per iteration by PREESM's hierarchical rule."""
    graph: SDFGraph
    slam: Slam | None
    firings: dict
    #: scenario entries that name nothing of the graph (PREESM ignores them too)
    unmatched: tuple = ()

    def notes(self, most: int = 5) -> list[str]:
        """Lines saying which scenario entries name nothing (the first ``most``)."""
        lines = [f"note: the scenario's {item} names nothing in the graph; ignored, as "
                 "PREESM does" for item in self.unmatched[:most]]
        if len(self.unmatched) > most:
            lines.append(f"note: and {len(self.unmatched) - most} more such scenario "
                         "entries")
        return lines


def output_files(result: PreesmImport, sources, moa_name=None) -> list[tuple]:
    """``(file name, text, summary)`` of the ``.sdf`` and (with an architecture and
    ``moa_name``) the ``.moa`` that ``mapeval import preesm`` writes."""
    from dsl.printer import format_sdf

    source = " ".join(str(p) for p in sources)
    g = result.graph
    head = (f"# Imported by 'mapeval import preesm' from {source}\n# The parameters are "
            "the values of the top graph's; rates, delays and times are\n# evaluated "
            "numbers: to change a parameter, change it in PREESM and import again.\n")
    files = [(f"{g.name}.sdf", head + format_sdf(g).rstrip("\n") + "\n",
              f"graph '{g.name}', {len(g.actors)} actors, {len(g.channels)} channels")]
    if result.slam is not None and moa_name:
        files.append((f"{moa_name}.moa", format_moa(
            result.slam, f"# Imported by 'mapeval import preesm' from {source}"),
            f"{len(result.slam.operators)} PEs, {len(result.slam.com_nodes)} CNs"))
    return files


def import_preesm(pi, slam=None, scenario=None) -> PreesmImport:
    """Import the PiSDF graph ``pi`` with an optional S-LAM ``slam`` and scenario."""
    sc = read_scenario(scenario) if scenario is not None else None
    arch = read_slam(slam) if slam is not None else None
    flat = flatten(Path(pi), sc)
    graph = _graph(flat, sc, arch)
    return PreesmImport(graph, arch, dict(flat.firings), _unmatched(flat, sc))


def _unmatched(flat: Flat, sc: Scenario | None) -> tuple:
    if sc is None:
        return ()
    paths = {entry[2] for entry in flat.actors.values()}
    prefixes = {p.rsplit("/", k)[0] for p in paths for k in range(p.count("/") + 1)}
    out = [f"timing of '{v}' on '{t}'" for v, t in sc.timings if v not in paths]
    out += [f"constraint on '{v}'" for v in sc.constraints if v not in prefixes]
    out += [f"value of parameter '{n}' of '{g}'" for g, n in sc.parameters
            if (g, n) not in flat.used_values]
    return tuple(out)


def _number(x: float):
    return int(x) if float(x).is_integer() else x


def _graph(flat: Flat, sc: Scenario | None, arch: Slam | None) -> SDFGraph:
    graph = SDFGraph(flat.name, {k: _number(v) for k, v in flat.params.items()},
                     origin=flat.origin)
    op_types = list(dict.fromkeys(arch.operators.values())) if arch else []
    if sc is not None and arch is None:
        op_types = list(dict.fromkeys([t for _, t in sc.timings] + list(sc.memcpy)))
    rates: dict[str, tuple[int, int]] = {a: (0, 0) for a in flat.actors}
    for ch in flat.channels:
        i, o = rates[ch["dst"]]
        rates[ch["dst"]] = (i + ch["cons"], o)
        i, o = rates[ch["src"]]
        rates[ch["src"]] = (i, o + ch["prod"])
    for name, (attrs, origin, vpath, nid, level) in flat.actors.items():
        attrs = dict(attrs)
        attrs.update(_times(attrs.get("special"), sc, op_types, vpath,
                            lambda: level.actor_env(nid), max(rates[name])))
        allowed = _allowed(sc, vpath, attrs.get("special")) if sc is not None else None
        if allowed is not None and attrs.get("special") not in ("delay", "interface"):
            unknown = [o for o in allowed if arch is not None and o not in arch.operators]
            if unknown:
                raise ParseError(f"the constraints on '{allowed.path}' name operators the "
                                 f"architecture lacks: {', '.join(unknown)}", allowed.origin)
            attrs["allowed"] = " ".join(identifier(o) for o in allowed)
        graph.add_actor(name, origin=origin, **attrs)
    for ch in flat.channels:
        size = sc.type_bytes(ch["type"]) if sc is not None else default_type_bytes(ch["type"])
        if size is None:
            raise ParseError(f"fifo {ch['src']} -> {ch['dst']}: data type '{ch['type']}' has "
                             "no size (not a C type PREESM knows; give a scenario whose "
                             "data types list it)", ch["origin"])
        name = ch["name"]
        graph.add_channel(ch["src"], ch["dst"], name, prod=ch["prod"], cons=ch["cons"],
                          delay=ch["delay"], size=size, origin=ch["origin"])
    return graph


def _times(special, sc, op_types, vpath, env, tokens) -> dict:
    """``exec_<type>`` of one actor: its scenario timings; for a special actor without
    one PREESM's memory-copy rule (the scenario's speed, else PREESM's default of setup
    1 and 1/1000 per token); 0 for delay actors and top-level interfaces, which move no
    data themselves."""
    times = {}
    for t in op_types:
        key = "exec_" + identifier(t)
        timing = sc.timings.get((vpath, t)) if sc is not None else None
        if special in ("delay", "interface"):
            times[key] = 0
        elif timing is not None:
            times[key] = _number(evaluate(timing[0], env(), f"timing of '{vpath}' on '{t}'",
                                          timing[1]))
        elif special is not None:
            setup, per_token = (sc.memcpy if sc is not None else {}).get(t, DEFAULT_MEMCPY)
            times[key] = _number(setup + math.floor(tokens * per_token))
    return times


def _allowed(sc: Scenario, vpath: str, special):
    """The operators allowed for the actor at ``vpath``: for a special actor the
    scenario's special vertex operators (as PREESM maps them); else, or when it lists
    none, its own constraints, else those of its nearest enclosing hierarchical actor;
    None when the scenario has none."""
    if special in SPECIAL and sc.special_operators:
        return Allowed.of(sc.special_operators, "special vertex operators", sc.special_origin)
    path = vpath
    while True:
        if path in sc.constraints:
            return sc.constraints[path]
        if "/" not in path:
            return None
        path = path.rsplit("/", 1)[0]


# --------------------------------------------------------------------------- mapeval import

def arguments(p) -> None:
    p.add_argument("path", metavar="APP.pi")
    p.add_argument("--slam", metavar="ARCH.slam", help="the S-LAM architecture (-> .moa)")
    p.add_argument("--scenario", metavar="S.scenario",
                   help="timings, constraints, data types and parameter values")
    p.add_argument("-o", "--output", metavar="APP.sdf|DIR",
                   help="the .sdf file, or a directory receiving NAME.sdf (and NAME.moa "
                   "with --slam; required then); default: the .sdf on standard output")


def convert(args):
    """The ``.sdf`` (and with ``--slam`` the ``.moa``) of a PREESM project."""
    inputs = [Path(x) for x in (args.path, args.slam, args.scenario) if x is not None]
    suffixes = [".pi"] + [".slam"] * (args.slam is not None) \
        + [".scenario"] * (args.scenario is not None)
    for path, suffix in zip(inputs, suffixes):
        if path.suffix.lower() != suffix:
            raise ParseError(f"'{path}': expected a PREESM {suffix} file")
        check_readable(path)
    out = args.output
    directory = out is not None and (Path(out).is_dir() or str(out).endswith(("/", "\\")))
    if args.slam is not None and not directory:
        raise ParseError("--slam writes a .moa too: give -o a directory")
    result = import_preesm(args.path, args.slam, args.scenario)
    files = output_files(result, inputs, args.slam and Path(args.slam).stem)
    messages = tuple(result.notes())
    if directory and len(files[0][0].encode()) > NAME_MAX:
        raise ParseError(f"the graph's name ({len(result.graph.name)} characters) is too "
                         f"long for the name of the file {files[0][0][:20]}...: file "
                         f"systems allow {NAME_MAX} bytes; shorten it, or give -o a "
                         ".sdf file", result.graph.origin)
    if not directory:
        _, text, note = files[0]
        return Imported(text, inputs=tuple(inputs), note=note, messages=messages)
    return Imported(files={str(Path(out) / name): text for name, text, _ in files},
                    inputs=tuple(inputs), messages=messages)


IMPORTER = Importer(
    arguments, convert,
    "Read a PREESM project: a PiSDF graph (.pi, hierarchy flattened by PREESM's rules) as "
    ".sdf, an S-LAM architecture (.slam) as .moa, and a scenario's timings (exec_<type>, "
    "read by lookup()), constraints (allowed), data type sizes and parameter values. A "
    "parameter set at run time is refused by name.",
    "example: mapeval import preesm Algo/top.pi --slam Archi/4CoreX86.slam "
    "--scenario Scenarios/4core.scenario -o out/")
