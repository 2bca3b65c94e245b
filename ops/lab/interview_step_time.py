"""Where a decode step's time goes, and preemption by recompute.

step profile   one decode step under torch.profiler: how many operators ran (each a kernel launch or more on a
               GPU), the time inside them and the time outside them (Python, dispatch, allocation), against what
               the step's FLOPs and bytes need. A captured CUDA graph replays the launches without the CPU: on a
               GPU it removes the time outside the operators and the per-launch cost, here COMPUTED from an assumed
               launch cost (LAUNCH_US), not measured.
preemption     a request evicted mid-decode loses its KV cache; recomputing it is one prefill of the prompt and the
               tokens made so far, after which greedy decoding continues with the same tokens. Swapping would move
               the cache to the host and back over PCIe instead.
"""
from __future__ import annotations

import time

import torch
from torch.profiler import ProfilerActivity, profile

from ..arith import costs
from ..engine.decode import Decoder
from ..engine.sampling import SamplingParams
from ..errors import InputError

LAUNCH_US = 5.0          # assumed CPU cost of one CUDA kernel launch (a few microseconds: CUDA's launch latency)
PCIE_GB_S = 64.0         # PCIe 5.0 x16, one direction, the specification's raw rate (PCI-SIG); less in practice
GPU = "H200 141GB"       # costs.GPUS: the peak a recompute is set against


def _top_level(events) -> list:
    """The operators the step called itself (aten ops with no aten op above them)."""
    return [e for e in events if e.name.startswith("aten::") and
            (e.cpu_parent is None or not e.cpu_parent.name.startswith("aten::"))]


@torch.inference_mode()
def step_profile(model, prompt_ids: list[int], path: str = "eager", warm: int = 2) -> dict:
    """Prefill, `warm` plain decode steps, then one profiled step: operators called, the seconds inside and outside
    them, the step's FLOPs and bytes (ops/arith/costs) and the rates they imply, and the launch time a CUDA graph
    would remove on a GPU at LAUNCH_US a launch (computed)."""
    dec = Decoder(model, "", prompt_ids, warm + 6, SamplingParams(), path, stop_at_eos=False)
    for _ in range(warm + 1):
        dec.step()
    plain = []
    for _ in range(2):                                 # the profiler's first start is slow: the second one counts
        t0 = time.perf_counter()
        dec.step()
        plain.append(time.perf_counter() - t0)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            t0 = time.perf_counter()
            dec.step()
            wall = time.perf_counter() - t0
    ops = _top_level(prof.events())
    inside = sum(e.cpu_time_total for e in ops) / 1e6
    names: dict[str, int] = {}
    for e in ops:
        names[e.name] = names.get(e.name, 0) + 1
    c, context = model.config, dec.cache.length - 1
    bits = 32 if dec.weight_dtype == "float32" else 8 if dec.weight_dtype == "int8" else 16
    flops = costs.total_flops(c, 1, 1, "decode", context)
    byts = costs.step_bytes(c, 1, 1, "decode", context, bits=bits, act_bytes=4 if bits == 32 else 2)["total"]
    fast = min(plain)
    gpu_bytes = costs.step_bytes(c, 1, 1, "decode", context)["total"]
    return dict(path=path, operators=len(ops), wall_s=wall, unprofiled_s=fast, inside_s=inside,
                outside_s=max(wall - inside, 0.0), flops=flops, bytes=byts, gflop_s=flops / fast / 1e9,
                gb_s=byts / fast / 1e9, context=context, top=sorted(names.items(), key=lambda kv: -kv[1])[:8],
                graph_saves_us=len(ops) * LAUNCH_US, launch_us=LAUNCH_US,
                gpu_bytes_us=gpu_bytes / (costs.GPUS[GPU]["tb_per_s"] * 1e6))


def recompute_vs_swap(c, tokens: int, gpu: str = GPU, kv_dtype_bytes: int = 2) -> dict:
    """A request holding `tokens` positions of KV: the FLOPs of recomputing them (one causal prefill) and the time at
    the GPU's peak, against the bytes a swap moves out and back over PCIe and that time."""
    fl = sum(r["flops"] for r in costs.flops(c, 1, tokens, "prefill", causal_half=True))
    kv = costs.kv_cache_bytes(c, tokens, kv_dtype_bytes)
    return dict(tokens=tokens, recompute_flops=fl, recompute_s=fl / (costs.GPUS[gpu]["tflops_bf16"] * 1e12),
                swap_bytes=2 * kv, swap_s=2 * kv / (PCIE_GB_S * 1e9))


@torch.inference_mode()
def preempt(model, prompt_ids: list[int], new_tokens: int, evict_at: int) -> dict:
    """Greedy decoding evicted after evict_at tokens (its cache dropped) and resumed by one prefill of the prompt and
    those tokens, against the same decoding uninterrupted: the tokens of both, the recompute's measured seconds,
    and recompute_vs_swap for what was cached at eviction."""
    if not 1 <= evict_at < new_tokens:
        raise InputError(f"evict_at = {evict_at}: it must be from 1 to {new_tokens - 1}")
    p = SamplingParams()
    whole = Decoder(model, "", prompt_ids, new_tokens, p, stop_at_eos=False)
    while not whole.done:
        whole.step()
    first = Decoder(model, "", prompt_ids, evict_at, p, stop_at_eos=False)
    while not first.done:
        first.step()
    made, cached = first.token_ids, first.cache.length   # the tokens so far; the prompt and all but the last cached
    del first                                          # evicted: its KV cache is gone
    again = Decoder(model, "", prompt_ids + made, new_tokens - evict_at, p, stop_at_eos=False)
    t0 = time.perf_counter()
    again.step()                                       # the recompute: one prefill of prompt + made, and a token
    seconds = time.perf_counter() - t0
    while not again.done:
        again.step()
    resumed = made + again.token_ids
    return dict(tokens=resumed, plain=whole.token_ids, same=resumed == whole.token_ids, evict_at=evict_at,
                cached=cached, recomputed=len(again.prompt_ids), recompute_here_s=seconds,
                **{k: v for k, v in recompute_vs_swap(model.config, cached).items() if k != "tokens"})



def row_ids(trace, b: int = 0) -> list[int]:
    """Row b's real token ids in a trace (the live prompt)."""
    return trace.token_ids[b, :trace.lengths[b]].tolist()
