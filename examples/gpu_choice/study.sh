#!/bin/sh
# The whole study of README.md: import the four shared kernels, then rank them with every
# model (overall and within-size tau, 5-fold).  Usage (from the repository's root):
#   sh examples/gpu_choice/study.sh [DATA_DIR] [OUT_DIR]
# DATA_DIR defaults to ../shared/data/measurements/gpus (never copied into the repo).
set -e
DATA=${1:-../shared/data/measurements/gpus}
OUT=${2:-out/gpu_choice}
EFF=gtx_680.time.efficiency,gtx_970.time.efficiency,gtx_980.time.efficiency,quadro.time.efficiency,tesla_k20.time.efficiency,tesla_k40.time.efficiency,titan.time.efficiency,titanblack.time.efficiency,titanx.time.efficiency
BW=gtx_680.time.bandwidth,gtx_970.time.bandwidth,gtx_980.time.bandwidth,quadro.time.bandwidth,tesla_k20.time.bandwidth,tesla_k40.time.bandwidth,titan.time.bandwidth,titanblack.time.bandwidth,titanx.time.bandwidth

# 1. import: what one launch does, per element (and per block for barriers)
mapeval import gpu-table "$DATA"/matrix_sum_normal-*.csv -o "$OUT/msum" \
    --elements 'size**2' --bytes-per-element 12 --l2-bytes-per-element '3*block_x' \
    --flops-per-element 1
mapeval import gpu-table "$DATA"/dotProd-*.csv -o "$OUT/dot" \
    --bytes-per-element 8 --flops-per-element 2 --syncs-per-block 'log2(block_x)'
mapeval import gpu-table "$DATA"/matMul_gpu-*.csv -o "$OUT/mm" \
    --elements 'size**2' --bytes-per-element '8*size/block_x + 4' \
    --l2-bytes-per-element 'size*(block_x/8 + 32/block_x)' --flops-per-element '2*size'
mapeval import gpu-table "$DATA"/matMul_gpu_sharedmem-*.csv -o "$OUT/mms" \
    --elements 'size**2' --bytes-per-element '8*size/block_x + 4' --flops-per-element '2*size' \
    --syncs-per-block '2*size/block_x'

# 2. study: fidelity of every model, 5-fold, within each input size, all through
# mapeval fidelity.  The per-GPU fits (9-16 parameters) minimise relative errors
# (--residuals relative, log(predicted/measured)): times span 10 us to 20 s, and the
# design question is asked at every size.
study() {  # KERNEL MODEL.moa NAME [--fit ...]
    k=$1; moa=$2; name=$3; shift 3
    mapeval fidelity "$OUT/$k/app.sdf" "$OUT/$k/$moa" "$OUT/$k/mappings.map" \
        "$OUT/$k/measurements.csv" --mapping-column gpu --measured time_s \
        --within size --folds 5 --starts 0 --json "$@" > "$OUT/${k}_$name.json"
}
study msum gpu.moa gpu --residuals relative \
    --fit launch,hide_kepler,hide_maxwell,l2_kepler,l2_maxwell,$EFF
study dot gpu.moa gpu --residuals relative \
    --fit launch,hide_kepler,hide_maxwell,sync_kepler,sync_maxwell,$EFF
study mm gpu.moa gpu --residuals relative \
    --fit hide_kepler,hide_maxwell,l2_kepler,l2_maxwell,ceff_kepler,ceff_maxwell,$EFF
study mms gpu.moa gpu --residuals relative --starts 3 \
    --fit launch,hide_kepler,hide_maxwell,ceff_kepler,ceff_maxwell,sync_kepler,sync_maxwell,$EFF
for k in msum dot mm mms; do
    study $k roofline.moa roofline
    study $k lsla.moa lsla --fit a,b
    study $k gsla.moa gsla --fit a,b
    study $k roofline.moa roofline_bw --fit $BW --residuals relative
done
python3 "$(dirname "$0")/table.py" "$OUT"
