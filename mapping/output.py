"""Writing results: JSON on stdout, and files replaced atomically, never over an input."""
from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from pathlib import Path

from mapping.errors import InputError


def _clean(obj):
    # JSON has no infinities or NaN: they become null.
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalars
        return _clean(obj.item())
    return obj


def print_json(document, stream=None) -> None:
    json.dump(_clean(document), stream or sys.stdout, indent=2)
    (stream or sys.stdout).write("\n")


def write_atomically(path: str | Path, text: str | bytes, inputs=()) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same directory and an
    atomic rename, refusing to overwrite any of ``inputs``."""
    path = Path(path)
    for source in inputs:
        if Path(source).exists() and path.exists() and path.resolve() == Path(source).resolve():
            raise InputError(f"refusing to write '{path}': it is an input of this command")
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = "wb" if isinstance(text, bytes) else "w"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, mode) as f:
            f.write(text)
        # mkstemp creates 0600; give the file the permissions an ordinary open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
