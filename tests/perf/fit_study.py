"""Generated calibration studies for the fitting benchmarks (``bench_fit.py``,
``bench_rows.py``): PREESM-style rows of a big.LITTLE board, written to files that
``mapeval fidelity`` reads.

Each row runs one configuration (a subset of the 8 cores); every active core runs one
actor ``cK`` whose data quantity ``S_K`` and parallelism ``G_K`` come from the row (the
columns ``SK``, ``GK``: the ``.sdf``'s params).  Stated ground truth (per core ``k``):
time ``(a_k/G_k + b_k)·S_k`` (GSLA eq. 5), energy ``(e_k/G_k + f_k)·S_k``, and

    energy_total = Σ_k energy_k + P_STATIC · max_k time_k

times log-normal noise (``noise``, 5 % by default).  The ``.moa`` writes exactly this
(GSLA time and energy per core, ``metric energy_total = energy[sum] + p_static *
time[max]``) with the true values, except the ``free`` parameters, which start at the
truth times a seeded factor in [0.5, 2].

:func:`write_activity_study` writes the same board with per-element activity columns
(``quanta_<core>``, ``tokens_<core>``) and a plain ``energy`` metric under ``sum`` (a
linear model: NNLS), the form of the 200,000-row scale runs.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

CORES = [f"l{k}" for k in range(4)] + [f"b{k}" for k in range(4)]    # LITTLE, big
#: the configurations rows cycle through (indices into CORES), as the LSLA study's six
CONFIGS = [(0,), (0, 1), (0, 1, 2, 3), (4,), (4, 5, 6, 7), (0, 1, 2, 3, 4, 5, 6, 7)]
P_STATIC = 1.5


def truth(seed: int = 2018) -> dict[str, float]:
    """The ground truth: ``{free-parameter name: value}`` of every parameter."""
    rng = np.random.default_rng(seed)
    out = {"p_static": P_STATIC}
    for k, core in enumerate(CORES):
        big = k >= 4
        out[f"{core}.time.alpha"] = (0.7e-9 if big else 2.0e-9) * rng.uniform(0.8, 1.25)
        out[f"{core}.time.beta"] = (0.1e-9 if big else 0.3e-9) * rng.uniform(0.8, 1.25)
        out[f"{core}.energy.alpha"] = (0.9e-9 if big else 0.3e-9) * rng.uniform(0.8, 1.25)
        out[f"{core}.energy.beta"] = (0.2e-9 if big else 0.05e-9) * rng.uniform(0.8, 1.25)
    return out


def free_parameters(count: int) -> list[str]:
    """The first ``count`` (at most 17) free parameters: ``p_static``, the cores' energy
    alphas, then their energy betas (the times are known, as if timed separately:
    otherwise ``p_static·alpha_time`` and ``alpha_energy`` of a core running alone could
    not be told apart)."""
    names = ["p_static"] + [f"{c}.energy.alpha" for c in CORES] \
        + [f"{c}.energy.beta" for c in CORES]
    if not 1 <= count <= len(names):
        raise ValueError(f"1 to {len(names)} free parameters, not {count}")
    return names[:count]


def _starts(free, values, seed):
    rng = np.random.default_rng(seed + 1)
    return {k: (v * float(np.exp(rng.uniform(np.log(0.5), np.log(2.0)))) if k in free else v)
            for k, v in values.items()}


def write_study(directory, rows: int, free: list[str], seed: int = 2018,
                noise: float = 0.05) -> dict[str, Path]:
    """The mapping-based study (``cores.sdf``, ``board.moa``, ``cores.map``,
    ``rows.csv``) of ``rows`` rows; returns the paths by kind."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    values = truth(seed)
    start = _starts(free, values, seed)
    sdf = ["sdf cores {"]
    sdf += [f"    param S{k} = 1000\n    param G{k} = 1" for k in range(len(CORES))]
    sdf += [f"    actor c{k} [quanta = S{k}, S = S{k}, gamma = G{k}]"
            for k in range(len(CORES))]
    sdf.append("}")
    (d / "cores.sdf").write_text("\n".join(sdf) + "\n")
    (d / "cores.map").write_text(
        "mapping one_per_core {\n" + "".join(f"    c{k} -> {core}\n"
                                             for k, core in enumerate(CORES)) + "}\n")
    (d / "board.moa").write_text(_board(start, energy_total=True))
    rng = np.random.default_rng(seed)
    head = ["config"] + [f"S{k}" for k in range(8)] + [f"G{k}" for k in range(8)] \
        + ["energy_J"]
    lines = [",".join(head)]
    for r in range(rows):
        c = r % len(CONFIGS)
        S = np.zeros(8)
        G = np.ones(8, dtype=int)
        for k in CONFIGS[c]:
            S[k] = float(np.round(10 ** rng.uniform(5, 7)))
            G[k] = int(rng.choice([1, 2, 4, 8]))
        e = sum((values[f"{core}.energy.alpha"] / G[k] + values[f"{core}.energy.beta"]) * S[k]
                for k, core in enumerate(CORES))
        t = max((values[f"{core}.time.alpha"] / G[k] + values[f"{core}.time.beta"]) * S[k]
                for k, core in enumerate(CORES))
        y = (e + values["p_static"] * t) * float(np.exp(rng.normal(0, noise)))
        lines.append(",".join([f"c{c}"] + [f"{s:.0f}" for s in S] + [str(g) for g in G]
                              + [f"{y:.9e}"]))
    (d / "rows.csv").write_text("\n".join(lines) + "\n")
    return {"sdf": d / "cores.sdf", "moa": d / "board.moa", "map": d / "cores.map",
            "csv": d / "rows.csv"}


def _board(values, energy_total: bool) -> str:
    lines = ["moa board {", f"    param p_static = {values['p_static']!r}", "    lambda = 1",
             '    metric time [unit = "s"]', '    metric energy [unit = "J"]']
    if energy_total:
        lines.append("    metric energy_total = energy[sum] + p_static * time[max]")
    lines.append("    aggregate = sum")
    for core in CORES:
        v = {kind: values[f"{core}.{kind}"] for kind in
             ("time.alpha", "time.beta", "energy.alpha", "energy.beta")}
        lines.append(f"    pe {core} [time = gsla(alpha = {v['time.alpha']!r}, "
                     f"beta = {v['time.beta']!r}), energy = gsla(alpha = "
                     f"{v['energy.alpha']!r}, beta = {v['energy.beta']!r})]")
    lines.append("    cn bus [time = lsla(alpha = 0), energy = lsla(alpha = 0)]")
    lines += [f"    {core} -- bus" for core in CORES]
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_activity_study(directory, rows: int, free: list[str], seed: int = 2018,
                         noise: float = 0.05) -> dict[str, Path]:
    """The activity study (``board.moa``, ``activity.csv``): per-core quanta and token
    counts per row, energy ``Σ_k tokens_k·(e_k·q_k/tokens_k + f_k)`` (LSLA per token;
    the ``.moa`` uses ``lsla(alpha = e_k, beta = f_k)``) with noise.  The free parameters
    name ``<core>.energy.alpha`` / ``.beta``."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    values = {k: v * (1e4 if k.endswith(".energy.beta") else 1.0)
              for k, v in truth(seed).items()}     # beta per token, tokens of ~1e4 quanta
    start = _starts(free, values, seed)
    lines = ["moa board {", "    lambda = 1", '    metric energy [unit = "J"]',
             "    aggregate = sum"]
    for core in CORES:
        lines.append(f"    pe {core} [energy = lsla(alpha = {start[core + '.energy.alpha']!r}"
                     f", beta = {start[core + '.energy.beta']!r})]")
    lines.append("    cn bus [energy = lsla(alpha = 0)]")
    lines += [f"    {core} -- bus" for core in CORES]
    lines.append("}")
    (d / "board.moa").write_text("\n".join(lines) + "\n")
    rng = np.random.default_rng(seed)
    quanta = np.round(10 ** rng.uniform(4, 7, size=(rows, 8)))
    tokens = rng.integers(1, 64, size=(rows, 8))
    idle = rng.random((rows, 8)) < 0.3
    idle[np.arange(rows), rng.integers(0, 8, rows)] = False     # every row runs something
    quanta[idle], tokens[idle] = 0, 0
    e = np.array([values[f"{c}.energy.alpha"] for c in CORES])
    f = np.array([values[f"{c}.energy.beta"] for c in CORES])
    y = (quanta @ e + tokens @ f) * np.exp(rng.normal(0, noise, rows))
    group = rng.integers(0, 6, rows)
    with open(d / "activity.csv", "w") as out:
        out.write(",".join(["config"] + [f"quanta_{c}" for c in CORES]
                           + [f"tokens_{c}" for c in CORES] + ["energy_J"]) + "\n")
        for r in range(rows):
            out.write(",".join([f"c{group[r]}"] + [f"{q:.0f}" for q in quanta[r]]
                               + [str(t) for t in tokens[r]] + [f"{y[r]:.9e}"]) + "\n")
    return {"moa": d / "board.moa", "csv": d / "activity.csv"}
