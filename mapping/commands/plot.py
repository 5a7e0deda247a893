"""``mapeval plot KIND``: the plots of the field, one kind per module."""
from __future__ import annotations

import importlib

# Plot kind -> module in mapping.commands exposing add_parser(subparsers, name) and run(args).
PLOT_KINDS: dict[str, str] = {
    "fidelity": "plot_fidelity",
    "gsla": "plot_gsla",
    "gables": "plot_gables",
    "logca": "plot_logca",
    "mapping": "plot_mapping",
    "pareto": "plot_pareto",
}


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="draw a plot (PNG, SVG or PDF by the extension of -o)",
        description="Draw one of the plots of the field. The format follows the extension "
        "of -o FILE: .png, .svg or .pdf.")
    kinds = p.add_subparsers(dest="kind", metavar="KIND", parser_class=type(p))
    for kind, module in PLOT_KINDS.items():
        importlib.import_module(f"mapping.commands.{module}").add_parser(kinds, kind)
    p.set_defaults(run=lambda args: p.error("choose a plot kind: " + ", ".join(PLOT_KINDS)))
