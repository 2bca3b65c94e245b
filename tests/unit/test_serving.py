"""The serving chapter's numbers (ops/arith/serving_math.py, content/serving_text.py): online softmax against eager, KV-cache and
memory figures against the hand formulas of FACTS.md, the GGUF quantisation table against the file, speculative
decoding's formula at its edges, YaRN against transformers, prefill/decode timing on a tiny model."""
from __future__ import annotations

import math
import struct

import numpy as np
import pytest
import torch

from content import practice, serving_numbers, texts
from content.template import placeholders
from ops.arith import costs, formats, serving_math as sv
from ops.errors import InputError
from ops.lab import online_softmax, serving_phases

C32 = costs.reference_config("Qwen2.5-32B-Instruct")
# Qwen2.5-32B-Instruct from FACTS.md: 64 layers, 40 query / 8 KV heads, head_dim 128, 32,763,876,352 parameters
L, HD, PARAMS = 64, 128, 32_763_876_352
KV_TOKEN = 262_144                  # by hand: K and V (2) · 64 layers · 8 KV heads · 128 · 2 bytes (FACTS.md)
WEIGHTS = 65_527_752_704            # by hand: 32,763,876,352 parameters · 2 bytes (bf16)


def _causal_scores(g, B, nh, S, scale=3.0):
    s = torch.randn(B, nh, S, S, generator=g) * scale
    return s.masked_fill(torch.triu(torch.ones(S, S, dtype=torch.bool), 1), float("-inf"))


# ---- (a) online softmax ------------------------------------------------------------------------------------
@pytest.mark.parametrize("S, block", [(1, 1), (7, 1), (7, 3), (7, 7), (7, 64), (256, 16), (256, 100)])
def test_online_softmax_equals_eager_on_random_causal_scores(S, block):
    g = torch.Generator().manual_seed(S + block)
    scores, v = _causal_scores(g, 2, 3, S), torch.randn(2, 3, S, 16, generator=g)
    out, states = online_softmax.online_softmax(scores, v, block)
    eager = online_softmax.eager_softmax_v(scores, v)
    assert (out - eager).abs().max() <= online_softmax.ONLINE_TOL            # measured spread: see ONLINE_TOL's comment
    assert len(states) == math.ceil(S / block)
    last = states[-1]
    assert torch.equal(last["m"], scores.amax(-1))               # the running max ends at the row max
    assert torch.allclose(last["l"], torch.exp(scores - last["m"][..., None]).sum(-1), rtol=1e-5)


def test_online_softmax_keys_masked_in_the_first_blocks_give_no_nan():
    """A row whose first blocks are all masked (a padded or windowed row) starts at m = -inf: no NaN."""
    s = torch.tensor([[float("-inf"), float("-inf"), float("-inf"), 1.0, 2.0, -1.0]])
    v = torch.eye(6)
    out, states = online_softmax.online_softmax(s, v, 2)
    assert not out.isnan().any()
    assert torch.allclose(out[0], torch.softmax(s[0], -1), atol=1e-7)
    assert states[0]["l"].item() == 0 and math.isinf(states[0]["m"].item())


def test_online_softmax_rejects_a_zero_block():
    with pytest.raises(InputError):
        online_softmax.online_softmax(torch.zeros(1, 2), torch.zeros(2, 1), 0)


def test_the_rescale_matters():
    """Dropping alpha (never rescaling the old sum) gives a wrong answer as soon as a later block holds the max:
    the check above can fail."""
    s = torch.tensor([[0.0, 5.0]])
    right, _ = online_softmax.online_softmax(s, torch.eye(2), 1)
    wrong = torch.tensor([1.0, math.exp(0.0)]) / (1.0 + 1.0)           # exp(s - m) with m stuck at the first block
    assert (right[0] - wrong).abs().max() > 0.4
    assert torch.allclose(right[0], torch.softmax(s[0], -1))


def test_small_example_is_the_softmax():
    rows = online_softmax.small_example([2.0, 1.0, 3.0, 0.5], 2)
    assert [r["m"] for r in rows] == [2.0, 3.0]
    assert rows[0]["alpha"] == 0.0 and rows[1]["alpha"] == pytest.approx(math.exp(-1.0))
    assert rows[-1]["probs"] == pytest.approx(torch.softmax(torch.tensor([2.0, 1.0, 3.0, 0.5]), -1).tolist(), abs=1e-6)


@pytest.mark.parametrize("text, ok", [("2, 1, 3", [2.0, 1.0, 3.0]), ("2，1 3", [2.0, 1.0, 3.0]), ("a, b", None),
                                      ("", None), (", ".join(["1"] * 17), None), ("1, inf", None)])
def test_parse_scores(text, ok):
    if ok is None:
        with pytest.raises(InputError):
            online_softmax.parse_scores(text)
    else:
        assert online_softmax.parse_scores(text) == ok


@pytest.mark.real
def test_online_softmax_on_the_real_trace(real_model):
    """Every layer of the bundled model on a prompt of two rows (padding included): online softmax equals
    the eager probs @ v and the trace's own attn.context."""
    trace = real_model.trace(["I like shanghai", "The capital of France is Paris, and that of Germany is Berlin."])
    worst = 0.0
    for i in range(real_model.config.num_hidden_layers):
        for block in (1, 3, trace.S):
            for check in online_softmax.online_softmax_checks(trace, i, block):
                assert check.ok, check.text("en")
                worst = max(worst, check.max_diff)
    assert worst > 0 or trace.S == 1                              # a real comparison, not two identical tensors
    view = online_softmax.online_softmax_view(trace, 5, 1, 3, trace.lengths[1] - 1, 4)
    assert view["rows"][-1]["dist"] == 0 and view["max_diff"] <= online_softmax.ONLINE_TOL


def test_score_traffic_for_32b():
    # By hand. S = 4,096: one head's bf16 S×S = 4,096² · 2 = 33,554,432 B (32 MiB); eager writes and reads the
    # scores and the probabilities (4 passes) for 40 heads · 64 layers: 4 · 33,554,432 · 2,560 = 343,597,383,680 B
    # (320 GiB); q, k, v and the output: (40 + 8 + 8 + 40) heads · 4,096 · 128 · 2 B · 64 = 6,442,450,944 B (6 GiB).
    # S = 32,768: 2,147,483,648 B (2 GiB); 4 · 2,147,483,648 · 2,560 = 21,990,232,555,520 B (20 TiB);
    # 96 · 32,768 · 128 · 2 · 64 = 51,539,607,552 B (48 GiB).
    hand = {4096: (33_554_432, 343_597_383_680, 6_442_450_944),
            32768: (2_147_483_648, 21_990_232_555_520, 51_539_607_552)}
    for S, (matrix, eager, qkvo) in hand.items():
        r = online_softmax.score_traffic(C32, S)
        assert (r["matrix"], r["eager_matrix"], r["qkvo"]) == (matrix, eager, qkvo), S


# ---- (b) KV cache in a server ----------------------------------------------------------------------------------
def test_kv_numbers_equal_the_hand_formulas():
    assert costs.kv_bytes_per_token(C32) == KV_TOKEN
    assert costs.total_params(C32) == PARAMS and costs.weight_bytes(C32) == WEIGHTS
    # By hand: a 4,096-token request holds 4,096 · 262,144 = 1,073,741,824 B (1 GiB). Beside 65,527,752,704 B of
    # weights an A100 has 80e9 - 65,527,752,704 = 14,472,247,296 B left: 13.48 requests, so 13; an H200
    # 141e9 - 65,527,752,704 = 75,472,247,296 B: 70.29, so 70 (FACTS.md's 70 requests).
    for gpu, free, requests in (("A100 80GB", 14_472_247_296, 13), ("H200 141GB", 75_472_247_296, 70)):
        r = sv.concurrent_requests(C32, gpu, 4096)
        assert (r["per_request"], r["free"], r["requests"]) == (1_073_741_824, free, requests), gpu


def test_paged_blocks_waste_less_than_a_block():
    p = sv.paged_blocks(C32, [1, 15, 16, 17, 4096, 4100])
    # by hand: 16 tokens · 262,144 B = 4,194,304 B (4 MiB); one layer's share 16 · 2 · 8 · 128 · 2 = 65,536 B
    assert p["block_bytes"] == 4_194_304 and p["block_bytes_layer"] == 65_536
    for r in p["rows"]:
        assert 0 <= r["paged_waste"] < 16 and r["blocks"] * 16 == r["tokens"] + r["paged_waste"]
        assert r["reserved"] == C32.max_position_embeddings * KV_TOKEN
    assert p["max_waste"] == 15 * KV_TOKEN


def test_continuous_batching_never_needs_more_steps():
    lengths = sv.output_lengths(64, seed=3)
    assert lengths == sv.output_lengths(64, seed=3) and min(lengths) >= 8 and max(lengths) <= 512
    for slots in (1, 4, 8, 64):
        r = sv.batching(lengths, slots)
        assert r["continuous_steps"] <= r["static_steps"]
        assert 0 < r["static_util"] <= r["continuous_util"] <= 1
    assert sv.batching([10] * 8, 4) == dict(requests=8, slots=4, tokens=80, static_steps=20, continuous_steps=20,
                                            static_util=1.0, continuous_util=1.0)
    assert sv.batching([100, 1, 1, 1], 2)["static_steps"] == 101 and sv.batching([100, 1, 1, 1], 2)["continuous_steps"] == 100


def test_prefix_caching_shares_whole_blocks_only():
    assert sv.prefix_caching(C32, 15, 64)["kv_saved"] == 0
    r = sv.prefix_caching(C32, 2048 + 5, 64)
    assert r["shared"] == 2048 and r["kv_saved"] == 63 * 2048 * KV_TOKEN == 33_822_867_456
    # By hand, one request's prefill of the 2,048 shared tokens (T = S = 2048, H 5120, I 27648, 40/8 heads of 128):
    #   projections 2·T·(q 5120·5120 + k,v 2·5120·1024 + o 5120·5120 + mlp 3·5120·27648 = 487,587,840)·64
    #                                                                                    = 127,818,226,728,960
    #   scores + PV 2·2·40·128·2048·2048·64 (the full S×S, the eager count)           =   5,497,558,138,880
    #   rmsnorm 4·T·5120·129 = 5,410,652,160; RoPE 3·T·48·128·64 = 2,415,919,104; softmax 5·40·2048²·64 =
    #   53,687,091,200; residual 2·T·5120·64 = 1,342,177,280; SiLU·up 5·T·27648·64 = 18,119,393,280
    #   sum                                                                             = 133,396,760,100,864
    # and no LM head (2·T·5120·152064 = 3,189,013,217,280): no position of a shared prefix needs logits.
    assert r["flops_saved"] == 63 * 133_396_760_100_864
    assert sv.prefix_caching(C32, 15, 64)["flops_saved"] == 0


def test_system_prompt_tokens(bundled_tokenizer):
    n = sv.system_prompt_tokens(bundled_tokenizer)
    system = bundled_tokenizer.default_system
    assert n == len(bundled_tokenizer.encode(f"<|im_start|>system\n{system}<|im_end|>\n"))


# ---- (c) quantisation --------------------------------------------------------------------------------------------
def test_block_layouts_add_up_to_the_spec_constants():
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
    for name, layout in formats.GGUF_BLOCK_FIELDS.items():
        block, nbytes = GGML_QUANT_SIZES[GGMLQuantizationType[name]]
        assert sum(b for _, b in layout["fields"]) == nbytes, name
        assert block % layout["sub"] == 0, name


def _write_quantised_gguf(path):
    """A GGUF file with two Q8_0, one Q5_0 and one F32 tensor, quantised by the gguf package itself."""
    import gguf
    from gguf import quants
    rng = np.random.default_rng(0)
    w = gguf.GGUFWriter(str(path), "qwen2")
    for name, qtype, shape in (("a.weight", "Q8_0", (4, 64)), ("b.weight", "Q8_0", (2, 32)),
                               ("c.weight", "Q5_0", (3, 96)), ("d.weight", "F32", (5,))):
        x = rng.standard_normal(shape).astype(np.float32)
        t = gguf.GGMLQuantizationType[qtype]
        data = x if qtype == "F32" else quants.quantize(x, t)
        w.add_tensor(name, data, raw_dtype=t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_gguf_report_reads_the_file(tmp_path):
    report = formats.gguf_report(_write_quantised_gguf(tmp_path / "q.gguf"))
    rows = {r["type"]: r for r in report["rows"]}
    assert report["tensors"] == 4 and sum(r["tensors"] for r in report["rows"]) == 4
    assert (rows["Q8_0"]["tensors"], rows["Q8_0"]["weights"]) == (2, 4 * 64 + 2 * 32)
    assert rows["Q8_0"]["bytes"] == (4 * 64 + 2 * 32) // 32 * 34 and rows["Q8_0"]["bits_per_weight"] == 8.5
    assert (rows["Q5_0"]["weights"], rows["Q5_0"]["bits_per_weight"]) == (3 * 96, 5.5)
    assert rows["F32"]["bits_per_weight"] == 32
    for q in ("Q8_0", "Q5_0"):
        ex = report["examples"][q]
        assert ex["max_diff"] == 0 and len(ex["q"]) == 32 and ex["nbytes"] == rows[q]["block_bytes"]
    assert all(c.ok for c in formats.gguf_checks(report))


def test_bundled_report_is_made_once_and_the_file_not_kept(tmp_path, monkeypatch):
    """Serving's report of the bundled GGUF is kept beside the cache under the file's sha256: made once (the parts
    assembled for it), the assembled file removed again when it was not on disk before, and read back after that
    without assembling anything; a report kept for another sha256 is made again."""
    from ops.models import bundled as bundled_mod
    folder, made = tmp_path / "bundled", []
    folder.mkdir()

    def assemble(progress=None):
        made.append(1)
        return _write_quantised_gguf(folder / "model.gguf")

    monkeypatch.setattr(bundled_mod, "bundled_dir", lambda: folder)
    monkeypatch.setattr(bundled_mod, "bundled_gguf_path", assemble)
    formats.bundled_gguf_report.cache_clear()
    try:
        first = formats.bundled_gguf_report()
        assert made == [1] and first["tensors"] == 4
        assert not (folder / "model.gguf").exists(), "the file was not on disk before: it must not stay"
        formats.bundled_gguf_report.cache_clear()
        assert formats.bundled_gguf_report() == first and made == [1]          # read back: nothing assembled
        kept = folder / formats.REPORT_FILE
        kept.write_text(kept.read_text().replace(bundled_mod.BUNDLED_SHA256, "0" * 64))
        formats.bundled_gguf_report.cache_clear()
        assert formats.bundled_gguf_report() == first and made == [1, 1]       # another file's report: made again
        _write_quantised_gguf(folder / "model.gguf")                       # on disk before: it stays
        kept.unlink()
        formats.bundled_gguf_report.cache_clear()
        formats.bundled_gguf_report()
        assert (folder / "model.gguf").exists() and made == [1, 1, 1]
    finally:
        formats.bundled_gguf_report.cache_clear()


@pytest.mark.real
def test_bundled_gguf_table_matches_the_file(bundled_gguf_path):
    from ops.models.gguf import open_gguf
    report = formats.gguf_report(bundled_gguf_path)
    with open(bundled_gguf_path, "rb") as f:
        header = f.read(24)
    n_tensors = struct.unpack_from("<Q", header, 8)[0]            # the GGUF header's own tensor count
    assert report["tensors"] == n_tensors == len(open_gguf(bundled_gguf_path).tensors)
    assert sum(r["tensors"] for r in report["rows"]) == n_tensors
    types = {r["type"] for r in report["rows"]}
    assert {"Q5_0", "Q8_0", "Q6_K", "Q4_K", "F32"} <= types         # FACTS.md: mostly Q5_0, Q8_0 output, Q6_K/Q4_K
    assert max(report["rows"], key=lambda r: r["bytes"])["type"] == "Q5_0"
    assert sum(r["bytes"] for r in report["rows"]) < report["file_bytes"]
    assert {q: e["max_diff"] for q, e in report["examples"].items()} == {"Q8_0": 0.0, "Q5_0": 0.0}


def test_group_quantisation_error_shrinks_with_bits_and_smaller_groups():
    w = torch.randn(64, 256, generator=torch.Generator().manual_seed(0))
    err = {(b, g): float((formats.group_quant(w, b, g) - w).norm() / w.norm()) for b in (4, 8) for g in (32, 256)}
    assert err[(8, 32)] < err[(4, 32)] and err[(4, 32)] < err[(4, 256)] and err[(8, 32)] < err[(8, 256)]
    on_grid = torch.tensor([[-7.0, -3.0, 0.0, 7.0]]) * 0.25                 # values already on the int4 grid
    assert torch.equal(formats.group_quant(on_grid, 4, 4), on_grid)
    with pytest.raises(InputError):
        formats.group_quant(w, 4, 100)


def test_kv_quant_and_fp8_formats():
    rows = {r["kv_dtype"]: r for r in formats.kv_quant_rows(C32)}
    assert rows["bf16"]["bytes_per_token"] == KV_TOKEN and rows["int8 / fp8"]["bytes_per_token"] == KV_TOKEN // 2
    # by hand: 75,472,247,296 B free on an H200 / (4,096 · 131,072 B) = 140.58, so 140 requests at one byte per number
    assert rows["int8 / fp8"]["requests"] == 140
    fmt = {r["dtype"]: r for r in formats.float_formats()}
    assert (fmt["float8_e4m3fn"]["max"], fmt["float8_e4m3fn"]["mantissa_bits"]) == (448, 3)
    assert (fmt["float8_e5m2"]["max"], fmt["float8_e5m2"]["mantissa_bits"]) == (57344, 2)
    assert fmt["bfloat16"]["mantissa_bits"] == 7                  # FACTS/issue 12: 7 stored bits, 8 significant


# ---- (d) speculative decoding ------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 4, 8])
def test_spec_decoding_edges(k):
    assert sv.spec_expected_tokens(0.0, k) == 1.0                # nothing accepted: the target's own token
    assert sv.spec_expected_tokens(1.0, k) == k + 1              # everything accepted
    assert sv.spec_expected_tokens(1 - 1e-9, k) == pytest.approx(k + 1, rel=1e-6)    # continuous at a -> 1
    assert sv.spec_expected_tokens(0.5, k) == pytest.approx(sum(0.5 ** j for j in range(k + 1)))   # the series
    assert sv.spec_speedup(0.7, k, 0.0) == sv.spec_expected_tokens(0.7, k)
    assert sv.spec_speedup(0.0, k, 0.1) < 1                       # a useless draft only costs time
    with pytest.raises(InputError):
        sv.spec_expected_tokens(1.5, k)


def test_spec_worked_example():
    # by hand, a = 0.8, k = 4: E = 1 + 0.8 + 0.64 + 0.512 + 0.4096 = 3.3616; with c = 0.0150786 the bound is
    # 3.3616 / (4 · 0.0150786 + 1) = 3.3616 / 1.0603144 = 3.17038
    assert sv.spec_expected_tokens(0.8, 4) == pytest.approx(3.3616)
    assert sv.spec_speedup(0.8, 4, 0.0150786) == pytest.approx(3.17038, abs=1e-5)


def test_draft_cost_is_the_weight_byte_ratio():
    # Qwen2.5-0.5B by hand: embedding 151,936 · 896 = 136,134,656 (tied: no LM head); a layer: q 896·896 + 896,
    # k and v 896·128 + 128 each, o 896·896, MLP 3·896·4,864, two norms 896 = 14,912,384; 24 layers 357,897,216;
    # final norm 896: 494,032,768 parameters (FACTS.md: 0.494B). c = 494,032,768 / 32,763,876,352 = 0.0150786
    small = costs.reference_config("Qwen2.5-0.5B-Instruct")
    assert costs.total_params(small) == 494_032_768
    assert sv.draft_cost_ratio(small, C32) == pytest.approx(0.0150786, abs=1e-7)


# ---- (e) long context ----------------------------------------------------------------------------------------------
def test_rope_wavelengths():
    wl = sv.rope_wavelengths(C32)
    assert len(wl) == HD // 2 and wl[0] == pytest.approx(2 * math.pi)
    # the slowest pair, j = 63: 2π · 1e6^(126/128) = 2π · 10^5.90625 = 2π · 805,842.19 = 5,063,255.8 tokens
    assert wl[-1] == pytest.approx(5_063_255.8, abs=0.1)
    assert bool((wl[1:] > wl[:-1]).all())


def test_yarn_matches_transformers():
    tf = pytest.importorskip("transformers")
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    cfg = tf.Qwen2Config(hidden_size=5120, num_attention_heads=40, num_key_value_heads=8, head_dim=128,
                         max_position_embeddings=131072,
                         rope_parameters=dict(rope_type="yarn", rope_theta=1e6, factor=4.0,
                                              original_max_position_embeddings=32768))
    ref_inv, ref_attn = ROPE_INIT_FUNCTIONS["yarn"](cfg, "cpu")
    inv, attn = sv.yarn_inv_freq(C32, 4.0, 32768)
    assert torch.allclose(inv, ref_inv.float(), rtol=1e-6) and attn == pytest.approx(ref_attn)
    lc = sv.long_context(C32)
    assert (lc["original"], lc["extended"]) == (32768, 131072)    # Qwen2.5 model card: YaRN factor 4 -> 128K
    assert lc["kept"] + lc["stretched"] <= lc["pairs"] and lc["kept"] > 0 and lc["stretched"] > 0


def test_sliding_window_caps_the_cache():
    rows = sv.sliding_window(C32, (1000, 4096, 131072), 4096)
    assert [r["windowed"] for r in rows] == [1000 * KV_TOKEN, 4096 * KV_TOKEN, 4096 * KV_TOKEN]
    assert rows[-1]["full"] == 131072 * KV_TOKEN


# ---- (f) attention variants, (g) tensor parallelism ----------------------------------------------------------------
def test_attention_variants_for_32b():
    r = {x["variant"]: x["bytes_per_token"] for x in sv.attention_variants(C32)}
    # by hand, bf16: MHA 2 · 64 · 40 · 128 · 2 = 1,310,720; GQA (8 heads) 262,144; MQA 2 · 64 · 128 · 2 = 32,768;
    # MLA (DeepSeek-V3's 512 + 64 per layer) 64 · 576 · 2 = 73,728
    assert r == dict(MHA=1_310_720, GQA=262_144, MQA=32_768, MLA=73_728)


def test_tensor_parallel_bounded_by_kv_heads():
    rows = {r["tp"]: r for r in sv.tensor_parallel(C32, (1, 2, 4, 8, 16, 40))}
    assert [rows[t]["kv_per_token_per_gpu"] for t in (1, 2, 4, 8)] == [KV_TOKEN // t for t in (1, 2, 4, 8)]
    assert rows[40]["kv_per_token_per_gpu"] == rows[8]["kv_per_token_per_gpu"] and rows[40]["kv_copies"] == 5
    assert not rows[16]["valid"] and all(rows[t]["valid"] for t in (1, 2, 4, 8, 40))    # 40 % 16 != 0
    assert rows[1]["weights_per_gpu"] == WEIGHTS
    # TP 8 by hand: norms 64 · 2 · 5,120 + 5,120 = 660,480 (copied); k/v projections with biases
    # 64 · 2 · (5,120 · 1,024 + 1,024) = 671,219,712, one KV head of 8 per GPU: / 8; the rest
    # 32,763,876,352 - 660,480 - 671,219,712 = 32,091,996,160, / 8. bf16: (660,480 + 83,902,464 + 4,011,499,520) · 2
    assert rows[8]["weights_per_gpu"] == 8_192_124_928


# ---- (h) prefill vs decode --------------------------------------------------------------------------------------------
def test_h200_phases_from_the_roofline():
    rows = serving_phases.h200_phases(C32, (8, 1024), 4096)
    assert [r["bound"] for r in rows] == ["memory", "compute", "memory"]
    assert costs.prefill_crossover(C32, 1) <= 1024


def test_measure_phases_on_a_tiny_model():
    from ops.models.tiny import tiny_moe_model
    result = serving_phases.measure_phases(tiny_moe_model(), prefill=(4, 16), context=16, steps=2, reps=1)
    assert [r["phase"] for r in result["rows"]] == ["prefill", "prefill", "decode"]
    assert all(r["ms_per_token"] > 0 and r["predicted_ms_per_token"] > 0 for r in result["rows"])
    assert result["peaks"]["flops_per_s"] > 0 and result["peaks"]["bytes_per_s"] > 0


# ---- content: placeholders and practice ---------------------------------------------------------------------------------
def test_numbers_are_in_the_texts_numbers():
    nums = texts.numbers(costs.reference_config("Qwen2.5-0.5B-Instruct"))
    sv_nums = serving_numbers.numbers(C32)
    assert sv_nums.items() <= nums.items()
    assert sv_nums["sv_req_141"] == "70" and sv_nums["sv_kv_mla_exact"] == "73,728"      # by hand, as above
    for lang in texts.LANGS:
        for level in texts.LEVELS:
            assert placeholders(texts.template("serving", lang, level)) <= set(nums)
            assert sv_nums["sv_req_141"] in texts.explain("serving", lang, level, nums)


def test_serving_formulas_registered_and_questions_computed():
    assert set(serving_numbers.FORMULAS) <= set(practice.FORMULAS)
    qs = [q for q in practice.load_questions() if q["stage"] == "serving"]
    computed = [q for q in qs if "compute" in q]
    assert len(qs) >= 20 and len(computed) >= 12
    got = {q["id"]: practice.compute(q) for q in computed}
    assert all(v > 0 for v in got.values())
    assert got["sv-kv-requests-141"] == 70 and got["sv-mla-bytes"] == 73_728
