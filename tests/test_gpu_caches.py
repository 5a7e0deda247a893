"""Issue 44: the GPU cache table per compute capability, the gpu model's L1 term (by
hand and recovered from synthetic launches), the importer's cache statements, and
matrix_sum_normal on the shared measurements when present."""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import numpy as np
import pytest

from mapping.cli.main import main
from moa import make_model
from moa.cost_models.gpu import LIMITS
from moa.cost_models.gpu_caches import CACHES, caches, l1_for_globals
from test_caches import Token, fidelity

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT / ".." / "shared" / "data" / "measurements" / "gpus"
#: the whole five-fold and GPU-left-out studies take 3-4 minutes each: run with
#: MAPEVAL_LONG_STUDIES=1 (the per-GPU five-fold floor always runs)
LONG = pytest.mark.skipif(not os.environ.get("MAPEVAL_LONG_STUDIES"),
                          reason="a long study: set MAPEVAL_LONG_STUDIES=1 to run it")


def test_every_capability_has_its_caches():
    assert set(CACHES) == set(LIMITS)
    # data sheets: GK104 (GTX 680) 512 KB of L2, GK110 1536 KB, GM204 2 MB, GH100 (H100)
    # 50 MB with 256 KB of L1 and shared memory per SM, GA100 40 MB and 192 KB
    assert caches(3.0).l2 == 512 * 1024 and caches(3.5).l2 == 1536 * 1024
    assert caches(5.2).l2 == 2 * 2 ** 20
    assert (caches(9.0).l2, caches(9.0).l1) == (50 * 2 ** 20, 256 * 1024)
    assert (caches(8.0).l2, caches(8.0).l1) == (40 * 2 ** 20, 192 * 1024)
    # the Programming Guide's rules: Kepler caches global loads in L2 only (GK110 may opt
    # in), Maxwell and GP10x when compiled with -dlcm=ca, GP100 and Volta on by default
    assert l1_for_globals(3.0, opted_in=True) == 0
    assert l1_for_globals(3.5) == 0 and l1_for_globals(3.5, opted_in=True) == 64 * 1024
    assert l1_for_globals(5.2) == 0 and l1_for_globals(5.2, opted_in=True) == 48 * 1024
    assert l1_for_globals(6.0) == 24 * 1024 and l1_for_globals(6.1) == 0
    assert all(l1_for_globals(cc) > 0 for cc in CACHES if cc >= 7.0)
    with pytest.raises(ValueError, match="known"):
        caches(4.0)


def test_l1_term_by_hand():
    """cc 7.0, one SM, two resident 1024-thread blocks (64 warps) in one wave: 100 KB of
    unique bytes requested as 400 KB of sectors, the L2 roof at 32 bytes per cycle."""
    base = dict(cc=7.0, sms=1, cores=64, clock=1000, bandwidth=100, l2=32)
    launch = Token(grid=2, block=1024, bytes=1e5, l2_bytes=4e5)
    plain = make_model("gpu", base)
    assert plain.token_cost(launch) == pytest.approx(4e5 / 32e9)
    # 128 KB of L1 holds both blocks' 100 KB: the L2 sees the unique bytes only
    l1 = make_model("gpu", {**base, "l1_capacity": 131072})
    assert l1.token_cost(launch) == pytest.approx(1e5 / 32e9)
    # 32 KB of shared memory per block is carved out of the same storage: 64 KB of L1
    # hold 65536 / 1e5 of the working set, and the rest of the 3e5 surplus reaches L2
    shared = Token(grid=2, block=1024, smem=32768, bytes=1e5, l2_bytes=4e5)
    assert l1.token_cost(shared) == pytest.approx((1e5 + 3e5 * (1 - 0.65536)) / 32e9)
    sharp = make_model("gpu", {**base, "l1_capacity": 131072, "l1_sharpness": 2.0})
    assert sharp.token_cost(shared) == pytest.approx((1e5 + 3e5 * (1 - 0.65536 ** 2)) / 32e9)
    # Maxwell's L1/texture cache is not shared memory's storage: nothing carved out
    maxwell = make_model("gpu", {**base, "cc": 5.2, "cores": 128, "l1_capacity": 131072})
    assert maxwell.token_cost(shared) == pytest.approx(1e5 / 32e9)
    # no surplus requests: the L1 changes nothing
    useful = Token(grid=2, block=1024, bytes=1e5, l2_bytes=1e5)
    assert l1.token_cost(useful) == plain.token_cost(useful)
    # stores pass the L1 (write-through): of 400 KB requested, the 100 KB the stores
    # request reach the L2 with the loads' 75 KB of unique bytes
    stores = Token(grid=2, block=1024, bytes=1e5, l2_bytes=4e5, store_bytes=2.5e4,
                   l2_store_bytes=1e5)
    assert l1.token_cost(stores) == pytest.approx((1e5 + 7.5e4) / 32e9)
    with pytest.raises(ValueError, match="store_bytes"):
        l1.token_cost(Token(grid=2, block=1024, bytes=1e5, l2_bytes=4e5, store_bytes=2e5))


SWEEP = """sdf sweep {
    param G = 640
    param smem = 0
    param ps = 0
    param u = 4096
    param r = 1
    actor k [quanta = 1, grid = G, block = 256, smem = smem, bytes = G * u,
             l2_bytes = G * u * r, partial_sectors = ps]
}
"""
#: a V100-like GPU: 80 SMs, 900 GB/s, 128 KB of L1 and shared memory per SM, 6 MB of L2
V100 = dict(cc=7.0, sms=80, cores=5120, clock=1380, bandwidth=900, l2_slices=16)
TRUE = dict(efficiency=0.8, l2=75, l1_sharpness=1.5, l2_sharpness=2.0)
#: the fits start off the generating values by 20-50 %
MOA = """moa v100 {{
    metric time [unit = "s"]
    pe gpu [time = gpu(cc = 7.0, sms = 80, cores = 5120, clock = 1380, bandwidth = 900,
        efficiency = 0.5, l2 = 43.75, l2_slices = 16, l2_capacity = 6291456, l2_sharpness = 2{l1})]
}}
"""


def sweep(tmp_path, n=120, noise=0.03, seed=0):
    """Launches of 640 to 12160 blocks of 256 threads (8 resident per SM), 512 B to
    128 KB of unique bytes per block (the resident blocks' 4 KB to 1 MB cross the
    128 KB L1), requesting 1 to 12 times as many in sectors, half of them partly used
    ones (their surplus reaches DRAM past the 6 MB L2), 0 or 8 KB of shared memory per
    block; timed by the gpu model times 1 + noise·N(0, 1)."""
    rng = np.random.default_rng(seed)
    gpu = make_model("gpu", {**V100, **TRUE, "l1_capacity": 131072,
                             "l2_capacity": 6291456})
    with open(tmp_path / "m.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["G", "smem", "ps", "u", "r", "time"])
        for _ in range(n):
            u = round(float(np.exp(rng.uniform(np.log(512), np.log(2 ** 17)))))
            r = round(float(rng.uniform(1, 12)), 3)
            grid = 640 * int(rng.integers(1, 20))
            smem = int(rng.choice([0, 8192]))
            ps = int(rng.integers(0, 2))
            t = gpu.token_cost(Token(grid=grid, block=256, smem=smem, bytes=grid * u,
                                     l2_bytes=grid * u * r, partial_sectors=ps))
            w.writerow([grid, smem, ps, u, r, repr(t * (1 + noise * rng.standard_normal()))])
    (tmp_path / "app.sdf").write_text(SWEEP)
    (tmp_path / "m.map").write_text("mapping one { k -> gpu }\n")
    (tmp_path / "cached.moa").write_text(MOA.format(
        l1=", l1_capacity = 131072, l1_sharpness = 2.2"))
    (tmp_path / "plain.moa").write_text(MOA.format(l1=""))
    return tmp_path


def test_l1_sharpness_and_roofs_are_recovered_and_the_term_ranks_better(tmp_path, capsys):
    d = sweep(tmp_path)
    got = fidelity(capsys, d, "cached.moa",
               "gpu.time.efficiency,gpu.time.l2,gpu.time.l1_sharpness")
    for name in ("efficiency", "l2", "l1_sharpness"):
        assert got["fitted"][f"gpu.time.{name}"] == pytest.approx(TRUE[name], rel=0.05), name
    plain = fidelity(capsys, d, "plain.moa", "gpu.time.efficiency,gpu.time.l2")
    assert plain["tau"] < got["tau"] - 0.05


HEADER = ('"","compute_version","gpu_name","max_clock_rate","num_of_cores","bus",'
          '"bandwith","l1_cache_used","AppName","Input.Size","Duration","Grid.X","Block.X"')


def test_import_states_the_caches(tmp_path, capsys):
    """No L2 column: the data sheet's per capability; an H100 caches global loads in its
    256 KB L1 by default, a GTX 980 only where the table says they were compiled to."""
    rows = [HEADER]
    for name, cc, clock, cores, bus, bw, l1 in (("H100", 9.0, 1755, 14592, 5120, 2039, 0),
                                                ("GTX-980", 5.2, 1216, 2048, 256, 224, 1),
                                                ("GTX-680", 3.0, 1058, 1536, 256, 192, 1)):
        for n in (1 << 20, 1 << 22):
            rows.append(f'"1",{cc},"{name}",{clock},{cores},{bus},{bw},{l1},"k",{n},'
                        f'{n * 1e-11!r},{n // 256},256')
    path = tmp_path / "k.csv"
    path.write_text("\n".join(rows) + "\n")
    code = main(["import", "gpu-table", str(path), "-o", str(tmp_path / "s"),
                 "--bytes-per-element", "8", "--l2-bytes-per-element", "32",
                 "--store-bytes-per-element", "4", "--l2-store-bytes-per-element", "8"])
    assert code == 0, capsys.readouterr().err
    app = (tmp_path / "s" / "app.sdf").read_text()
    assert "store_bytes = (size) * (4)" in app and "l2_store_bytes = (size) * (8)" in app
    moa = (tmp_path / "s" / "gpu.moa").read_text()
    lines = {line.split()[1]: line for line in moa.splitlines() if line.strip().startswith("pe ")}
    assert "l2_capacity = 52428800, l2_sharpness = l2s_hopper, l1_capacity = 262144, " \
           "l1_sharpness = l1s_hopper" in lines["h100"]
    assert "l2_capacity = 2097152, l2_sharpness = l2s_maxwell, l1_capacity = 49152" \
        in lines["gtx_980"]
    # GK104 cannot cache global loads in L1, whatever the table says
    assert "l2_capacity = 524288" in lines["gtx_680"] and "l1_capacity" not in lines["gtx_680"]
    assert "param l1s_hopper = 1" in moa and "param l1s_kepler" not in moa


def msum_study(tmp_path, capsys, *options) -> dict:
    """matrix_sum_normal on the nine shared GPUs as examples/gpu_choice/study.sh imports
    it, ranked by ``mapeval fidelity`` with ``options`` (the JSON document)."""
    files = sorted(SHARED.glob("matrix_sum_normal-*.csv"))
    code = main(["import", "gpu-table", *map(str, files), "-o", str(tmp_path),
                 "--elements", "size**2", "--bytes-per-element", "12",
                 "--l2-bytes-per-element", "3*block_x", "--store-bytes-per-element", "4",
                 "--l2-store-bytes-per-element", "block_x", "--flops-per-element", "1",
                 "--partial-sectors"])
    assert code == 0
    capsys.readouterr()
    code = main(["fidelity", *(str(tmp_path / f) for f in ("app.sdf", "gpu.moa",
                                                            "mappings.map",
                                                            "measurements.csv")),
                 "--mapping-column", "gpu", "--measured", "time_s", "--within", "size",
                 "--starts", "0", "--json", "--residuals", "relative", *options])
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out)


@pytest.mark.skipif(not (SHARED / "matrix_sum_normal-GTX-680.csv").exists(),
                    reason="the shared GPU measurements are not here")
@pytest.mark.parametrize("efficiency, floor", [pytest.param("eff_*", 0.755, marks=LONG),
                                               ("*.time.efficiency", 0.76)])
def test_matrix_sum_normal_within_size_floor(tmp_path, capsys, efficiency, floor):
    """examples/gpu_choice, 5-fold: matrix_sum_normal's within-size τ with the L2 term
    and its parameters within their meaning, 0.761 per generation and 0.769 per GPU (an
    L2 roof and a drift outside it gave 0.764 and 0.839); a regression floor, not the
    goal of 0.85 (which the DRAM address mapping keeps out of reach,
    docs/limitations.md)."""
    doc = msum_study(tmp_path, capsys, "--folds", "5",
                     "--fit", f"launch,hide_*,l2_*,l2s_*,dispatch_*,{efficiency}")
    assert doc["tau_within"] >= floor


#: each GPU left out, bounded fit (README): mean median error 33.4 %, τ within size 0.661
LOGO_MDAPE, LOGO_TAU_WITHIN = 35.0, 0.64


@pytest.mark.skipif(not (SHARED / "matrix_sum_normal-GTX-680.csv").exists(),
                    reason="the shared GPU measurements are not here")
@LONG
def test_matrix_sum_normal_gpu_left_out_floor(tmp_path, capsys):
    """examples/gpu_choice, each GPU left out (fitted on the other eight, parameters per
    generation within their bounds of meaning): the left-out GPUs' mean median error
    and within-size τ (README, "Bounds of meaning on the cache terms"); a regression
    floor.  The fitted L2 roof stays a slice's 32-128 bytes per cycle and the
    sharpnesses 1-16."""
    doc = msum_study(tmp_path, capsys, "--folds-by", "gpu",
                     "--fit", "launch,hide_*,l2_*,l2s_*,dispatch_*,eff_*")
    folds = doc["folds"]
    assert len(folds) == 9
    assert doc["mdape"] == pytest.approx(float(np.mean([f["mdape"] for f in folds])))
    assert doc["mdape"] <= LOGO_MDAPE
    assert doc["tau_within"] >= LOGO_TAU_WITHIN
    for name, value in doc["fitted"].items():
        if name.startswith("l2_"):
            assert 32 <= value <= 128, name
        if name.startswith("l2s_"):
            assert 1 <= value <= 16, name
