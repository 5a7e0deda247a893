"""``mapeval import profile|sdf3|ert|gpu-table``: other formats into mapeval's files (an
application, roofline PE parameters, a whole measured study)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dsl.files import check_readable
from mapping.errors import InputError
from mapping.options import POSITIVE_WHOLE
from mapping.output import check_output, write_atomically
from mapping.registry import Registry

PROFILE_HELP = """\
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
"""


def _profile_arguments(prof) -> None:
    prof.description = "Read a function-level program profile into a single-rate SDF graph."
    prof.epilog = PROFILE_HELP + "\nexample: mapeval import profile prof/ --inclusive -o app.sdf"
    prof.formatter_class = argparse.RawDescriptionHelpFormatter
    prof.add_argument("path", metavar="PATH", help="the profile's directory (or a file in it)")
    _output_option(prof)
    prof.add_argument("--inclusive", action="store_true",
                      help="each entry function absorbs its callees (its call tree)")
    prof.add_argument("--entry", action="append", metavar="F1,F2,...",
                      help="the entry functions of --inclusive (implies it; default: the "
                      "functions called by the root invocation)")
    prof.add_argument("--name", help="name of the graph (default: the directory's name)")
    prof.set_defaults(run=run_profile)


def profile_plot_options(p) -> None:
    """The options of ``mapeval plot breakdown|heatmap``: runs as imported profiles."""
    p.add_argument("files", nargs="+", metavar="RUN",
                   help="an imported profile (.sdf from 'mapeval import profile') or a "
                   "profile's directory, one per run")
    p.add_argument("--inclusive", action="store_true",
                   help="for profile directories: each entry function absorbs its callees")
    p.add_argument("--entry", action="append", metavar="F1,F2,...",
                   help="for profile directories: the entry functions of --inclusive")


def profile_plot_source(args, command: str) -> dict:
    """``runs``: the :class:`~moc.breakdown.Breakdown` of every RUN."""
    import dsl
    from dsl.profile import import_profile
    from moc.breakdown import breakdown

    entries = None
    if args.entry:
        entries = [e.strip() for item in args.entry for e in item.split(",") if e.strip()]
    runs = []
    for item in args.files:
        path = Path(item)
        if path.suffix.lower() == ".sdf":
            for graph in dsl.load_sdf(path):
                runs.append(breakdown(graph.bind()))
        else:
            graph = import_profile(path, inclusive=args.inclusive, entries=entries).graph
            runs.append(breakdown(graph))
    return {"runs": runs}


def _sdf3_arguments(sdf3) -> None:
    sdf3.description = ("Read an SDF3 XML file (actors, port rates, channels, initial "
                        "tokens, token sizes) and write it as .sdf. Execution times become "
                        "actor attributes exec_<type> (read by lookup()), the time on SDF3's "
                        "default processor (the last marked default) exec and quanta (exec "
                        "= 0 for an actor without one, as SDF3 times it), and the "
                        "processor types the actor's allowed list. Errors point at "
                        "FILE:LINE:COL.")
    sdf3.epilog = "example: mapeval import sdf3 h263.xml -o h263.sdf"
    sdf3.add_argument("path", metavar="FILE.xml")
    _output_option(sdf3)
    sdf3.set_defaults(run=run_sdf3)


ERT_HELP = """\
FILE is the roofline.json the Empirical Roofline Toolkit writes: GFLOP/s ceilings under
empirical.gflops, GB/s per memory level (L1, L2, ..., DRAM) under empirical.gbytes.
The .moa keeps every number (x 1e9, in FLOP/s and B/s; time in seconds) as a parameter
peak_NAME or bw_LEVEL, and models the machine as one roofline PE 'cpu' (peak = the
highest ceiling, bandwidth = the --level's) whose traffic goes to a bandwidth CN 'mem'.
--json prints instead the ceilings, the bandwidths, the ridge point of every level
(peak / bandwidth, FLOP/B) and, with --kernels, each kernel's intensity, roof and
compute- or memory-bound classification. KERNELS.csv: kernel,flops,bytes[,seconds][,level].
"""


def _ert_arguments(ert) -> None:
    ert.description = ("Read Empirical Roofline Toolkit results (roofline.json) into "
                       "roofline PE parameters (.moa).")
    ert.epilog = ERT_HELP + "\nexample: mapeval import ert roofline.json -o machine.moa"
    ert.formatter_class = argparse.RawDescriptionHelpFormatter
    ert.add_argument("path", metavar="FILE.json")
    ert.add_argument("-o", "--output", metavar="ARCH.moa",
                     help="write the .moa here (default: standard output)")
    ert_options(ert)
    ert.add_argument("--name", help="name of the architecture (default: ERT's host name)")
    ert.add_argument("--json", action="store_true",
                     help="print the roofline analysis as JSON (the .moa only with -o)")
    ert.set_defaults(run=run_ert)


def ert_options(p) -> None:
    """``--level`` and ``--kernels``, shared with ``mapeval plot roofline``."""
    p.add_argument("--level", metavar="LEVEL",
                   help="memory level of the PE's bandwidth, and of kernels without a "
                   "level (default: the last, usually DRAM)")
    p.add_argument("--kernels", metavar="KERNELS.csv",
                   help="kernels to place: kernel,flops,bytes[,seconds][,level]")


def ert_plot_options(p) -> None:
    """The options of ``mapeval plot roofline``."""
    p.add_argument("path", metavar="FILE.json", help="ERT's roofline.json")
    ert_options(p)


def ert_plot_source(args, command: str) -> dict:
    ert, analysis = ert_analysis(args)
    return {"analysis": analysis}


def working_set_options(p) -> None:
    """The options of ``mapeval plot working-set``."""
    p.add_argument("path", metavar="FILE.txt",
                   help="ERT's bandwidth-against-working-set file (..._bandwidth_vs_wss.max.txt)")
    p.add_argument("--levels", type=int, default=3, metavar="N",
                   help="cache levels to fit above the last level (default 3)")
    p.add_argument("--json", action="store_true", help="print the fit as JSON")


def working_set_source(args, command: str) -> dict:
    """The :class:`~moa.working_set.WorkingSetFit` of ``args.path``, printed."""
    import json

    from dsl.ert import read_working_set
    from mapping.errors import InputError
    from moa.working_set import fit_working_set

    if args.levels < 1:
        raise InputError(f"{command}: --levels must be at least 1, not {args.levels}")
    ws, gbs = read_working_set(args.path)
    try:
        fit = fit_working_set(ws, gbs, args.levels)
    except ValueError as exc:
        raise InputError(f"{command}: {args.path}: {exc}") from None
    print(json.dumps(fit.to_dict(), indent=2) if args.json else fit)
    return {"fit": fit, "all_ws": ws, "all_bandwidths": gbs}


def ert_analysis(args):
    """The :class:`~moa.roofline_analysis.RooflineAnalysis` of ``args.path`` (and
    ``--kernels``, ``--level``), with the ERT result it was read from."""
    from dataclasses import replace

    from dsl.ert import read_ert, read_kernels
    from moa.roofline_analysis import analyse

    ert = read_ert(args.path)
    if args.level is not None:
        ert.bandwidth(args.level)
    kernels = read_kernels(args.kernels) if args.kernels else ()
    if args.level is not None:
        kernels = tuple(k if k.level else replace(k, level=args.level) for k in kernels)
    return ert, analyse(ert.name, ert.ceilings, ert.levels, kernels)


def _output_option(p) -> None:
    p.add_argument("-o", "--output", metavar="APP.sdf",
                   help="write the .sdf here, or to a FIFO or device (default: standard "
                   "output)")


GPU_TABLE_HELP = """\
Each FILE is a CSV table of one kernel's launches timed on GPUs (nvprof, Nsight Compute
or CUDA events; the gpuperfpredict format). Required columns: gpu_name,
compute_version (3.0 to 12.0), max_clock_rate (MHz), bandwith (GB/s), bus (bits),
AppName, Input.Size, Grid.X, Block.X, Duration (seconds, or --duration-unit);
num_of_cores or sms (or a GPU of the data-sheet list, or --sms). Optional: memory_clock, L2 (MB), Grid.Y/Z and
Block.Y/Z (default 1), Registers.Per.Thread, Static.SMem, Dynamic.SMem (default 0).
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
"""


def _gpu_table_arguments(p) -> None:
    p.description = ("Turn GPU measurement tables of one kernel into a study: an "
                     "application, architectures with one PE per GPU, mappings and "
                     "the measurements.")
    p.epilog = GPU_TABLE_HELP + "\nexample: mapeval import gpu-table dotProd-*.csv " \
        "--bytes-per-element 8 --flops-per-element 2 -o dotprod/"
    p.formatter_class = argparse.RawDescriptionHelpFormatter
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
    p.set_defaults(run=run_gpu_table)


#: format -> the function defining its options (and its ``run``)
IMPORT_FORMATS: Registry = Registry("import format")
IMPORT_FORMATS.add("profile", _profile_arguments,
                   "a function-level profile (Kim & Edwards) as a single-rate SDF graph")
IMPORT_FORMATS.add("sdf3", _sdf3_arguments, "an SDF3 XML graph as a .sdf file")
IMPORT_FORMATS.add("ert", _ert_arguments,
                   "Empirical Roofline Toolkit results as roofline PE parameters (.moa)")
IMPORT_FORMATS.add("gpu-table", _gpu_table_arguments,
                   "GPU measurement tables of one kernel as a study (application, GPUs, "
                   "mappings, measurements)")


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="read other formats (a program profile, SDF3 XML, ERT rooflines, GPU "
        "measurement tables) into .sdf, .moa, .map and .csv files",
        description="Read another format into mapeval's files: "
        + IMPORT_FORMATS.describe() + ".")
    kinds = p.add_subparsers(dest="kind", metavar="FORMAT", parser_class=type(p))
    for fmt in IMPORT_FORMATS:
        kinds.add_parser(fmt, help=IMPORT_FORMATS.help(fmt)).set_defaults(
            configure=IMPORT_FORMATS.get(fmt))
    p.set_defaults(run=lambda args: p.error("choose what to import: "
                                            + ", ".join(IMPORT_FORMATS)))


def _emit(text: str, output: str | None, inputs, note: str = "") -> None:
    if output is None:
        sys.stdout.write(text)
        return
    write_atomically(output, text, inputs=inputs, suffixes=(".sdf",),
                     what="the output of 'mapeval import'", note=note)


def run_profile(args):
    import dsl
    from dsl.profile import import_profile, profile_form

    if args.output is not None:
        check_output(args.output, (), (".sdf",), "the output of 'mapeval import'")
    entries = None
    if args.entry:
        entries = [e.strip() for item in args.entry for e in item.split(",") if e.strip()]
    result = import_profile(args.path, inclusive=args.inclusive, entries=entries,
                            name=args.name)
    form, directory = profile_form(args.path)
    files = ("function", "subcalls", "icount", "xfers") if form == "logs" else \
        ("functions.csv", "transfers.csv")
    text = result.header(args.path) + dsl.format_sdf(result.graph)
    if not text.endswith("\n"):
        text += "\n"
    g = result.graph
    _emit(text, args.output, [directory / f for f in files],
          f"graph '{g.name}', {len(g.actors)} actors, {len(g.channels)} channels")
    return 0


def run_sdf3(args):
    import dsl

    path = Path(args.path)
    if path.suffix.lower() != ".xml":
        raise InputError(f"'{path}': expected an SDF3 .xml file")
    check_readable(path)
    if args.output is not None:
        check_output(args.output, [path], (".sdf",), "the output of 'mapeval import'")
    graph = dsl.read_sdf3(path)
    text = f"# Imported by 'mapeval import sdf3' from {path}\n" + dsl.format_sdf(graph)
    if not text.endswith("\n"):
        text += "\n"
    _emit(text, args.output, [path])
    return 0


def run_ert(args):
    from dsl.ert import ert_moa
    from mapping.output import print_json

    path = Path(args.path)
    if args.output is not None:
        check_output(args.output, [path], (".moa",), "the output of 'mapeval import ert'")
    ert, analysis = ert_analysis(args)
    text = ert_moa(ert, args.level, args.name)
    if args.json:
        print_json(analysis.as_dict())
    if args.output is not None:
        write_atomically(args.output, text, inputs=[path], suffixes=(".moa",),
                         what="the output of 'mapeval import ert'",
                         note=f"peak {ert.peak} GFLOP/s, "
                         + ", ".join(f"{n} {v} GB/s" for n, v in ert.levels))
    elif not args.json:
        sys.stdout.write(text)
    return 0


def run_gpu_table(args):
    import dsl
    from dsl.gpu_table import read_gpu_tables, study_files
    from mapping.output import print_json

    sms = {}
    for item in args.sms:
        name, sep, value = item.partition("=")
        sms[name.strip()] = POSITIVE_WHOLE.parse(value)
        if not sep or sms[name.strip()] is None:
            raise InputError(f"--sms {item}: expected GPU=N with N "
                             f"{POSITIVE_WHOLE.description}")
    table = read_gpu_tables(args.paths, sms=sms, duration_unit=args.duration_unit)
    files = study_files(table, elements=args.elements,
                        bytes_per_element=args.bytes_per_element,
                        flops_per_element=args.flops_per_element,
                        syncs=args.syncs_per_block,
                        l2_bytes_per_element=args.l2_bytes_per_element, name=args.name,
                        partial_sectors=args.partial_sectors)
    dsl.parse_sdf(files["app.sdf"], "app.sdf")      # a bad --elements/... expression
    directory = Path(args.output)
    if directory.exists() and not directory.is_dir():
        raise InputError(f"'{directory}' is not a directory")
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        target = directory / name
        check_output(target, args.paths, None, "the output of 'mapeval import gpu-table'")
        write_atomically(target, text, inputs=args.paths,
                         what="the output of 'mapeval import gpu-table'")
        written.append(str(target))
    for c in table.corrections:
        print(f"corrected: {c}", file=sys.stderr)
    if args.json:
        print_json({"kernel": table.kernel, "gpus": [g.ident for g in table.gpus],
                    "launches": len(table.launches), "corrections": list(table.corrections),
                    "files": written})
    else:
        print(f"study in {directory}: kernel '{table.kernel}', {len(table.gpus)} GPUs, "
              f"{len(table.launches)} launches ({', '.join(files)})", file=sys.stderr)
    return 0
