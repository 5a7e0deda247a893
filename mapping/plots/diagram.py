"""``mapeval plot diagram``: the picture of a mapping (:mod:`mapping.evaluation.diagram`'s DOT)
rendered by Graphviz's ``dot`` as PNG, SVG or PDF, by the extension of the output.

Graphviz rather than matplotlib: it lays out the clusters of actors per PE and routes the
channels over the CNs, which a hand-made matplotlib layout would do worse, and the
picture is then exactly the DOT text that ``mapeval export dot`` writes."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from mapping.evaluation.diagram import mapping_diagram
from mapping.errors import InputError, MappingError
from mapping.output import write_atomically
from mapping.plots.figure_io import plot_format

#: seconds Graphviz may take to lay out one diagram
TIMEOUT = 120


def render_dot(text: str, fmt: str) -> bytes:
    """``text`` (DOT) rendered by Graphviz in format ``fmt`` (``png``, ``svg``, ``pdf``)."""
    exe = shutil.which("dot")
    if exe is None:
        raise InputError("plot diagram needs Graphviz's 'dot' program on the PATH (e.g. "
                         "apt-get install graphviz); 'mapeval export dot APP.sdf ARCH.moa "
                         "MAP.map' writes the DOT text without it")
    try:
        done = subprocess.run([exe, f"-T{fmt}"], input=text.encode(), capture_output=True,
                              timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise MappingError(f"Graphviz took more than {TIMEOUT} s to lay out the diagram; "
                           "'mapeval export dot' writes its text") from None
    if done.returncode != 0:
        raise MappingError("Graphviz failed: " + done.stderr.decode(errors="replace").strip())
    return done.stdout


def plot_from_inputs(path, *, inputs=(), app, arch, mapping, metric="time", aggregate=None,
                     params=None) -> Path:
    """``mapeval plot diagram`` (see :mod:`mapping.plots`)."""
    fmt = plot_format(path)
    text = mapping_diagram(app, arch, mapping, metric, aggregate, params)
    return write_atomically(path, render_dot(text, fmt), inputs)
