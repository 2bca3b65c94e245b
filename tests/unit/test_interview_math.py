"""The serving interview's sums (ops/arith/interview_math.py), each against a number worked by hand from the config
and the published figures (H200: 989 TFLOP/s dense bf16, 4.8 TB/s; NVLink 450 GB/s; PCIe 5.0 x16 64 GB/s)."""
from __future__ import annotations

import pytest

from ops.arith import costs, interview_math as im
from ops.errors import InputError

Q32 = costs.reference_config("Qwen2.5-32B-Instruct")


def test_decode_attention_intensity_by_hand():
    """GQA 40 / 8 heads: 4 x 5 x 128 FLOPs over 2 x 128 x 2 B = 5 FLOP/B. MLA: 128 heads x 2 x (576 + 512) FLOPs over
    576 x 2 B = 241.8. Ridge 989 / 4.8 = 206.0."""
    a = im.decode_attn(Q32)
    assert a["n_rep"] == 5 and a["gqa"] == 5.0
    assert abs(a["mla"] - 128 * 2 * 1088 / 1152) < 1e-9 and abs(a["mla"] - 241.78) < 0.01
    assert abs(a["ridge"] - 206.04) < 0.01


def test_tp_allreduce_by_hand():
    """Batch 1: a message is 5,120 x 2 B = 10,240 B; at TP 8 a ring sends 2 x 7 / 8 of it = 17,920 B per GPU; 2 x 64
    all-reduces x (17,920 / 450e9 + 10 us) = 1.2851 ms; weights 65.528e9 / 8 / 4.8e12 = 1.7065 ms."""
    rows = {r["tp"]: r for r in im.tp_allreduce(Q32, 1)}
    assert rows[1]["comm_s"] == 0 and rows[8]["message_bytes"] == 10_240 and rows[8]["sent_per_allreduce"] == 17_920
    assert abs(rows[8]["comm_s"] - 128 * (17_920 / 450e9 + 10e-6)) < 1e-12 and abs(rows[8]["comm_s"] - 1.2851e-3) < 1e-6
    assert abs(rows[8]["weights_s"] - 1.7065e-3) < 1e-6
    assert rows[8]["step_s"] < rows[1]["step_s"] and rows[8]["gpu_s"] > rows[1]["gpu_s"]   # faster, but dearer
    small = {r["tp"]: r for r in im.tp_allreduce(costs.reference_config("Qwen2.5-0.5B-Instruct"), 1)}
    assert small[2]["step_s"] > small[1]["step_s"]                     # a 0.5B model: TP makes decode slower


def test_kv_tiers_by_hand():
    """4,096 tokens x 262,144 B = 1,073,741,824 B: 0.224 ms from HBM, 16.78 ms over PCIe, 153.4 ms from a 7 GB/s SSD;
    the recompute (a causal prefill, ~2.7e14 FLOPs) 0.28 s at peak; 8 replicas: 1 / 8 hit under random routing."""
    r = im.kv_tiers(Q32, 4096)
    assert r["bytes"] == 1_073_741_824
    t = list(r["tiers"].values())
    assert abs(t[0] - 1_073_741_824 / 4.8e12) < 1e-12 and abs(t[1] - 0.016777) < 1e-6 and abs(t[2] - 0.15339) < 1e-5
    assert 0.26 < r["recompute_s"] < 0.30 and r["hit_random"] == 0.125 and r["hit_prefix_aware"] == 1.0


def test_wide_ep_by_hand():
    """Qwen3-30B-A3B: 48 MoE layers x 256 tokens x 8 experts x 2,048 x (1 + 2) B x 7 / 8 = 528,482,304 B at EP 8."""
    rows = {r["ep"]: r for r in im.wide_ep(costs.reference_config("Qwen3-30B-A3B"), 256)}
    assert rows[8]["bytes_per_step"] == 48 * 256 * 8 * 2048 * 3 * 7 / 8 == 528_482_304
    assert all(r["imbalance"] >= 1 for r in rows.values()) and rows[64]["imbalance"] > rows[8]["imbalance"]
    with pytest.raises(InputError):
        im.wide_ep(Q32, 8)


def test_capacity_follows_littles_law():
    """10 requests/s of 2,000 + 300 tokens, TTFT 1 s, TPOT 50 ms: prefill ~2 x 32.8e9 x 2,000 = 1.3e14 FLOPs, 0.135 s;
    the KV of 125 such requests fits next to the weights (memory binds first), a step of 28.8 ms. N = 10 x (0.135 +
    300 x 0.0288) = 87.8 in the system; GPUs = 87.8 / 125 + 10 x 0.135 = 2.05 -> 3."""
    r = im.capacity(Q32, 10, 2000, 300, 1.0, 0.05)
    assert r["feasible"] and abs(r["t_prefill_s"] - 0.1347) < 1e-3 and r["batch"] == r["kv_fit"] == 125
    assert abs(r["in_system"] - 10 * (r["t_prefill_s"] + 300 * r["step_s"])) < 1e-9 and abs(r["in_system"] - 87.8) < 0.1
    assert abs(r["gpus_exact"] - (r["in_system"] / 125 + 10 * r["t_prefill_s"])) < 1e-9 and r["gpus"] == 3
    assert im.capacity(Q32, 20, 2000, 300, 1.0, 0.05)["gpus"] == 5        # twice the traffic, 4.1 -> 5
    assert not im.capacity(Q32, 10, 2000, 300, 0.05, 0.05)["feasible"]     # TTFT under the prefill time
    assert not im.capacity(Q32, 10, 2000, 300, 1.0, 0.005)["feasible"]     # TPOT under one step's weight reads
    with pytest.raises(InputError):
        im.capacity(Q32, 0, 2000, 300, 1.0, 0.05)


def test_configs_the_sums_never_saw_by_hand():
    """The same sums on other configs (issue 50: "configs you never saw"), each worked by hand from the config files.
    Qwen2.5-72B (80 layers, 64 / 8 heads of 128, H 8,192; 72,706,203,648 parameters): GQA 4 x 8 x 128 / (2 x 128 x 2)
    = 8 FLOP/B; TP 4 at batch 1: a message of 8,192 x 2 = 16,384 B, the ring sends 2 x 3 / 4 of it = 24,576 B, 2 x 80
    all-reduces x (24,576 / 450e9 + 10 us) = 1.6087 ms; 2,048 cached tokens x 327,680 B = 671,088,640 B, 10.486 ms
    over PCIe. Qwen2-57B-A14B (28 layers, top 8 of 64, H 3,584): 28 x 128 x 8 x 3,584 x 3 x 7 / 8 = 269,746,176 B a
    step at EP 8. Qwen2.5-7B (7,615,616,512 parameters, 152,064 x 3,584 embedding, 57,344 KV bytes a token) at 30
    requests/s of 1,000 + 200 tokens: prefill 2 x (P - V H) x 1,000 + 4 x 28 x 3,584 x 1,000^2 FLOPs at 989 TFLOP/s;
    (141e9 - 2 P) // (57,344 x 1,200) = 1,827 requests' KV fit."""
    c72, c7 = costs.reference_config("Qwen2.5-72B-Instruct"), costs.reference_config("Qwen2.5-7B-Instruct")
    assert costs.total_params(c72) == 72_706_203_648 and im.decode_attn(c72)["gqa"] == 8.0
    tp = {r["tp"]: r for r in im.tp_allreduce(c72, 1, (1, 4))}
    assert tp[4]["message_bytes"] == 16_384 and tp[4]["sent_per_allreduce"] == 24_576
    assert abs(tp[4]["comm_s"] - 160 * (24_576 / 450e9 + 10e-6)) < 1e-12 and abs(tp[4]["comm_s"] - 1.6087e-3) < 1e-6
    assert abs(tp[4]["weights_s"] - 2 * 72_706_203_648 / 4 / 4.8e12) < 1e-12
    t = im.kv_tiers(c72, 2048)
    assert t["bytes"] == 2048 * 327_680 == 671_088_640 and abs(t["tiers"]["host DRAM over PCIe 5.0 x16"] - 0.010486) < 1e-6
    ep = {r["ep"]: r for r in im.wide_ep(costs.reference_config("Qwen2-57B-A14B"), 128)}
    assert ep[8]["bytes_per_step"] == 28 * 128 * 8 * 3584 * 3 * 7 / 8 == 269_746_176
    P, VH = 7_615_616_512, 152_064 * 3_584
    assert costs.total_params(c7) == P
    r = im.capacity(c7, 30, 1000, 200, 0.5, 0.02)
    pre = (2 * (P - VH) * 1000 + 4 * 28 * 3584 * 1000 ** 2) / 989e12
    assert r["feasible"] and abs(r["t_prefill_s"] - pre) < 0.005 * pre      # norms and biases left out by hand
    assert r["kv_fit"] == (141_000_000_000 - 2 * P) // (57_344 * 1_200) == 1_827 and 0 < r["batch"] <= 1_827
    assert r["step_s"] <= 0.02 and abs(r["in_system"] - 30 * (r["t_prefill_s"] + 200 * r["step_s"])) < 1e-9
    assert abs(r["gpus_exact"] - (r["in_system"] / r["batch"] + 30 * r["t_prefill_s"])) < 1e-9 and r["gpus"] == 1
