"""The interview's second round (ops/lab/interview_tree_verify.py, lora_batch.py, quant4.py, interview_fp8.py, step_time.py) on a tiny
random model and on hand-sized matrices. The real models run them in tests/parity/test_interview2_real.py."""
from __future__ import annotations

import pytest
import torch

from ops.errors import InputError
from ops.lab import (
    interview_fp8,
    interview_lora_batch as lb,
    interview_quant4 as q4,
    interview_step_time as stt,
    interview_tree_verify as tv,
)

PROMPTS = ["def f(x):\n    return x + 1\n\ndef g(x):\n    return x + 1\n\ndef h(x):\n",
           "the cat sat on the mat and the cat sat on", "in the hall he sat"]


# ---- tree verification ------------------------------------------------------------------------------------------
def test_tree_and_its_mask_by_hand():
    """Root 7; branches [1, 2, 3], [1, 4], [5]: the trie is 7 -> 1 -> {2 -> 3, 4}, 7 -> 5 (depths 0 1 2 3 2 1)."""
    t = tv.build_tree(7, [[1, 2, 3], [1, 4], [5]])
    assert t["tokens"] == [7, 1, 2, 3, 4, 5] and t["parent"] == [-1, 0, 1, 2, 1, 0]
    assert t["depth"] == [0, 1, 2, 3, 2, 1] and t["leaves"] == 3
    want = torch.tensor([[1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 0, 0],
                         [1, 1, 0, 0, 1, 0], [1, 0, 0, 0, 0, 1]], dtype=torch.bool)
    assert torch.equal(t["ancestors"], want)
    # every earlier occurrence of the suffix [1] gives a branch, latest first; a prefix of a kept one adds nothing
    assert tv.lookup_branches([1, 2, 3, 1, 4, 1, 2, 3, 1], branches=4, depth=2, max_ngram=1) == [[2, 3], [4, 1]]
    assert tv.lookup_branches([1, 2, 3]) == []


def test_every_tree_node_sees_only_its_path(tiny_scaled):
    """The reference: each node's logits from the tree pass equal the last logits of a plain causal pass over the
    prompt and the path down to that node. Tolerance 1e-4 on logits of size ~10: float32 sums over other shapes
    (measured up to ~6e-6)."""
    ids = tiny_scaled.encode_prompts(PROMPTS[1])[2][0]
    tree = tv.build_tree(ids[-1], [[5, 6, 7], [5, 8], [9, 10]])
    from ops.engine.decode import KVCache
    cache = KVCache(tiny_scaled.config, 1, len(ids) + 16, "cpu", torch.float32)
    n = len(ids) - 1
    tiny_scaled.forward(torch.tensor([ids[:-1]]), torch.arange(n)[None], torch.ones(1, n, dtype=torch.bool), cache=cache)
    logits = tv.tree_pass(tiny_scaled, cache, tree)
    for j in range(len(tree["tokens"])):
        path, i = [], j
        while i >= 0:
            path.insert(0, tree["tokens"][i])
            i = tree["parent"][i]
        full = ids[:-1] + path
        ref = tiny_scaled.forward(torch.tensor([full]), torch.arange(len(full))[None], torch.ones(1, len(full), dtype=torch.bool),
                           last_only=True)[0, -1].float()
        assert (logits[j] - ref).abs().max() < 1e-4, j


def test_tree_decoding_gives_plain_greedy_tokens(tiny_scaled):
    for p in PROMPTS:
        r = tv.tree_runs(tiny_scaled, p, 24)
        assert r["same"] and r["tree"] == r["plain"] and r["line"] == r["plain"], p
        accepted = sum(t["accepted"] for t in r["trees"])
        assert r["tree_passes"] == 24 - accepted                     # a pass yields its accepted nodes + 1 token
        assert r["tree_passes"] <= r["line_passes"]                   # its first branch is prompt lookup's draft
    with pytest.raises(InputError):
        tv.tree_decode(tiny_scaled, [1, 2], 0)


def test_keep_path_moves_the_accepted_keys(tiny_scaled):
    """After a tree pass the cache holds every node; keep_path leaves the accepted path's keys where a token-by-token
    decoding puts them (checked against such a decoding's cache)."""
    from ops.engine.decode import KVCache
    ids = tiny_scaled.encode_prompts(PROMPTS[2])[2][0]
    a, b = KVCache(tiny_scaled.config, 1, 64, "cpu", torch.float32), KVCache(tiny_scaled.config, 1, 64, "cpu", torch.float32)
    n = len(ids)
    for c in (a, b):
        tiny_scaled.forward(torch.tensor([ids]), torch.arange(n)[None], torch.ones(1, n, dtype=torch.bool), cache=c)
    tree = tv.build_tree(3, [[4, 5], [6]])                         # path 3 -> 6 kept
    tv.tree_pass(tiny_scaled, a, tree)
    tv.keep_path(a, n, [0, 3])
    tiny_scaled.forward(torch.tensor([[3, 6]]), torch.arange(n, n + 2)[None], torch.ones(1, n + 2, dtype=torch.bool), cache=b)
    assert a.length == b.length == n + 2
    for i in range(tiny_scaled.config.num_hidden_layers):
        assert (a.k[i][:, :, :n + 2] - b.k[i][:, :, :n + 2]).abs().max() < 1e-5
        assert (a.v[i][:, :, :n + 2] - b.v[i][:, :, :n + 2]).abs().max() < 1e-5


# ---- many LoRAs in one batch -------------------------------------------------------------------------------------
def test_lora_rows_equal_their_merged_models(tiny_scaled):
    """Tolerance 1e-4 on logits of size ~10: the low-rank product added after the base product instead of merged
    into W (measured up to ~3e-5)."""
    r = lb.lora_batch(tiny_scaled, [PROMPTS[0], PROMPTS[1], PROMPTS[2], PROMPTS[0]], [0, 1, -1, 1], new_tokens=10)
    assert all(x["same"] and x["logits_max_diff"] < 1e-4 for x in r["rows"]), r["rows"]
    assert r["rows"][0]["tokens"] != r["rows"][3]["tokens"]        # the same prompt, two adapters, two texts
    c = tiny_scaled.config
    per_layer = 8 * (c.hidden_size + c.num_key_value_heads * c.head_dim) + 8 * 2 * c.hidden_size \
        + 8 * (c.intermediate_size + c.hidden_size)
    assert r["adapter_params"] == c.num_hidden_layers * per_layer
    with pytest.raises(InputError):
        lb.batched_greedy(tiny_scaled, [[1, 2]], [5], lb.make_adapters(tiny_scaled, 2), 2)


# ---- 4-bit weights -----------------------------------------------------------------------------------------------
def test_rtn_by_hand():
    """[-1, 0.5, 2]: scale 3/15 = 0.2, zero round(1/0.2) = 5, 0.5/0.2 = 2.5 rounds to 2 (half to even) -> 0.4."""
    assert torch.allclose(q4.rtn(torch.tensor([[-1.0, 0.5, 2.0]]), 3), torch.tensor([[-1.0, 0.4, 2.0]]))
    assert torch.equal(q4.rtn(torch.tensor([[0.0, 1.0, 2.0, 15.0]]), 4), torch.tensor([[0.0, 1.0, 2.0, 15.0]]))
    # two groups of 2 get their own scales: [0, 3] and [0, 30] are both exact
    assert torch.equal(q4.rtn(torch.tensor([[0.0, 3.0, 0.0, 30.0]]), 2), torch.tensor([[0.0, 3.0, 0.0, 30.0]]))
    assert q4.packed_bytes(896 * 896, 896, 896, 128) == 896 * 896 // 2 + 896 * 7 * 5 // 2


def test_gptq_blocked_equals_the_plain_algorithm():
    """The lazy-batch Cholesky form and OBQ's plain inverse-Hessian updates on a 6 x 16 matrix; tolerance 1e-6 (both
    in float64, the rounding decisions the same)."""
    g = torch.Generator().manual_seed(0)
    W = torch.randn(6, 16, generator=g)
    X = torch.randn(40, 16, generator=g) @ torch.randn(16, 16, generator=g)
    for gs in (4, 8, 16):
        fast, plain = q4.gptq(W, X, gs, block=8), q4.gptq_plain(W, X, gs)
        assert (fast - plain).abs().max() < 1e-6
        assert q4.out_error(X, W, fast) < q4.out_error(X, W, q4.rtn(W, gs))      # the error feedback pays
    # with H diagonal nothing spreads: GPTQ is round-to-nearest
    assert (q4.gptq(W, torch.eye(16) * 3, 4) - q4.rtn(W, 4)).abs().max() < 1e-5


def test_awq_protects_a_loud_channel():
    """alpha = 0 is round-to-nearest; with one input channel 50x louder the search picks alpha > 0 and cuts the
    output error."""
    g = torch.Generator().manual_seed(1)
    W, X = torch.randn(6, 16, generator=g), torch.randn(40, 16, generator=g)
    X[:, 3] *= 50
    assert torch.equal(q4.awq([W], X, 4, alphas=(0.0,))[0][0], q4.rtn(W, 4))
    (Wa,), alpha = q4.awq([W], X, 4)
    assert alpha > 0 and q4.out_error(X, W, Wa) < 0.5 * q4.out_error(X, W, q4.rtn(W, 4))


def test_quant_compare_on_the_tiny_model(tiny_scaled):
    ids = tiny_scaled.encode_prompts(PROMPTS[0])[2][0]
    r = q4.compare(tiny_scaled, ids, ids, ids, groups=(32,))        # measured on its calibration text: GPTQ's own objective
    by = {x["method"]: x for x in r["rows"]}
    assert set(by) == {"rtn", "awq", "gptq"} and all(0 <= x["agree"] <= 1 for x in by.values())
    assert all(x["bytes"] < x["bf16_bytes"] / 3 for x in by.values())
    assert by["gptq"]["mean_error"] < by["rtn"]["mean_error"] and by["awq"]["mean_error"] <= by["rtn"]["mean_error"]
    base = q4.text_eval(tiny_scaled, ids)
    assert abs(r["float_loss"] - base["loss"]) < 1e-6


# ---- FP8 -------------------------------------------------------------------------------------------------------
def test_fp8_scales_by_hand():
    """e4m3 holds 448 exactly; with one scale (1) for [448, 4e-4] the small value is under half e4m3's smallest
    subnormal 2^-9 = 1.95e-3 and becomes 0; with a scale per row it is exact up to e4m3's 3 mantissa bits."""
    x = torch.tensor([[448.0, 448.0], [4e-4, 4e-4]])
    t, r = interview_fp8.scaled(x, "tensor"), interview_fp8.scaled(x, "row")
    assert t[0, 0] == 448.0 and t[1, 0] == 0.0
    assert abs(r[1, 0] - 4e-4) < 4e-4 * 2 ** -4
    assert interview_fp8.errors(x, t)["zeros"] == 0.5 and interview_fp8.errors(x, r)["zeros"] == 0.0
    big = torch.ones(256, 256)
    big[:128, :128] = 1000.0
    big[200, 200] = 1e-3            # 1e-3 / (1000 / 448) = 4.5e-4 -> 0 per tensor; 0.448 in its own block
    assert interview_fp8.scaled(big, "block")[200, 200] > 0 and interview_fp8.scaled(big, "tensor")[200, 200] == 0


def test_fp8_on_the_tiny_model(tiny_scaled):
    rows = interview_fp8.weight_errors(tiny_scaled)
    # e4m3's 3 mantissa bits: ~2.5 % whatever the scale when no outlier reaches the subnormals (measured 2.48-2.71 %)
    assert len(rows) == 7 and all(0.02 < r[m] < 0.035 for r in rows for m in ("tensor", "row", "block"))
    acts = interview_fp8.activation_errors(tiny_scaled.trace(PROMPTS[1]), 1)
    assert [a["name"] for a in acts] == ["layers.1.resid_out", "layers.1.attn_norm.out", "layers.1.mlp.act"]
    assert all(a["tensor"]["rel"] < 0.1 for a in acts)          # 3 mantissa bits: a few % (2^-4 at most per entry)


# ---- step time and preemption -------------------------------------------------------------------------------------
def test_preemption_by_recompute_continues_the_same_tokens(tiny_scaled):
    ids = tiny_scaled.encode_prompts(PROMPTS[1])[2][0]
    for k in (1, 5, 11):
        r = stt.preempt(tiny_scaled, ids, 12, k)
        assert r["same"] and r["cached"] == len(ids) + k - 1 and r["recomputed"] == len(ids) + k
    with pytest.raises(InputError):
        stt.preempt(tiny_scaled, ids, 12, 12)


def test_recompute_vs_swap_by_hand():
    """Qwen2.5-32B at 4,096 tokens: KV 262,144 B/token -> 1.07 GB out and 1.07 GB back = 2.147 GB, 33.6 ms at
    64 GB/s; the causal prefill ~2 x 32.8e9 x 4096 = 2.7e14 FLOPs (plus attention), ~0.28 s at 989 TFLOP/s."""
    from ops.arith import costs
    r = stt.recompute_vs_swap(costs.reference_config("Qwen2.5-32B-Instruct"), 4096)
    assert r["swap_bytes"] == 2 * 4096 * 262_144 and abs(r["swap_s"] - 0.03355) < 1e-4
    assert 2.6e14 < r["recompute_flops"] < 3.0e14 and 0.26 < r["recompute_s"] < 0.31


def test_step_profile_counts_operators(tiny_scaled):
    ids = tiny_scaled.encode_prompts(PROMPTS[1])[2][0]
    r = stt.step_profile(tiny_scaled, ids)
    L = tiny_scaled.config.num_hidden_layers
    assert r["operators"] >= 10 * L and r["inside_s"] > 0 and r["graph_saves_us"] == r["operators"] * stt.LAUNCH_US
    from ops.arith import costs
    assert r["flops"] == costs.total_flops(tiny_scaled.config, 1, 1, "decode", r["context"])
