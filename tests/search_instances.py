"""Seeded search instances of issue 13: random SDF graphs on a heterogeneous board whose
PEs talk over a bus with 2 or 3 CNs, with communication costs.

``instance(n_actors, n_pes, seed)`` builds one; ``write_instance`` stores it as ``.sdf``
and ``.moa`` text (``tests/data/search_instances/``, see its ``optima.json`` for the
proven optima or best known values and how they were obtained).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from moa import Architecture, CostSpec
from search_problems import random_app

#: (type, time per quantum, time per token) of the PE kinds, fastest last
KINDS = (("little", 2.0e-9, 1e-6), ("big", 0.7e-9, 1e-6), ("dsp", 1.2e-9, 2e-6))


def _lsla(alpha, beta=0.0):
    return CostSpec("lsla", {"alpha": alpha, "beta": beta})


def instance_arch(n_pes: int, seed: int = 0) -> Architecture:
    """``n_pes`` PEs: half ``little`` cores behind their cluster CN, a quarter ``big``
    cores behind theirs (3 CNs) or on the bus (2 CNs, even seeds), the rest DSPs on the
    bus.  Cores of one kind on one CN are interchangeable."""
    rng = np.random.default_rng(seed)
    three = seed % 2 == 1
    a = Architecture(f"bus{n_pes}_{seed}", aggregate="max")
    for name, alpha, beta in KINDS:
        scale = float(rng.uniform(0.8, 1.25))
        a.add_type(name, costs={"time": _lsla(alpha * scale, beta)})
    a.add_cn("bus", costs={"time": _lsla(4e-10, 2e-6)})
    a.add_cn("l2_little", costs={"time": _lsla(8e-11, 1e-7)})
    if three:
        a.add_cn("l2_big", costs={"time": _lsla(6e-11, 1e-7)})
    a.add_link("l2_little", "bus")
    if three:
        a.add_link("l2_big", "bus")
    n_little = max(1, n_pes // 2)
    n_big = max(1, n_pes // 4) if n_pes > 2 else 0
    n_dsp = n_pes - n_little - n_big
    for i in range(n_little):
        a.add_pe(f"little[{i}]", type_name="little", array=("little", i))
        a.add_link(f"little[{i}]", "l2_little")
    for i in range(n_big):
        a.add_pe(f"big[{i}]", type_name="big", array=("big", i))
        a.add_link(f"big[{i}]", "l2_big" if three else "bus")
    for i in range(n_dsp):
        a.add_pe(f"dsp[{i}]", type_name="dsp", array=("dsp", i))
        a.add_link(f"dsp[{i}]", "bus")
    return a


def instance(n_actors: int, n_pes: int, seed: int = 0):
    """``(app, arch)``: ``n_actors`` actors and ``1.5·n_actors`` channels on
    :func:`instance_arch`."""
    app = random_app(n_actors, n_actors * 3 // 2, seed=seed, extra_attrs=False)
    app.name = f"rand{n_actors}_{seed}"
    return app, instance_arch(n_pes, seed)


def write_instance(directory, n_actors: int, n_pes: int, seed: int = 0) -> tuple[Path, Path]:
    """Store :func:`instance` as ``a{n}_p{P}_s{seed}.sdf`` and ``.moa`` in ``directory``."""
    import dsl
    app, arch = instance(n_actors, n_pes, seed)
    directory = Path(directory)
    stem = directory / f"a{n_actors}_p{n_pes}_s{seed}"
    sdf, moa = stem.with_suffix(".sdf"), stem.with_suffix(".moa")
    sdf.write_text(dsl.format_sdf(app))
    moa.write_text(dsl.format_moa(arch))
    return sdf, moa


#: the stored instances: (actors, PEs, seed); the first is small enough for the tests
STORED = ((10, 4, 0), (12, 4, 0), (30, 8, 1), (30, 12, 2), (50, 8, 3), (50, 12, 4))


def main(argv=None):
    """Write :data:`STORED` to a directory with ``optima.json``: for each instance the
    best value found, the bound ``exact`` proved and how both were obtained."""
    import argparse
    import json
    import os
    import time

    from mapping.semantics.problem import bind_problem
    from mapping.search import search

    ap = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    ap.add_argument("directory")
    ap.add_argument("--time-limit", type=float, default=60.0, help="of exact (wall, s)")
    ap.add_argument("--budget", type=int, default=200_000,
                    help="evaluations of exact's starting portfolio run")
    ap.add_argument("--only", help="a{n}_p{P}_s{seed} stems to (re)compute, comma-separated")
    args = ap.parse_args(argv)
    path = Path(args.directory) / "optima.json"
    table = json.loads(path.read_text()) if path.exists() else {}
    for n, P, seed in STORED:
        stem = f"a{n}_p{P}_s{seed}"
        if args.only and stem not in args.only.split(","):
            continue
        sdf, moa = write_instance(args.directory, n, P, seed)
        problem = bind_problem(*instance(n, P, seed))
        wall, cpu = time.perf_counter(), time.process_time()
        res = search(problem, "time", "max", strategy="exact", budget=args.budget,
                     time_limit=args.time_limit)
        entry = {"actors": n, "pes": P, "seed": seed, "aggregate": "max",
                 "value": res.value, "optimal": res.optimal, "bound": res.extra["bound"],
                 "gap": res.extra["gap"], "mapping": res.mapping,
                 "how": f"exact: portfolio start of {args.budget:,} evaluations (seed 0), "
                        f"then HiGHS with a {args.time_limit:g} s wall-clock limit; "
                        f"{time.perf_counter() - wall:.1f} s wall, "
                        f"{time.process_time() - cpu:.1f} s CPU, load average "
                        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"}
        if n <= 12:             # small enough to enumerate
            check = search(problem, "time", "max", strategy="exhaustive")
            entry["exhaustive"] = check.value
            agrees = "agrees" if abs(check.value - res.value) <= 1e-9 * res.value \
                else f"gives {check.value!r}"
            entry["how"] += f"; exhaustive ({check.evaluations:,} canonical mappings) {agrees}"
        entry["bound_how"] = entry["how"]
        old = table.get(stem)
        if old is not None:
            # keep the best value found and the highest bound proven by any run
            if old["value"] <= entry["value"]:
                entry.update({k: old[k] for k in ("value", "mapping", "how")})
            if old["bound"] > entry["bound"]:
                entry["bound"] = old["bound"]
                entry["bound_how"] = old.get("bound_how", old["how"])
            entry["optimal"] = entry["optimal"] or old["optimal"]
            entry["gap"] = (entry["value"] - entry["bound"]) / entry["value"]
        table[stem] = entry
        print(stem, json.dumps(entry), flush=True)
        path.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    import sys
    sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).parent)]
    main()
