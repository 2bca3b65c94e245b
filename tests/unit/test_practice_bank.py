"""The practice bank as a whole (issue 41 §4): its size, every stage the practice page shows, the merged
near-duplicates, both languages, and the computed answers, each number re-derived by hand from the config files
(assets/configs) or from torch's own number formats, never from the app's formulas."""
import json
import math
import pathlib
import re
from collections import Counter

import pytest
import torch

from content import practice, stages, texts
from ops.arith import costs

ROOT = pathlib.Path(__file__).resolve().parents[2]
CFG = {p.stem: json.loads(p.read_text()) for p in (ROOT / "assets/configs").glob("*.json")}
C32, C05 = CFG["qwen2.5-32b-instruct"], CFG["qwen2.5-0.5b-instruct"]
H200_BYTES, H200_BW = 141e9, 4.8e12                    # the H200's published memory and bandwidth
NUMS = texts.numbers(costs.reference_config("Qwen2.5-0.5B-Instruct"))
BANK = practice.load_questions()
BY_ID = {q["id"]: q for q in BANK}

MERGED = {  # survivor: the near-duplicates folded into it (issue 41 §4)
    "prefill-decode": ("sv-prefill-vs-decode", "tokens-per-second"),
    "quantization-decode-prefill": ("sv-weight-only-speed",),
    "sv-kv-requests-141": ("max-tokens-32b-h200",),
    "kv-mha-vs-gqa": ("seed-gqa",),
    "kv-32b-4096": ("kv-per-token-05b", "sv-kv-fp8", "cmp-kv-72b", "cmp-kv-7b"),    # one question, variants (issue 50)
}


def hd(c: dict) -> int:
    return c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]


def params(c: dict) -> int:
    """Every tensor of a Qwen2 / Qwen2-MoE config counted by hand: embedding, per layer q/k/v (+bias), o, the MLP
    (or router, routed experts, shared expert and its gate), two norms; final norm; an LM head unless tied."""
    H, L, V = c["hidden_size"], c["num_hidden_layers"], c["vocab_size"]
    q, kv = c["num_attention_heads"] * hd(c), c["num_key_value_heads"] * hd(c)
    bias = c.get("attention_bias", c["model_type"] in ("qwen2", "qwen2_moe"))
    attn = H * q + 2 * H * kv + q * H + (q + 2 * kv if bias else 0)
    if "num_experts" in c:
        E, Im, Is = c["num_experts"], c["moe_intermediate_size"], c.get("shared_expert_intermediate_size", 0)
        mlp = E * H + E * 3 * H * Im + (3 * H * Is + H if Is else 0)
    else:
        mlp = 3 * H * c["intermediate_size"]
    return V * H + L * (attn + mlp + 2 * H) + H + (0 if c["tie_word_embeddings"] else V * H)


def kv_per_token(c: dict, nbytes: int = 2) -> int:
    return 2 * c["num_hidden_layers"] * c["num_key_value_heads"] * hd(c) * nbytes


def rendered(qid: str, lang: str) -> dict:
    return practice.render(BY_ID[qid], NUMS, lang)


def text(qid: str, lang: str) -> str:
    r = rendered(qid, lang)
    return "\n".join((r["question"], r["short"], r["long"]))


P32, KV32 = params(C32), kv_per_token(C32)
W32 = 2 * P32                                          # bf16 weight bytes


def test_hand_counts_agree_with_published_figures():
    """The counts used below, checked against figures published with the models (FACTS.md)."""
    assert P32 == 32_763_876_352 and KV32 == 262_144
    assert params(C05) == 494_032_768
    assert round(params(CFG["qwen1.5-moe-a2.7b"]) / 1e9, 1) == 14.3


# ---- size and coverage ---------------------------------------------------------------------------------------
def test_bank_has_140_questions_with_unique_ids():
    ids = [q["id"] for q in BANK]
    assert len(ids) >= 140, len(ids)
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]


def test_every_stage_the_page_shows_has_five():
    """The practice page groups the bank by stage, in registry order (every tag present is shown); every stage
    with an explanation (texts.STAGES) must be there, with at least five questions each."""
    n = Counter(q["stage"] for q in BANK)
    assert set(n) <= set(stages.BY_KEY), set(n) - set(stages.BY_KEY)
    assert set(texts.STAGES) <= set(n), set(texts.STAGES) - set(n)
    assert {s: k for s, k in n.items() if k < 5} == {}


def test_difficulties_are_spread():
    d = Counter(q["difficulty"] for q in BANK)
    assert set(d) == {1, 2, 3} and min(d.values()) >= 25, d
    for s in {q["stage"] for q in BANK}:                 # no stage is all one level
        assert len({q["difficulty"] for q in BANK if q["stage"] == s}) >= 2, s


# ---- merged near-duplicates -----------------------------------------------------------------------------------
def test_merged_pairs_have_one_survivor():
    for survivor, gone in MERGED.items():
        assert survivor in BY_ID, survivor
        assert not set(gone) & set(BY_ID), gone


def test_removed_ids_are_referenced_nowhere():
    removed = [i for gone in MERGED.values() for i in gone]
    here = pathlib.Path(__file__).resolve()
    files = [p for d in ("content", "ui", "app_pages", "assets/lessons", "assets/practice", "tests", "docs")
             for p in (ROOT / d).rglob("*") if p.is_file() and p.suffix in (".py", ".json", ".md", ".yaml", ".toml")
             and p.resolve() != here]
    pat = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, removed)) + r")(?![\w-])")
    hits = {str(p.relative_to(ROOT)): pat.findall(p.read_text("utf-8", "ignore")) for p in files}
    assert not {k: v for k, v in hits.items() if v}


def test_survivors_carry_what_was_folded_in():
    ms = W32 / H200_BW * 1e3                           # one bf16 weight read on an H200, the decode bound
    ms8 = P32 / H200_BW * 1e3
    tokens = int((H200_BYTES - W32) // KV32)           # KV tokens beside the bf16 weights
    assert (f"{ms:.2f}", f"{ms8:.2f}", tokens) == ("13.65", "6.83", 287_903)
    for lang, ttft in (("en", "time to first token"), ("zh", "首 token 延迟")):
        pd = text("prefill-decode", lang)
        assert ttft in pd and f"{ms:.2f} ms" in pd
        assert NUMS["sv_h200_prefill8_ai"] in pd and NUMS["sv_h200_prefill1k_ai"] in pd   # sv-prefill-vs-decode's
        q = text("quantization-decode-prefill", lang)
        assert f"{ms:.2f} ms" in q and f"{ms8:.2f} ms" in q
        r = rendered("sv-kv-requests-141", lang)
        assert f"{tokens:,}" in r["short"] and r["answer"] == tokens // 4096 == 70
        g = text("kv-mha-vs-gqa", lang)
        assert "GQA" in g and f"{KV32:,}" in g and f"{5 * KV32:,}" in g
    assert BY_ID["kv-mha-vs-gqa"]["seed"]               # the source documents' GQA question lives on in it


# ---- both languages ------------------------------------------------------------------------------------------
_LEFT = re.compile(r"\{[A-Za-z_]\w*\}|\{\{|\}\}")
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]*\$", re.S)


@pytest.mark.parametrize("lang", texts.LANGS)
def test_every_field_is_filled_in_both_languages(lang):
    for q in BANK:
        for part in ("question", "short", "long"):
            assert q[part].get("zh", "").strip() and q[part].get("en", "").strip(), (q["id"], part)
        r = rendered(q["id"], lang)
        for part in ("question", "short", "long"):
            assert r[part].strip() and not _LEFT.findall(_MATH.sub("", r[part])), (q["id"], part, r[part])
    if lang == "zh":                                   # Chinese text, or at least Chinese punctuation around a figure
        assert all(re.search(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]", rendered(q["id"], "zh")[part])
                   for q in BANK for part in ("question", "short", "long"))


def test_both_languages_state_the_same_numbers():
    """Every number of an English answer is in the Chinese one (figures are the same in both)."""
    num = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
    for q in BANK:
        en, zh = (rendered(q["id"], lang) for lang in ("en", "zh"))
        for part in ("short", "long"):
            missing = set(num.findall(en[part])) - set(num.findall(zh[part]))
            assert not missing, (q["id"], part, missing)


# ---- computed answers ------------------------------------------------------------------------------------------
def test_every_computed_answer_evaluates():
    for q in BANK:
        if practice.is_computed(q):
            v = practice.compute(q)
            assert v is not None and math.isfinite(v) and v > 0, q["id"]
            assert q["compute"]["formula"] in practice.FORMULAS and q["compute"]["config"] in costs.reference_configs()


def test_new_computed_answers_by_hand():
    c72 = CFG["qwen2.5-72b-instruct"]
    a3b, a27 = CFG["qwen3-30b-a3b"], CFG["qwen1.5-moe-a2.7b"]
    H, I, V = C32["hidden_size"], C32["intermediate_size"], C32["vocab_size"]
    idle = a27["num_hidden_layers"] * (a27["num_experts"] - a27["num_experts_per_tok"]) * 3 * a27["hidden_size"] * \
        a27["moe_intermediate_size"]
    want = {
        "moe-layer-experts": a3b["num_experts"] * 3 * a3b["hidden_size"] * a3b["moe_intermediate_size"],
        "moe-shared-expert": params(a27) - idle,
        "lmh-logits-bytes": 4096 * V * 4,
        "mlp-flops-token": 2 * 3 * H * I,
        "prec-fp4-formats": int(P32 * (4 + 8 / 32) / 8),          # MXFP4: E2M1 + one E8M0 scale per 32
        "cmp-72b-mlp": 3 * c72["hidden_size"] * c72["intermediate_size"],
        "dec-kv-equal-weights": round(W32 / KV32),
    }
    assert want["moe-layer-experts"] == 603_979_776 and want["mlp-flops-token"] == 849_346_560
    assert want["lmh-logits-bytes"] == 2_491_416_576 and want["cmp-72b-mlp"] == 726_663_168
    assert round(want["moe-shared-expert"] / 1e9, 1) == 2.7 and want["dec-kv-equal-weights"] == 249_969
    for qid, v in want.items():
        assert practice.compute(BY_ID[qid]) == v, qid
        for lang in texts.LANGS:
            assert f"{v:,}" in text(qid, lang), (qid, lang)
    share = 100 * C05["vocab_size"] * C05["hidden_size"] / params(C05)        # tied: one [V, H] table
    assert C05["tie_word_embeddings"] and practice.compute(BY_ID["lmh-vocab-share"]) == pytest.approx(share)
    for lang in texts.LANGS:
        assert f"{share:.2f}%" in rendered("lmh-vocab-share", lang)["short"]
        assert "4.25" in rendered("prec-fp4-formats", lang)["short"] and "4.5" in rendered("prec-fp4-formats",
                                                                                              lang)["short"]
    assert 4 + 8 / 16 == 4.5                                               # NVFP4: E2M1 + one E4M3 scale per 16


# ---- figures in conceptual answers, re-derived -----------------------------------------------------------------

def test_the_kv_bytes_question_asked_once_with_variants():
    """The KV-bytes formula, once asked about ten times, is one question with variants (model, context, dtype): each
    variant's answer is the hand count 2 x layers x KV heads x head size x bytes x tokens from the config file, and
    each text shows that computation."""
    c7, c72 = CFG["qwen2.5-7b-instruct"], CFG["qwen2.5-72b-instruct"]
    want = [(C32, 4096, 2), (C05, 32768, 2), (c7, 4096, 2), (c72, 4096, 2), (C32, 4096, 1)]
    assert [kv_per_token(c, b) for c, _, b in want] == [262_144, 12_288, 57_344, 327_680, 131_072]
    q = BY_ID["kv-32b-4096"]
    assert [practice.compute(q)] + [practice._value(s) for s in practice.variant_specs(q)] == \
        [kv_per_token(c, b) * n for c, n, b in want]
    for lang in texts.LANGS:
        r = rendered("kv-32b-4096", lang)
        assert len(r["variants"]) == len(want) - 1
        for x, (c, n, b) in zip([r] + r["variants"], want):
            per, shown = kv_per_token(c, b), "\n".join((x["question"], x["short"], x["long"]))
            steps = f"2{'（K 和 V）' if lang == 'zh' else ' (K and V) '}× {c['num_hidden_layers']}"
            assert x["answer"] == per * n and f"{per * n:,}" in shown and f"{per:,}" in shown and steps in shown
            assert f"{n:,}" in x["question"] and ("FP8" if b == 1 else "bf16") in x["question"] and "{" not in shown
    others = [k for k, v in BY_ID.items() if v.get("compute", {}).get("formula") in ("kv_cache_bytes",
                                                                                      "kv_bytes_per_token")]
    assert others == ["kv-32b-4096"]

def test_bf16_spacing_and_rounding():
    eps = torch.finfo(torch.bfloat16).eps
    assert eps == 2 ** -7 == 0.0078125
    assert torch.tensor(257.0).to(torch.bfloat16).item() == 256.0                # 256 + 1 is still 256
    assert torch.tensor(258.0).to(torch.bfloat16).item() == 258.0                # spacing 2 in [256, 512)
    assert torch.finfo(torch.float16).eps == 2 ** -10 and torch.finfo(torch.float16).max == 65504
    for lang in texts.LANGS:
        t = text("prec-bf16-spacing", lang)
        assert "0.0078125" in rendered("prec-bf16-spacing", lang)["short"] and "2^{-8}" in t and "65504" in t
        assert "256 + 1" in t


def test_rmsnorm_and_layernorm_by_hand():
    x = torch.tensor([3.0, 4.0])
    rms = x / x.pow(2).mean().sqrt()
    ln = torch.nn.functional.layer_norm(x, (2,), eps=0.0)
    assert [round(v, 3) for v in rms.tolist()] == [0.849, 1.131] and ln.tolist() == [-1.0, 1.0]
    for lang in texts.LANGS:
        s = rendered("rms-by-hand", lang)["short"]
        assert "0.849" in s and "1.131" in s and "3.536" in s and "[−1, 1]" in s


def test_silu_minimum():
    x = torch.linspace(-4, 0, 400_001, dtype=torch.float64)
    y = torch.nn.functional.silu(x)
    i = int(y.argmin())
    assert round(float(x[i]), 2) == -1.28 and round(float(y[i]), 2) == -0.28
    for lang in texts.LANGS:
        t = rendered("mlp-silu-gate", lang)["long"]
        assert "−0.28" in t and "−1.28" in t


def test_min_p_example():
    """p_min = 0.1: the threshold is 0.1 × the top probability (0.9 -> 0.09, 0.2 -> 0.02)."""
    assert (round(0.1 * 0.9, 4), round(0.1 * 0.2, 4)) == (0.09, 0.02)
    for lang in texts.LANGS:
        t = rendered("samp-min-p", lang)["long"]
        assert "0.09" in t and "0.02" in t


# ---- issue 41 §1, the practice bank's part ------------------------------------------------------------------------
def test_q4k_in_both_languages():
    block, nbytes = 256, 2 + 2 + 12 + 256 // 2           # ggml block_q4_K: d, dmin, 6-bit scales/mins, nibbles
    over = nbytes - block // 2
    assert (nbytes, over, 8 * nbytes / block) == (144, 16, 4.5)
    for lang in texts.LANGS:
        r = rendered("sv-q4k-bpw", lang)
        assert r["answer"] == 4.5
        assert all(f"{n}" in r["long"] for n in (nbytes, over, "0.5", "4.5"))
        assert not re.search(r"below one fp16|少于一个 fp16|不到一个 fp16", r["long"])


def test_batching_answers_count_each_sequences_kv():
    """Only the weight reads are shared across a batch: every answer about batched decode says each sequence's KV
    cache is read too, with the H200 example's KV bytes computed by hand (70 requests x 4,096 tokens)."""
    kv_read = 70 * 4096 * KV32
    assert f"{kv_read / 1e9:.1f}" == "75.2" and f"{W32 / 1e9:.1f}" == "65.5"
    for qid in ("prefill-decode", "quantization-decode-prefill", "dec-kv-equal-weights"):
        for lang in texts.LANGS:
            t = rendered(qid, lang)["long"]
            assert "75.2 GB" in t and "65.5 GB" in t, (qid, lang)
    for lang, own in (("en", "own KV cache"), ("zh", "自己的 KV cache")):
        assert own in rendered("sv-continuous", lang)["long"]
    en = rendered("quantization-decode-prefill", "en")["long"]
    assert "only if the hardware multiplies faster" in en and "(or the weights must be dequantised first)" not in en
