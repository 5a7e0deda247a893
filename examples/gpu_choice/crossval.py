"""K-fold fit and fidelity of a study written by ``mapeval import gpu-table``, fitting on
relative (log) errors: an independent cross-check of ``mapeval fidelity --folds K
--residuals relative --fit ...`` (which study.sh runs), with its own predictor and
solver, within the bounds the models declare (``free_bounds``: an efficiency in (0, 1],
``hide`` at most 64; at least 1e-9 of its start value), from the files' values (a 0
with a declared typical size, ``dispatch``, from that size; no plateau search).  Each
row weighs alike: residual ``log(predicted / measured)``.

Predictions come from the architecture's own cost models (``element_value`` of the
kernel's token, bound from the row's parameters exactly as the evaluator binds them);
folds from :func:`mapping.calibration.validation.fold_splits` (the same as ``--folds K --seed S``),
figures from :mod:`mapping.calibration.fidelity`.  Free parameters are named as for ``mapeval fit``:
a bare ``param`` of the ``.moa`` or ``PE.time.PARAM``.

    python3 examples/gpu_choice/crossval.py DIR MODEL.moa FREE[,FREE...] [--folds 5]
        [--starts N]

prints one JSON document with ``tau``, ``tau_within``, ``fidelity_within`` (means over
the folds, on the held-out rows) and the per-fold fitted values.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
from pathlib import Path

import numpy as np
from scipy import optimize, stats

import dsl
from moa.cost_models import make_model
from mapping.calibration.fidelity import within_groups
from mapping.calibration.free import free_bounds, free_start_scales, parse_free
from mapping.calibration.starts import random_starts
from mapping.calibration.validation import fold_splits


class Token:
    count = 1
    source = "kernel"

    def __init__(self, attrs):
        self.attrs = dict(attrs)
        self.quanta = self.attrs.get("quanta", 1.0)

    def get(self, key, default=None):
        return self.attrs.get(key, default)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("moa")
    ap.add_argument("free", nargs="?", default="")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--starts", type=int, default=0,
                    help="random starts besides the file's values, as mapeval fit's")
    args = ap.parse_args()
    d = Path(args.dir)
    app = dsl.load_sdf(d / "app.sdf")[0]
    arch = dsl.load_moa(d / args.moa)[0]
    rows = list(csv.DictReader((d / "measurements.csv").open()))
    names = [p for p in app.params]
    tokens = [Token(app.bind({k: float(r[k]) for k in names if k in r}).actors["kernel"].attrs)
              for r in rows]
    gpus = [r["gpu"] for r in rows]
    measured = np.array([float(r["time_s"]) for r in rows])
    sizes = [r["size"] for r in rows]
    free = [f for f in args.free.split(",") if f]
    bare = [f for f in free if "." not in f]
    local = [tuple(f.split(".")) for f in free if "." in f]
    base = arch.bind({})
    theta0 = []
    for f in free:
        if "." in f:
            pe, metric, p = f.split(".")
            theta0.append(base.elements[pe].costs[metric].params.model_dump()[p])
        else:
            theta0.append(float(arch.params[f]))
    theta0 = np.array(theta0, dtype=float)
    specs = parse_free(arch, free) if free else []
    scales = free_start_scales(arch, specs)
    theta0 = np.array([s if t == 0 and s else t for t, s in zip(theta0, scales)])
    bounds = free_bounds(arch, specs)
    inside = [(b.clip(b.low), b.clip(b.high) if math.isfinite(b.high) else math.inf)
              for b in bounds]
    with np.errstate(divide="ignore", invalid="ignore"):   # a 0 start stays 0
        lower = np.where(theta0 > 0, np.maximum(1e-9, [lo for lo, _ in inside] / theta0), 0)
        upper = np.where(theta0 > 0, [hi for _, hi in inside] / theta0, np.inf)

    def models(theta):
        values = dict(zip(free, theta))
        bound = arch.bind({f: values[f] for f in bare})
        out = {}
        for pe, el in bound.elements.items():
            cost = el.costs.get("time")
            if cost is None:
                continue
            update = {p: values[f"{e}.{m}.{p}"] for e, m, p in local if e == pe}
            out[pe] = make_model(cost.name, {**cost.params.model_dump(), **update}) \
                if update else cost
        return out

    def predict(theta, idx):
        ms = models(theta)
        return np.array([ms[gpus[i]].element_value([tokens[i]]) for i in idx])

    figures = []
    for train, test in fold_splits(len(rows), args.folds, args.seed):
        theta = theta0
        if free:
            def residuals(u):
                p = predict(u * theta0, train)
                return np.log(np.maximum(p, 1e-300) / measured[train])
            best = None
            for start in [np.ones(len(free))] + random_starts(np.ones(len(free)), lower,
                                                              args.starts, args.seed,
                                                              upper):
                sol = optimize.least_squares(residuals, start, bounds=(lower, upper),
                                             x_scale="jac")
                if best is None or sol.cost < best.cost:
                    best = sol
            theta = best.x * theta0
        p = predict(theta, test)
        fw, tw = within_groups(np.round(p, 12), measured[test], [sizes[i] for i in test])
        figures.append({"tau": float(stats.kendalltau(np.round(p, 12), measured[test])[0]),
                        "tau_within": tw, "fidelity_within": fw,
                        "fitted": dict(zip(free, map(float, theta)))})
    doc = {k: float(np.mean([f[k] for f in figures])) for k in
           ("tau", "tau_within", "fidelity_within")}
    doc.update(n=len(rows), folds=figures)
    print(json.dumps(doc, indent=1, default=lambda x: None if math.isnan(x) else x))


if __name__ == "__main__":
    main()
