"""GPU measurement tables (one kernel, many GPUs and launches) as a mapeval study.

A table is a CSV file with a header row, one row per kernel launch, as the
gpuperfpredict data set writes them from nvprof (one file per kernel and GPU); rows timed
otherwise (Nsight Compute, CUDA events) import alike when they carry these columns (others
are ignored):

- required: the GPU, ``gpu_name``, ``compute_version`` (compute capability),
  ``max_clock_rate`` (MHz), ``bandwith`` (GB/s), ``bus`` (bits); the launch,
  ``AppName`` (the kernel), ``Input.Size``, ``Grid.X``, ``Block.X``, ``Duration``
  (seconds, or the ``duration_unit`` given);
- the cores: ``num_of_cores``, or ``sms`` (multiprocessors; cores = SMs x the FP32
  cores per SM of the compute capability), or neither for a GPU of
  :data:`DATA_SHEET_SMS` or named by ``--sms``;
- optional: ``memory_clock`` (MHz; checks a decimal comma), ``L2`` (MB; absent: the
  data sheet of the compute capability, :mod:`moa.cost_models.gpu_caches`),
  ``l1_cache_used`` (1: global loads compiled to be cached in L1, ``-dlcm=ca``), ``Grid.Y``,
  ``Grid.Z``, ``Block.Y``, ``Block.Z`` (default 1), ``Registers.Per.Thread`` (default
  0: registers do not limit occupancy), ``Static.SMem`` and ``Dynamic.SMem`` (bytes per
  block, default 0).

**Corrections**, each reported (:attr:`GPUTable.corrections`):

- a number written with a decimal comma (``192,256``) is read with a decimal point, after
  checking it against the bandwidth the memory clock and bus give
  (``2 · memory_clock · bus / 8`` MB/s: double data rate);
- the cores of a GPU whose data sheet (:data:`DATA_SHEET_SMS`) or ``sms`` says otherwise
  become ``SMs · cores per SM`` of its compute capability (the GTX 970 has 13 SMs, 1664
  cores, and the Titan Black 15 SMX, 2880 cores, not the 3072 of the files).

:func:`study_files` writes the study: an application whose ``kernel`` actor carries
the launch (``grid``, ``block``, ``regs``, ``smem``, and ``bytes``/``l2_bytes``/``flops``
per element and ``syncs`` per block where the user states them) from parameters that each row of
the measurements sets;
architectures with one PE per GPU (the ``gpu`` occupancy model, and LSLA, GSLA and
roofline baselines); one mapping per GPU; the measurements CSV.
"""
from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from dsl.csv_table import open_table
from dsl.errors import ParseError
from dsl.importers import Imported, Importer
from dsl.names import identifier
from moa.cost_models.gpu import GENERATIONS, LIMITS, bandwidth_bytes, limits, peak_flops
from moa.cost_models.gpu_caches import caches, l1_for_globals

#: multiprocessors of the GPUs of the data set, from NVIDIA's data sheets
DATA_SHEET_SMS: dict[str, int] = {
    "gtx680": 8, "gtx970": 13, "gtx980": 16, "quadro": 12,   # Quadro K5200
    "teslak20": 13, "teslak40": 15, "titan": 14, "titanblack": 15, "titanx": 24,
}

#: the columns a table must have: the GPU's data sheet and the launch (the cores: the
#: column ``num_of_cores`` or ``sms``, or the data sheet's multiprocessors of the GPU)
GPU_COLUMNS = ("gpu_name", "compute_version", "max_clock_rate", "bandwith", "bus")
LAUNCH_COLUMNS = ("AppName", "Input.Size", "Grid.X", "Block.X", "Duration")

#: columns read where present, with the value taken where absent (nan: not known)
OPTIONAL_COLUMNS: dict[str, float] = {
    "num_of_cores": math.nan, "sms": math.nan, "memory_clock": math.nan, "L2": math.nan,
    "l1_cache_used": 0,
    "Grid.Y": 1, "Grid.Z": 1, "Block.Y": 1, "Block.Z": 1,
    "Registers.Per.Thread": 0, "Static.SMem": 0, "Dynamic.SMem": 0,
}
_SPEC_COLUMNS = ("compute_version", "max_clock_rate", "bandwith", "bus", "num_of_cores",
                 "sms", "memory_clock", "L2", "l1_cache_used")


@dataclass(frozen=True)
class GPUSpec:
    """One GPU's columns (corrected); ``ident`` names its PE and its mapping."""

    name: str
    ident: str
    cc: float
    sms: int
    cores: int
    clock: float
    bandwidth: float
    bus: float
    memory_clock: float
    l2: float                   # MB, the table's column (nan: absent)
    l1_cached: bool = False     # the table says global loads were cached in L1

    @property
    def generation(self) -> str:
        return limits(self.cc).generation

    @property
    def l2_bytes(self) -> int:
        """The L2 in bytes: the table's column (MB x 2^20), else the data sheet of the
        compute capability (:mod:`moa.cost_models.gpu_caches`)."""
        return int(self.l2 * 2 ** 20) if math.isfinite(self.l2) else caches(self.cc).l2

    @property
    def l1_bytes(self) -> int:
        """L1 bytes per SM caching the kernel's global loads (0: L2 only): the data
        sheet's, where the compute capability caches them by default or may and the
        table's ``l1_cache_used`` says it did."""
        return l1_for_globals(self.cc, self.l1_cached)


@dataclass(frozen=True)
class Launch:
    """One measured launch: ``gpu`` is the GPU's ``ident``; ``origin`` its file and line."""

    gpu: str
    size: float
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    regs: int
    smem: int
    time: float
    origin: tuple[str, int]


@dataclass(frozen=True)
class GPUTable:
    kernel: str
    gpus: tuple[GPUSpec, ...]
    launches: tuple[Launch, ...]
    corrections: tuple[str, ...] = field(default=())


def _same(a: dict, b: dict) -> bool:
    """Equal values, nan equal to nan (a column both rows lack)."""
    return a.keys() == b.keys() and all(
        x == y or (isinstance(x, float) and isinstance(y, float) and math.isnan(x)
                   and math.isnan(y)) for x, y in ((a[k], b[k]) for k in a))


def _ident(name: str) -> str:
    """A GPU's or kernel's name as a name of the formats, in lower case (``gtx_970``)."""
    return identifier(name.strip().lower() or "gpu")


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _number(text: str, where, column: str, commas: dict) -> float:
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    if re.fullmatch(r"[+-]?\d+,\d+", text):
        commas.setdefault(column, set()).add(text)
        return float(text.replace(",", "."))
    raise ParseError(f"column '{column}' holds {text!r}, not a number", where)


#: units of the Duration column: seconds per unit
DURATION_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def read_gpu_tables(paths: Sequence[str | Path], sms: Mapping[str, int] | None = None,
                    duration_unit: str = "s") -> GPUTable:
    """Read and check the tables ``paths`` (one kernel); ``sms`` gives (or overrides)
    multiprocessor counts by GPU name; ``duration_unit`` is the unit of ``Duration``
    (:data:`DURATION_UNITS`: CUDA events give milliseconds, Nsight Compute often
    microseconds or nanoseconds); the launches' times are in seconds."""
    scale = DURATION_UNITS[duration_unit]
    if not paths:
        raise ParseError("no table given")
    overrides = {_key(k): int(v) for k, v in (sms or {}).items()}
    gpus: dict[str, dict] = {}
    launches: list[Launch] = []
    kernels: dict[str, str] = {}
    commas: dict[str, set] = {}
    corrections: list[str] = []
    for path in map(Path, paths):
        with open_table(path) as stream:
            reader = csv.reader(stream)
            header = next(reader, None)
            if header is None:
                raise ParseError(f"'{path}' is empty", (str(path), 1, 1))
            index = {}
            for i, name in enumerate(header):
                index.setdefault(name.strip(), i)
            missing = [c for c in GPU_COLUMNS + LAUNCH_COLUMNS if c not in index]
            if missing:
                raise ParseError(f"'{path}' lacks the column{'s' if len(missing) > 1 else ''} "
                                 f"{', '.join(missing)} of a GPU measurement table",
                                 (str(path), 1, 1))
            for row in reader:
                line = reader.line_num
                if not any(cell.strip() for cell in row):
                    continue
                if len(row) < len(header):
                    raise ParseError(f"row has {len(row)} cells, the header {len(header)}",
                                     (str(path), line, 1))

                def cell(c):
                    return row[index[c]]

                def num(c):
                    if c not in index or (c in OPTIONAL_COLUMNS and not cell(c).strip()):
                        return float(OPTIONAL_COLUMNS[c])
                    return _number(cell(c), (str(path), line, index[c] + 1), c, commas)

                name = cell("gpu_name").strip()
                spec = {c: num(c) for c in _SPEC_COLUMNS}
                known = gpus.setdefault(name, {"spec": spec, "origin": (str(path), line)})
                if not _same(known["spec"], spec):
                    diff = [c for c in spec if not _same({0: spec[c]}, {0: known["spec"][c]})]
                    raise ParseError(f"GPU '{name}' has {diff[0]} = {spec[diff[0]]:g} here but "
                                     f"{known['spec'][diff[0]]:g} at "
                                     f"{known['origin'][0]}:{known['origin'][1]}",
                                     (str(path), line, 1))
                kernels.setdefault(cell("AppName").strip(), str(path))
                grid = tuple(int(num(c)) for c in ("Grid.X", "Grid.Y", "Grid.Z"))
                block = tuple(int(num(c)) for c in ("Block.X", "Block.Y", "Block.Z"))
                time = num("Duration") * scale
                if min(grid + block) <= 0 or not time > 0 or not math.isfinite(time):
                    raise ParseError("a launch needs positive grid, block and Duration",
                                     (str(path), line, 1))
                launches.append(Launch(name, num("Input.Size"), grid, block,
                                       int(num("Registers.Per.Thread")),
                                       int(num("Static.SMem") + num("Dynamic.SMem")),
                                       time, (str(path), line)))
    if len(kernels) > 1:
        shown = ", ".join(f"'{k}' ({p})" for k, p in kernels.items())
        raise ParseError(f"the tables hold different kernels: {shown}; import one at a time")
    for column, texts in sorted(commas.items()):
        corrections.append(f"{column}: decimal comma read as a decimal point "
                           "(" + "; ".join(sorted(texts)) + ")")

    specs, idents = [], {}
    for name, info in gpus.items():
        s = info["spec"]
        where = info["origin"]
        cc = s["compute_version"]
        if "bandwith" in commas and math.isfinite(s["memory_clock"]):
            implied = 2 * s["memory_clock"] * s["bus"] / 8 / 1000
            if abs(implied - s["bandwith"]) > 0.01 * implied:
                raise ParseError(f"GPU '{name}': bandwith {s['bandwith']:g} GB/s disagrees "
                                 f"with memory_clock and bus ({implied:g} GB/s)", (*where, 1))
        try:
            per_sm = limits(cc).cores_per_sm
        except ValueError:
            known = ", ".join(f"{c:g}" for c in LIMITS)
            raise ParseError(f"GPU '{name}': compute capability {cc:g} is not known here "
                             f"(known: {known})", (*where, 1)) from None
        n_sms = overrides.get(_key(name), DATA_SHEET_SMS.get(_key(name)))
        if n_sms is None and math.isfinite(s["sms"]):
            n_sms = int(s["sms"])
        if not math.isfinite(s["num_of_cores"]):
            if n_sms is None:
                raise ParseError(f"GPU '{name}' has neither num_of_cores nor sms (give "
                                 f"--sms {name}=N)", (*where, 1))
            s["num_of_cores"] = n_sms * per_sm
        cores = int(s["num_of_cores"])
        if n_sms is None:
            if cores % per_sm:
                raise ParseError(f"GPU '{name}': {cores} cores are no whole number of "
                                 f"{per_sm}-core multiprocessors (give --sms {name}=N)",
                                 (*where, 1))
            n_sms = cores // per_sm
        elif n_sms * per_sm != cores:
            corrections.append(f"{name}: num_of_cores {cores} corrected to "
                               f"{n_sms * per_sm} ({n_sms} SMs x {per_sm} cores of compute "
                               f"capability {cc:g}, data sheet)")
            cores = n_sms * per_sm
        ident = _ident(name)
        while ident in idents.values():
            ident += "_"
        idents[name] = ident
        specs.append(GPUSpec(name, ident, cc, n_sms, cores, s["max_clock_rate"],
                             s["bandwith"], s["bus"], s["memory_clock"], s["L2"],
                             s["l1_cache_used"] > 0))
    launches = [Launch(idents[x.gpu], *[getattr(x, f) for f in
                                        ("size", "grid", "block", "regs", "smem", "time",
                                         "origin")]) for x in launches]
    kernel = next(iter(kernels))
    return GPUTable(kernel, tuple(sorted(specs, key=lambda g: g.ident)), tuple(launches),
                    tuple(corrections))


# --------------------------------------------------------------------------- the study

def _g(x: float) -> str:
    return repr(float(x)) if not float(x).is_integer() else str(int(x))


def application_text(table: GPUTable, *, elements: str = "size",
                     bytes_per_element: str | None = None,
                     flops_per_element: str | None = None, syncs: str | None = None,
                     l2_bytes_per_element: str | None = None, name: str | None = None,
                     partial_sectors: bool = False,
                     stores: tuple[str | None, str | None] = (None, None)) -> str:
    """The ``.sdf`` application: one ``kernel`` actor whose attributes are the launch,
    from parameters the measurements set per row (``partial_sectors``: the L2 sectors
    beyond the DRAM bytes are partly used ones, ``partial_sectors = 1``; ``stores``: the
    stores' bytes and L2 bytes per element, ``store_bytes`` and ``l2_store_bytes``)."""
    first = table.launches[0]
    graph = _ident(name or table.kernel)
    attrs = [f"quanta = {elements}", "grid = grid_x * grid_y * grid_z",
             "block = block_x * block_y * block_z", "regs = regs", "smem = smem"]
    if bytes_per_element is not None:
        attrs.append(f"bytes = ({elements}) * ({bytes_per_element})")
    if flops_per_element is not None:
        attrs.append(f"flops = ({elements}) * ({flops_per_element})")
    if l2_bytes_per_element is not None:
        attrs.append(f"l2_bytes = ({elements}) * ({l2_bytes_per_element})")
    for attr, per_element in zip(("store_bytes", "l2_store_bytes"), stores):
        if per_element is not None:
            attrs.append(f"{attr} = ({elements}) * ({per_element})")
    if partial_sectors:
        attrs.append("partial_sectors = 1")
    if syncs is not None:
        attrs.append(f"syncs = {syncs}")
    lines = [f"# The kernel '{table.kernel}' as one actor: a launch per iteration.",
             "# Every parameter below is set by a column of the measurements.",
             f"sdf {graph} {{",
             f"    param size = {_g(first.size)}"]
    for axis, values in (("grid", first.grid), ("block", first.block)):
        for c, v in zip("xyz", values):
            lines.append(f"    param {axis}_{c} = {v}")
    lines += [f"    param regs = {first.regs}", f"    param smem = {first.smem}", "",
              "    actor kernel [" + ",\n                  ".join(attrs) + "]", "}", ""]
    return "\n".join(lines)


def mappings_text(table: GPUTable) -> str:
    lines = ["# One mapping per GPU: the kernel on it."]
    lines += [f"mapping {g.ident} {{ kernel -> {g.ident} }}" for g in table.gpus]
    return "\n".join(lines) + "\n"


def measurements_text(table: GPUTable) -> str:
    lines = ["gpu,size,grid_x,grid_y,grid_z,block_x,block_y,block_z,regs,smem,time_s,source"]
    for x in table.launches:
        lines.append(",".join([x.gpu, _g(x.size), *map(str, x.grid), *map(str, x.block),
                               str(x.regs), str(x.smem), repr(x.time),
                               f"{Path(x.origin[0]).name}:{x.origin[1]}"]))
    return "\n".join(lines) + "\n"


def _attributes(g: GPUSpec) -> str:
    return f"cc = {_g(g.cc)}, sms = {g.sms}, cores = {g.cores}, clock = {_g(g.clock)}"


def gpu_moa_text(table: GPUTable, name: str = "gpus") -> str:
    """The occupancy-aware architecture: every GPU from its data sheet and parameters
    shared by its generation (so that a GPU not measured is predicted from its data
    sheet), one launch overhead."""
    gens = [g for g in GENERATIONS if any(x.generation == g for x in table.gpus)]
    lines = ["# One PE per GPU under the gpu model (moa/cost_models/gpu.py). Data sheet:",
             "# cc, sms, cores, clock (MHz), bandwidth (GB/s). To fit, per generation:",
             "# eff_* (achieved / data-sheet DRAM bandwidth, at most 1; or free each GPU's",
             "# X.time.efficiency), hide_* (warps per SM that saturate memory), ceff_*",
             "# (achieved / peak flops, at most 1), sync_* (cycles per warp and barrier",
             "# step of a block), l2_* (L2 bytes per cycle and slice, 32 to 128; a slice",
             "# per 64-bit memory partition: l2_slices), dispatch_* (cycles an SM takes per block it starts",
             "# and retires), l2s_* and l1s_* (sharpness of the L2's and L1's",
             "# working-set transitions); launch (s). l2_capacity: the table's L2 column",
             "# (MB x 2^20 bytes), else the compute capability's data sheet; l1_capacity:",
             "# L1 bytes per SM caching global loads, where the capability does so by",
             "# default or the table's l1_cache_used says they were (moa/cost_models/",
             "# gpu_caches.py).",
             f"moa {name} {{", "    param launch = 5e-06"]
    for gen in gens:
        lines += [f"    param eff_{gen} = 0.7", f"    param hide_{gen} = 16",
                  f"    param ceff_{gen} = 0.5", f"    param sync_{gen} = 10",
                  f"    param l2_{gen} = 64", f"    param dispatch_{gen} = 0",
                  f"    param l2s_{gen} = 1"]
        if any(x.generation == gen and x.l1_bytes for x in table.gpus):
            lines.append(f"    param l1s_{gen} = 1")
    lines.append("")
    for g in table.gpus:
        gen = g.generation
        args = (f"{_attributes(g)}, bandwidth = {_g(g.bandwidth)}, efficiency = eff_{gen}, "
                f"compute_efficiency = ceff_{gen}, hide = hide_{gen}, sync = sync_{gen}, "
                f"l2 = l2_{gen}, l2_slices = {_g(g.bus / 64)}, dispatch = dispatch_{gen}, "
                f"launch = launch")
        args += f", l2_capacity = {g.l2_bytes}, l2_sharpness = l2s_{gen}"
        if g.l1_bytes:
            args += f", l1_capacity = {g.l1_bytes}, l1_sharpness = l1s_{gen}"
        extra = f", l2_mb = {_g(g.l2_bytes / 2 ** 20)}"
        lines.append(f"    pe {g.ident} [time = gpu({args}){extra}]")
    return "\n".join(lines + ["}", ""])


def baseline_moa_texts(table: GPUTable) -> dict[str, str]:
    """LSLA (one alpha and beta for every GPU), GSLA with gamma = cores, and the
    roofline from data-sheet peak (2 flops per core and cycle) and bandwidth."""
    lsla = ["# LSLA: a launch costs a*quanta + b on every GPU alike (fit a, b).",
            "moa gpus_lsla {", "    param a = 1e-09", "    param b = 1e-05"]
    lsla += [f"    pe {g.ident} [time = lsla(alpha = a, beta = b)]" for g in table.gpus]
    gsla = ["# GSLA with gamma = cores: (a/cores + b)*S, S = quanta (fit a, b).",
            "moa gpus_gsla {", "    param a = 1e-06", "    param b = 1e-10"]
    gsla += [f"    pe {g.ident} [time = gsla(alpha = a / {g.cores}, beta = b)]"
             for g in table.gpus]
    roof = ["# Roofline from the data sheet: peak = 2*cores*clock flops/s, bandwidth in",
            "# bytes/s; nothing fitted (free X.time.bandwidth for the achieved bandwidth).",
            "moa gpus_roofline {"]
    roof += [f"    pe {g.ident} [time = roofline("
             f"peak = {_g(peak_flops(g.cores, g.clock))}, "
             f"bandwidth = {_g(bandwidth_bytes(g.bandwidth))})]" for g in table.gpus]
    return {"lsla.moa": "\n".join(lsla + ["}", ""]),
            "gsla.moa": "\n".join(gsla + ["}", ""]),
            "roofline.moa": "\n".join(roof + ["}", ""])}


def study_files(table: GPUTable, *, elements: str = "size",
                bytes_per_element: str | None = None, flops_per_element: str | None = None,
                syncs: str | None = None, l2_bytes_per_element: str | None = None,
                name: str | None = None, partial_sectors: bool = False,
                stores: tuple[str | None, str | None] = (None, None)) -> dict[str, str]:
    """File name -> text of the whole study."""
    files = {"app.sdf": application_text(table, elements=elements,
                                         bytes_per_element=bytes_per_element,
                                         flops_per_element=flops_per_element, syncs=syncs,
                                         l2_bytes_per_element=l2_bytes_per_element,
                                         name=name, partial_sectors=partial_sectors,
                                         stores=stores),
             "gpu.moa": gpu_moa_text(table),
             **baseline_moa_texts(table),
             "mappings.map": mappings_text(table),
             "measurements.csv": measurements_text(table)}
    return files


# --------------------------------------------------------------------------- mapeval import

HELP = """\
Each FILE is a CSV table of one kernel's launches timed on GPUs (nvprof, Nsight Compute
or CUDA events; the gpuperfpredict format). Required columns: gpu_name,
compute_version (3.0 to 12.0), max_clock_rate (MHz), bandwith (GB/s), bus (bits),
AppName, Input.Size, Grid.X, Block.X, Duration (seconds, or --duration-unit);
num_of_cores or sms (or a GPU of the data-sheet list, or --sms). Optional: memory_clock,
L2 (MB; absent: the compute capability's data sheet), l1_cache_used (1: global loads
compiled to be cached in L1), Grid.Y/Z and Block.Y/Z (default 1), Registers.Per.Thread,
Static.SMem, Dynamic.SMem (default 0).
DIR receives:
  app.sdf           the kernel as one actor; each row sets size, grid_*, block_*, regs, smem
  gpu.moa           one PE per GPU under the gpu model (occupancy, waves, roofline),
                    every parameter shared by the GPU's generation (eff_kepler, ...)
  lsla.moa gsla.moa roofline.moa   baselines
  mappings.map      one mapping per GPU, named like its PE
  measurements.csv  gpu (the mapping), the launch, time_s
Corrections of the data (a decimal comma, core counts against the data sheet) are
reported on standard error and under "corrections" with --json.

study: mapeval fidelity DIR/app.sdf DIR/gpu.moa DIR/mappings.map DIR/measurements.csv \\
         --mapping-column gpu --measured time_s --within size --folds 5 --fit ...
       (--folds-by gpu: each GPU left out, predicted from its data sheet)

example: mapeval import gpu-table dotProd-*.csv --bytes-per-element 8 \\
           --flops-per-element 2 -o dotprod/
"""


def arguments(p) -> None:
    p.add_argument("paths", nargs="+", metavar="FILE.csv")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="the study's directory (created if absent)")
    p.add_argument("--elements", default="size", metavar="EXPR",
                   help="elements one launch processes, an expression in size "
                   "(default: size; a square matrix: size**2)")
    p.add_argument("--bytes-per-element", metavar="EXPR",
                   help="DRAM bytes per element, an expression in size, block_x, ... "
                   "(default: none, no memory traffic)")
    p.add_argument("--flops-per-element", metavar="EXPR",
                   help="floating-point operations per element (default: none)")
    p.add_argument("--l2-bytes-per-element", metavar="EXPR",
                   help="bytes per element between the SMs and the L2 cache, counted in "
                   "the 32-byte sectors the access pattern requests (default: none)")
    p.add_argument("--partial-sectors", action="store_true",
                   help="the L2 sectors requested beyond the DRAM bytes are partly used "
                   "ones (a strided access) that neighbouring warps complete only while "
                   "the L2 holds them: past its capacity they reach DRAM (the gpu "
                   "model's l2_capacity term)")
    p.add_argument("--store-bytes-per-element", metavar="EXPR",
                   help="the part of --bytes-per-element the kernel's stores write")
    p.add_argument("--l2-store-bytes-per-element", metavar="EXPR",
                   help="the part of --l2-bytes-per-element its stores request: stores "
                   "reach the L2 whatever an L1 caching global loads holds")
    p.add_argument("--syncs-per-block", metavar="EXPR",
                   help="barrier steps of one block, e.g. a tree reduction's "
                   "log2(block_x) (default: none)")
    p.add_argument("--sms", action="append", default=[], metavar="GPU=N",
                   help="multiprocessors of a GPU (overrides the data-sheet table)")
    p.add_argument("--name", help="name of the graph (default: the kernel's AppName)")
    p.add_argument("--duration-unit", choices=("s", "ms", "us", "ns"), default="s",
                   help="unit of the Duration column (default s, as nvprof's files; CUDA "
                   "events give ms)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")


def _sms(items) -> dict[str, int]:
    sms = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not re.fullmatch(r"\s*\+?\d+\s*", value) or int(value) < 1:
            raise ParseError(f"--sms {item}: expected GPU=N with N a positive whole number")
        sms[name.strip()] = int(value)
    return sms


def convert(args) -> Imported:
    """The study's files in the directory ``args.output``."""
    from dsl.parser import parse_sdf

    table = read_gpu_tables(args.paths, sms=_sms(args.sms),
                            duration_unit=args.duration_unit)
    files = study_files(table, elements=args.elements,
                        bytes_per_element=args.bytes_per_element,
                        flops_per_element=args.flops_per_element,
                        syncs=args.syncs_per_block,
                        l2_bytes_per_element=args.l2_bytes_per_element, name=args.name,
                        partial_sectors=args.partial_sectors,
                        stores=(args.store_bytes_per_element,
                                args.l2_store_bytes_per_element))
    parse_sdf(files["app.sdf"], "app.sdf")      # a bad --elements/... expression
    directory = Path(args.output)
    if directory.exists() and not directory.is_dir():
        raise ParseError(f"'{directory}' is not a directory")
    summary = {"kernel": table.kernel, "gpus": [g.ident for g in table.gpus],
               "launches": len(table.launches), "corrections": list(table.corrections),
               "files": [str(directory / name) for name in files]}
    messages = tuple(f"corrected: {c}" for c in table.corrections)
    if not args.json:
        messages += (f"study in {directory}: kernel '{table.kernel}', {len(table.gpus)} "
                     f"GPUs, {len(table.launches)} launches ({', '.join(files)})",)
    return Imported(files={str(directory / name): text for name, text in files.items()},
                    suffixes=(), inputs=tuple(args.paths), messages=messages,
                    document=summary if args.json else None)


IMPORTER = Importer(arguments, convert, "Turn GPU measurement tables of one kernel into "
                    "a study: an application, architectures with one PE per GPU, mappings "
                    "and the measurements.", HELP)
