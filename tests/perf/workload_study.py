"""A generated study of mapping rows under a few workloads (issue 39, rows at scale):
``write_workload_study`` writes ``tiles.sdf`` (parameters ``W``, ``H``, ``D``: a frame of
``W·H`` pixels of ``D`` bytes, cut into 4 tiles), ``board.moa`` (two CPU cores and a DSP
on a bus, LSLA time) and ``rows.csv``: one row per measured run, its mapping in the
columns ``pe_<actor>`` and its workload in ``W``, ``H``, ``D``, which take
``workloads`` distinct sets of values (cycling), and a measured ``time_s`` (the model's
own value at stated coefficients, times 5 % log-normal noise).

Used by ``bench_workloads.py`` (200,000 rows through ``mapeval fidelity``) and by
``tests/test_rows_at_scale.py`` (the application is bound once per workload).
"""
from __future__ import annotations

from itertools import product
from pathlib import Path

import numpy as np

ACTORS = ["grab", "filter", "merge", "encode"]
PES = ["cpu0", "cpu1", "dsp"]
#: (W, H, D) of each workload, in the order rows cycle through them
WORKLOADS = [(320, 240, 1), (640, 480, 1), (640, 480, 3), (1280, 720, 3),
             (1920, 1080, 3), (3840, 2160, 4), (7680, 4320, 4), (160, 120, 2)]
#: seconds per pixel of each PE, per byte of the bus (the stated truth)
ALPHA = {"cpu0": 4e-9, "cpu1": 4e-9, "dsp": 1e-9, "bus": 2e-9}

SDF = """\
sdf tiles {
    param W = 640
    param H = 480
    param D = 1

    actor grab    [quanta = W * H]
    actor filter  [quanta = W * H / 4]
    actor merge   [quanta = W * H]
    actor encode  [quanta = W * H / 2]

    grab -> filter    [prod = 4, size = W * H * D / 4]
    filter -> merge   [cons = 4, size = W * H * D / 4]
    merge -> encode   [size = W * H * D]
}
"""

MOA = """\
moa board {
    metric time [unit = "s"]
    pe cpu0 [time = lsla(alpha = 4e-9, beta = 1e-6)]
    pe cpu1 [time = lsla(alpha = 4e-9, beta = 1e-6)]
    pe dsp [time = lsla(alpha = 1e-9, beta = 5e-6)]
    cn bus [time = lsla(alpha = 2e-9)]
    cpu0 -- bus
    cpu1 -- bus
    dsp -- bus
}
"""


def _time(mapping: tuple[str, ...], w: int, h: int, d: int) -> float:
    """A rough stand-in for a measured run: each actor's pixels at its PE's rate, each
    channel between two PEs at the bus's rate per byte."""
    pixels = w * h
    work = dict(zip(ACTORS, (pixels, pixels, pixels, pixels / 2)))
    t = sum(ALPHA[pe] * work[a] for a, pe in zip(ACTORS, mapping))
    for (a, b), size in zip([(0, 1), (1, 2), (2, 3)], (pixels * d, pixels * d, pixels * d)):
        if mapping[a] != mapping[b]:
            t += ALPHA["bus"] * size
    return t


def write_workload_study(directory, rows: int, workloads: int = 6,
                         seed: int = 39) -> dict[str, Path]:
    """The files of a study of ``rows`` mapping rows over ``workloads`` workloads."""
    if not 1 <= workloads <= len(WORKLOADS):
        raise ValueError(f"1 to {len(WORKLOADS)} workloads, not {workloads}")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    (d / "tiles.sdf").write_text(SDF)
    (d / "board.moa").write_text(MOA)
    mappings = list(product(PES, repeat=len(ACTORS)))
    rng = np.random.default_rng(seed)
    picks = rng.integers(len(mappings), size=rows)
    noise = np.exp(rng.normal(0.0, 0.05, size=rows))
    lines = [",".join([f"pe_{a}" for a in ACTORS] + ["W", "H", "D", "time_s"])]
    for r in range(rows):
        m = mappings[picks[r]]
        w, h, depth = WORKLOADS[r % workloads]
        lines.append(",".join([*m, str(w), str(h), str(depth),
                               f"{_time(m, w, h, depth) * noise[r]:.6e}"]))
    (d / "rows.csv").write_text("\n".join(lines) + "\n")
    return {"sdf": d / "tiles.sdf", "moa": d / "board.moa", "csv": d / "rows.csv"}


if __name__ == "__main__":
    import sys
    print(write_workload_study(sys.argv[1], int(sys.argv[2]))["csv"])
