"""Print the README's tables from the JSON files study.sh wrote: python3 table.py OUT.

The main table: each model's 5-fold figures (tau over all rows, within one size) and,
where the model predicts a GPU from parameters shared by all GPUs or a generation, the
figures of each GPU left out in turn (``--folds-by gpu``: the mean over the nine GPUs
of the within-size tau on the left-out GPU's launches and of its median relative
error).  Then the leave-one-GPU-out error per GPU, and the fitted values."""
import json
import sys
from pathlib import Path

KERNELS = [("msum", "matrix_sum_normal"), ("dot", "dotProd"), ("mm", "matMul_gpu"),
           ("mms", "matMul_gpu_sharedmem")]
MODELS = [("lsla", "LSLA (a, b fitted)"), ("gsla", "GSLA, gamma = cores (a, b fitted)"),
          ("roofline", "roofline, data sheet (nothing fitted)"),
          ("roofline_bw", "roofline, bandwidth fitted per GPU"),
          ("gpu", "gpu, DRAM efficiency per GPU"),
          ("gpu_shared", "**gpu, every parameter per generation**")]


def load(out, name):
    f = out / f"{name}.json"
    if not f.exists() or not f.stat().st_size:
        return None
    return json.loads(f.read_text())


def f3(x):
    return "-" if x is None else f"{x:.3f}"


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "out/gpu_choice")
    print("| kernel | model | tau | tau within size | pairs ordered within | "
          "GPU left out: tau within size | GPU left out: median error % (worst GPU) |")
    print("|---|---|---|---|---|---|---|")
    for k, kernel in KERNELS:
        for m, model in MODELS:
            d, lo = load(out, f"{k}_{m}"), load(out, f"{k}_{m}_logo")
            row = [kernel, model]
            row += [f3(d[key]) if d else "-" for key in ("tau", "tau_within",
                                                        "fidelity_within")]
            if lo:
                worst = max(lo["folds"], key=lambda x: x["mdape"])
                row += [f3(lo["tau_within"]),
                        f"{lo['mdape']:.1f} ({worst['mdape']:.0f}, {worst['group']})"]
            else:
                row += ["-", "-"]
            print("| " + " | ".join(row) + " |")
    gpus = None
    table = {}
    for k, kernel in KERNELS:
        lo = load(out, f"{k}_gpu_shared_logo")
        if lo:
            table[kernel] = {f["group"]: f for f in lo["folds"]}
            gpus = sorted(table[kernel])
    if gpus:
        print()
        print("Each GPU left out (gpu model, parameters per generation): median relative "
              "error % / tau within size on its launches")
        print()
        print("| GPU | " + " | ".join(table) + " |")
        print("|---|" + "---|" * len(table))
        for g in gpus:
            cells = [f"{t[g]['mdape']:.1f} / {f3(t[g]['tau_within'])}" if g in t else "-"
                     for t in table.values()]
            print(f"| {g} | " + " | ".join(cells) + " |")
    print()
    print("Fitted on every row:")
    print()
    for k, kernel in KERNELS:
        for m in ("gpu_shared", "gpu"):
            d = load(out, f"{k}_{m}")
            if d and d.get("fitted"):
                values = ", ".join(f"{p} {v:.3g}" for p, v in d["fitted"].items())
                print(f"- {kernel}, {m}: {values}")


if __name__ == "__main__":
    main()
