"""Plots of the field (matplotlib, Agg backend): PNG, SVG or PDF by the file's
extension, all in the style of :mod:`mapping.plots.style`.

:data:`PLOTS` names every ``mapeval plot KIND``.  A kind takes the options (and inputs)
of one command (``takes``: ``eval``, ``fidelity``, ``search``, ``logca``, ``analyse`` or
``tradeoff``) plus its own ``options``, and is drawn by ``draw``, a lazy
``"module:function"`` called as
``draw(path, inputs=FILES, **source, **options)``; ``source`` is what that command loads
(``eval``: ``app, arch, mapping, metric, aggregate, params``; ``fidelity``:
``assessment, measured_label, metric``; ``search``: ``result``; ``logca``: ``analysis``;
``analyse``: ``analysed``; ``tradeoff``: ``front``).
Adding a plot is one module with that function and one :func:`_plot` line here; listing
the kinds imports neither the modules nor matplotlib.
"""
from __future__ import annotations

from dataclasses import dataclass

from mapping.options import POSITIVE
from mapping.registry import Registry


@dataclass(frozen=True)
class PlotKind:
    takes: str
    draw: str
    description: str
    example: str
    options: tuple[tuple[tuple[str, ...], dict], ...] = ()


PLOTS: Registry[PlotKind] = Registry("plot kind")


def _plot(name: str, help: str, takes: str, draw: str, description: str, example: str,
          options=()) -> None:
    PLOTS.add(name, PlotKind(takes, draw, description, example, tuple(options)), help)


_plot("fidelity", "predicted against measured values (tau in the title)", "fidelity",
      "mapping.plots.fidelity:plot_from_inputs",
      "Takes the options of 'mapeval fidelity' and draws predicted against measured values, "
      "one point per row (test rows in colour when fitting).",
      "mapeval plot fidelity examples/gsla/opencl.sdf examples/gsla/gpu.moa "
      "examples/gsla/mappings.map examples/gsla/measurements.csv --mapping gpu_offload "
      "--measured time_s --fit gpu.time.alpha,gpu.time.beta -o fidelity.png")
_plot("gsla", "measured points and the fitted GSLA surface over (S, gamma)", "fidelity",
      "mapping.plots.gsla:plot_from_inputs",
      "Takes the options of 'mapeval fidelity' and draws, as in the GSLA paper's Figs. 5-9, "
      "the mean measurement of each (S, gamma) configuration against the (fitted, with "
      "--fit) model surface, and the model's error per configuration.",
      "mapeval plot gsla examples/gsla/opencl.sdf examples/gsla/gpu.moa "
      "examples/gsla/mappings.map examples/gsla/measurements.csv --mapping gpu_offload "
      "--measured time_s --fit gpu.time.alpha,gpu.time.beta -o gsla.png",
      [(("--x",), dict(default="S", metavar="PARAM",
                       help="parameter column on the first axis (default S)")),
       (("--y",), dict(default="gamma", metavar="PARAM",
                       help="parameter column on the second axis (default gamma)"))])
_plot("gables", "Gables scaled rooflines of every IP and of memory", "eval",
      "mapping.plots.gables:plot_from_inputs",
      "Draw the scaled rooflines of every roofline PE and of every bandwidth CN (memory, "
      "buses) of a mapping on log-log axes, with drop lines at each IP's operational "
      "intensity and at the harmonic-mean intensity I_avg, and the attainable performance "
      "marked (Gables, HPCA 2019, Fig. 6). --aggregate chooses the aggregation of the "
      "marked attainable performance; under sum or exclusive (serialized work) the "
      "system's curve, every intensity scaled, is drawn through that mark.",
      "mapeval plot gables examples/gables/two_ip.sdf examples/gables/two_ip.moa "
      "examples/gables/two_ip.map -p f=0.75 -o fig6b.png")
_plot("logca", "LogCA speedup against granularity, and the optimization regions", "logca",
      "mapping.plots.logca:plot_from_inputs",
      "Draw the LogCA speedup of one accelerator against granularity (log axes) with g1, "
      "g_A/2 and the speedup limit marked, beside the optimization-regions chart (Altaf & "
      "Wood, ISCA 2017, Figs. 3 and 6). Takes the options of mapeval logca: with --fit "
      "DATA.csv (repeatable) the observed speedups over each fitted model, with --table "
      "several accelerators on one chart (Figs. 7, 10, 11), and the latency bound "
      "(C/L)·g^(beta-1) where latency grows with g (Fig. 4b).",
      "mapeval plot logca --interface-latency 1500 --overhead 2.9e4 --compute-index 90 "
      "--acceleration 19 --latency independent -o aes.png")
_plot("mapping", "per-element load of a mapping (bar chart)", "eval",
      "mapping.plots.mapping_load:plot_from_inputs",
      "Draw one bar per element of the architecture: its value of the metric under the "
      "mapping (CNs scaled by lambda), the bottleneck highlighted, the actors on each PE "
      "named under its bar.",
      "mapeval plot mapping examples/gables/two_ip.sdf examples/gables/two_ip.moa "
      "examples/gables/two_ip.map -p f=0.75 -o load.svg",
      [(("--logy",), dict(action="store_true", help="log scale for the values"))])
_plot("schedule", "Gantt chart of a dataflow schedule (one row per PE and CN)", "analyse",
      "mapping.plots.schedule:plot_from_inputs",
      "Takes the options of 'mapeval analyse' and draws its schedule as a Gantt chart: "
      "with an architecture and a mapping, one row per PE and CN (transfers hatched on "
      "the CNs), without one, one row per actor (firings that overlap stack); every "
      "firing labelled (a#0), one colour per actor, the makespan and the period marked.",
      "mapeval plot schedule examples/timing/video.sdf examples/timing/duo.moa "
      "examples/timing/mappings.map --mapping split -o gantt.png")
_plot("tradeoff", "storage-throughput trade-off of an application (Pareto staircase)",
      "tradeoff", "mapping.plots.tradeoff:plot_from_inputs",
      "Takes the options of 'mapeval analyse --tradeoff' and draws throughput against "
      "total buffer size: the Pareto points joined by the staircase of the best "
      "throughput each size reaches, the throughput with unbounded buffers, and where "
      "the budget stopped the search the size up to which the front is proven.",
      "mapeval plot tradeoff tests/data/sdf3_examples/samplerate.sdf -o tradeoff.png")
_plot("pareto", "Pareto front of a multi-objective search", "search",
      "mapping.plots.pareto:plot_from_inputs",
      "Takes the options of 'mapeval search' (--objectives defaults to time,energy) and "
      "draws the non-dominated mappings it finds, naming the two extremes, the knee and "
      "a few more (all of a front of six or fewer).",
      "mapeval plot pareto app.sdf arch.moa --objectives time,energy --strategy genetic "
      "--budget 50000 -o front.png")
_plot("diagram", "picture of a mapping: actors by PE, channels over CNs (needs Graphviz)",
      "eval", "mapping.plots.diagram:plot_from_inputs",
      "Render with Graphviz's dot the DOT of 'mapeval export dot APP.sdf ARCH.moa MAP.map': "
      "one box per PE holding its actors, the CNs, each channel drawn over the CNs of its "
      "route, every element's value of --metric and the bottleneck highlighted.",
      "mapeval plot diagram examples/timing/video.sdf examples/timing/duo.moa "
      "examples/timing/mappings.map --mapping split -o split.svg")
_plot("roofline", "hierarchical roofline of ERT results, kernels classified", "roofline",
      "mapping.plots.roofline:plot_from_inputs",
      "Read an Empirical Roofline Toolkit roofline.json and draw one roof per memory level "
      "and one ceiling per compute peak, each labelled with its value, the ridge points, "
      "and the kernels of --kernels as points, coloured compute- or memory-bound "
      "(measured performance with a seconds column, else on their roof).",
      "mapeval plot roofline roofline.json --kernels kernels.csv -o roofline.png")
_plot("working-set", "bandwidth against working set (ERT) with the fitted cache levels",
      "working-set", "mapping.plots.working_set:plot_from_inputs",
      "Read an Empirical Roofline Toolkit bandwidth-against-working-set file "
      "(..._bandwidth_vs_wss.max.txt), fit --levels cache levels and a last level with the "
      "working-set term of the cost models (moa.working_set) and draw the measured points, "
      "the fitted curve and each level's plateau and capacity; the fit is printed.",
      "mapeval plot working-set bandwidth_vs_wss.max.txt --levels 4 -o wss.png")
_plot("breakdown", "computation vs local and global communication per run and function",
      "profile", "mapping.plots.profile:breakdown_from_inputs",
      "Kim & Edwards' Figs. 3-4 from imported profiles (.sdf of 'mapeval import profile', "
      "or profile directories): one stacked bar per run (fractions of computation, local "
      "communication -- a function's bytes to itself or, with --inclusive, within its call "
      "tree -- and global communication), and per function its instructions and the local "
      "and global bytes it reads.",
      "mapeval plot breakdown examples/accelerator_store/decoder.sdf "
      "examples/accelerator_store/decoder_exclusive.sdf -o breakdown.png",
      [(("--byte-cost",), dict(type=POSITIVE, default=1.0, metavar="W",
                               help="instructions one byte counts as in the per-run "
                               "fractions (default 1)"))])
_plot("heatmap", "producer-consumer bytes of a profile, functions by computation", "profile",
      "mapping.plots.profile:heatmap_from_inputs",
      "Kim & Edwards' Fig. 9 from one imported profile: the bytes each producer function "
      "(row) wrote that each consumer (column) read, log colour scale, functions sorted by "
      "computation, local traffic on the diagonal.",
      "mapeval plot heatmap examples/accelerator_store/decoder_exclusive.sdf -o heatmap.png")
