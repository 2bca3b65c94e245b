"""Prefill vs decode timed on the loaded model: the machine's measured peaks, both phases timed, and the same
phases on an H200 from its published figures (the Serving page's last section)."""
from __future__ import annotations

import time

import torch

from ..arith import costs
from ..engine.config import ModelConfig


# ---- (h) prefill vs decode, timed ------------------------------------------------------------------------------
def _best(fn_, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn_()
        best = min(best, time.perf_counter() - t0)
    return best


@torch.inference_mode()
def machine_peaks(dtype=torch.float32, n: int = 1024, mb: int = 256, reps: int = 3) -> dict:
    """This machine's own roof, measured: matmul FLOP/s (n x n x n) and matrix-vector bytes/s (a `mb` MB
    matrix read once per call), best of `reps`."""
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    flops = 2 * n ** 3 / _best(lambda: a @ b, reps)
    cols = 4096
    m = torch.randn(mb * 2**20 // (cols * a.element_size()), cols, dtype=dtype)
    x = torch.randn(cols, dtype=dtype)
    bw = m.numel() * m.element_size() / _best(lambda: torch.mv(m, x), reps)
    return dict(flops_per_s=flops, bytes_per_s=bw, ridge=flops / bw, dtype=str(dtype).replace("torch.", ""))


def _ids(model, S: int) -> torch.Tensor:
    """(1, S) ordinary token ids (a fixed sentence repeated): the timing does not depend on what they say."""
    base = model.tokenizer.encode("The quick brown fox jumps over the lazy dog. ") if model.tokenizer else [1, 2, 3]
    return torch.tensor([(base * (S // len(base) + 1))[:S]])


@torch.inference_mode()
def measure_phases(model, prefill=(8, 128), context: int = 128, steps: int = 8, reps: int = 2, progress=None) -> dict:
    """Time per token of prefill at each S in `prefill` (one forward of S tokens, best of reps) and of decode
    (one token against a KV cache of `context` tokens, best of `steps`), on the loaded model with SDPA, next
    to the roofline prediction max(FLOPs / peak, bytes / bandwidth) with this machine's measured peaks.
    progress(done, total), if given, is called after each part."""
    from ..engine.decode import KVCache
    c = model.config
    total = len(prefill) + 2
    progress = progress or (lambda done, total: None)
    peaks = machine_peaks(model.dtype)
    progress(1, total)
    bits = 8 * torch.empty((), dtype=model.dtype).element_size()

    def predict(S, phase, ctx=None):
        fl = costs.total_flops(c, 1, S, phase, ctx)
        by = costs.step_bytes(c, 1, S, phase, ctx, bits=bits, act_bytes=bits // 8)["total"]
        return fl, by, max(fl / peaks["flops_per_s"], by / peaks["bytes_per_s"]), \
            "compute" if fl / peaks["flops_per_s"] >= by / peaks["bytes_per_s"] else "memory"

    rows = []
    for S in prefill:
        ids = _ids(model, S)
        run = lambda: model.forward(ids, torch.arange(S)[None], torch.ones(1, S, dtype=torch.bool),  # noqa: E731
                                    last_only=True, attention="sdpa")
        sec = _best(run, reps)
        fl, by, pred, bound = predict(S, "prefill")
        rows.append(dict(phase="prefill", S=S, tokens=S, seconds=sec, ms_per_token=sec / S * 1e3,
                         predicted_ms_per_token=pred / S * 1e3, flops=fl, bytes=by, bound=bound))
        progress(len(rows) + 1, total)
    cache = KVCache(c, 1, context + steps, model.device, model.dtype)
    model.forward(_ids(model, context), torch.arange(context)[None], torch.ones(1, context, dtype=torch.bool),
                  cache=cache, last_only=True, attention="sdpa")
    times = []
    for k in range(steps):
        p = cache.length
        t0 = time.perf_counter()
        model.forward(_ids(model, 1), torch.tensor([[p]]), torch.ones(1, p + 1, dtype=torch.bool), cache=cache,
                      last_only=True, attention="sdpa")
        times.append(time.perf_counter() - t0)
    fl, by, pred, bound = predict(1, "decode", context)
    rows.append(dict(phase="decode", S=context, tokens=1, seconds=min(times), ms_per_token=min(times) * 1e3,
                     predicted_ms_per_token=pred * 1e3, flops=fl, bytes=by, bound=bound))
    progress(total, total)
    return dict(rows=rows, peaks=peaks, dtype=peaks["dtype"])


def h200_phases(c: ModelConfig, lengths=(8, 1024), context: int = 4096, gpu: str = "H200 141GB") -> list[dict]:
    """costs.roofline for prefill at each S and one decode step at `context`, B = 1: where each sits."""
    rows = [dict(phase="prefill", S=S, **costs.roofline(c, 1, S, "prefill", gpu=gpu)) for S in lengths]
    rows.append(dict(phase="decode", S=context, **costs.roofline(c, 1, 1, "decode", gpu=gpu, context=context)))
    for r in rows:
        r["ms_per_token"] = r["time_s"] * 1e3 / (r["S"] if r["phase"] == "prefill" else 1)
    return rows
