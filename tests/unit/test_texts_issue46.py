"""Issue 46 §3: every item the expert read found, re-derived by hand (Qwen2.5-32B-Instruct's config: 64 layers,
H 5,120, 40 / 8 heads of 128, I 27,648, V 152,064, untied: 32,763,876,352 parameters; the H200's published
141 GB, 989 TFLOP/s bf16 and 4.8 TB/s) and read back out of the texts that state it, in both languages."""
import math
import re
from pathlib import Path

import pytest
import torch

from content import generate_text, practice, serving_topics, texts
from ops.arith import costs
from ops.engine import sampling as smp

ROOT = Path(__file__).resolve().parents[2]
P32 = 32_763_876_352
W32 = 2 * P32                                    # 65,527,752,704 bytes of bf16 weights
KV32 = 2 * 64 * 8 * 128 * 2                      # 262,144 bytes of bf16 KV per token
LAYER_W = P32 - 2 * 152_064 * 5_120              # 31,206,740,992: every weight but the embedding and the LM head
PEAK, BW, MEM = 989e12, 4.8e12, 141e9


@pytest.fixture(scope="module")
def nums():
    return texts.numbers(costs.reference_config("Qwen2.5-0.5B-Instruct"))


def text(stage, lang, level, nums):
    return texts.explain(stage, lang, level, nums)


def question(qid, lang, nums):
    return practice.render(next(q for q in practice.load_questions() if q["id"] == qid), nums, lang)


def grab(pattern, s):
    m = re.search(pattern, s)
    assert m, f"{pattern!r} not in {s[:300]!r}"
    return m.group(1)


def num(s: str) -> float:
    return float(s.replace(",", ""))


# ---- goodput: only batches that fit ------------------------------------------------------------------------------
def test_goodput_offers_only_batches_that_fit(nums):
    # B = 128 at 4,096 tokens: 128 × 4,096 × 262,144 = 137,438,953,472 B of KV (137.4 GB) + 65.5 GB of weights
    # = 202,966,706,176 B > 141e9: it does not fit, though its step (202,966,706,176 / 4.8e12 = 42.3 ms) meets 50 ms.
    need128 = W32 + 128 * 4096 * KV32
    assert need128 == 202_966_706_176 > MEM and need128 / BW < 0.050
    # the largest batch that fits: (141e9 - 65,527,752,704) // 262,144 = 287,903 tokens, // 4,096 = 70 requests,
    # 70 × 4,096 × 262,144 + W = 140,689,680,384 B, a 29.3 ms step: 70 / 0.0293102 = 2,388 tokens/s
    fit = int((MEM - W32) // KV32) // 4096
    step70 = (W32 + fit * 4096 * KV32) / BW
    assert fit == 70 and round(1000 * step70, 1) == 29.3 and f"{fit / step70:,.0f}" == "2,388"
    for lang, pats in (("en", (r"at most ([\d,]+) requests fit", r"\$B\$ = ([\d,]+) would meet",
                               r"needs ([\d.]+ GB) of KV", r"([\d,]+) tokens/s at \$B\$ = ([\d,]+)")),
                       ("zh", (r"最多放得下 ([\d,]+) 个请求", r"\$B\$ = ([\d,]+) 虽能满足", r"却要 ([\d.]+ GB) 的 KV",
                               r"是 \$B\$ = [\d,]+ 时的 ([\d,]+) token/s"))):
        t = text("serving", lang, "academic", nums)
        assert num(grab(pats[0], t)) == fit and num(grab(pats[1], t)) == 128
        assert grab(pats[2], t) == f"{128 * 4096 * KV32 / 1e9:.1f} GB" == "137.4 GB"
        assert grab(pats[3], t) == "2,388"
        rows, caption = serving_topics.tables("chunked", costs.reference_config(), lang, nums)[1]
        offered = [r["B"] for r in rows if r[{"en": "may be offered", "zh": "可以提供"}[lang]] == "✓"]
        assert max(offered) == fit and 128 not in offered and "203.0 GB" in caption


# ---- decode attention: n_rep FLOP per byte ------------------------------------------------------------------------
def test_decode_attention_is_n_rep_flop_per_byte(nums):
    # per cached token and KV head: scores 2·n_rep·hd + PV 2·n_rep·hd = 4·n_rep·hd FLOPs against K and V,
    # 2·hd values × 2 bytes = 4·hd bytes: n_rep FLOP per byte (2·n_rep per element); 32B: 40 / 8 = 5
    n_rep, hd = 40 // 8, 128
    assert (4 * n_rep * hd) / (4 * hd) == n_rep == 5 and (4 * n_rep * hd) / (2 * hd) == 2 * n_rep
    for lang in ("en", "zh"):
        t = text("interview", lang, "academic", nums)
        assert re.search(r"\$n_\\text\{rep\}\$ FLOP", t) and re.search(r"\$2\\,n_\\text\{rep\}\$", t)
        assert {"en": "per element", "zh": "每个元素"}[lang] in t
        assert not re.search(r"2\\,n_\\text\{rep\}\$ FLOP", t)
        assert re.search(r"about \$n_\{rep\}\$ FLOP per byte|每字节只做约 \$n_\{rep\}\$ 次", text("decode", lang,
                                                                                            "academic", nums))


# ---- chunked prefill: the decodes ride along --------------------------------------------------------------------
def test_chunked_prefills_later_first_token_is_the_decodes(nums):
    # one decode token: 2·31,206,740,992 + LM head 2·5,120·152,064 + attention 4·64·40·128·4,097
    #   = 62,413,481,984 + 1,557,135,360 + 5,370,019,840 = 69,340,637,184 FLOPs;
    # 32 decodes in each of 8,192 / 512 = 16 steps: 16 × 32 × 69,340,637,184 / 989e12 = 35.9 ms.
    per = 2 * LAYER_W + 2 * 5120 * 152_064 + 4 * 64 * 40 * 128 * 4097
    assert per == 69_340_637_184
    decodes_ms = f"{1000 * 16 * 32 * per / PEAK:.1f}"
    # every step is compute-bound (the last, the heaviest in bytes: 544 tokens against W + (32·4,096 + 7,680) KV)
    last_flops = 2 * LAYER_W * 544 + 2 * 5120 * 152_064 * 33 + 4 * 64 * 40 * 128 * 4_194_592
    assert last_flops / PEAK > (W32 + KV32 * (32 * 4096 + 7680)) / BW
    for lang, pats in (("en", (r"\{?([\d.]+) ms of compute over the", r"KV costs ([\d.]+) ms, since every step is")),
                       ("zh", (r"合计多算 ([\d.]+) ms", r"只多花 ([\d.]+) ms"))):
        t = text("serving", lang, "academic", nums)
        assert grab(pats[0], t) == decodes_ms == "35.9" and grab(pats[1], t) == "0.0"
    for lang in ("en", "zh"):
        long = question("iv-chunked-prefill", lang, nums)["long"]
        assert decodes_ms in long and "256" in long


# ---- pipeline parallelism in serving ------------------------------------------------------------------------------
def test_pipeline_costs_are_latency_and_low_concurrency(nums):
    # a token passes the 4 stages in turn: it reads all 65,527,752,704 B at one GPU's 4.8 TB/s = 13.65 ms;
    # TP = 4 reads the four shares at once: 3.41 ms; one request on 4 stages keeps 3 of them idle: 75 %
    pp, tp, idle = f"{1000 * W32 / BW:.1f}", f"{1000 * W32 / 4 / BW:.1f}", f"{100 * 3 / 4:.0f}"
    assert (pp, tp, idle) == ("13.7", "3.4", "75")
    for lang, pats in (("en", (r"at least ([\d.]+) ms for Qwen2.5-32B on H200s", r"at once: ([\d.]+) ms",
                               r"leaves ([\d]+)% of the GPUs idle", "a training figure")),
                       ("zh", (r"都至少 ([\d.]+) ms", r"同时读各自那份：([\d.]+) ms", r"([\d]+)% 的卡闲着", "是训练的算法"))):
        t = text("serving", lang, "academic", nums)
        assert (grab(pats[0], t), grab(pats[1], t), grab(pats[2], t)) == (pp, tp, idle) and pats[3] in t


# ---- Qwen's MoE models, final norm --------------------------------------------------------------------------------
def test_qwen_moe_list_is_not_presented_as_complete(nums):
    new = ("Qwen3-235B-A22B", "Qwen3-Coder-480B-A35B", "Qwen3-Next-80B-A3B")
    for lang, word in (("en", "for example"), ("zh", "例如")):
        for t in (text("moe", lang, "academic", nums), text("overview", lang, "academic", nums),
                  question("seed-moe-cost", lang, nums)["long"]):
            assert word in t and all(n in t for n in new), t[:200]
        assert "Qwen's MoE models are" not in text("moe", "en", "academic", nums)


def test_final_norm_sets_the_volume_not_the_ranking(nums):
    # one factor 1/rms for the whole row: logits = W (g ⊙ x / rms) = (W (g ⊙ x)) / rms, every candidate alike
    torch.manual_seed(0)
    W, g, x = torch.randn(50, 8, dtype=torch.float64), torch.rand(8, dtype=torch.float64) + 0.5, torch.randn(8,
                                                                                                   dtype=torch.float64)
    rms = x.pow(2).mean().sqrt()
    before, after = W @ (g * x), W @ (g * x / rms)
    assert torch.allclose(after, before / rms) and torch.equal(before.argsort(), after.argsort())
    assert not torch.allclose(before.softmax(-1), after.softmax(-1))          # the volume changes how sure it sounds
    en, zh = text("final_norm", "en", "plain", nums), text("final_norm", "zh", "plain", nums)
    assert "not their order" in en and "loud in places" not in en
    assert "不改变候选的先后" in zh and "或大或小" not in zh


# ---- units: GB vs GiB, KiB answers, one quantity in one convention ------------------------------------------------
def test_units_are_labelled_and_one_quantity_reads_the_same(nums):
    # MXFP4 / int4 with an fp16 scale per 64: 32,763,876,352 × 4.25 / 8 = 17,405,809,312 B = 17.4 GB (16.21 GiB)
    assert P32 * 4.25 / 8 == 17_405_809_312 and costs.gb(17_405_809_312) == "17.4 GB"
    for lang in ("en", "zh"):
        assert question("prec-fp4-formats", lang, nums)["human"] == nums["sv_mxfp4_gb"] == "17.4 GB"
        assert question("sv-int4-g64-bytes", lang, nums)["human"] == nums["sv_int4_g64_gb"] == "17.4 GB"
        t = text("serving", lang, "academic", nums)
        assert "2³⁰" in t and "10⁹" in t
    # FP8 KV (the KV-bytes question's FP8 variant): 2 × 64 × 8 × 128 × 1 × 4,096 = 536,870,912 B = 512 MiB, not
    # "536.87 M"
    q = question("kv-32b-4096", "en", nums)["variants"][-1]
    assert q["answer"] == 536_870_912 == 512 * 2 ** 20 and q["human"] == "512.00 MiB"
    byte_formulas = {"kv_cache_bytes", "kv_cache_bytes_mha", "embedding_bytes", "embedding_read_bytes",
                     "weight_bytes", "logits_bytes", "score_matrix_bytes", "score_matrix_traffic", "paged_block_bytes",
                     "prefix_kv_saved", "group_weight_bytes", "low_bit_bytes", "kv_bytes_per_token",
                     "sliding_window_kv", "kv_variant_bytes", "tp_weights_per_gpu", "tp_kv_per_token_per_gpu"}
    loose = [q["id"] for q in practice.load_questions() if q.get("compute")
             and q["compute"]["formula"] in byte_formulas and q["compute"].get("unit") not in ("bytes", "GB")]
    assert not loose, loose


# ---- AWQ, Generate's KV formula, attention's S² memory, sv-flash-flops ------------------------------------------
def test_awq_is_four_bit_weight_only(nums):
    for lang, four in (("en", "only the weights in 4 bits"), ("zh", "只把权重存成 4 位的 AWQ")):
        assert four in text("interview", lang, "plain", nums)
    assert "8-bit schemes move" not in text("interview", "en", "plain", nums)


def test_generate_kv_formula_has_bytes_per_element():
    # the bundled 0.5B decoding in float32: 2 × 24 layers × 2 KV heads × 64 × 4 bytes = 24,576 B = 24.00 KiB
    per = 2 * 24 * 2 * 64 * 4
    assert per == 24_576
    en = generate_text.prefill_vs_decode(8, 1, 10.0, 5.0, per, 24, 2, 64, 9, 9 * per, "en")
    zh = generate_text.prefill_vs_decode(8, 1, 10.0, 5.0, per, 24, 2, 64, 9, 9 * per, "zh")
    assert "× 64 dims × 4 bytes = 24.00 KiB" in en and "× 64 维 × 4 字节 = 24.00 KiB" in zh


def test_attention_s_squared_memory_is_eager_only(nums):
    en, zh = text("attention", "en", "academic", nums), text("attention", "zh", "academic", nums)
    assert "grows with $S^2$ only in eager attention" in en and "FlashAttention" in en and "SDPA" in en
    assert "只有在 eager 注意力里才按 $S^2$ 增长" in zh and "SDPA" in zh


def test_flash_flops_answer_does_not_contradict_itself(nums):
    # scores and PV, all 64 layers, S = 4,096: full 2 × 2·40·128·4,096·4,096 × 64 = 21,990,232,555,520 FLOPs;
    # causal pairs 4,096·4,097/2 = 8,390,656: 2 × 2·40·128·8,390,656 × 64 = 10,997,800,632,320 FLOPs
    full, causal = 2 * 2 * 40 * 128 * 4096 * 4096 * 64, 2 * 2 * 40 * 128 * (4096 * 4097 // 2) * 64
    assert (full, causal) == (21_990_232_555_520, 10_997_800_632_320)
    for lang in ("en", "zh"):
        q = question("sv-flash-flops", lang, nums)
        assert f"{full / 1e12:.2f} TFLOP" in q["long"] and f"{causal / 1e12:.2f} TFLOP" in q["long"]
        assert not q["short"].startswith(("No", "不减少")) and ("causality" in q["long"] or "因果掩码" in q["long"])


# ---- tokens per CJK character, min-p's place, Kimi's citation ----------------------------------------------------
def test_a_cjk_character_can_take_four_byte_level_tokens(nums, bundled_tokenizer):
    ext = "\U00030EDE"                               # 𰻞 (CJK Extension G): four UTF-8 bytes, no learned merge
    assert len("中".encode()) == 3 and len(ext.encode()) == 4
    assert len(bundled_tokenizer.encode(ext)) == 4
    for lang, four in (("en", "so up to four tokens"), ("zh", "最多 4 个 token")):
        assert four in question("tok-chinese", lang, nums)["short"]
        assert ext in text("tokenize", lang, "academic", nums)


def test_min_p_place_in_the_chain_is_said(nums):
    # z = [0, ln 0.05]: p2 / p1 = 0.05 < m = 0.1, cut on the untempered distribution (llama.cpp: temperature last);
    # at T = 2 the ratio is 0.05^(1/2) = 0.224 > 0.1 and the token stays (transformers: min-p after temperature)
    z = torch.tensor([0.0, math.log(0.05)])
    assert torch.isinf(smp.apply_min_p(z, 0.1)[1]) and torch.isfinite(smp.apply_min_p(z / 2, 0.1)[1])
    for lang in ("en", "zh"):
        t = text("decode", lang, "academic", nums)
        assert all(w in t for w in ("transformers", "vLLM", "llama.cpp"))


def test_attention_residuals_are_cited(nums):
    for lang in ("en", "zh"):
        t = text("residual", lang, "academic", nums)
        assert "Attention Residuals" in t and "arXiv:2603.15031" in t


# ---- terms ------------------------------------------------------------------------------------------------------
SOURCES = [p for d in ("assets", "content", "app_pages", "ui") for p in (ROOT / d).rglob("*")
           if p.suffix in (".md", ".json", ".py") and p.is_file()]


def test_one_chinese_term_each():
    for bad in ("推测解码", "推测抽样", "注意力汇聚", "作者（"):
        hits = [str(p.relative_to(ROOT)) for p in SOURCES if bad in p.read_text("utf-8")]
        assert not hits, (bad, hits)
    for p in (ROOT / "assets/explain").glob("*.zh.md"):
        prose = re.sub(r"\{[A-Za-z0-9_]+\}|（[A-Za-z][A-Za-z \-/]*）", " ", p.read_text("utf-8"))
        refs = prose[prose.index("**参考文献。**"):prose.index("## plain")] if "**参考文献。**" in prose else ""
        assert not re.search(r"(?<![A-Za-z_-])prefill(?![A-Za-z_-])", prose), p.name
        assert "et al" not in refs, p.name
