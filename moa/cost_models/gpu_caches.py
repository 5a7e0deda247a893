"""Data-sheet cache sizes of NVIDIA GPUs per compute capability (3.0 to 12.0).

For each compute capability of :data:`moa.cost_models.gpu.LIMITS`: the on-chip storage
per multiprocessor (SM) that can cache global loads (``l1``, bytes), whether shared
memory is carved out of that same storage (``unified``), whether global loads are
cached there by default, only when compiled to (``-Xptxas -dlcm=ca``), or never
(``globals``), and the L2 size of a reference chip of that capability (``l2``, bytes;
``chip`` names it: the L2 differs between chips of one capability, so a table's own
column, when it has one, wins).

Sources: the CUDA C++ Programming Guide, appendix "Compute Capabilities", sections
"Global Memory" of 3.x, 5.x, 6.x and 7.x on (which accesses the L1 caches, and the
opt-in), and the sizes of the unified data cache per capability; the NVIDIA tuning
guides (Kepler, Maxwell, Pascal, Volta, Turing, Ampere, Ada, Hopper, Blackwell:
sections "L1 cache" / "Unified L1/Texture Cache" / "Unified Shared Memory/L1/Texture
Cache"; the Pascal guide: GP100 caches global loads in L1 by default where GP104
follows Maxwell); and the architecture whitepapers for the L2 of each reference chip
(GK104/GTX 680, GK110, GK210/K80, GM107, GM204, GM20B/Tegra X1, GP100, GP102, GP10B,
GV100, GV10B/Xavier, TU104/T4, GA100, GA102, GA10B/Orin, AD102/RTX 4090, GH100/H100,
GB100/B200 as its driver reports it, GB202/RTX 5090).
"""
from __future__ import annotations

from typing import NamedTuple

__all__ = ["CACHES", "Caches", "caches", "l1_for_globals"]

_K = 1024
_M = 1024 * 1024


class Caches(NamedTuple):
    """One compute capability's caches (see the module)."""

    l1: int             # bytes per SM of the storage that caches global loads
    unified: bool       # shared memory is carved out of that storage
    globals: str        # global loads cached in it: "default", "opt-in" or "no"
    l2: int             # L2 bytes of the reference chip
    chip: str           # the reference chip (and product) of the L2


#: compute capability -> its caches
CACHES: dict[float, Caches] = {
    # Kepler: 64 KB of L1 + shared per SMX (16/32/48 KB L1); global loads in L2 only,
    # GK110/GK210 parts may opt in (the 48 KB read-only data cache serves __ldg only)
    3.0: Caches(64 * _K, True, "no", 512 * _K, "GK104 (GTX 680)"),
    3.5: Caches(64 * _K, True, "opt-in", 1536 * _K, "GK110 (K40, GTX Titan)"),
    3.7: Caches(128 * _K, True, "opt-in", 1536 * _K, "GK210 (K80, per GPU)"),
    # Maxwell: shared memory has its own storage; the unified L1/texture cache takes
    # global loads only when read-only (5.0) or when compiled with -dlcm=ca (5.2, 5.3)
    5.0: Caches(24 * _K, False, "no", 2 * _M, "GM107 (GTX 750 Ti)"),
    5.2: Caches(48 * _K, False, "opt-in", 2 * _M, "GM204 (GTX 980)"),
    5.3: Caches(48 * _K, False, "opt-in", 256 * _K, "GM20B (Tegra X1)"),
    # Pascal: GP100 caches global loads in L1/texture by default, GP10x as Maxwell
    6.0: Caches(24 * _K, False, "default", 4 * _M, "GP100 (P100)"),
    6.1: Caches(48 * _K, False, "opt-in", 3 * _M, "GP102 (P40, Titan Xp)"),
    6.2: Caches(48 * _K, False, "opt-in", 512 * _K, "GP10B (Jetson TX2)"),
    # Volta on: one data cache per SM, L1 and shared memory together, caching global
    # loads by default
    7.0: Caches(128 * _K, True, "default", 6 * _M, "GV100 (V100)"),
    7.2: Caches(128 * _K, True, "default", 512 * _K, "GV10B (Jetson AGX Xavier)"),
    7.5: Caches(96 * _K, True, "default", 4 * _M, "TU104 (T4)"),
    8.0: Caches(192 * _K, True, "default", 40 * _M, "GA100 (A100)"),
    8.6: Caches(128 * _K, True, "default", 6 * _M, "GA102 (RTX 3090, A40)"),
    8.7: Caches(192 * _K, True, "default", 4 * _M, "GA10B (Jetson AGX Orin)"),
    8.9: Caches(128 * _K, True, "default", 72 * _M, "AD102 (RTX 4090)"),
    9.0: Caches(256 * _K, True, "default", 50 * _M, "GH100 (H100, H200)"),
    10.0: Caches(256 * _K, True, "default", int(126.5 * _M), "GB100 (B200)"),
    12.0: Caches(128 * _K, True, "default", 96 * _M, "GB202 (RTX 5090)"),
}


def by_capability(table: dict, cc: float, what: str):
    """The entry of ``table`` for compute capability ``cc`` (an error lists the known
    ones and says ``what`` is missing)."""
    found = table.get(round(float(cc), 1))
    if found is None:
        known = ", ".join(f"{c:.1f}" for c in table)
        raise ValueError(f"compute capability {cc} has no {what} here (known: {known})")
    return found


def caches(cc: float) -> Caches:
    """The caches of compute capability ``cc`` (an error lists the known ones)."""
    return by_capability(CACHES, cc, "cache sizes")


def l1_for_globals(cc: float, opted_in: bool = False) -> int:
    """Bytes per SM that cache a kernel's global loads: the L1 of ``cc`` when it caches
    them by default, or when it may and the kernel was compiled to (``opted_in``:
    ``-Xptxas -dlcm=ca``); 0 when they go to the L2 only."""
    c = caches(cc)
    return c.l1 if c.globals == "default" or (opted_in and c.globals == "opt-in") else 0
