#!/bin/sh
# The whole study of README.md: import the four shared kernels, then rank them with every
# model (overall and within-size tau, 5-fold; and each GPU left out in turn).  Usage
# (from the repository's root):
#   sh examples/gpu_choice/study.sh [DATA_DIR] [OUT_DIR] [KERNEL ...]
# DATA_DIR defaults to ../shared/data/measurements/gpus (never copied into the repo);
# KERNEL is msum, dot, mm or mms (default: all four).
set -e
DATA=${1:-../shared/data/measurements/gpus}
OUT=${2:-out/gpu_choice}
if [ $# -ge 2 ]; then shift 2; else shift $#; fi
KERNELS=${*:-msum dot mm mms}
# --fit patterns (quoted: * and ? are mapeval's wildcards, not the shell's): every GPU's
# own parameter, and every generation's param (eff_kepler, eff_maxwell, ...)
EFF='*.time.efficiency'
BW='*.time.bandwidth'

# 1. import: what one launch does, per element (and per block for barriers)
import_kernel() {
    case $1 in
    msum) mapeval import gpu-table "$DATA"/matrix_sum_normal-*.csv -o "$OUT/msum" \
            --elements 'size**2' --bytes-per-element 12 --l2-bytes-per-element '3*block_x' \
            --store-bytes-per-element 4 --l2-store-bytes-per-element block_x \
            --flops-per-element 1 --partial-sectors ;;
    dot) mapeval import gpu-table "$DATA"/dotProd-*.csv -o "$OUT/dot" \
            --bytes-per-element 8 --flops-per-element 2 --syncs-per-block 'log2(block_x)' ;;
    mm) mapeval import gpu-table "$DATA"/matMul_gpu-*.csv -o "$OUT/mm" \
            --elements 'size**2' --bytes-per-element '8*size/block_x + 4' \
            --l2-bytes-per-element 'size*(block_x/8 + 32/block_x)' --flops-per-element '2*size' \
            --store-bytes-per-element 4 ;;
    mms) mapeval import gpu-table "$DATA"/matMul_gpu_sharedmem-*.csv -o "$OUT/mms" \
            --elements 'size**2' --bytes-per-element '8*size/block_x + 4' \
            --flops-per-element '2*size' --syncs-per-block '2*size/block_x' ;;
    esac
}

# 2. study: fidelity of every model within each input size, through mapeval fidelity:
# 5-fold (--folds 5) and leave one GPU out (--folds-by gpu: each GPU predicted by a model
# fitted on the other eight).  The fits minimise relative errors (--residuals relative,
# log(predicted/measured)): times span 10 us to 20 s.
run() {  # KERNEL MODEL.moa NAME FOLDS... [--fit ...]
    k=$1; moa=$2; name=$3; shift 3
    mapeval fidelity "$OUT/$k/app.sdf" "$OUT/$k/$moa" "$OUT/$k/mappings.map" \
        "$OUT/$k/measurements.csv" --mapping-column gpu --measured time_s \
        --within size --starts 0 --json "$@" > "$OUT/${k}_$name.json"
}
study() {  # KERNEL MODEL.moa NAME [--fit ...]: 5-fold
    k=$1; moa=$2; name=$3; shift 3
    run "$k" "$moa" "$name" --folds 5 "$@"
}
logo() {   # KERNEL MODEL.moa NAME [--fit ...]: each GPU left out
    k=$1; moa=$2; name=$3; shift 3
    run "$k" "$moa" "${name}_logo" --folds-by gpu "$@"
}

# the gpu model's free parameters per kernel: shared by a generation (predicts a GPU
# from its data sheet), and the same with one DRAM efficiency per GPU instead
free() {
    case $1 in
    msum) echo 'launch,hide_*,l2_*,l2s_*,dispatch_*,' ;;
    dot) echo 'launch,hide_*,sync_*,dispatch_*,' ;;
    mm) echo 'hide_*,l2_*,ceff_*,dispatch_*,' ;;
    mms) echo 'launch,hide_*,ceff_*,sync_*,dispatch_*,' ;;
    esac
}

for k in $KERNELS; do
    import_kernel "$k"
    shared="$(free "$k")eff_*"
    logo $k gpu.moa gpu_shared --residuals relative --fit "$shared"
    study $k gpu.moa gpu_shared --residuals relative --fit "$shared"
    study $k gpu.moa gpu --residuals relative --fit "$(free "$k")$EFF"
    for f in study logo; do
        $f $k roofline.moa roofline
        $f $k lsla.moa lsla --fit a,b
        $f $k gsla.moa gsla --fit a,b
    done
    study $k roofline.moa roofline_bw --fit "$BW" --residuals relative
done
python3 "$(dirname "$0")/table.py" "$OUT"
