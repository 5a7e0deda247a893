"""Issue 32, must-show 1: GPUs of every current generation.  Occupancy of hand-worked
launches on compute capabilities 6.0-12.0, and a table of seven current parts (data-sheet
values; made-up times) timed with CUDA events, without the nvprof-only columns."""
from __future__ import annotations

import json

import pytest

from mapping.cli.main import main
from moa.cost_models.gpu import GENERATIONS, limits, occupancy

# The rules worked by hand (CUDA Occupancy Calculator, cuda_occupancy.h; limits from the
# Programming Guide's "Technical Specifications per Compute Capability"):
#   W = ceil(threads / 32) warps per block;
#   by blocks: the capability's maximum resident blocks per SM;
#   by warps: floor(max warps per SM / W);
#   by registers: r = ceil(regs * 32 / 256) * 256 per warp, floor(65536 / 4 / r) * 4
#     warps per SM (2 sub-partitions instead of 4 on 6.0), floor(that / W); 0 when
#     r * ceil(W to a multiple of 4) > 65536;
#   by shared memory: (smem + 1024 reserved from 8.0 on) rounded up to 256 bytes (to 128
#     from 8.0 on), floor(shared per SM / that); the shared per SM is the largest carveout,
#     or the carveout percentage of it rounded up to a supported size.
# Ties name "blocks" first, then the first of warps, registers, shared.
# id: "cc T threads, regs, smem: arithmetic -> blocks (limit), occupancy"
CASES = [
    # ---- pascal: 6.1 (GTX 1080) 32 blocks, 64 warps, 96 KB; 6.0 (P100) 2 sub-partitions
    (6.1, 64, 0, 0, None, 32, "blocks", 1.0),       # W=2: blocks 32, warps 32 -> 32, 64/64
    (6.1, 32, 0, 0, None, 32, "blocks", 0.5),       # W=1: blocks 32 -> 32 warps of 64
    (6.1, 256, 32, 0, None, 8, "warps", 1.0),       # W=8: warps 8; r=1024: 16*4=64/8=8
    (6.1, 256, 64, 0, None, 4, "registers", 0.5),   # r=2048: 8*4=32/8=4 -> 32/64
    (6.1, 128, 40, 0, None, 12, "registers", 0.75),  # W=4: r=1280: 12*4=48/4=12 (warps 16)
    (6.1, 1024, 33, 0, None, 1, "registers", 0.5),  # r=1056->1280: 48/32=1 (warps 2)
    (6.1, 64, 0, 20000, None, 4, "shared", 0.125),  # 20000->20224: 98304/20224=4.86 -> 4
    (6.1, 256, 0, 12288, None, 8, "warps", 1.0),    # 98304/12288=8 ties warps 8
    (6.1, 96, 0, 0, None, 21, "warps", 63 / 64),    # W=3: 64/3=21 -> 63 warps
    (6.1, 512, 128, 0, None, 1, "registers", 0.25),  # W=16: r=4096: 4*4=16/16=1
    (6.1, 1024, 64, 0, None, 1, "registers", 0.5),  # r=2048: 32/32=1, 2048*32=65536 fits
    (6.0, 64, 40, 0, None, 25, "registers", 50 / 64),  # r=1280: 32768/1280=25*2=50/2=25
    # ---- volta: 7.0 (V100) 32 blocks, 64 warps, 96 KB (0/8/16/32/64/96), unit 256
    (7.0, 64, 0, 0, None, 32, "blocks", 1.0),       # W=2: 32 blocks = 64 warps
    (7.0, 1024, 0, 0, None, 2, "warps", 1.0),       # W=32: 64/32=2
    (7.0, 128, 32, 0, None, 16, "warps", 1.0),      # r=1024: 64/4=16 ties warps 16
    (7.0, 128, 48, 0, None, 10, "registers", 0.625),  # r=1536: 10*4=40/4=10 -> 40/64
    (7.0, 256, 72, 0, None, 3, "registers", 0.375),  # r=2304: 7*4=28/8=3 -> 24/64
    (7.0, 256, 0, 49152, None, 2, "shared", 0.25),  # 98304/49152=2 -> 16/64
    (7.0, 256, 0, 65536, None, 1, "shared", 0.125),  # 98304/65536=1 (opt-in)
    (7.0, 64, 0, 1000, None, 32, "blocks", 1.0),    # 1000->1024: 96 > 32 blocks
    (7.0, 64, 0, 4000, None, 24, "shared", 0.75),   # 4000->4096: 98304/4096=24 -> 48/64
    (7.0, 160, 0, 0, None, 12, "warps", 0.9375),    # W=5: 64/5=12 -> 60/64
    (7.0, 64, 0, 4000, 25, 8, "shared", 0.25),      # 25% of 96 KB=24 KB -> 32 KB: 32768/4096=8
    (7.0, 32, 255, 0, None, 8, "registers", 0.125),  # r=8160->8192: 2*4=8/1=8
    # ---- turing: 7.5 (RTX 2080) 16 blocks, 32 warps, 64 KB (32/64)
    (7.5, 64, 0, 0, None, 16, "blocks", 1.0),       # W=2: blocks 16, warps 16 -> 32/32
    (7.5, 32, 0, 0, None, 16, "blocks", 0.5),       # 16 warps of 32
    (7.5, 1024, 0, 0, None, 1, "warps", 1.0),       # 32/32=1
    (7.5, 256, 32, 0, None, 4, "warps", 1.0),       # 32/8=4; r=1024: 64/8=8
    (7.5, 256, 128, 0, None, 2, "registers", 0.5),  # r=4096: 4*4=16/8=2 -> 16/32
    (7.5, 128, 0, 16384, None, 4, "shared", 0.5),   # 65536/16384=4 (warps 8) -> 16/32
    (7.5, 96, 0, 0, None, 10, "warps", 0.9375),     # W=3: 32/3=10 -> 30/32
    (7.5, 128, 0, 5000, None, 8, "warps", 1.0),     # 5000->5120: 65536/5120=12 > warps 8
    (7.5, 64, 0, 5000, 50, 6, "shared", 0.375),     # 50% of 64 KB=32 KB: 32768/5120=6
    (7.5, 512, 65, 0, None, 1, "registers", 0.5),   # r=2080->2304: 7*4=28/16=1 -> 16/32
    # ---- ampere: 8.0 (A100) 32 blocks, 64 warps, 164 KB, 1 KB reserved, unit 128
    (8.0, 64, 0, 0, None, 32, "blocks", 1.0),       # shared (0+1024)/1024: 164 > 32
    (8.0, 256, 0, 49152, None, 3, "shared", 0.375),  # 50176: 167936/50176=3.35 -> 3
    (8.0, 256, 0, 32768, None, 4, "shared", 0.5),   # 33792: 4.97 -> 4 (5 without the 1 KB)
    (8.0, 128, 0, 10000, None, 15, "shared", 0.9375),  # 11024->11136: 15.08 -> 60/64
    (8.0, 128, 64, 0, None, 8, "registers", 0.5),   # r=2048: 8*4=32/4=8
    (8.0, 1024, 32, 0, None, 2, "warps", 1.0),      # r=1024: 64/32=2 ties warps 2
    (8.0, 64, 255, 0, None, 4, "registers", 0.125),  # r=8192: 2*4=8/2=4 -> 8/64
    (8.0, 256, 0, 166912, None, 1, "shared", 0.125),  # 163 KB + 1 KB = 167936: 1
    (8.0, 256, 0, 4096, 0, 1, "shared", 0.125),     # carveout 0: 5120 needs 8 KB: 8192/5120=1
    (8.0, 96, 0, 0, None, 21, "warps", 63 / 64),    # W=3: 64/3=21
    (8.0, 256, 0, 20000, 50, 4, "shared", 0.5),     # 21024->21120; 50%=82 KB->100 KB: 4.85
    # 8.6 (RTX 3090) 16 blocks, 48 warps, 100 KB
    (8.6, 64, 0, 0, None, 16, "blocks", 32 / 48),   # W=2: blocks 16 (warps 24)
    (8.6, 128, 0, 0, None, 12, "warps", 1.0),       # W=4: 48/4=12
    (8.6, 1024, 0, 0, None, 1, "warps", 32 / 48),   # 48/32=1
    (8.6, 512, 0, 0, None, 3, "warps", 1.0),        # 48/16=3
    (8.6, 256, 0, 16384, None, 5, "shared", 40 / 48),  # 17408: 102400/17408=5.88 -> 5
    # ---- ada: 8.9 (RTX 4090) 24 blocks, 48 warps, 100 KB, 1 KB reserved
    (8.9, 64, 0, 0, None, 24, "blocks", 1.0),       # blocks 24, warps 24 -> 48/48
    (8.9, 32, 0, 0, None, 24, "blocks", 0.5),       # 24 warps of 48
    (8.9, 1024, 0, 0, None, 1, "warps", 32 / 48),   # 48/32=1
    (8.9, 768, 0, 0, None, 2, "warps", 1.0),        # W=24: 2
    (8.9, 256, 64, 0, None, 4, "registers", 32 / 48),  # r=2048: 32/8=4 (warps 6)
    (8.9, 128, 40, 0, None, 12, "warps", 1.0),      # r=1280: 48/4=12 ties warps 12
    (8.9, 128, 0, 8192, None, 11, "shared", 44 / 48),  # 9216: 102400/9216=11.1 -> 11
    (8.9, 64, 0, 3000, None, 24, "blocks", 1.0),    # 4024->4096: 25 > 24 blocks
    (8.9, 64, 0, 3300, None, 23, "shared", 46 / 48),  # 4324->4352: 23.5 -> 23
    (8.9, 96, 0, 0, None, 16, "warps", 1.0),        # W=3: 48/3=16
    (8.9, 64, 0, 2048, 10, 5, "shared", 10 / 48),   # 3072; 10% -> 16 KB: 16384/3072=5
    # ---- hopper: 9.0 (H100) 32 blocks, 64 warps, 228 KB (227 per block), 1 KB reserved
    (9.0, 64, 0, 0, None, 32, "blocks", 1.0),
    (9.0, 256, 0, 0, None, 8, "warps", 1.0),        # 64/8
    (9.0, 1024, 0, 0, None, 2, "warps", 1.0),       # 64/32
    (9.0, 128, 128, 0, None, 4, "registers", 0.25),  # r=4096: 4*4=16/4=4
    (9.0, 256, 40, 0, None, 6, "registers", 0.75),  # r=1280: 48/8=6
    (9.0, 256, 0, 65536, None, 3, "shared", 0.375),  # 66560: 233472/66560=3.5 -> 3
    (9.0, 128, 0, 232448, None, 1, "shared", 4 / 64),  # 227 KB + 1 KB: 1
    (9.0, 128, 0, 32768, 50, 4, "shared", 0.25),    # 33792; 50%=114 KB -> 132 KB: 4.0
    (9.0, 32, 0, 6000, None, 32, "blocks", 0.5),    # 7024->7040: 33.2 > 32 blocks
    (9.0, 32, 0, 7000, None, 28, "shared", 28 / 64),  # 8024->8064: 28.95 -> 28
    (9.0, 192, 0, 0, None, 10, "warps", 60 / 64),   # W=6: 64/6=10
    # ---- blackwell: 10.0 (B200) as 9.0; 12.0 (RTX 5090) 32 blocks, 48 warps, 100 KB
    (10.0, 64, 0, 0, None, 32, "blocks", 1.0),
    (10.0, 256, 64, 0, None, 4, "registers", 0.5),  # r=2048: 32/8=4
    (10.0, 256, 0, 65536, None, 3, "shared", 0.375),  # as 9.0
    (10.0, 1024, 32, 0, None, 2, "warps", 1.0),     # warps 2, registers 64/32=2
    (10.0, 96, 0, 0, None, 21, "warps", 63 / 64),
    (12.0, 32, 0, 0, None, 32, "blocks", 32 / 48),  # blocks 32 (warps 48)
    (12.0, 64, 0, 0, None, 24, "warps", 1.0),       # 48/2=24 < 32 blocks
    (12.0, 1024, 0, 0, None, 1, "warps", 32 / 48),
    (12.0, 256, 0, 16384, None, 5, "shared", 40 / 48),  # 17408: 5.88 -> 5
    (12.0, 128, 72, 0, None, 7, "registers", 28 / 48),  # r=2304: 7*4=28/4=7
]


def _id(case):
    cc, t, r, s, c, b, lim, occ = case
    return f"cc{cc}-T{t}-r{r}-s{s}" + (f"-c{c}" if c is not None else "") + f"->{b}{lim}"


@pytest.mark.parametrize("cc, block, regs, smem, carveout, blocks, limit, occ", CASES,
                         ids=[_id(c) for c in CASES])
def test_occupancy_matches_the_calculator_worked_by_hand(cc, block, regs, smem, carveout,
                                                         blocks, limit, occ):
    o = occupancy(cc, block, regs, smem, carveout)
    assert (o.blocks, o.limit) == (blocks, limit)
    assert o.occupancy == pytest.approx(occ)


def test_at_least_ten_launches_per_generation():
    counts = {}
    for case in CASES:
        gen = limits(case[0]).generation
        counts[gen] = counts.get(gen, 0) + 1
    for gen in ("pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell"):
        assert counts.get(gen, 0) >= 10, (gen, counts)


@pytest.mark.parametrize("cc, cores, generation", [
    (6.0, 64, "pascal"), (6.1, 128, "pascal"), (7.0, 64, "volta"), (7.5, 64, "turing"),
    (8.0, 64, "ampere"), (8.6, 128, "ampere"), (8.9, 128, "ada"), (9.0, 128, "hopper"),
    (10.0, 128, "blackwell"), (12.0, 128, "blackwell"),
])
def test_data_sheet_facts(cc, cores, generation):
    assert limits(cc).cores_per_sm == cores and limits(cc).generation == generation
    assert generation in GENERATIONS


def test_a_block_that_cannot_fit():
    # 8.0: 163 KB + 1 byte exceeds the per-block opt-in maximum
    with pytest.raises(ValueError, match="166913 bytes"):
        occupancy(8.0, 256, 0, 166913)
    # 7.0: 1024 threads x 255 registers: 8192 per warp x 32 warps > 65536 per block
    with pytest.raises(ValueError, match="registers"):
        occupancy(7.0, 1024, 255)
    with pytest.raises(ValueError, match="carveout"):
        occupancy(9.0, 256, 0, 0, 101)


# GPU name, cc, SMs, cores, boost clock (MHz), bandwidth (GB/s), bus (bits), L2 (MB):
# NVIDIA data sheets.  The times are made up.
PARTS = [
    ("GTX-1080", 6.1, 20, 2560, 1733, 320, 256, 2),
    ("V100", 7.0, 80, 5120, 1530, 900, 4096, 6),
    ("RTX-2080", 7.5, 46, 2944, 1710, 448, 256, 4),
    ("A100", 8.0, 108, 6912, 1410, 1555, 5120, 40),
    ("RTX-3090", 8.6, 82, 10496, 1695, 936, 384, 6),
    ("RTX-4090", 8.9, 128, 16384, 2520, 1008, 384, 72),
    ("H100", 9.0, 132, 16896, 1980, 3352, 5120, 50),
]


def test_a_table_of_current_gpus_timed_with_cuda_events_imports(tmp_path, capsys):
    """The columns a CUDA-events harness writes: no registers, shared memory, Grid.Y/Z,
    memory clock; the cores as ``sms`` for two parts, as ``num_of_cores`` for the rest."""
    header = "gpu_name,compute_version,max_clock_rate,bandwith,bus,L2,num_of_cores,sms," \
             "AppName,Input.Size,Grid.X,Block.X,Duration"
    rows = [header]
    for i, (name, cc, sms, cores, clock, bw, bus, l2) in enumerate(PARTS):
        for n, block in ((1 << 20, 64), (1 << 20, 256), (1 << 24, 256)):
            t = 2e-6 + 12 * n / (0.8 * bw * 1e9)
            by_sms = i % 3 == 0
            rows.append(f"{name},{cc},{clock},{bw},{bus},{l2},{'' if by_sms else cores},"
                        f"{sms if by_sms else ''},vadd,{n},{n // block},{block},{t!r}")
    table = tmp_path / "vadd.csv"
    table.write_text("\n".join(rows) + "\n")
    code = main(["import", "gpu-table", str(table), "-o", str(tmp_path / "s"),
                 "--bytes-per-element", "12", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    assert doc["launches"] == 21 and len(doc["gpus"]) == 7 and doc["corrections"] == []
    moa = (tmp_path / "s" / "gpu.moa").read_text()
    for name, cc, sms, cores, *_ in PARTS:
        ident = name.lower().replace("-", "_")
        gen = limits(cc).generation
        assert (f"pe {ident} [time = gpu(cc = {cc:g}, sms = {sms}, cores = {cores}"
                in moa), name
        assert f"efficiency = eff_{gen}, compute_efficiency = ceff_{gen}" in moa
    for gen in ("pascal", "volta", "turing", "ampere", "ada", "hopper"):
        assert f"param dispatch_{gen} = " in moa
    # and the study evaluates: fidelity of the data-sheet model on every row
    s = tmp_path / "s"
    code = main(["fidelity", str(s / "app.sdf"), str(s / "gpu.moa"), str(s / "mappings.map"),
                 str(s / "measurements.csv"), "--mapping-column", "gpu", "--measured",
                 "time_s", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["n"] == 21


def test_an_unknown_capability_names_the_known_ones(tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_text("gpu_name,compute_version,max_clock_rate,bandwith,bus,sms,AppName,"
                     "Input.Size,Grid.X,Block.X,Duration\nX,11.5,1000,100,256,10,k,10,1,32,1e-3\n")
    code = main(["import", "gpu-table", str(table), "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "compute capability 11.5 is not known here" in err and "9, 10" in err


def test_a_gpu_without_cores_or_sms_is_named(tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_text("gpu_name,compute_version,max_clock_rate,bandwith,bus,AppName,"
                     "Input.Size,Grid.X,Block.X,Duration\nMyGPU,8.9,2520,1008,384,k,10,1,32,"
                     "1e-3\n")
    code = main(["import", "gpu-table", str(table), "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "'MyGPU' has neither num_of_cores nor sms" in err
    # CUDA events time in milliseconds
    assert main(["import", "gpu-table", str(table), "-o", str(tmp_path / "o"),
                 "--sms", "MyGPU=128", "--duration-unit", "ms"]) == 0
    assert "cores = 16384" in (tmp_path / "o" / "gpu.moa").read_text()
    row = (tmp_path / "o" / "measurements.csv").read_text().splitlines()[1].split(",")
    assert float(row[10]) == pytest.approx(1e-6)
