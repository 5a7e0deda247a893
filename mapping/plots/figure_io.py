"""Writing a matplotlib figure to PNG, SVG or PDF, chosen by the file's extension,
through a temporary file and an atomic rename (never over an input of the command)."""
from __future__ import annotations

import io
from pathlib import Path

from matplotlib.figure import Figure

from mapping.errors import InputError
from mapping.output import write_atomically
from mapping.plots.style import DPI

FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def plot_format(path) -> str:
    """The format of ``path`` by its extension; an :class:`InputError` for any other."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise InputError(f"'{path}': a plot is written as .png, .svg or .pdf "
                         "(chosen by the extension)")
    return fmt


def new_figure(width: float = 7.0, height: float = 4.8) -> Figure:
    """A figure on the Agg canvas, without pyplot's global state (``width`` x ``height``
    inches; a PNG has :data:`mapping.plots.style.DPI` pixels per inch)."""
    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


def save_figure(fig: Figure, path, inputs=()) -> Path:
    """Render ``fig`` in the format of ``path``'s extension and write it atomically."""
    fmt = plot_format(path)
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt)
    return write_atomically(path, buf.getvalue(), inputs)
