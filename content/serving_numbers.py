"""The serving chapter's numbers: the examples it works, the `sv_` placeholders its texts use (texts.numbers()
merges them in) and the formulas practice questions may name. The numbers come from ops/arith/serving_math.py and
its neighbours; nothing is computed here that ops/ does not already compute. Never imports streamlit.

Placeholders are about Qwen2.5-32B-Instruct (the reference config) unless their name says otherwise, so they hold
whatever model is loaded.
"""
from __future__ import annotations

from functools import lru_cache

import torch

from ops.arith import costs, formats, serving_math as ops_sv
from ops.engine.config import ModelConfig
from ops.lab import online_softmax, serving_phases

from . import serving_topics

DRAFT_LABEL = "Qwen2.5-0.5B-Instruct"        # the draft model of the speculative-decoding example
SPEC_EXAMPLE = dict(a=0.8, k=4)               # the worked example's acceptance rate and draft length
SIM = dict(n=64, slots=8, lo=8, hi=512)        # the continuous-batching example: answers, slots, lengths
PREFIX = dict(tokens=2048, requests=64)       # the prefix-caching example: a long shared system prompt
SWA_WINDOW = 4096                             # the sliding-window example (Mistral-7B's window)
REQUEST_TOKENS = 4096                         # the request size of the "how many fit" examples
TRAFFIC_LENGTHS = (4096, 32768)               # the FlashAttention examples' S
PHASE_LENGTHS, DECODE_CONTEXT = (8, 1024), 4096   # the H200 prefill examples' S, and the decode step's context
INT4_GROUP = 64                               # the group-scale example: int4 weights, one fp16 scale per group
EXAMPLE = dict(scores=(2.0, 1.0, 3.0, 0.5), block=2)   # the online softmax done by hand in the plain text


def _fmt(n) -> str:
    return f"{int(n):,}"


def _b(n) -> str:
    return costs.human(n, "B")


def _gb(n) -> str:
    return costs.gb(n)


def _flops(n) -> str:
    return f"{n / 1e15:,.2f} P" if n >= 1e15 else costs.human(n)


def _pct(x) -> str:
    return f"{100 * x:.0f}"


def kv_bound_decode(ref: ModelConfig, requests: int, context: int, gpu: str = "H200 141GB") -> dict:
    """One decode step of `requests` sequences at `context` cached tokens each: the weights are read once for the
    batch, every sequence's KV cache is read for itself (costs.step_bytes), and the memory-bound time."""
    b = costs.step_bytes(ref, requests, 1, "decode", context=context)
    r = costs.roofline(ref, requests, 1, "decode", gpu=gpu, context=context)
    return dict(weights=b["weights"], kv_read=b["kv_read"], total=b["total"], ms=r["t_memory_s"] * 1e3,
                equal_tokens=b["weights"] / costs.kv_bytes_per_token(ref))


@lru_cache(maxsize=8)
def numbers(ref: ModelConfig) -> dict:
    """Every sv_ placeholder, computed from the reference config (Qwen2.5-32B-Instruct in the app)."""
    t4, t32 = (online_softmax.score_traffic(ref, S) for S in TRAFFIC_LENGTHS)
    sp4 = {half: sum(r["flops"] for r in costs.flops(ref, 1, TRAFFIC_LENGTHS[0], causal_half=half)
                     if r["operator"] in ("attention scores QK^T", "attention context PV")) for half in (False, True)}
    fit = {g: ops_sv.concurrent_requests(ref, g, REQUEST_TOKENS) for g in ops_sv.SERVING_GPUS}
    f80, f141 = (fit[g] for g in ops_sv.SERVING_GPUS)
    paged = ops_sv.paged_blocks(ref, [4096])
    reserve = costs.kv_cache_bytes(ref, ref.max_position_embeddings)
    free141 = f141["free"]
    sim = ops_sv.batching(ops_sv.output_lengths(SIM["n"], 0, SIM["lo"], SIM["hi"]), SIM["slots"])
    pre = ops_sv.prefix_caching(ref, PREFIX["tokens"], PREFIX["requests"])
    kvq = {r["kv_dtype"]: r for r in formats.kv_quant_rows(ref, REQUEST_TOKENS)}
    fp = {r["dtype"]: r for r in formats.float_formats()}
    draft = costs.reference_config(DRAFT_LABEL)
    c_ratio = ops_sv.draft_cost_ratio(draft, ref)
    a, k = SPEC_EXAMPLE["a"], SPEC_EXAMPLE["k"]
    lc = ops_sv.long_context(ref)
    swa = ops_sv.sliding_window(ref, (131072,), SWA_WINDOW)[0]
    var = {r["variant"]: r for r in ops_sv.attention_variants(ref)}
    tp = {r["tp"]: r for r in ops_sv.tensor_parallel(ref)}
    nkv = ref.num_key_value_heads
    h200 = serving_phases.h200_phases(ref, PHASE_LENGTHS, DECODE_CONTEXT)
    ex = online_softmax.small_example(list(EXAMPLE["scores"]), EXAMPLE["block"])
    yarn = ops_sv.QWEN25_YARN
    quant = {q: formats.ggml_sizes(q) for q in ("Q8_0", "Q5_0", "Q4_0", "Q4_1", "Q4_K", "Q6_K")}
    q4k_sub, q4k_over = formats.GGUF_BLOCK_FIELDS["Q4_K"]["sub"], quant["Q4_K"][1] - quant["Q4_K"][0] // 2
    kvb = kv_bound_decode(ref, f141["requests"], REQUEST_TOKENS)
    nh = ref.num_attention_heads
    layer_scores = {b: online_softmax.score_traffic(ref, TRAFFIC_LENGTHS[1], b)["matrix"] * nh for b in (2, 4)}
    d = dict(
        # (a) online softmax by hand, and FlashAttention
        ex_scores=", ".join(f"{x:g}" for x in EXAMPLE["scores"]), ex_block=_fmt(EXAMPLE["block"]),
        ex_b1=ex[0]["keys"], ex_b2=ex[1]["keys"], ex_m1=f"{ex[0]['m']:g}", ex_l1=f"{ex[0]['l']:.3f}",
        ex_m2=f"{ex[1]['m']:g}", ex_alpha=f"{ex[1]['alpha']:.3f}", ex_l2=f"{ex[1]['l']:.3f}",
        ex_probs=", ".join(f"{p:.3f}" for p in ex[-1]["probs"]),
        S4k=_fmt(TRAFFIC_LENGTHS[0]), S32k=_fmt(TRAFFIC_LENGTHS[1]),
        bw_h200=f"{costs.GPUS['H200 141GB']['tb_per_s']:g}",
        fa_matrix_4k=_b(t4["matrix"]), fa_eager_4k=_b(t4["eager_matrix"]), fa_qkvo_4k=_b(t4["qkvo"]),
        fa_eager_ms_4k=f"{t4['eager_ms']:.0f}", fa_flash_ms_4k=f"{t4['flash_ms']:.1f}",
        fa_sv_full_4k=_flops(sp4[False]), fa_sv_causal_4k=_flops(sp4[True]),   # scores + PV, all layers
        fa_matrix_32k=_b(t32["matrix"]), fa_eager_32k=_b(t32["eager_matrix"]), fa_qkvo_32k=_b(t32["qkvo"]),
        fa_eager_ms_32k=f"{t32['eager_ms']:,.0f}", fa_flash_ms_32k=f"{t32['flash_ms']:.1f}",
        # (b) KV cache in a server
        req_tokens=_fmt(REQUEST_TOKENS), gpu_80=ops_sv.SERVING_GPUS[0], gpu_141=ops_sv.SERVING_GPUS[1],
        req_80=_fmt(f80["requests"]), req_141=_fmt(f141["requests"]), free_80=_gb(f80["free"]),
        free_141=_gb(f141["free"]), req_bytes=_b(f141["per_request"]),
        tokens_141=_fmt(int(free141 // costs.kv_bytes_per_token(ref))),   # the free memory as tokens of KV
        block=_fmt(paged["block"]), block_bytes=_b(paged["block_bytes"]),
        block_bytes_layer=_b(paged["block_bytes_layer"]),
        block_waste=_b(paged["max_waste"]), reserve_tokens=_fmt(ref.max_position_embeddings), reserve_bytes=_b(reserve),
        req_reserved_141=_fmt(int(free141 // reserve)),
        sim_n=_fmt(SIM["n"]), sim_slots=_fmt(SIM["slots"]), sim_lo=_fmt(SIM["lo"]), sim_hi=_fmt(SIM["hi"]),
        static_steps=_fmt(sim["static_steps"]), cont_steps=_fmt(sim["continuous_steps"]),
        static_util=_pct(sim["static_util"]), cont_util=_pct(sim["continuous_util"]),
        prefix_tokens=_fmt(PREFIX["tokens"]), prefix_requests=_fmt(PREFIX["requests"]), prefix_kv=_b(pre["kv_saved"]),
        prefix_flops=_flops(pre["flops_saved"]),
        # one layer's S x S scores at the long S (eager attention holds them whole), against the H200's memory
        scores_layer_32k=_b(layer_scores[2]), scores_layer_32k_fp32=_b(layer_scores[4]),
        scores_weights_32k=_gb(layer_scores[2] + costs.weight_bytes(ref, 16)),
        mem_141=f"{costs.GPUS['H200 141GB']['mem_gb']:g}",
        # decode with a full H200: every request's KV is read each step, the weights once for all
        batch_kv=_gb(kvb["kv_read"]), batch_weights=_gb(kvb["weights"]), batch_step=_gb(kvb["total"]),
        batch_ms=f"{kvb['ms']:.1f}", batch_ms_per_token=f"{kvb['ms'] / f141['requests']:.2f}",
        kv_equal_tokens=_fmt(round(kvb["equal_tokens"], -3)),
        # (c) quantisation
        **{f"{q.lower()}_block": _fmt(s[0]) for q, s in quant.items()},
        **{f"{q.lower()}_bytes": _fmt(s[1]) for q, s in quant.items()},
        **{f"{q.lower()}_bpw": f"{8 * s[1] / s[0]:g}" for q, s in quant.items()},
        q4_k_nsub=_fmt(quant["Q4_K"][0] // q4k_sub), q4_k_sub=_fmt(q4k_sub), q4_k_qbytes=_fmt(quant["Q4_K"][0] // 2),
        q4_k_over=_fmt(q4k_over), q4_k_over_bpw=f"{8 * q4k_over / quant['Q4_K'][0]:g}",
        q4_k_per_fp16=_fmt(16 * quant["Q4_K"][0] // (8 * q4k_over)),
        scale_bits=_fmt(torch.finfo(torch.float16).bits), q5_0_offset=_fmt(2 ** 4), int4_group=_fmt(INT4_GROUP),
        int4_g64_bpw=f"{4 + 16 / INT4_GROUP:g}", int4_g64_gb=_gb(formats.group_weight_bytes(ref, 4, INT4_GROUP)),
        kv_fp8_tok=_b(kvq["int8 / fp8"]["bytes_per_token"]), kv_fp8_req_141=_fmt(kvq["int8 / fp8"]["requests"]),
        e4m3_max=f"{fp['float8_e4m3fn']['max']:g}", e5m2_max=f"{fp['float8_e5m2']['max']:g}",
        e4m3_mant=_fmt(fp["float8_e4m3fn"]["mantissa_bits"]), e5m2_mant=_fmt(fp["float8_e5m2"]["mantissa_bits"]),
        # (d) speculative decoding
        draft=DRAFT_LABEL, spec_c=f"{c_ratio:.4f}", spec_a=f"{a:g}", spec_k=_fmt(k),
        spec_e=f"{ops_sv.spec_expected_tokens(a, k):.2f}", spec_speedup=f"{ops_sv.spec_speedup(a, k, c_ratio):.2f}",
        spec_k1=_fmt(k + 1),
        # (e) long context
        beta_fast=f"{yarn['beta_fast']:g}", beta_slow=f"{yarn['beta_slow']:g}", yarn_factor=f"{lc['factor']:g}",
        yarn_orig=_fmt(lc["original"]), yarn_ext=_fmt(lc["extended"]),
        yarn_attn=f"{lc['attention_factor']:.3f}", rope_pairs=_fmt(lc["pairs"]), rope_kept=_fmt(lc["kept"]),
        rope_stretched=_fmt(lc["stretched"]), rope_ramp=_fmt(lc["pairs"] - lc["kept"] - lc["stretched"]),
        wl_short=f"{lc['shortest']:.1f}", wl_long=_fmt(lc["longest"]), full_turn_orig=_fmt(lc["full_turn_orig"]),
        swa_window=_fmt(SWA_WINDOW), swa_full_128k=_b(swa["full"]), swa_windowed=_b(swa["windowed"]),
        # (f) attention variants
        **{f"kv_{v.lower()}": _b(r["bytes_per_token"]) for v, r in var.items()},
        **{f"kv_{v.lower()}_exact": _fmt(r["bytes_per_token"]) for v, r in var.items()},
        mla_rank=_fmt(ops_sv.MLA_DEEPSEEK_V3["kv_lora_rank"]),
        mla_rope=_fmt(ops_sv.MLA_DEEPSEEK_V3["qk_rope_head_dim"]),
        # (g) tensor parallelism
        tp_max=_fmt(nkv), tp1_weights=_gb(tp[1]["weights_per_gpu"]), tp_nkv_weights=_gb(tp[nkv]["weights_per_gpu"]),
        tp1_kv=_b(tp[1]["kv_per_token_per_gpu"]), tp_nkv_kv=_b(tp[nkv]["kv_per_token_per_gpu"]),
        # (h) prefill vs decode on the H200
        ridge_h200=f"{h200[0]['ridge']:.0f}", crossover=_fmt(costs.prefill_crossover(ref, 1)),
        prefill_S=_fmt(PHASE_LENGTHS[0]), prefill_S_big=_fmt(PHASE_LENGTHS[1]), decode_ctx=_fmt(DECODE_CONTEXT),
        h200_prefill8_ai=f"{h200[0]['intensity']:.1f}", h200_prefill1k_ai=f"{h200[1]['intensity']:.0f}",
        h200_decode_ai=f"{h200[2]['intensity']:.2f}", h200_prefill8_ms=f"{h200[0]['ms_per_token']:.2f}",
        h200_prefill1k_ms=f"{h200[1]['ms_per_token']:.3f}", h200_decode_ms=f"{h200[2]['ms_per_token']:.2f}",
    )
    return {**{f"sv_{k}": str(v) for k, v in d.items()}, **serving_topics.numbers(ref)}


# ---- practice: formulas a question's `compute` block may name (registered in content.practice.FORMULAS) ----
def _variant_bytes(c, variant: str, dtype_bytes: int = 2):
    return next(r["bytes_per_token"] for r in ops_sv.attention_variants(c, dtype_bytes) if r["variant"] == variant)


def _tp_row(c, tp: int) -> dict:
    return ops_sv.tensor_parallel(c, (tp,))[0]


FORMULAS = {
    "requests_that_fit": lambda c, gpu, tokens=4096, kv_dtype_bytes=2:
        ops_sv.concurrent_requests(c, gpu, tokens, 16, kv_dtype_bytes)["requests"],
    "score_matrix_bytes": lambda c, S, dtype_bytes=2: online_softmax.score_traffic(c, S, dtype_bytes)["matrix"],
    "score_matrix_traffic": lambda c, S, dtype_bytes=2: online_softmax.score_traffic(c, S, dtype_bytes)["eager_matrix"],
    "paged_block_bytes": lambda c, block=16: ops_sv.paged_blocks(c, [block], block)["block_bytes"],
    "prefix_kv_saved": lambda c, prefix, requests: ops_sv.prefix_caching(c, prefix, requests)["kv_saved"],
    "gguf_bits_per_weight": lambda c, qtype: 8 * formats.ggml_sizes(qtype)[1] / formats.ggml_sizes(qtype)[0],
    "group_weight_bytes": lambda c, bits, group, scale_bits=16: formats.group_weight_bytes(c, bits, group, scale_bits),
    "low_bit_bytes": lambda c, fmt: next(r["bytes"] for r in formats.low_bit_rows(c) if r["format"] == fmt),
    "kv_bytes_per_token": lambda c, dtype_bytes=2: costs.kv_bytes_per_token(c, dtype_bytes),
    "spec_expected_tokens": lambda c, a, k: ops_sv.spec_expected_tokens(a, k),
    "spec_speedup": lambda c, a, k, draft=DRAFT_LABEL:
        ops_sv.spec_speedup(a, k, ops_sv.draft_cost_ratio(costs.reference_config(draft), c)),
    "rope_wavelength": lambda c, pair: round(float(ops_sv.rope_wavelengths(c)[pair])),      # whole tokens
    "yarn_context": lambda c: ops_sv.long_context(c)["extended"],
    "sliding_window_kv": lambda c, context, window: ops_sv.sliding_window(c, (context,), window)[0]["windowed"],
    "kv_variant_bytes": _variant_bytes,
    "tp_weights_per_gpu": lambda c, tp: _tp_row(c, tp)["weights_per_gpu"],
    "tp_kv_per_token_per_gpu": lambda c, tp: _tp_row(c, tp)["kv_per_token_per_gpu"],
    "prefill_crossover": lambda c, B=1, gpu="H200 141GB": costs.prefill_crossover(c, B, gpu),
    "batching_steps": lambda c, slots, continuous=True: ops_sv.batching(
        ops_sv.output_lengths(SIM["n"], 0, SIM["lo"],
                              SIM["hi"]), slots)["continuous_steps" if continuous else "static_steps"],
}
