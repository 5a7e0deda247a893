"""Issue 17: the gpu cost model -- occupancy, waves and time from the CUDA rules, checked
against numbers computed by hand; and parameter recovery by ``fit``."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dsl
from moa.cost_models import make_model
from moa.cost_models.gpu import bandwidth_bytes, occupancy, peak_flops
from moa.errors import CostModelError
from mapping.evaluation.reference import evaluate
from mapping.calibration.assessment import assess
from mapping.calibration.measurements import MeasurementRow


# Hand computations with the CUDA occupancy calculator's rules: warps per block =
# ceil(threads / 32); blocks limited by (a) the maximum resident blocks per SM (16 on
# cc 3.x, 32 on cc 5.2), (b) 64 warps per SM / warps per block, (c) registers: per
# warp ceil(regs*32 / 256)*256, warps fitting in 65536 registers rounded down to a
# multiple of 4, divided by warps per block, (d) shared memory: per SM (48 KB on cc 3.x,
# 96 KB on cc 5.2) / (per block rounded up to 256 bytes).
@pytest.mark.parametrize("cc, block, regs, smem, blocks, limit, occ", [
    # 2 warps; blocks 16, warps 32, regs 416->512/warp: 128 warps -> 64: 16 by blocks
    (3.0, 64, 13, 0, 16, "blocks", 0.5),
    # 8 warps; blocks 16, warps 64/8 = 8, regs 512/warp: 128 warps/8 = 16: 8 by warps
    (3.5, 256, 13, 0, 8, "warps", 1.0),
    # 2 warps; blocks 32, warps 32, regs 352->512: 128/2 = 64: 32 by blocks, 64 warps
    (5.2, 64, 11, 0, 32, "blocks", 1.0),
    # 32 warps; warps 2, regs 1056->1280/warp: 51 warps -> 48 (multiple of 4) / 32 = 1
    (5.2, 1024, 33, 0, 1, "registers", 0.5),
    # 8 warps; regs 63*32 = 2016 -> 2048/warp: 32 warps / 8 = 4 (warps limit 8)
    (3.0, 256, 63, 0, 4, "registers", 0.5),
    # 32 warps; warps 2, regs 800->1024: 64 warps/32 = 2, shared 49152/8192 = 6: 2
    (3.5, 1024, 25, 8192, 2, "warps", 1.0),
    # 2 warps; shared 20000 -> 20224 bytes: 98304/20224 = 4.86 -> 4; 4*2/64 warps
    (5.2, 64, 0, 20000, 4, "shared", 0.125),
    # 3 warps (96 threads); warps 64/3 = 21, blocks 16: 16, 48 of 64 warps
    (3.5, 96, 0, 0, 16, "blocks", 0.75),
])
def test_occupancy_by_hand(cc, block, regs, smem, blocks, limit, occ):
    o = occupancy(cc, block, regs, smem)
    assert (o.blocks, o.limit) == (blocks, limit)
    assert o.occupancy == pytest.approx(occ)


def _gpu(**kw):
    args = dict(cc=3.0, sms=8, cores=1536, clock=1000, bandwidth=200, efficiency=0.5)
    args.update(kw)
    return make_model("gpu", args)


class _Token(dict):
    count = 1
    quanta = 1.0
    source = "kernel"


def test_time_by_hand_waves_hiding_and_barriers():
    """A GTX 680-like GPU (cc 3.0, 8 SMs), 64-thread blocks with 13 registers: 16
    resident blocks per SM (above), 128 slots.  1000 blocks: 7 full waves (896 blocks)
    and one of 104.  Achieved bandwidth 0.5 x 200 GB/s = 1e11 B/s; hide = 32 warps/SM:
    a full wave has 256 warps in flight = 32 x 8, factor 1; the last 208 warps, factor
    208/256 = 0.8125.  1e8 bytes: a full wave moves 128/1000 of them, 1.28e7 B in
    1.28e-4 s; the last 1.04e7 B at 8.125e10 B/s, also 1.28e-4 s.  Total 8 x 1.28e-4
    plus the 5 us launch."""
    model = _gpu(hide=32, launch=5e-6)
    token = _Token(grid=1000, block=64, regs=13, bytes=1e8)
    assert model.token_cost(token) == pytest.approx(8 * 1.28e-4 + 5e-6, rel=1e-12)
    # 6 barrier steps x 2 warps x 10 cycles = 120 cycles = 1.2e-7 s at 1000 MHz, per wave
    synced = _gpu(hide=32, launch=5e-6, sync=10)
    token["syncs"] = 6
    assert synced.token_cost(token) == pytest.approx(8 * (1.28e-4 + 1.2e-7) + 5e-6,
                                                     rel=1e-12)


def test_l2_roof():
    """The same launch with 2.56e8 bytes of L2 sectors at l2 = 128 bytes per cycle x
    1000 MHz = 1.28e11 B/s: 2e-3 s in all, above DRAM's 1e-3 s.  Per full wave 128/1000
    of it, 2.56e-4 s; the last 104/1000 at 0.8125 of the rate, also 2.56e-4 s."""
    model = _gpu(hide=32, launch=5e-6, l2=128)
    token = _Token(grid=1000, block=64, regs=13, bytes=1e8, l2_bytes=2.56e8)
    assert model.token_cost(token) == pytest.approx(8 * 2.56e-4 + 5e-6, rel=1e-12)
    token["l2_bytes"] = 1e7                     # below DRAM's time: DRAM decides
    assert model.token_cost(token) == pytest.approx(8 * 1.28e-4 + 5e-6, rel=1e-12)


def test_compute_roof_and_tail_wave():
    """Titan X-like (cc 5.2, 24 SMs, 3072 cores at 1000 MHz): 1024-thread blocks with 27
    registers: 2 resident (warps), 48 slots; 256 blocks: 5 full waves and one of 16
    blocks.  Peak 2 x 3072 x 1e9 = 6.144e12 flop/s; 6.144e12 flops, no bytes: each full
    wave does 48/256 of them in 0.1875 s; the tail 16/256 in 0.0625 s (no compute
    hiding): 1.0 s.  With hide_compute = 64 warps/SM, the tail's 16 x 32 = 512 warps
    reach 512/(64 x 24) = 1/3 of the peak: 0.1875 s; the full waves (48 x 32 = 1536 =
    64 x 24) stay at 0.1875 s: 6 x 0.1875 = 1.125 s."""
    model = _gpu(cc=5.2, sms=24, cores=3072)
    token = _Token(grid=256, block=1024, regs=27, flops=6.144e12)
    assert model.token_cost(token) == pytest.approx(1.0, rel=1e-12)
    assert _gpu(cc=5.2, sms=24, cores=3072, hide_compute=64).token_cost(token) == \
        pytest.approx(1.125, rel=1e-12)
    # roofline: the larger of memory (1e12 B at 1e11 B/s = 10 s) and compute
    token["bytes"] = 1e12
    assert model.token_cost(token) == pytest.approx(10.0, rel=1e-12)


def test_the_data_sheet_peak_and_bandwidth():
    """2 flops per core and cycle (an FMA counts two) at the clock in MHz, and GB/s as
    10^9 bytes/s: the units the model and the importer's roofline both use."""
    assert peak_flops(3072, 1000) == 6.144e12
    assert peak_flops(3072, 1000, 0.5) == 3.072e12
    assert bandwidth_bytes(100) == 1e11 and bandwidth_bytes(200, 0.5) == 1e11
    model = _gpu(cc=5.2, sms=24, cores=3072, compute_efficiency=0.5)
    token = _Token(grid=48, block=1024, regs=27, flops=3.072e12)    # one full wave
    assert model.token_cost(token) == pytest.approx(1.0, rel=1e-12)


def test_bad_parameters_and_launches():
    with pytest.raises(CostModelError, match="compute capability 2.1"):
        _gpu(cc=2.1)
    with pytest.raises(CostModelError, match="'l2'"):
        _gpu(l2=float("nan"))
    with pytest.raises(ValueError, match="2048 threads"):
        _gpu().token_cost(_Token(grid=1, block=2048))
    with pytest.raises(ValueError, match="registers per thread exceed"):
        _gpu().token_cost(_Token(grid=1, block=64, regs=100))


APP = """
sdf k {
    param size = 1024
    param block_x = 64
    param regs = 16
    actor kernel [quanta = size, grid = ceil(size / block_x), block = block_x, regs = regs,
                  bytes = 8 * size, flops = 2 * size, syncs = log2(block_x)]
}
"""

ARCH = """
moa g {{
    param launch = {launch}
    param hide_kepler = {hide}
    param sync_kepler = {sync}
    pe k20 [time = gpu(cc = 3.5, sms = 13, cores = 2496, clock = 706, bandwidth = 208,
             efficiency = {e1}, hide = hide_kepler, sync = sync_kepler, launch = launch)]
    pe k680 [time = gpu(cc = 3.0, sms = 8, cores = 1536, clock = 1058, bandwidth = 192.256,
             efficiency = {e2}, hide = hide_kepler, sync = sync_kepler, launch = launch)]
}}
"""

MAPS = "mapping k20 { kernel -> k20 }\nmapping k680 { kernel -> k680 }\n"


def test_fit_recovers_the_parameters_that_made_the_times():
    """Times generated by the model with stated parameters; ``fit`` started 30-50 %
    away recovers every one to 1e-6 relative."""
    truth = dict(launch=4e-6, hide=40.0, sync=12.0, e1=0.72, e2=0.61)
    app = dsl.parse_sdf(APP)[0]
    arch = dsl.parse_moa(ARCH.format(**truth))[0]
    maps = {m.name: m for m in dsl.parse_map(MAPS)}
    rows = []
    for size in (2 ** 12, 2 ** 15, 2 ** 18, 2 ** 21):
        for block in (64, 128, 256, 1024):
            for name, m in maps.items():
                p = {"size": size, "block_x": block}
                t = evaluate(app, arch, m, params=p).value
                rows.append(MeasurementRow(len(rows) + 2, len(rows) + 1, p, t, m))
    start = dsl.parse_moa(ARCH.format(launch=6e-6, hide=26.0, sync=18.0, e1=0.5,
                                      e2=0.9))[0]
    a = assess(start, rows, app=app, test_fraction=0, starts=0,
               free="launch,hide_kepler,sync_kepler,k20.time.efficiency,"
                    "k680.time.efficiency")
    got = a.fit.values
    expected = {"launch": 4e-6, "hide_kepler": 40.0, "sync_kepler": 12.0,
                "k20.time.efficiency": 0.72, "k680.time.efficiency": 0.61}
    for name, value in expected.items():
        assert math.isclose(got[name], value, rel_tol=1e-6), (name, got[name], value)


@pytest.mark.parametrize("model, args", [
    ("gpu", dict(cc=3.0, sms=8, cores=1536, clock=1000, bandwidth=200, efficiency=0.5,
                 l2=float("nan"))),
    ("roofline", dict(peak=1.0, bandwidth=float("nan")))])
def test_a_nan_limit_is_named_as_nan_not_as_out_of_bounds(model, args):
    with pytest.raises(CostModelError, match="not nan"):
        make_model(model, args)


def test_dispatch_bounds_small_blocks_on_h100():
    """Issue 32: an H100 (cc 9.0, 132 SMs, 1980 MHz, 3352 GB/s) streams 2^28 floats
    (12 bytes per element) in 1.17 ms with 256-thread blocks and 2.56 ms with 64-thread
    ones, both at full occupancy.  With efficiency e = 3221225472 / (1.17e-3 x 3.352e12)
    = 0.8213 and dispatch = 160 cycles per block and SM:
    256 threads: 8 resident blocks x 132 = 1056 slots, 1048576 blocks = 992 full waves +
    1024: dispatch per wave ceil(1056/132) = 8 x 160 / 1.98e9 = 0.646 us, 0.642 ms in
    all, under the DRAM time 3221225472 / (e x 3.352e12) = 1.17 ms: DRAM bound.
    64 threads: 32 x 132 = 4224 slots, 4194304 blocks = 992 full waves + 4096 (32 per
    SM as well): 993 x 32 x 160 / 1.98e9 = 2.568 ms, above 1.17 ms: dispatch bound."""
    e = 3221225472 / (1.17e-3 * 3.352e12)
    h100 = make_model("gpu", dict(cc=9.0, sms=132, cores=16896, clock=1980,
                                  bandwidth=3352, efficiency=e, dispatch=160))
    n = 2 ** 28
    t256 = h100.token_cost(_Token(grid=n // 256, block=256, bytes=12 * n))
    t64 = h100.token_cost(_Token(grid=n // 64, block=64, bytes=12 * n))
    assert t256 == pytest.approx(1.17e-3, rel=1e-9)
    assert t64 == pytest.approx(993 * 32 * 160 / 1.98e9, rel=1e-12)
    assert t64 == pytest.approx(2.568e-3, rel=1e-3)
    # without the dispatch cost both launches move the same bytes at full occupancy
    flat = make_model("gpu", dict(cc=9.0, sms=132, cores=16896, clock=1980,
                                  bandwidth=3352, efficiency=e))
    assert flat.token_cost(_Token(grid=n // 64, block=64, bytes=12 * n)) == \
        pytest.approx(t256, rel=1e-9)


def test_a_fit_keeps_an_efficiency_within_one():
    """Issue 32: times made by a GPU 1.5 times faster than its stated bandwidth
    (efficiency 1.5 in the generating model, written as bandwidth x 1.5): the fitted
    efficiency stops at its bound, 1, for the model PE and for a bare param passed to
    it, instead of failing or leaving what the parameter means."""
    truth = dict(launch=4e-6, hide=40.0, sync=12.0, e1=0.7, e2=0.6)
    app = dsl.parse_sdf(APP)[0]
    fast = ARCH.format(**truth).replace("bandwidth = 208,", "bandwidth = 312,")
    arch = dsl.parse_moa(fast)[0]
    maps = {m.name: m for m in dsl.parse_map(MAPS)}
    rows = []
    for size in (2 ** 15, 2 ** 18, 2 ** 21):
        for block in (64, 256):
            for m in maps.values():
                p = {"size": size, "block_x": block}
                t = evaluate(app, arch, m, params=p).value
                rows.append(MeasurementRow(len(rows) + 2, len(rows) + 1, p, t, m))
    start = dsl.parse_moa(ARCH.format(**truth).replace("efficiency = 0.7,",
                                                       "efficiency = eff,")
                          .replace("param launch", "param eff = 0.7\n    param launch"))[0]
    for free in ("k20.time.efficiency", "eff"):
        a = assess(start, rows, app=app, test_fraction=0, starts=0, free=free)
        assert 1 - 1e-6 < a.fit.values[free] <= 1.0, (free, a.fit.values[free])


def test_a_fit_moves_an_efficiency_a_compute_roof_hides_at_its_start():
    """Issue 44: times made at DRAM efficiency 0.1 by a kernel of 1000 flops per element
    on a K20: at full occupancy DRAM takes 8 / (0.1 x 208e9) = 385 ps per element,
    compute 1000 / (2 x 2496 x 706e6) = 284 ps, so DRAM binds.  Started at the
    efficiency 0.9, DRAM takes 43 ps and the compute roof binds every launch: the model
    is flat in the efficiency there (0.95 predicts the same times).  The one-start fit (``starts=0``) still recovers 0.1: its start
    moves the efficiency to the edge where DRAM begins to bind."""
    app = dsl.parse_sdf(APP.replace("flops = 2 * size", "flops = 1000 * size"))[0]
    truth = dict(launch=4e-6, hide=40.0, sync=12.0, e2=0.6)
    maps = {m.name: m for m in dsl.parse_map(MAPS)}
    arch = dsl.parse_moa(ARCH.format(e1=0.1, **truth))[0]
    rows = []
    for size in (2 ** 15, 2 ** 18, 2 ** 21):
        for block in (64, 256, 1024):
            p = {"size": size, "block_x": block}
            t = evaluate(app, arch, maps["k20"], params=p).value
            rows.append(MeasurementRow(len(rows) + 2, len(rows) + 1, p, t, maps["k20"]))
    start = dsl.parse_moa(ARCH.format(e1=0.9, **truth))[0]
    at_start = [evaluate(app, start, maps["k20"], params=r.params).value for r in rows]
    faster = dsl.parse_moa(ARCH.format(e1=0.95, **truth))[0]
    assert at_start == [evaluate(app, faster, maps["k20"], params=r.params).value
                        for r in rows]                       # flat at the start
    a = assess(start, rows, app=app, test_fraction=0, starts=0,
               free="k20.time.efficiency")
    assert a.fit.values["k20.time.efficiency"] == pytest.approx(0.1, rel=1e-6)


class _Launches:
    """Many launches as one token whose attributes are arrays (as the batch evaluator
    gives them), and each one alone."""

    count = 1.0
    source = "k"

    def __init__(self, columns: dict):
        self.columns = {k: np.asarray(v, dtype=float) for k, v in columns.items()}

    def get(self, name, default=None):
        return self.columns.get(name, default)

    def each(self):
        size = len(next(iter(self.columns.values())))
        for i in range(size):
            yield Token({k: float(v[i]) for k, v in self.columns.items()})


class Token(dict):
    count = 1.0
    source = "k"


launch = st.fixed_dictionaries({
    "grid": st.integers(1, 5000), "block": st.sampled_from([32, 64, 96, 128, 256, 1024]),
    "regs": st.sampled_from([0, 16, 32]), "smem": st.sampled_from([0, 2048, 16384]),
    "bytes": st.floats(1e3, 1e8), "sectors": st.floats(1.0, 32.0),
    "stored": st.floats(0.0, 1.0), "partial_sectors": st.sampled_from([0, 1]),
    "flops": st.floats(0.0, 1e9), "syncs": st.sampled_from([0, 4])})


@settings(max_examples=60, deadline=None)
@given(cc=st.sampled_from([3.5, 5.2, 6.0, 7.0, 8.6, 9.0]),
       l1=st.sampled_from([0.0, 16384.0, 131072.0]), l2=st.sampled_from([0.0, 1e5, 4e7]),
       sharp=st.floats(1.0, 16.0), hide=st.floats(0.0, 32.0),
       launches=st.lists(launch, min_size=1, max_size=12))
def test_many_launches_at_once_cost_what_each_costs_alone(cc, l1, l2, sharp, hide, launches):
    """The batch evaluator's array tokens and the reference's single tokens go through
    one formula: its array form (per-distinct-launch occupancy, masked waves, the cache
    terms) equals launch-by-launch evaluation."""
    model = make_model("gpu", dict(cc=cc, sms=20, cores=2560, clock=1500, bandwidth=448,
                                   hide=hide, hide_compute=hide / 2, sync=20, l2=64,
                                   l2_slices=16, dispatch=150, launch=3e-6,
                                   l1_capacity=l1, l1_sharpness=sharp, l2_capacity=l2,
                                   l2_sharpness=sharp))
    columns = {k: [x[k] for x in launches]
               for k in ("grid", "block", "regs", "smem", "partial_sectors", "flops",
                         "syncs", "bytes")}
    columns["l2_bytes"] = [x["bytes"] * x["sectors"] for x in launches]
    columns["store_bytes"] = [x["bytes"] * x["stored"] for x in launches]
    columns["l2_store_bytes"] = [x["bytes"] * x["stored"] * x["sectors"] for x in launches]
    many = _Launches(columns)
    alone = [model.token_cost(t) for t in many.each()]
    assert all(type(t) is float for t in alone)
    assert model.token_cost(many) == pytest.approx(alone, rel=1e-12)
