"""A GPU as a PE: a roofline per wave of thread blocks, occupancy from the CUDA rules.

``gpu(cc, sms, cores, clock, bandwidth, efficiency=1, compute_efficiency=1, hide=0,
hide_compute=0, sync=0, l2=inf, l2_slices=1, dispatch=0, launch=0, l2_capacity=0,
l2_sharpness=1, l1_capacity=0, l1_sharpness=1)`` costs one kernel launch (a token)
in seconds.  The token gives the launch: ``grid`` (blocks), ``block`` (threads per block),
``regs`` (registers per thread, 0: not limiting), ``smem`` (shared memory bytes per
block), ``carveout`` (the preferred shared memory share of the L1 in percent; absent: the
largest), ``bytes`` (DRAM traffic), ``l2_bytes`` (the 32-byte sectors the warps' accesses
request, which all reach the L2 unless an L1 caches global loads), ``flops`` (default its
``ops``, else 0), ``syncs`` (barrier steps per block, default 0),
``partial_sectors`` (1: the ``l2_bytes`` beyond ``bytes`` are partly used sectors of a
strided access, which reach DRAM past the L2's capacity; default 0) and
``store_bytes``, ``l2_store_bytes`` (the stores' parts of ``bytes`` and ``l2_bytes``,
which the L1 does not cache; default 0).

**Occupancy** (:func:`occupancy`): the blocks resident on one multiprocessor (SM) are the
fewest allowed by blocks, warps, registers and shared memory per SM, as the CUDA
Occupancy Calculator computes them from the limits of the compute capability
(:data:`LIMITS`: 3.0 to 12.0, Kepler to Blackwell, from the CUDA C++ Programming Guide's
table "Technical Specifications per Compute Capability" and ``cuda_occupancy.h``).

**Time**: the grid runs in waves of ``slots = resident · sms`` blocks: ``grid // slots``
full waves and one partial wave of the rest.  A wave of ``n`` blocks keeps
``W = n · warps per block`` warps in flight; it moves its share of the bytes at the
achieved bandwidth ``efficiency · bandwidth`` scaled down by Little's law when too few
warps are in flight to cover the memory latency (``min(1, W / (hide · sms))``: ``hide``
warps per SM saturate the memory system), and does its share of the flops at
``compute_efficiency · 2 · cores · clock`` (one FMA per core and cycle,
:func:`peak_flops`; the bandwidth in bytes/s: :func:`bandwidth_bytes`) likewise with
``hide_compute``.  Per wave, the largest of these roofs (roofline, Williams et al.
2009) and of the blocks' dispatch::

    time = launch + Σ_waves [max(bytes_w / (B_eff · h(W)),
                                 l2_bytes_w / (l2 · l2_slices · clock · h(W)),
                                 flops_w / (P_eff · h_c(W)), ceil(n / sms) · dispatch / clock)
                             + syncs · warps per block · sync / clock]

**L2 capacity** (issue 44; ``l2_capacity`` bytes, 0 by default: not modelled): for a
token with ``partial_sectors``, ``bytes_w`` above counts ``data + max(0, l2_bytes -
bytes) · (1 - h(ws))``, ``h`` the working-set share of :mod:`moa.cost_models.caches`
(``l2_sharpness``) of the wave's footprint ``ws = share · l2_bytes`` (:func:`_dram_bytes`).

**L1** (issue 44; ``l1_capacity`` bytes per SM that cache global loads, 0 by default: the
loads go to the L2, as on Kepler and, unless compiled with ``-dlcm=ca``, Maxwell and
GP10x; :mod:`moa.cost_models.gpu_caches` gives the size and the rule per compute
capability).  The ``l2_bytes`` a launch requests beyond its ``bytes`` re-reference data
of its blocks; the L1 holds the unique bytes of the blocks resident on one SM, ``ws1 =
resident · bytes / grid``, with the hit share ``h1 = min(1, (c1 / ws1)^s1)``
(``l1_sharpness``), so the L2 sees ``bytes + max(0, l2_bytes - bytes) · (1 - h1)``
(:func:`_l2_bytes`), in its roof and in the term above.  Where shared memory is carved
out of the same storage (Kepler, Volta on), ``c1`` is ``l1_capacity`` less the resident
blocks' shared memory.  Stores are not cached in the L1 (it is write-through for global
data): a token may give ``store_bytes`` and ``l2_store_bytes``, the parts of ``bytes``
and ``l2_bytes`` its stores write and request, which reach the L2 whatever the L1
holds; the term then acts on the loads' parts only.

The L2 roof (``l2`` bytes per core cycle of each of ``l2_slices`` L2 slices; a slice
per 64-bit memory partition on these GPUs) is the hierarchical roofline's cache ceiling
(Williams et al. 2009; the ERT measures it): a strided access requests many sectors per
useful byte, and is bound there long before DRAM is.

**Dispatch** (issue 32).  An SM starts a block only when its warps, registers and shared
memory are allocated and initialised, and frees them when the block retires; let that
take ``dispatch`` cycles per block, done by each SM one block after another.  Then an SM
that runs ``b`` blocks needs at least ``b · dispatch / clock`` seconds whatever the
occupancy: a roof on blocks, as the bandwidth is one on bytes.  A wave of ``n`` blocks
gives its busiest SM ``ceil(n / sms)`` of them, so the grid takes at least
``Σ_waves ceil(n / sms) · dispatch / clock ≈ grid / sms · dispatch / clock``.  A block of
``T`` threads streaming ``s`` bytes each is dispatch bound when ``T · s / dispatch``
(bytes per SM and cycle it supplies) falls below the DRAM bandwidth per SM and cycle,
``B_eff / (sms · clock)``: small blocks, fast memory, many SMs.  The H100 (132 SMs,
1980 MHz) streaming 2^28 floats shows it: with 64-thread blocks 2.56 ms although both
launches fill every SM, against 1.17 ms with 256 threads: 2^28 / 64 / 132 = 31775 blocks
per SM in 2.56 ms is ``dispatch`` = 2.56e-3 · 1.98e9 / 31775 ≈ 160 cycles; with 256-thread
blocks the 7944 blocks per SM need 0.64 ms, under the 1.17 ms of DRAM, which then
bounds.  ``dispatch`` is a property of the SM's block scheduler: a ``.moa`` shares it by
generation, and ``mapeval fit`` frees it.

The last term is the part of a block no other block hides: ``syncs`` barrier steps
(``__syncthreads``, a tree reduction's ``log2(block)``), each taking ``sync`` cycles per
warp of the block, as all its warps pass the barrier before any goes on.

**Bounds** (the parameters' pydantic fields, which ``mapeval fit`` keeps): the
efficiencies are fractions of a data-sheet peak, in (0, 1]; ``hide`` and
``hide_compute`` are warps per SM, at most 64 (:data:`MAX_WARPS`); ``l2`` is what one
L2 slice delivers, 32 to 128 bytes per cycle (:data:`L2_SLICE`; ``inf``, the default:
no L2 roof); the sharpnesses are 1 to 16 (:data:`SHARPNESS`: a cache holds at most the
share ``c / ws`` of a working set reused uniformly, and 16 is a step); cycles and
seconds are non-negative (``launch`` 0: the timer excludes the launch, as nvprof's
kernel duration does).  ``l2_slices`` is a data-sheet count, never fitted.

Units: ``clock`` in MHz, ``bandwidth`` in GB/s (10^9 bytes/s), the time in seconds.
Every parameter is a plain number, so that a ``.moa`` may set it from the data sheet or
from a ``param`` shared by a GPU generation, and ``mapeval fit`` may free it.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from pydantic import Field, field_validator

from moa.cost_models.base import (FACT, CostModel, NumberOrInf, Parameters, attribute,
                                  start_scale)
from moa.cost_models.caches import hit_share
from moa.cost_models.gpu_caches import by_capability, caches
from moa.cost_models.registry import register

__all__ = ["GENERATIONS", "GPU", "L2_SLICE", "LIMITS", "Limits", "Occupancy", "SHARPNESS",
           "bandwidth_bytes", "limits", "occupancy", "peak_flops"]

WARP = 32


class Limits(NamedTuple):
    """Per-SM limits of one compute capability: the CUDA C++ Programming Guide's table
    "Technical Specifications per Compute Capability" (Appendix "Compute
    Capabilities"), and the allocation rules of the CUDA Occupancy Calculator
    (``cuda_occupancy.h``: register unit, sub-partitions, shared memory unit, the
    carveouts each capability supports and the shared memory the driver reserves per
    block from compute capability 8.0 on)."""

    blocks: int                 # maximum resident blocks per multiprocessor
    warps: int                  # maximum resident warps per multiprocessor
    threads_per_block: int      # maximum threads per block
    registers: int              # 32-bit registers per multiprocessor
    registers_per_block: int    # maximum registers per block
    registers_per_thread: int   # maximum registers per thread
    register_unit: int          # register allocation unit (per warp)
    warp_granularity: int       # sub-partitions: warps are given registers in groups of it
    shared: int                 # maximum shared memory per multiprocessor (bytes)
    shared_per_block: int       # maximum shared memory per block (bytes; > 48 KB: opt-in)
    shared_unit: int            # shared memory allocation unit (bytes)
    cores_per_sm: int           # FP32 cores per multiprocessor
    generation: str             # architecture name: parameters a .moa shares by it
    reserved: int = 0           # shared memory the driver reserves per block (bytes)
    carveouts: tuple = ()       # shared memory sizes per SM one may choose (KB); () fixed


_K = 1024
_VOLTA = (0, 8, 16, 32, 64, 96)
_AMPERE = (0, 8, 16, 32, 64, 100, 132, 164)        # 8.0 and 8.7 (A100, Orin)
_GA10X = (0, 8, 16, 32, 64, 100)                   # 8.6, 8.9, 12.0
_HOPPER = (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)

#: compute capability -> its limits (CUDA C++ Programming Guide, table "Technical
#: Specifications per Compute Capability"; cuda_occupancy.h for the allocation units,
#: the sub-partitions -- 2 on 6.0, 4 elsewhere -- the carveouts and the reserved 1 KB)
LIMITS: dict[float, Limits] = {
    #       blocks warps thr  registers   /block /thr unit sub  shared     /block    unit cores
    3.0: Limits(16, 64, 1024, 65536, 65536, 63, 256, 4, 48 * _K, 48 * _K, 256, 192, "kepler"),
    3.5: Limits(16, 64, 1024, 65536, 65536, 255, 256, 4, 48 * _K, 48 * _K, 256, 192, "kepler"),
    3.7: Limits(16, 64, 1024, 131072, 65536, 255, 256, 4, 112 * _K, 48 * _K, 256, 192,
                "kepler"),
    5.0: Limits(32, 64, 1024, 65536, 65536, 255, 256, 4, 64 * _K, 48 * _K, 256, 128, "maxwell"),
    5.2: Limits(32, 64, 1024, 65536, 65536, 255, 256, 4, 96 * _K, 48 * _K, 256, 128, "maxwell"),
    5.3: Limits(32, 64, 1024, 65536, 32768, 255, 256, 4, 64 * _K, 48 * _K, 256, 128, "maxwell"),
    6.0: Limits(32, 64, 1024, 65536, 65536, 255, 256, 2, 64 * _K, 48 * _K, 256, 64, "pascal"),
    6.1: Limits(32, 64, 1024, 65536, 65536, 255, 256, 4, 96 * _K, 48 * _K, 256, 128, "pascal"),
    6.2: Limits(32, 64, 1024, 65536, 32768, 255, 256, 4, 64 * _K, 48 * _K, 256, 128, "pascal"),
    7.0: Limits(32, 64, 1024, 65536, 65536, 255, 256, 4, 96 * _K, 96 * _K, 256, 64, "volta",
                0, _VOLTA),
    7.2: Limits(32, 64, 1024, 65536, 65536, 255, 256, 4, 96 * _K, 96 * _K, 256, 64, "volta",
                0, _VOLTA),
    7.5: Limits(16, 32, 1024, 65536, 65536, 255, 256, 4, 64 * _K, 64 * _K, 256, 64, "turing",
                0, (32, 64)),
    8.0: Limits(32, 64, 1024, 65536, 65536, 255, 256, 4, 164 * _K, 163 * _K, 128, 64, "ampere",
                _K, _AMPERE),
    8.6: Limits(16, 48, 1024, 65536, 65536, 255, 256, 4, 100 * _K, 99 * _K, 128, 128, "ampere",
                _K, _GA10X),
    8.7: Limits(16, 48, 1024, 65536, 65536, 255, 256, 4, 164 * _K, 163 * _K, 128, 128, "ampere",
                _K, _AMPERE),
    8.9: Limits(24, 48, 1024, 65536, 65536, 255, 256, 4, 100 * _K, 99 * _K, 128, 128, "ada",
                _K, _GA10X),
    9.0: Limits(32, 64, 1024, 65536, 65536, 255, 256, 4, 228 * _K, 227 * _K, 128, 128, "hopper",
                _K, _HOPPER),
    10.0: Limits(32, 64, 1024, 65536, 65536, 255, 256, 4, 228 * _K, 227 * _K, 128, 128,
                 "blackwell", _K, _HOPPER),
    12.0: Limits(32, 48, 1024, 65536, 65536, 255, 256, 4, 100 * _K, 99 * _K, 128, 128,
                 "blackwell", _K, _GA10X),
}

#: the most warps any SM holds (64): no more can be in flight to hide a latency
MAX_WARPS = max(lim.warps for lim in LIMITS.values())

#: bytes per core cycle one L2 slice delivers (the range ``l2`` may take): an NVIDIA L2
#: slice returns one to two 32-byte sectors per cycle -- V100 2048 bytes per cycle over
#: 64 slices (4096-bit bus, one slice per 64-bit partition), A100 5120 over 80 (the A100
#: whitepaper, "L2 cache") -- and up to twice the largest for parts not documented
L2_SLICE = (32.0, 128.0)

#: the sharpness ``s`` of a working-set transition ``min(1, (c / ws)^s)``: at least 1, as
#: a cache of ``c`` bytes holds at most ``c / ws`` of a working set re-referenced
#: uniformly (s = 1), and at most 16, where the hit share at twice the capacity is
#: 2^-16: a step (an LRU cache swept in order)
SHARPNESS = (1.0, 16.0)

#: generations by name, oldest first (a .moa shares parameters by them)
GENERATIONS: tuple[str, ...] = tuple(dict.fromkeys(lim.generation for lim in LIMITS.values()))


def limits(cc: float) -> Limits:
    """The limits of compute capability ``cc`` (an error lists the known ones)."""
    return by_capability(LIMITS, cc, "occupancy rules")


def _ceil_to(x: int, unit: int) -> int:
    return -(-x // unit) * unit


class Occupancy(NamedTuple):
    """Blocks resident on one SM and what limits them (``limit``: ``blocks``,
    ``warps``, ``registers`` or ``shared``); ``occupancy`` = resident warps / max warps."""

    blocks: int
    warps_per_block: int
    limit: str
    occupancy: float


def _register_blocks(lim: Limits, warps: int, regs: int, sub: int) -> int:
    """Blocks per SM by registers (Occupancy Calculator): a warp gets ``regs · 32``
    registers rounded up to the allocation unit, each of the ``sub`` sub-partitions
    holds ``registers / sub`` of them; a block must fit the per-block limit with its
    warps rounded up to a multiple of ``sub`` (the hardware's check)."""
    per_warp = _ceil_to(regs * WARP, lim.register_unit)
    if per_warp * _ceil_to(warps, sub) > lim.registers_per_block:
        return 0
    return (lim.registers // sub // per_warp) * sub // warps


def _carveout_bytes(lim: Limits, want: int) -> int:
    """The smallest supported shared memory size per SM of at least ``want`` bytes."""
    for kb in lim.carveouts:
        if kb * _K >= want:
            return kb * _K
    return lim.shared


# a fit evaluates the same few launches thousands of times
@lru_cache(maxsize=1 << 16)
def occupancy(cc: float, block: int, regs: int = 0, smem: int = 0,
              carveout: float | None = None) -> Occupancy:
    """Resident blocks per SM of a launch of ``block`` threads, ``regs`` registers per
    thread and ``smem`` shared bytes per block (CUDA Occupancy Calculator rules).
    ``carveout``: the preferred shared memory share of the unified L1 in percent
    (``cudaFuncAttributePreferredSharedMemoryCarveout``; ``None``, the default: the
    largest), rounded up to a size the capability supports and never below one
    block's need."""
    lim = limits(cc)
    block, regs, smem = int(block), int(regs), int(smem)
    if not 0 < block <= lim.threads_per_block:
        raise ValueError(f"a block of {block} threads cannot run on compute capability "
                         f"{cc} (1 to {lim.threads_per_block} threads)")
    if regs > lim.registers_per_thread:
        raise ValueError(f"{regs} registers per thread exceed the {lim.registers_per_thread} "
                         f"of compute capability {cc}")
    if smem > lim.shared_per_block:
        raise ValueError(f"{smem} bytes of shared memory per block exceed the "
                         f"{lim.shared_per_block} of compute capability {cc}")
    if carveout is not None and not 0 <= carveout <= 100:
        raise ValueError(f"a shared memory carveout is 0 to 100 percent, not {carveout}")
    # Programming Guide, "Hardware Implementation": a block runs as ceil(threads/32) warps
    warps = -(-block // WARP)
    by = {"blocks": lim.blocks,                 # "Maximum number of resident blocks per SM"
          "warps": lim.warps // warps}          # "Maximum number of resident warps per SM"
    if regs > 0:
        by["registers"] = _register_blocks(lim, warps, regs, lim.warp_granularity)
        if round(float(cc), 1) == 6.0 and by["registers"]:
            # cuda_occupancy.h: a launch that cannot run on GP10x (4 sub-partitions)
            # runs on no Pascal part
            by["registers"] = by["registers"] if _register_blocks(lim, warps, regs, 4) else 0
    need = smem + lim.reserved                  # the driver's 1 KB per block from 8.0 on
    if need > 0:
        per_block = _ceil_to(need, lim.shared_unit)
        per_sm = lim.shared
        if carveout is not None and lim.carveouts:
            per_sm = _carveout_bytes(lim, int(carveout * lim.shared / 100))
            if per_sm < per_block:              # Volta on: the driver takes a larger one
                per_sm = _carveout_bytes(lim, per_block)
        by["shared"] = per_sm // per_block
    limit = min(by, key=lambda k: (by[k], k != "blocks"))
    resident = by[limit]
    if resident == 0:
        raise ValueError(f"a block of {block} threads with {regs} registers per thread "
                         f"does not fit on a multiprocessor of compute capability {cc} "
                         f"(limited by {limit})")
    return Occupancy(resident, warps, limit, resident * warps / lim.warps)


def peak_flops(cores: float, clock_mhz: float, efficiency: float = 1.0) -> float:
    """A GPU's peak in floating-point operations per second from its data sheet:
    ``2 · cores · clock`` with ``clock`` in MHz, as each core completes one fused
    multiply-add per cycle and an FMA counts two operations; ``efficiency`` the share
    of it achieved (1: the data sheet's)."""
    return efficiency * 2.0 * cores * clock_mhz * 1e6


def bandwidth_bytes(gb_per_s: float, efficiency: float = 1.0) -> float:
    """A GPU's DRAM bandwidth in bytes per second from its data sheet's GB/s (decimal:
    10^9 bytes per GB, as memory vendors count); ``efficiency`` the share of it
    achieved (1: the data sheet's)."""
    return efficiency * gb_per_s * 1e9


@register
class GPU(CostModel):
    name = "gpu"

    class Parameters(Parameters):
        cc: float = Field(gt=0, json_schema_extra=FACT)  # compute capability, e.g. 3.5
        sms: int = Field(gt=0)                   # multiprocessors
        cores: float = Field(gt=0)               # FP32 cores in all
        clock: float = Field(gt=0)               # core clock, MHz
        bandwidth: float = Field(gt=0)           # data-sheet DRAM bandwidth, GB/s
        efficiency: float = Field(default=1.0, gt=0, le=1)          # achieved / data sheet
        compute_efficiency: float = Field(default=1.0, gt=0, le=1)  # achieved / peak flops
        # warps per SM saturating memory / compute: at most the most warps an SM holds
        hide: float = Field(default=0.0, ge=0, le=MAX_WARPS)
        hide_compute: float = Field(default=0.0, ge=0, le=MAX_WARPS)
        sync: float = Field(default=0.0, ge=0)                # cycles per warp and barrier
        # L2 bytes per core cycle and slice (inf: no L2 roof), over l2_slices slices
        l2: NumberOrInf = Field(default=math.inf, ge=L2_SLICE[0], le=L2_SLICE[1],
                                allow_inf_nan=True)
        l2_slices: float = Field(default=1.0, gt=0, json_schema_extra=FACT)
        launch: float = Field(default=0.0, ge=0)              # seconds per launch
        # cycles per block and SM; random starts draw a 0 around 100 (H100: 160)
        dispatch: float = Field(default=0.0, ge=0, json_schema_extra=start_scale(100.0))
        # L2 capacity in bytes (data sheet; 0: not modelled) and the sharpness of its
        # working-set transition (moa.cost_models.caches)
        l2_capacity: float = Field(default=0.0, ge=0)
        l2_sharpness: float = Field(default=1.0, ge=SHARPNESS[0], le=SHARPNESS[1])
        # L1 bytes per SM caching global loads (0: they go to the L2) and its sharpness
        l1_capacity: float = Field(default=0.0, ge=0)
        l1_sharpness: float = Field(default=1.0, ge=SHARPNESS[0], le=SHARPNESS[1])

        @field_validator("l2", mode="wrap")
        @classmethod
        def _no_roof(cls, value, handler):
            # inf is the default's meaning (no L2 roof), outside the range of a slice
            if isinstance(value, (int, float)) and math.isinf(value) and value > 0:
                return math.inf
            try:
                return handler(value)
            except ValueError as e:
                raise ValueError(f"{e}; l2 is bytes per core cycle of one L2 slice "
                                 f"({L2_SLICE[0]:g} to {L2_SLICE[1]:g}), l2_slices "
                                 "their number") from None

        @field_validator("cc")
        @classmethod
        def _known(cls, value):
            limits(value)
            return value

        @field_validator("sms", mode="before")
        @classmethod
        def _integral(cls, value):
            if isinstance(value, float) and value.is_integer():
                return int(value)
            return value

    def token_cost(self, token):
        """Seconds of one launch, or of many at once where ``token``'s attributes are
        arrays (the batch evaluator's tokens of many rows): one formula for both."""
        p = self.params
        grid = attribute(token, "grid", None, positive=True)
        block = attribute(token, "block", None, positive=True)
        regs = attribute(token, "regs", 0.0)
        smem = attribute(token, "smem", 0.0)
        data = attribute(token, "bytes", 0.0)
        flops = attribute(token, "flops", token.get("ops", 0.0))
        syncs = attribute(token, "syncs", 0.0)
        l2_data = attribute(token, "l2_bytes", 0.0)
        partial = np.asarray(attribute(token, "partial_sectors", 0.0)) > 0
        carveout = None if token.get("carveout") is None else attribute(token, "carveout", 0.0)
        resident, warps = _occupancies(p.cc, block, regs, smem, carveout)
        slots = resident * p.sms
        blocks = np.ceil(grid)
        full, rest = np.divmod(blocks, slots)
        bandwidth = bandwidth_bytes(p.bandwidth, p.efficiency)
        peak = peak_flops(p.cores, p.clock, p.compute_efficiency)
        if p.l1_capacity > 0:
            stores = attribute(token, "store_bytes", 0.0)
            l2_stores = attribute(token, "l2_store_bytes", 0.0)
            bad = (np.asarray(stores) > data) | (np.asarray(l2_stores) > l2_data)
            if bad.any():
                i = np.flatnonzero(bad)[0] if bad.ndim else ()
                raise ValueError(
                    f"a launch's store_bytes ({np.broadcast_to(stores, bad.shape)[i]:g}) and "
                    f"l2_store_bytes ({np.broadcast_to(l2_stores, bad.shape)[i]:g}) are parts "
                    f"of its bytes ({np.broadcast_to(data, bad.shape)[i]:g}) and l2_bytes "
                    f"({np.broadcast_to(l2_data, bad.shape)[i]:g})")
            l2_data = l2_stores + _l2_bytes(data - stores, l2_data - l2_stores,
                                            np.minimum(resident, -(-blocks // p.sms)),
                                            blocks, smem + limits(p.cc).reserved, p)
        time = p.launch
        serial = syncs * warps * p.sync / (p.clock * 1e6)
        with np.errstate(divide="ignore", invalid="ignore"):
            for n, times in ((slots, full), (rest, 1)):
                share = n / blocks                           # this wave's part of the work
                in_flight = n * warps                        # warps of the wave, all SMs
                hidden = _hidden(in_flight, p.hide, p.sms)
                dram = data if p.l2_capacity <= 0 else \
                    np.where(partial, _dram_bytes(data, l2_data, share, p), data)
                memory = share * np.maximum(dram / bandwidth,
                                            l2_data / (p.l2 * p.l2_slices * p.clock * 1e6)
                                            ) / hidden
                compute = share * flops / (peak * _hidden(in_flight, p.hide_compute, p.sms))
                blocks_per_sm = -(-n // p.sms)               # the busiest SM's blocks
                dispatched = blocks_per_sm * p.dispatch / (p.clock * 1e6)
                wave = times * (np.maximum(np.maximum(memory, compute), dispatched) + serial)
                time = time + np.where((n == 0) | (times == 0), 0.0, wave)
        return float(time) if np.ndim(time) == 0 else time


def _occupancies(cc: float, block, regs, smem, carveout):
    """``(resident blocks per SM, warps per block)`` of one launch (:func:`occupancy`),
    or arrays of them for arrays of launches: the rules run once per distinct launch."""
    if all(np.ndim(x) == 0 for x in (block, regs, smem, carveout)):
        occ = occupancy(cc, block, regs, smem, carveout)
        return occ.blocks, occ.warps_per_block
    shape = np.broadcast_shapes(*(np.shape(x) for x in (block, regs, smem, carveout)
                                  if x is not None))
    columns = [np.broadcast_to(np.asarray(x, dtype=float), shape).ravel()
               for x in (block, regs, smem, np.nan if carveout is None else carveout)]
    launches, where = np.unique(np.stack(columns, axis=1), axis=0, return_inverse=True)
    found = np.array([occupancy(cc, b, r, s, None if math.isnan(c) else c)[:2]
                      for b, r, s, c in launches], dtype=float).reshape(-1, 2)
    return (found[:, 0][where.ravel()].reshape(shape),
            found[:, 1][where.ravel()].reshape(shape))


def _dram_bytes(data, l2_data, share, p) -> float:
    """DRAM bytes of a launch whose accesses request ``l2_data`` bytes of sectors for
    ``data`` useful ones: a sector partly used by one warp is completed by its
    neighbours while it stays in the L2, which holds the ``share · l2_data`` bytes the
    wave in flight touches with the hit share of the working-set term
    (:mod:`moa.cost_models.caches`); the rest of the requested sectors' surplus goes to
    DRAM: ``data + max(0, l2_data - data) · (1 - min(1, (l2_capacity / ws)^s))``."""
    surplus = l2_data - data
    return np.where(surplus > 0, data + surplus * (
        1.0 - hit_share(share * l2_data, p.l2_capacity, p.l2_sharpness)), data)


def _l2_bytes(data, l2_data, resident, blocks, smem, p) -> float:
    """Bytes reaching the L2 of a launch requesting ``l2_data`` for ``data`` unique ones
    when an L1 of ``l1_capacity`` bytes per SM (less the ``resident`` blocks' shared
    memory ``smem`` where the two share the storage) caches global loads: the surplus
    requests hit it with the share it holds of the resident blocks' unique bytes,
    ``data + max(0, l2_data - data) · (1 - min(1, (c1 / ws1)^s1))``, ``ws1 = resident ·
    data / blocks``."""
    surplus = l2_data - data
    capacity = p.l1_capacity - (resident * smem if caches(p.cc).unified else 0.0)
    held = hit_share(resident * data / blocks, np.maximum(capacity, 0.0), p.l1_sharpness)
    return np.where((surplus > 0) & (capacity > 0), data + surplus * (1.0 - held), l2_data)


def _hidden(warps: float, hide: float, sms: int) -> float:
    """The fraction of the throughput ``warps`` in flight reach (Little's law: the
    throughput grows with the work in flight until ``hide`` warps per SM cover the
    latency)."""
    if hide <= 0:
        return 1.0
    cover = hide * sms
    # min(warps, cover) / cover is min(1, warps / cover) without its overflow where a
    # fit tries a vanishing ``hide``
    return np.minimum(warps, cover) / cover
