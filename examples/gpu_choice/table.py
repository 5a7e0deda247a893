"""Print the README's table from the JSON files study.sh wrote: python3 table.py OUT."""
import json
import sys
from pathlib import Path

KERNELS = [("msum", "matrix_sum_normal"), ("dot", "dotProd"), ("mm", "matMul_gpu"),
           ("mms", "matMul_gpu_sharedmem")]
MODELS = [("lsla", "LSLA (a, b fitted)"), ("gsla", "GSLA, gamma = cores (a, b fitted)"),
          ("roofline", "roofline, data sheet"), ("roofline_bw", "roofline, bandwidth fitted"),
          ("gpu", "gpu: occupancy, waves, achieved bandwidth")]

out = Path(sys.argv[1] if len(sys.argv) > 1 else "out/gpu_choice")
print("| kernel | model | tau | tau within size | pairs ordered within |")
print("|---|---|---|---|---|")
for k, kernel in KERNELS:
    for m, model in MODELS:
        f = out / f"{k}_{m}.json"
        if not f.exists() or not f.stat().st_size:
            print(f"| {kernel} | {model} | - | - | - |")
            continue
        d = json.loads(f.read_text())
        print(f"| {kernel} | {model} | {d['tau']:.3f} | {d['tau_within']:.3f} | "
              f"{d['fidelity_within']:.3f} |")
