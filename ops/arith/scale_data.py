"""The Scale page's numbers in one call: a config's roofline, parameters, FLOPs and memory at the user's B, S and GPU,
the reference configs' total and active parameters, and the check of the config's count against counted weights.
Arithmetic on configs only (ops/arith/costs.py); the page formats and draws what comes back."""
from __future__ import annotations

from ..engine.config import ModelConfig
from . import costs

PHASES = ("prefill", "decode")
PRECISIONS = (("bf16", 16), ("int8", 8), ("int4", 4))
GPU_ORDER = ("RTX 4090 24GB", "A100 80GB", "H200 141GB")


def view(c: ModelConfig, B: int, S: int, gpu: str) -> dict:
    """Everything the page shows about `c` at batch B, sequence S on `gpu` (a costs.GPUS key):
    roofline (phase -> costs.roofline), ridge, above_ridge (prefill's intensity at or over it), crossover (the S
    from which prefill is compute-bound, when it is memory-bound now), T = B·S, total / active parameters, the
    bf16 weight bytes, KV bytes per token and for T tokens, params (costs.param_table), flops (phase -> rows)
    and flops_total, the weights at each precision, fit (one row per GPU), and fits_gpu (bf16 on `gpu`)."""
    T = B * S
    rl = {ph: costs.roofline(c, B, S, ph, gpu=gpu) for ph in PHASES}
    ridge = rl["prefill"]["ridge"]
    fl = {ph: costs.flops(c, B, S, ph) for ph in PHASES}
    fl_total = {ph: sum(r["flops"] for r in rows) for ph, rows in fl.items()}
    total = costs.total_params(c)
    params = [dict(r, share=r["params"] / total) for r in costs.param_table(c)]
    flops = {ph: [dict(r, share=r["flops"] / fl_total[ph]) for r in rows] for ph, rows in fl.items()}
    return dict(roofline=rl, ridge=ridge, above_ridge=rl["prefill"]["intensity"] >= ridge,
                crossover=costs.prefill_crossover(c, B, gpu) if rl["prefill"]["bound"] == "memory" else None,
                T=T, total=total, active=costs.active_params(c), kv_tok=costs.kv_cache_bytes(c, 1),
                kv_all=costs.kv_cache_bytes(c, T), params=params, flops=flops, flops_total=fl_total,
                rule_prefill=2 * costs.active_params(c) * T, rule_decode=2 * costs.active_params(c) * B,
                weights={lab: costs.weight_bytes(c, bits) for lab, bits in PRECISIONS},
                fit=fit_rows(c, B, S), fits_gpu=costs.fits(c, B, S, costs.GPUS[gpu]["mem_gb"])["fits"])


def fit_rows(c: ModelConfig, B: int, S: int) -> list[dict]:
    """Per GPU (smallest first): its memory (GB), and per precision whether weights + the KV cache of B·S tokens fit
    and their total bytes (costs.fits), and how many tokens of bf16 KV cache fit beside bf16 weights."""
    rows = []
    for name in GPU_ORDER:
        gb = costs.GPUS[name]["mem_gb"]
        rows.append(dict(gpu=name, gb=gb, cells={lab: costs.fits(c, B, S, gb, bits=bits) for lab, bits in PRECISIONS},
                         max_tokens=costs.max_tokens_in_cache(c, gb)))
    return rows


def reference_rows(refs: dict[str, ModelConfig]) -> list[dict]:
    """Each reference config's kind and parameters: name, moe, experts, top_k, total, active, share (active/total)."""
    rows = []
    for name, r in refs.items():
        total, active = costs.total_params(r), costs.active_params(r)
        rows.append(dict(name=name, moe=r.is_moe, experts=r.num_experts, top_k=r.num_experts_per_tok, total=total,
                         active=active, share=active / total))
    return rows


def param_check(c: ModelConfig, counted: int) -> dict:
    """The config's parameter count (costs.total_params) against `counted`, the loaded weights' numel summed:
    total, counted, same."""
    total = costs.total_params(c)
    return dict(total=total, counted=counted, same=total == counted)
