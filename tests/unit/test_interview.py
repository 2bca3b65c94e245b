"""The interview demos (ops/lab/interview.py, ops/engine/speculate.py, min-p in ops/engine/sampling.py) on a tiny random model and
on hand-worked numbers. The real models run them in tests/parity/test_interview_real.py."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from conftest import TINY_VOCAB

from ops.arith import costs
from ops.engine import sampling as smp
from ops.engine.speculate import lookup_draft
from ops.errors import InputError, SamplingError
from ops.lab import interview as iv

CODE = "def f(x):\n    return x + 1\n\ndef g(x):\n    return x + 1\n\ndef h(x):\n"
PROMPTS = [CODE, "the cat sat on the mat and the cat sat on", "in the hall he sat"]


# ---- 1. chunked prefill -----------------------------------------------------------------------------------
def test_chunked_prefill_equals_one_pass(tiny_scaled):
    """Tolerance: float32 sums in a different order; measured up to ~1e-5 on logits of size ~10 here."""
    ids = tiny_scaled.encode_prompts(PROMPTS[1])[2][0]
    one = iv.prefill_chunked(tiny_scaled, ids, None)
    for C in (1, 3, 4, 16):
        r = iv.prefill_chunked(tiny_scaled, ids, C)
        assert r["sizes"] == [min(C, len(ids) - a) for a in range(0, len(ids), C)]
        d = (r["logits"] - one["logits"]).abs().max().item()
        assert d < 1e-4, f"chunk {C}: first-token logits differ by {d}"
    for p in PROMPTS:
        plain = tiny_scaled.generate(p, chat=False, max_new_tokens=12, stop_at_eos=False)
        for C in (1, 5):
            g = tiny_scaled.generate(p, chat=False, max_new_tokens=12, stop_at_eos=False, prefill_chunk=C)
            assert g.token_ids == plain.token_ids
            n = len(g.prompt_ids)
            assert g.prefill_passes == -(-n // C) and g.forward_passes == g.prefill_passes + 11


def test_prefill_trade_reports_passes_and_tokens_per_pass(tiny_scaled):
    rows = iv.prefill_trade(tiny_scaled, PROMPTS[1], chunks=(None, 8, 4), new_tokens=4)
    n = rows[0]["prompt_tokens"]
    assert [(r["passes"], r["max_tokens_per_pass"]) for r in rows] == [(1, n), (-(-n // 8), 8), (-(-n // 4), 4)]
    assert all(r["same_tokens"] and r["logits_max_diff"] < 1e-4 for r in rows)


def test_prefill_chunk_is_checked(tiny_scaled):
    for bad in (0, -2, 1.5, True):
        with pytest.raises(InputError):
            tiny_scaled.generate("hi", chat=False, max_new_tokens=2, prefill_chunk=bad)


# ---- 2. split-KV decode -----------------------------------------------------------------------------------
def test_split_kv_by_hand():
    """Two keys, scores 0 and ln 3 -> weights 1/4, 3/4; values 1 and 5 -> 0.25 + 3.75 = 4, whatever the split."""
    hd = 4
    q = torch.zeros(1, 1, 1, hd)
    q[..., 0] = 1.0
    k = torch.zeros(1, 1, 2, hd)
    k[0, 0, 1, 0] = torch.log(torch.tensor(3.0)) * hd ** 0.5          # q.k / sqrt(hd) = ln 3
    v = torch.tensor([1.0, 5.0]).view(1, 1, 2, 1).expand(1, 1, 2, hd)
    for K in (1, 2):
        r = iv.split_kv_attention(q, k, v, K)
        assert torch.allclose(r["context"], torch.full((1, 1, hd), 4.0), atol=1e-6)
    assert torch.allclose(iv.split_kv_attention(q, k, v, 2)["lse"].flatten(), torch.tensor([0.0, 1.0986123]))


def test_split_kv_equals_eager_on_random_tensors():
    """Tolerance 5e-5 on values of size ~3.7: float32 rounding of a reordered sum. Measured against float64: eager
    3.2e-6, 1-8 splits 2.7e-6 to 3.3e-6, 1000 one-key splits 1.2e-5 (a thousand-term merge); to eager 1.3e-5."""
    g = torch.Generator().manual_seed(3)
    q = torch.randn(2, 8, 1, 64, generator=g) * 3
    k, v = torch.randn(2, 2, 1000, 64, generator=g), torch.randn(2, 2, 1000, 64, generator=g) * 3
    ref = iv.eager_last_query(q, k, v)
    for K in (1, 3, 8, 1000):
        d = (iv.split_kv_attention(q, k, v, K)["context"] - ref).abs().max().item()
        assert d < 5e-5, f"{K} splits: {d}"
    with pytest.raises(InputError):
        iv.split_kv_attention(q, k, v, 1001)


def test_split_kv_on_a_traced_layer(tiny_scaled):
    tr = tiny_scaled.trace(PROMPTS[1], chat=False)
    for r in iv.split_kv_from_trace(tr, 1):
        assert r["max_diff_vs_trace"] < 1e-5 * max(1.0, r["scale"]), r


# ---- 3. batch invariance ----------------------------------------------------------------------------------
def test_compare_rows_names_the_first_edited_operator(tiny_scaled):
    rows = tiny_scaled.encode_prompts(PROMPTS[2])[2]
    alone = tiny_scaled.trace_ids(rows, recompute=False)
    edited = tiny_scaled.trace_ids(rows, recompute=False, edits={"layers.1.mlp.out": lambda t: t + 1e-3})
    ops = iv.compare_rows(alone, edited)
    first = next(r for r in ops if r["max_diff"] > 0)
    assert first["name"] == "layers.1.mlp.out" and abs(first["max_diff"] - 1e-3) < 1e-5


def test_batch_invariance_on_the_tiny_model(tiny_scaled):
    r = iv.batch_invariance(tiny_scaled, PROMPTS[2], PROMPTS[0], new_tokens=16)
    plain = tiny_scaled.generate(PROMPTS[2], chat=False, max_new_tokens=16, stop_at_eos=False)
    assert r["solo"] == plain.token_ids                      # the batched loop, alone, is plain greedy
    assert r["operators"][0]["name"] == "tokens.ids" and r["operators"][-1]["name"] == "logits"
    assert r["logits_max_diff"] < 1e-4
    assert r["first"] is None or r["first"]["max_diff"] > 0
    assert r["parts_at"] is None or r["solo"][:r["parts_at"]] == r["batched"][:r["parts_at"]]
    with pytest.raises(InputError):
        iv.batch_invariance(tiny_scaled, PROMPTS[0], PROMPTS[2])


# ---- 4. prompt-lookup speculative decoding --------------------------------------------------------------
def test_lookup_draft_by_hand():
    assert lookup_draft([1, 2, 3, 9, 1, 2], max_ngram=3, max_draft=8) == [3, 9, 1, 2]
    assert lookup_draft([1, 2, 3, 9, 1, 2], max_draft=2) == [3, 9]
    assert lookup_draft([5, 1, 7, 1, 4, 1]) == [4, 1]             # the latest occurrence of [1]
    assert lookup_draft([1, 2, 3]) == []


def test_prompt_lookup_gives_plain_greedy_tokens(tiny_scaled):
    total = dict(proposed=0, accepted=0)
    for p in PROMPTS:
        plain = tiny_scaled.generate(p, chat=False, max_new_tokens=24, stop_at_eos=False)
        spec = tiny_scaled.generate(p, chat=False, max_new_tokens=24, stop_at_eos=False, draft="prompt-lookup")
        assert spec.token_ids == plain.token_ids, p
        assert [s.token_id for s in spec.steps] == spec.token_ids
        assert spec.passes_saved == 24 - spec.forward_passes and 0 <= spec.accepted <= spec.proposed
        total["proposed"] += spec.proposed
        total["accepted"] += spec.accepted
    assert total["proposed"] > 0


def test_prompt_lookup_saves_passes_when_the_model_copies(tiny_scaled):
    """A 'model' whose greedy choice is the token after the latest earlier occurrence of the last one: it copies
    its prompt, so every draft is accepted and passes fall well below one per token."""
    cyc = list(range(10, 30))
    prompt = cyc * 2

    def forward(ids, positions, key_valid, **kw):
        seen = prompt + [t for t in dec.token_ids]
        out = torch.zeros(1, ids.shape[1], TINY_VOCAB)
        for j, t in enumerate(ids[0].tolist()):
            out[0, j, cyc[(cyc.index(t) + 1) % len(cyc)]] = 1.0
        kw["cache"].positions = torch.arange(key_valid.shape[1])[None]
        kw["cache"].advance(ids.shape[1])
        del seen
        return out if kw.get("last_only") is False else out[:, -1:]

    from ops.engine.decode import Decoder
    from ops.engine.speculate import generate_with_draft
    fake = SimpleNamespace(config=tiny_scaled.config, tokenizer=None, cache_devices="cpu", forward=forward,
                           weight_set=tiny_scaled.weight_set)
    dec = Decoder(fake, "", prompt, 30, smp.SamplingParams(), stop_at_eos=False)
    g = generate_with_draft(dec)
    assert g.token_ids == [cyc[(i + 1) % 20] for i in range(19, 49)]
    assert g.accepted == g.proposed > 0 and g.forward_passes < 10 and g.passes_saved == 30 - g.forward_passes


def test_stepwise_decoder_matches_generate(tiny_scaled):
    """The Generate page's way: a Decoder made with the draft or the chunk, advanced one forward pass per call, gives
    plain greedy's tokens and counts what generate() counts; a pass returns 1 token, or several when drafts pass."""
    p, n_new = PROMPTS[0], 30
    plain = tiny_scaled.generate(p, chat=False, max_new_tokens=n_new, stop_at_eos=False)
    whole = tiny_scaled.generate(p, chat=False, max_new_tokens=n_new, stop_at_eos=False, draft="prompt-lookup")
    dec = tiny_scaled.decoder(p, chat=False, max_new_tokens=n_new, stop_at_eos=False, draft="prompt-lookup", prefill_chunk=4)
    per_pass = []
    while not dec.done:
        per_pass.append(len(dec.advance()))
    g = dec.result()
    n = len(g.prompt_ids)
    assert g.token_ids == plain.token_ids and sum(per_pass) == n_new
    assert (g.proposed, g.accepted) == (whole.proposed, whole.accepted) and g.draft == "prompt-lookup"
    assert g.forward_passes == len(per_pass) + g.prefill_passes - 1       # the prefill's chunks in its one call
    assert sum(per_pass) - len(per_pass) == g.accepted                     # a pass: its accepted drafts + 1
    assert g.prefill_passes == -(-n // 4) and g.prefill_largest == min(4, n)
    assert plain.prefill_passes == 1 and plain.prefill_largest == n and plain.draft == "" and plain.proposed == 0
    with pytest.raises(InputError):
        tiny_scaled.decoder(p, chat=False, params=smp.SamplingParams(temperature=0.7), draft="prompt-lookup")


def test_prompt_lookup_is_greedy_only(tiny_scaled):
    with pytest.raises(InputError):
        tiny_scaled.generate("hi", chat=False, max_new_tokens=4, temperature=0.7, draft="prompt-lookup")
    with pytest.raises(InputError):
        tiny_scaled.generate("hi", chat=False, max_new_tokens=4, draft="eagle")


# ---- 5. KV-bound decode -----------------------------------------------------------------------------------
def test_kv_bound_by_hand_for_qwen25_32b():
    """Qwen2.5-32B: 2 x 64 layers x 8 KV heads x 128 x 2 B = 262,144 B per token; 32.764e9 parameters
    (FACTS.md) x 2 B = 65.5e9 B of weights; so KV reads pass weight reads at ~249,970 cached tokens, and
    70 requests x 4,096 tokens read 75.2e9 B of KV per step."""
    r = iv.kv_bound(costs.reference_config("Qwen2.5-32B-Instruct"), batches=(1, 70), contexts=(4096,))
    assert r["kv_bytes_per_token"] == 262_144
    assert abs(r["weight_bytes"] - 65.528e9) < 0.002e9
    assert abs(r["crossover_tokens"] - 249_970) < 50
    row = next(x for x in r["rows"] if x["B"] == 70)
    assert row["kv_bytes"] == 70 * 4096 * 262_144 == 75_161_927_680 and row["kv_share"] > 0.5
    assert abs(r["crossover_context"][70] - 249_970 / 70) < 1


def test_kv_bound_for_qwen25_05b():
    """0.5B: 2 x 24 x 2 x 64 x 2 B = 12,288 B per token."""
    r = iv.kv_bound(costs.reference_config("Qwen2.5-0.5B-Instruct"), batches=(1,), contexts=(1,))
    assert r["kv_bytes_per_token"] == 12_288
    assert r["rows"][0]["step_bytes"] == r["weight_bytes"] + 12_288


# ---- 6. min-p ---------------------------------------------------------------------------------------------
def test_min_p_by_hand():
    """p = 0.5, 0.3, 0.15, 0.05 and min_p = 0.2: the bar is 0.1, so 0.05 goes; the rest renormalise over 0.95."""
    logits = torch.log(torch.tensor([0.5, 0.3, 0.15, 0.05]))
    kept = smp.apply_min_p(logits, 0.2)
    assert torch.isinf(kept[3]) and torch.isfinite(kept[:3]).all()
    assert torch.allclose(kept.softmax(-1)[:3], torch.tensor([0.5, 0.3, 0.15]) / 0.95)
    assert torch.equal(smp.apply_min_p(logits, 0.0), logits)
    assert torch.isfinite(smp.apply_min_p(logits, 1.0)).sum() == 1         # only the top token reaches p_max


def test_min_p_stage_order_and_transformers():
    tf = pytest.importorskip("transformers")
    logits = torch.randn(500, generator=torch.Generator().manual_seed(5)) * 3
    p = smp.SamplingParams(temperature=0.7, top_k=50, top_p=0.9, min_p=0.1)
    st = smp.sample_stages(logits, [], p, smp.make_generator(0))
    ref = tf.MinPLogitsWarper(min_p=0.1)(None, st["top_p"][None].clone())[0]
    assert torch.equal(torch.isfinite(st["min_p"]), torch.isfinite(ref))
    assert torch.allclose(st["probs"], torch.softmax(st["min_p"], -1))
    assert torch.isfinite(st["min_p"]).sum() <= torch.isfinite(st["top_p"]).sum()
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(SamplingError):
            smp.SamplingParams(min_p=bad)


# ---- 7. outliers ------------------------------------------------------------------------------------------
def _fake_trace(x: torch.Tensor):
    return SimpleNamespace(lengths=[x.shape[0]], config=SimpleNamespace(num_hidden_layers=1),
                           layer=lambda i, name: x[None])


def test_outliers_by_hand():
    """16 entries of 1.0, one of 300: one int8 step for the tensor is 300/127 = 2.36, so 1.0 / 2.36 = 0.42
    rounds to 0 (15 of 16 entries lost); one step per channel keeps the other channels' 1.0s exactly and loses
    only the three 1.0s that share the outlier's channel (3 of 16)."""
    x = torch.ones(4, 4)
    x[2, 1] = 300.0
    r = iv.outliers(_fake_trace(x), 0, top=1)
    assert r["top_channels"] == [1] and r["top_max"] == [300.0]
    assert abs(r["step"] - 300 / 127) < 1e-6 and r["median_abs"] == 1.0
    assert abs(r["per_tensor"]["zero_share"] - 15 / 16) < 1e-9
    assert r["per_channel"]["zero_share"] == 3 / 16 and abs(r["without_top_step"] - 1 / 127) < 1e-9
    # AWQ's salient channel (1 % of 4 rounds up to 1): channel 1, mean |x| (300 + 3) / 4 against 1 for the others
    assert abs(r["salient_share"] - (303 / 4) / (3 + 303 / 4)) < 1e-6


def test_outliers_on_the_tiny_model_find_a_planted_channel(tiny_scaled):
    def plant(t):
        t = t.clone()
        t[:, 0, 5] = 1000.0
        return t
    tr = tiny_scaled.trace_ids(tiny_scaled.encode_prompts(PROMPTS[1])[2], recompute=False, edits={"layers.0.resid_out": plant})
    assert iv.loudest_layer(tr) in (0, 1)
    r = iv.outliers(tr, 0)
    assert r["top_channels"][0] == 5 and r["max_abs"] == 1000.0
    assert r["per_tensor"]["zero_share"] > r["per_channel"]["zero_share"]
