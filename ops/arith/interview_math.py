"""The serving interview's sums, computed from a config and published hardware figures (no model runs):

capacity      traffic and SLOs in, GPUs out. Little's law: requests in the system N = lambda * W, W = TTFT + out * TPOT.
              A GPU's decode batch B is the largest whose step (roofline: max(bytes / BW, FLOPs / peak)) meets the
              TPOT target and whose KV fits; prefill costs lambda * t_prefill GPU-seconds per second.
              Goodput (DistServe, Zhong et al. 2024, arXiv:2401.09670): the request rate meeting both SLOs.
tp_allreduce  Megatron TP (Shoeybi et al. 2019): 2 all-reduces per layer of the B x H activations; a ring all-reduce
              sends 2 (n - 1) / n of the bytes per GPU (Patarasuk and Yuan 2009), plus a fixed latency per all-reduce.
kv_tiers      a cached prefix loaded from HBM, host DRAM over PCIe or an NVMe SSD, against recomputing it; with R
              replicas a prefix cached on one is hit 1 / R of the time under random routing, always under
              prefix-aware routing (SGLang's cache-aware router, llm-d, Dynamo route by prefix).
wide_ep       experts spread over e GPUs: all-to-all bytes per decode step (dispatch in FP8 as DeepSeek-V3's DeepEP,
              combine in bf16), and the busiest GPU's load under random routing (seeded).
decode_attn   decode attention's arithmetic intensity (FLOPs per KV byte) for GQA and MLA against a GPU's ridge
              point; FlashAttention-3 (Shah et al. 2024, arXiv:2407.08608), FlashInfer (Ye et al. 2025,
              arXiv:2501.01005) and FlashMLA (deepseek-ai/FlashMLA) as their papers report them.
"""
from __future__ import annotations

import math

import torch

from ..engine.config import ModelConfig
from ..errors import InputError
from . import costs

LINKS_GB_S = {"NVLink 4 (H100/H200)": 450.0, "PCIe 5.0 x16": 64.0}    # one direction (NVIDIA, PCI-SIG data sheets)
ALLREDUCE_LATENCY_S = 10e-6    # assumed fixed cost of one small all-reduce on NVLink (NCCL: ~10 us): not measured
TIERS = {"GPU HBM3e": 4800.0, "host DRAM over PCIe 5.0 x16": 64.0, "NVMe SSD (PCIe 4.0 x4)": 7.0}   # GB/s


def _step_s(c: ModelConfig, B: int, context: int, gpu: str, bits: int = 16) -> float:
    g = costs.GPUS[gpu]
    fl = costs.total_flops(c, B, 1, "decode", context)
    by = costs.step_bytes(c, B, 1, "decode", context, bits=bits)["total"]
    return max(fl / (g["tflops_bf16"] * 1e12), by / (g["tb_per_s"] * 1e12))


def capacity(c: ModelConfig, qps: float, prompt: int, output: int, ttft_s: float, tpot_s: float,
             gpu: str = "H200 141GB", bits: int = 16) -> dict:
    """GPUs for `qps` requests a second of `prompt` + `output` tokens under TTFT and TPOT targets, one model copy per
    GPU. Decode at the mean context prompt + output / 2."""
    if min(qps, prompt, output, ttft_s, tpot_s) <= 0:
        raise InputError("traffic, lengths and targets must all be positive")
    g = costs.GPUS[gpu]
    t_pre = costs.total_flops(c, 1, prompt, "prefill") / (g["tflops_bf16"] * 1e12)
    ctx = prompt + output // 2
    fit = costs.max_tokens_in_cache(c, g["mem_gb"], bits) // (prompt + output)
    B = 0
    while B < fit and _step_s(c, B + 1, ctx, gpu, bits) <= tpot_s:
        B += 1
    if B == 0 or t_pre > ttft_s:
        return dict(feasible=False, t_prefill_s=t_pre, batch=B, step_s=_step_s(c, 1, ctx, gpu, bits), kv_fit=fit)
    step = _step_s(c, B, ctx, gpu, bits)
    in_system = qps * (t_pre + output * step)                         # Little's law
    gpus = in_system / B + qps * t_pre                                 # decode slots + prefill GPU-seconds / s
    return dict(feasible=True, t_prefill_s=t_pre, batch=B, step_s=step, kv_fit=fit, in_system=in_system,
                gpus=math.ceil(gpus), gpus_exact=gpus, goodput_per_gpu=qps / gpus)


def tp_allreduce(c: ModelConfig, batch: int, degrees=(1, 2, 4, 8), gpu: str = "H200 141GB",
                 link: str = "NVLink 4 (H100/H200)", act_bytes: int = 2) -> list[dict]:
    """A decode step at TP degree n: weights read per GPU (1 / n each) against 2 ring all-reduces per layer of
    batch x H activations, each sending 2 (n - 1) / n of them per GPU, plus a fixed ALLREDUCE_LATENCY_S; and the
    GPU-time per step (n x step), which TP raises whenever the all-reduces cost more than the reads they split."""
    g, bw = costs.GPUS[gpu], LINKS_GB_S[link] * 1e9
    w = costs.weight_bytes(c)
    msg = batch * c.hidden_size * act_bytes
    rows = []
    for n in degrees:
        read = w / n / (g["tb_per_s"] * 1e12)
        per = 2 * (n - 1) / n * msg
        comm = 2 * c.num_hidden_layers * (per / bw + ALLREDUCE_LATENCY_S) if n > 1 else 0.0
        rows.append(dict(tp=n, message_bytes=msg, sent_per_allreduce=per, weights_s=read, comm_s=comm,
                         step_s=read + comm, gpu_s=n * (read + comm)))
    return rows


def kv_tiers(c: ModelConfig, prefix: int, gpu: str = "H200 141GB", replicas: int = 8, kv_dtype_bytes: int = 2) -> dict:
    """Loading a cached prefix of `prefix` tokens from each tier vs recomputing it, and the hit rate of a prefix cached
    on one of `replicas` replicas: random routing 1 / R, prefix-aware routing 1."""
    by = costs.kv_cache_bytes(c, prefix, kv_dtype_bytes)
    g = costs.GPUS[gpu]
    recompute = sum(r["flops"] for r in costs.flops(c, 1, prefix, "prefill", causal_half=True)) / (g["tflops_bf16"]
                                                                                                  * 1e12)
    return dict(bytes=by, recompute_s=recompute, tiers={k: by / (v * 1e9) for k, v in TIERS.items()},
                hit_random=1 / replicas, hit_prefix_aware=1.0, replicas=replicas)


def wide_ep(c: ModelConfig, batch: int, degrees=(8, 32, 64), seed: int = 0, dispatch_bytes: int = 1,
            combine_bytes: int = 2) -> list[dict]:
    """Per decode step of `batch` tokens across e GPUs: all-to-all bytes leaving each GPU's tokens (each token's hidden
    state to its k experts in FP8, back in bf16; (e - 1) / e of the copies go off-GPU when experts are spread
    evenly), and max / mean tokens per GPU when the router picks k distinct experts uniformly (seeded)."""
    if not c.is_moe:
        raise InputError(f"{c.name} has no experts")
    k, E, H = c.num_experts_per_tok, c.num_experts, c.hidden_size
    moe = sum(c.is_moe_layer(i) for i in range(c.num_hidden_layers))
    g = torch.Generator().manual_seed(seed)
    picks = torch.rand(batch, E, generator=g).argsort(-1)[:, :k]          # k distinct experts per token
    rows = []
    for e in degrees:
        if E % e:
            continue
        load = torch.bincount((picks // (E // e)).flatten(), minlength=e).float()
        rows.append(dict(ep=e, bytes_per_step=moe * batch * k * H * (dispatch_bytes + combine_bytes) * (e - 1) / e,
                         imbalance=float(load.max() / load.mean())))
    return rows


def decode_attn(c: ModelConfig, gpu: str = "H200 141GB", kv_dtype_bytes: int = 2, mla_latent: int = 576,
                mla_v: int = 512, mla_heads: int = 128) -> dict:
    """FLOPs per KV byte of one decode query: GQA reads K and V (2 hd numbers) per KV head and does 4 hd FLOPs for each
    of its n_rep query heads; MLA (DeepSeek-V3) reads one 576-number latent shared by 128 heads, each doing
    2 x 576 (scores) + 2 x 512 (values) FLOPs. The GPU's ridge point is peak FLOPs / bandwidth."""
    g = costs.GPUS[gpu]
    n_rep = c.num_attention_heads // c.num_key_value_heads
    gqa = 4 * n_rep * c.head_dim / (2 * c.head_dim * kv_dtype_bytes)
    mla = mla_heads * 2 * (mla_latent + mla_v) / (mla_latent * kv_dtype_bytes)
    return dict(n_rep=n_rep, gqa=gqa, mla=mla, ridge=g["tflops_bf16"] / g["tb_per_s"])
