"""The inference interview, round two (assets/practice/round2.json): every figure its answers state, re-derived here
by hand from the verified configs and the stated assumptions, must appear in the rendered English and Chinese answer
(a typo or a changed config fails here). Each helper below is the arithmetic a candidate would write on a whiteboard."""
import math

import pytest

from content import practice, texts
from ops.arith import costs

C32 = costs.reference_config("Qwen2.5-32B-Instruct")
MOE = costs.reference_config("Qwen3-30B-A3B")
NUMS = texts.numbers(costs.reference_config("Qwen2.5-0.5B-Instruct"))
P32 = 32_763_876_352                            # every tensor of Qwen2.5-32B counted (published 32.5B rounds it)
KV32 = 2 * 64 * 8 * 128 * 2                     # K and V x layers x KV heads x head dim x bf16 bytes = 262,144
W32 = 2 * P32                                   # bf16 weight bytes
HBM, PEAK, PCIE = 4.8e12, 989e12, 64e9          # H200 HBM bytes/s, H200 dense bf16 FLOP/s, PCIe 5.0 x16 one way


def answer(qid: str, lang: str) -> str:
    r = next(r for r in practice.questions(NUMS, lang) if r["id"] == qid)
    return r["short"] + " " + r["long"]


def test_the_configs_behind_the_hand_counts():
    assert costs.total_params(C32) == P32 and costs.kv_bytes_per_token(C32) == KV32 == 262_144


def fmt(x, digits=1):
    return f"{x:,.{digits}f}"


def expected():
    """qid -> the strings its answers must hold, each computed by hand from the question's own assumptions."""
    kv_120 = 120 * 3_000 * KV32                                # Little's law in flight x average context
    step64 = W32 + 64 * 2_250 * KV32                           # capacity plan: one decode step's bytes at batch 64
    tp_msg = 64 * 5120 * 2                                     # one all-reduce of [B, H] bf16 activations
    tp_step = 64 * 2 * 2 * 7 / 8 * tp_msg                      # 64 layers x 2 all-reduces x ring's 2(n-1)/n, n = 8
    ep_dsv3 = 8 * 7168 * (1 + 2)                               # DeepSeek-V3: top-8, FP8 dispatch + bf16 combine
    idle = (1 - MOE.num_experts_per_tok / MOE.num_experts) ** 64
    lora = 2 * (5120 * 16 + 16 * 5120) + 2 * (5120 * 16 + 16 * 1024)
    attn32k = 4 * 16_384 * 5120 * 64                           # QK^T and PV over half a 32,768 context, per token
    step_b64 = W32 + 64 * 4_096 * KV32
    return {
        "iv2-littles-law": ["120"],
        "iv2-little-kv": [fmt(kv_120 / 1e9), fmt((kv_120 + W32) / 1e9), "75.5"],
        "iv2-capacity-plan": [fmt(64 * 2_250 * KV32 / 1e9), fmt(step64 / 1e9), fmt(step64 / HBM * 1e3),
                              f"{64 / (step64 / HBM):,.0f}",                            # tokens/s a replica
                              fmt(64 * 2_500 * KV32 / 1e9), fmt((64 * 2_500 * KV32 + W32) / 1e9),
                              f"{2 * P32 * 20_000 / 1e15:.2f}", f"{2 * P32 * 20_000 / PEAK:.2f}",
                              f"{2 * P32 * 20_000 / PEAK / 0.5:.2f}"],
        "iv2-p99": [f"{math.log(100):.1f}", "10"],
        "iv2-ttft-parts": [f"{2 * P32 * 2_000 / PEAK * 1e3:.0f}", f"{2 * P32 * 2_000 / PEAK / 0.5 * 1e3:.0f}"],
        "iv2-tpot-reading": ["20"],
        "iv2-tp-allreduce": [f"{tp_msg:,}", f"{2 * 7 / 8 * tp_msg:,.0f}", fmt(tp_step / 1e6),
                             f"{tp_step / 450e9 * 1e3:.2f}", f"{128 * 10e-6 * 1e3:.2f}", fmt(W32 / 8 / 1e9),
                             f"{W32 / 8 / HBM * 1e3:.2f}"],
        "iv2-launch-overhead": [f"{24 * 15 * 5e-6 * 1e3:.1f}", f"{2 * 494_032_768 / HBM * 1e3:.2f}"],
        "iv2-preempt-swap-recompute": [f"{4_000 * KV32:,}", fmt(4_000 * KV32 / PCIE * 1e3),
                                       f"{2 * P32 * 4_000 / 1e12:.0f}", f"{2 * P32 * 4_000 / PEAK * 1e3:.0f}"],
        "iv2-token-budget": [f"{2_048 - 64:,}"],
        "iv2-kv-tiers": [f"{32_768 * KV32:,}", f"{32_768 * KV32 / PCIE * 1e3:.0f}", f"{32_768 * KV32 / 7e9:.2f}",
                         f"{2 * P32 * 32_768 / 1e15:.2f}", f"{2 * P32 * 32_768 / PEAK:.1f}"],
        "iv2-prefix-routing": [f"{100 / 8:.1f}", f"{2 * P32 * 2_000 / 1e12:.0f}", f"{2 * P32 * 2_000 / PEAK:.2f}"],
        "iv2-prefix-hit-share": [f"{100 * 2_000 / 2_200:.0f}"],
        "iv2-ep-a2a": [f"{ep_dsv3:,}", f"{ep_dsv3 * 58 / 1e6:.2f}"],
        "iv2-ep-vs-tp-moe": [str(MOE.moe_intermediate_size // 8)],
        "iv2-moe-decode-bytes": [f"{100 * idle:.1f}", f"{100 * (1 - idle):.1f}",
                                 f"{2 * costs.active_params(MOE) / 1e9:.1f}"],
        "iv2-int4-group-bytes": ["4.5", "4.25", "4.125", fmt(P32 * 4.125 / 8 / 1e9)],
        "iv2-w4a16-decode-prefill": [fmt(P32 * 4.125 / 8 / 1e9), f"{P32 * 4.125 / 8 / HBM * 1e3:.2f}"],
        "iv2-fp8-granularity": ["0.125", "6.25"],
        "iv2-decode-attn-roofline": [f"{4 * 4096 * 128 * 40 * 64 / 1e9:.2f}", f"{4_096 * KV32:,}",
                                     f"{4_096 * KV32 / HBM * 1e3:.3f}"],
        "iv2-tree-why-branch": [f"{1 - 0.2 ** 2:.2f}", f"{0.2 ** 2:.2f}"],
        "iv2-spec-large-batch": [str(64 * (4 + 1))],
        "iv2-multi-lora": [f"{lora:,}", f"{lora * 64:,}", fmt(lora * 64 * 2 / 1e6), "163,840", "98,304"],
        "iv2-lora-flops": [fmt(2 * lora * 64 / 1e6)],
        "iv2-pp-serving": [f"{5120 * 2:,}"],
        "iv2-pp-vs-tp": [f"{5120 * 2:,}"],
        "iv2-sparse-attn": [f"{100 * 2_048 / 131_072:.1f}"],
        "iv2-gdn-state-vs-kv": [f"{128 * 128 * 2:,}", str(2 * 128 * 2), str(128 * 128 * 2 // (2 * 128 * 2)),
                                f"{32_768 * 512:,}", str(32_768 * 512 // (128 * 128 * 2))],
        "iv2-long-prefill-attn-share": [fmt(attn32k / 1e9), fmt(2 * P32 / 1e9),
                                        f"{100 * attn32k / (attn32k + 2 * P32):.0f}",
                                        f"{4 * 65_536 * 5120 * 64 / 1e9:.0f}"],
        "iv2-throughput-latency": [fmt(64 * 4_096 * KV32 / 1e9), fmt(step_b64 / 1e9), f"{step_b64 / HBM * 1e3:.0f}",
                                   f"{64 / (step_b64 / HBM):,.0f}", fmt(1 / (step_b64 / HBM)),
                                   f"{1 / (W32 / HBM):.0f}"],
        "iv2-ring-allreduce": ["1.75"],
        "iv2-padding-waste": [f"{3 * 1_700:,}", f"{100 * 2_000 / 5_100:.0f}", f"{100 - 100 * 2_000 / 5_100:.0f}"],
        "iv2-grammar-mask": [f"{152_064 // 8:,}"],
        "iv2-link-bandwidths": [f"{HBM / PCIE:.0f}"],
    }


CASES = [(qid, want) for qid, wants in expected().items() for want in wants]


@pytest.mark.parametrize("qid,want", CASES, ids=[f"{q}:{w}" for q, w in CASES])
@pytest.mark.parametrize("lang", texts.LANGS)
def test_round_two_figures_by_hand(qid, want, lang):
    assert want in answer(qid, lang), f"{qid} ({lang}) should state {want}"


def test_round_two_grows_the_bank_past_200_and_covers_each_new_topic_twice():
    ids = {q["id"] for q in practice.load_questions()}
    assert len(ids) >= 200
    topics = {   # the interview's new topics and the chapter topics that had no question (two each at least)
        "capacity / goodput": ["iv2-capacity-plan", "iv2-goodput", "iv2-littles-law"],
        "tensor-parallel all-reduce": ["iv2-tp-allreduce", "iv2-tp-when-hurts", "iv2-ring-allreduce"],
        "launch overhead, graphs, overlap": ["iv2-launch-overhead", "iv2-cuda-graphs", "iv2-overlap-scheduling"],
        "preemption, token budget": ["iv2-preempt-swap-recompute", "iv2-preempt-same-tokens", "iv2-token-budget"],
        "KV offload, prefix routing": ["iv2-kv-tiers", "iv2-prefix-routing"],
        "wide EP": ["iv2-ep-a2a", "iv2-ep-balance"],
        "weight quantization": ["iv2-rtn-awq-gptq", "iv2-fp8-granularity", "iv2-quant-accuracy"],
        "decode-attention kernels": ["iv2-decode-attn-roofline", "iv2-fa3-what"],
        "tree speculation": ["iv2-tree-spec", "iv2-tree-mask", "iv2-spec-large-batch"],
        "many LoRAs": ["iv2-multi-lora", "iv2-lora-merge"],
        "pipeline parallelism": ["iv2-pp-serving", "iv2-pp-vs-tp"],
        "context parallelism": ["iv2-cp", "iv2-cp-decode"],
        "sparse attention": ["iv2-sparse-attn", "iv2-sparse-risk"],
        "Gated DeltaNet": ["iv2-gated-deltanet", "iv2-gdn-state-vs-kv"],
    }
    for topic, qids in topics.items():
        assert len(qids) >= 2 and set(qids) <= ids, topic
