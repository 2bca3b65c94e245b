"""Weight copies in 2 MiB pages, so that a decode step's read of every weight misses the TLB 512x less often.

A decode step streams each weight once. In 4 KiB pages that is a page walk every 4 KiB, and the hardware
prefetcher stops at every page boundary; in 2 MiB pages (Linux transparent huge pages) neither happens. Where
THP is "madvise" (the default here and on most distributions) memory gets 2 MiB pages only when asked:
an Arena maps anonymous memory, aligned to 2 MiB, and asks with madvise(MADV_HUGEPAGE) before any page is touched.
The int8 set uses it (ops/fast/quant.int8_copy): its GEMVs read memory, so fewer TLB misses make a decode step
faster, at a price paid once per model, mostly in the background as the app loads (the kernel compacts memory to
find free 2 MiB pages). The bfloat16 copy does not: torch.mv on bf16 is bound by its own arithmetic, not by the TLB,
so it gains nothing and would pay the slower build. The measurements: bench/RESULTS.md, "Figures once in code comments".
Where it cannot be had (not Linux, THP "never", no MADV_HUGEPAGE in this Python), plain tensors: the same
values in 4 KiB pages.
"""
from __future__ import annotations

import mmap
from pathlib import Path

import torch

HUGE = 2 << 20                     # bytes in one transparent huge page on x86-64
CHUNK = 64 << 20                   # an arena's mapping: small tensors share its pages, large ones get their own


def mode() -> str:
    """The kernel's THP setting ("always", "madvise", "never"), "" where there is none to read."""
    try:
        text = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return ""
    return text[text.find("[") + 1:text.find("]")] if "[" in text else ""


def available() -> bool:
    return hasattr(mmap, "MADV_HUGEPAGE") and mode() in ("always", "madvise")


def _mapping(n: int) -> torch.Tensor | None:
    """n bytes (uint8) of anonymous memory starting on a 2 MiB boundary, asked for in huge pages before any page is
    touched; None where the mapping cannot be made or madvise refuses. The tensor keeps the mapping alive
    (torch.frombuffer holds the buffer)."""
    try:
        m = mmap.mmap(-1, n + HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except (OSError, ValueError):                     # no room for the mapping: a plain tensor will do
        return None
    try:
        m.madvise(mmap.MADV_HUGEPAGE)
    except OSError:
        m.close()
        return None
    raw = torch.frombuffer(m, dtype=torch.uint8)
    start = -raw.data_ptr() % HUGE                    # the first 2 MiB boundary inside the mapping
    return raw[start:start + n]


class Arena:
    """Builds a weight set's copies one tensor after another in 2 MiB pages: tensors under a quarter of CHUNK are
    laid end to end (64-byte aligned) in shared CHUNK-byte mappings, so a 1 MB matrix does not take a 2 MiB page of
    its own; larger ones get a mapping each. A mapping is freed with the last tensor in it. Where huge pages cannot
    be had (available()), plain contiguous copies."""

    def __init__(self):
        self.huge = available()                       # asked once: the setting and /sys do not change mid-build
        self._chunk, self._used = None, 0

    def empty(self, shape, dtype: torch.dtype) -> torch.Tensor:
        n = torch.Size(shape).numel() * dtype.itemsize
        if not self.huge:
            return torch.empty(shape, dtype=dtype)
        if n > CHUNK // 4:
            raw = _mapping(n)
        else:
            if self._chunk is None or self._used + n > CHUNK:
                self._chunk, self._used = _mapping(CHUNK), 0
            raw = None if self._chunk is None else self._chunk[self._used:self._used + n]
            self._used += max(64, -(-n // 64) * 64)       # never two tensors at one address, even an empty one
        return torch.empty(shape, dtype=dtype) if raw is None else raw.view(dtype).view(shape)

    def copy(self, t: torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor:
        """A contiguous copy of a CPU tensor, in `dtype` (its own by default)."""
        out = self.empty(t.shape, dtype or t.dtype)
        out.copy_(t)
        return out


def settle(tensors: dict, keep: set) -> dict:
    """The same name -> tensor dict with every CPU tensor not in `keep` (data pointers: the model's own weights, which
    a fast set shares) copied into one Arena, in 2 MiB pages; tensors shared under two names stay shared. Each
    original is let go as soon as it is copied, so the set is held twice one tensor at a time, never whole."""
    arena, moved, out = Arena(), {}, {}
    for name in list(tensors):
        t = tensors.pop(name)
        key = t.data_ptr()
        if t.device.type == "cpu" and key not in keep and arena.huge:
            if key not in moved:
                moved[key] = arena.copy(t)
            t = moved[key]
        out[name] = t
    return out


def share(t: torch.Tensor) -> float:
    """The fraction of t's bytes that lie in huge pages now (from /proc/self/smaps, counting the whole of each
    mapping t overlaps), 0.0 where it cannot be read."""
    lo, hi = t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()
    try:
        lines = Path("/proc/self/smaps").read_text().splitlines()
    except OSError:
        return 0.0
    huge, region = 0, None
    for line in lines:
        head = line.split()[0] if line else ""
        if "-" in head and ":" not in head:           # a mapping's first line: start-end perms ...
            a, b = (int(x, 16) for x in head.split("-"))
            region = (a, b) if a < hi and b > lo else None
        elif region and line.startswith("AnonHugePages:"):
            huge += int(line.split()[1]) * 1024
    return min(1.0, huge / max(1, hi - lo))
