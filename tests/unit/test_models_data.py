"""ops/lab/models_data.py against hand-worked numbers: the config rows (KV bytes per token, parameters) of
Qwen2.5-0.5B and SmolLM2-135M, tokenization, the next-token union, the relative depth and the memory check."""
import math
import re

import pytest
import torch

from content import models as words
from ops.arith import costs
from ops.engine.config import ModelConfig
from ops.lab import models_data as cm

# SmolLM2-135M-Instruct as its config.json says (FACTS.md), typed here, not read through our loader
SMOL = ModelConfig(model_type="llama", vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                   num_attention_heads=9, num_key_value_heads=3, head_dim_=64, rope_theta=100_000.0, rms_norm_eps=1e-5,
                   tie_word_embeddings=True, attention_bias=False, name="SmolLM2-135M-Instruct")
QWEN = costs.reference_config("Qwen2.5-0.5B-Instruct")


def rows(a=QWEN, b=SMOL, **kw):
    return {r["key"]: r for r in cm.config_rows(a, b, **kw)}


def test_kv_bytes_per_token_by_hand():
    r = rows()
    assert r["kv_per_token"]["a"] == 2 * 24 * 2 * 64 * 2 == 12_288          # K and V x L x nkv x hd x bf16
    assert r["kv_per_token"]["b"] == 2 * 30 * 3 * 64 * 2 == 23_040
    for key in ("num_hidden_layers", "num_key_value_heads", "head_dim"):
        assert (r[key]["bytes_a"], r[key]["bytes_b"]) == (12_288, 23_040)
    # with one KV head per query head (MHA): 14 and 9 KV heads
    assert (r["n_rep"]["bytes_a"], r["n_rep"]["bytes_b"]) == (2 * 24 * 14 * 64 * 2, 2 * 30 * 9 * 64 * 2)


def test_rows_values_by_hand():
    r = rows()
    want = dict(model_type=("qwen2", "llama"), hidden_size=(896, 576), num_hidden_layers=(24, 30),
                num_attention_heads=(14, 9), num_key_value_heads=(2, 3), n_rep=(7, 3), head_dim=(64, 64),
                intermediate_ratio=(round(4864 / 896, 3), round(1536 / 576, 3)), rope_theta=(1e6, 1e5),
                rms_norm_eps=(1e-6, 1e-5), qkv_bias=(True, False), tie_word_embeddings=(True, True),
                vocab_size=(151936, 49152))
    for key, (a, b) in want.items():
        assert (r[key]["a"], r[key]["b"]) == (a, b), key
        assert r[key]["same"] == (a == b)
    assert "special_tokens" not in r                      # no tokenizers given


def test_parameters_by_hand():
    r = rows()
    # q/k/v biases: L x (nh + 2 nkv) x hd
    assert (r["qkv_bias"]["cost_a"], r["qkv_bias"]["cost_b"]) == (24 * (14 + 2 + 2) * 64, 0)
    assert r["qkv_bias"]["bytes_a"] == 27_648 * 2
    # one layer's q_proj (+ bias) and o_proj
    assert r["num_attention_heads"]["cost_a"] == 896 * 896 + 896 + 896 * 896
    assert r["num_attention_heads"]["cost_b"] == 2 * 576 * 576
    assert r["intermediate_ratio"]["cost_a"] == 3 * 896 * 4864
    assert r["vocab_size"]["cost_b"] == 49152 * 576
    assert r["tie_word_embeddings"]["cost_a"] == 0                       # the published 0.5B config ties
    assert rows(QWEN.replace(tie_word_embeddings=False))["tie_word_embeddings"]["cost_a"] == 151936 * 896
    # SmolLM2: embedding + 30 x (q, k, v, o, 3 MLP matrices, 2 norms) + final norm
    layer = 576 * 576 + 2 * 192 * 576 + 576 * 576 + 3 * 576 * 1536 + 2 * 576
    assert r["hidden_size"]["cost_b"] == layer
    assert r["total_params"]["b"] == 49152 * 576 + 30 * layer + 576 == 134_515_008


def test_rope_wavelength():
    assert cm.slowest_wavelength(SMOL) == pytest.approx(2 * math.pi * 100_000 ** (62 / 64))


def test_same_depth():
    assert [cm.same_depth(24, f) for f in (0, 0.5, 1)] == [0, 12, 23]
    assert [cm.same_depth(30, f) for f in (0, 0.5, 1)] == [0, 15, 29]         # 14.5 rounds up
    assert cm.same_depth(2, 5.0) == 1


def test_memory_check():
    assert cm.load_need_bytes(SMOL) == 134_515_008 * 4
    assert cm.load_need_bytes(SMOL, "bfloat16") == 134_515_008 * 6
    assert cm.fits(10, 0) and cm.fits(10, 10) and not cm.fits(11, 10)


def test_source_config_of_the_smollm2_gguf(smollm2_gguf_path):
    c = cm.source_config(smollm2_gguf_path)
    assert (c.hidden_size, c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads, c.head_dim) == \
        (576, 30, 9, 3, 64)
    assert costs.kv_bytes_per_token(c) == 23_040


def test_atlas_rows():
    out = cm.atlas_rows({"previous": 3, "sink": 1}, {"previous": 1, "self": 2})
    assert [(r["kind"], r["a"], r["b"]) for r in out] == [("previous", 3, 1), ("sink", 1, 0), ("self", 0, 2)]
    assert out[0]["share_a"] == 0.75 and out[2]["share_b"] == pytest.approx(2 / 3)


# ---- tokenizers ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def qwen_tok():
    from ops.models import bundled as bundled_mod
    from ops.models.tokenizer import Tokenizer

    path = bundled_mod.cache_dir() / bundled_mod.BUNDLED_DIRNAME / "tokenizer.json"
    if not path.exists():
        pytest.skip("the bundled tokenizer.json is not prepared")
    return Tokenizer.from_file(path)


def test_tokenization_by_hand(qwen_tok, tiny_tokenizer):
    (row,) = cm.tokenization(qwen_tok, tiny_tokenizer, {"en": "I like shanghai"})
    assert row["chars"] == 15 and row["bytes"] == 15
    assert [p["id"] for p in row["pieces_a"]] == [40, 1075, 557, 30070]        # FACTS.md
    # the tiny BPE: "I" | " l i k e" (no merge) | " s" merged, "an" merged: " s h an g h a i"
    assert [p["piece"] for p in row["pieces_b"]] == ["I", " ", "l", "i", "k", "e", " s", "h", "an", "g", "h", "a", "i"]
    assert row["per_char_a"] == 4 / 15 and row["per_char_b"] == 13 / 15
    assert row["shared"] == 1 and [p["shared"] for p in row["pieces_a"]] == [True, False, False, False]
    assert row["cuts_a"] == [] and 2 in row["cuts_b"]                  # every Qwen cut is a tiny cut too


@pytest.fixture
def tiny_tokenizer():
    from conftest import tiny_tokenizer as make

    return make()


def test_next_token_union_by_hand(qwen_tok, tiny_tokenizer):
    the_tiny = tiny_tokenizer.encode(" the")
    the_qwen = qwen_tok.encode(" the")
    assert len(the_tiny) == 1 and len(the_qwen) == 1
    a = torch.zeros(272)
    a[the_tiny[0]] = 3.0
    a[tiny_tokenizer.encode("x")[0]] = 1.0
    b = torch.zeros(151936)
    b[the_qwen[0]] = 2.0
    b[qwen_tok.encode(" shanghai")[0] if len(qwen_tok.encode(" shanghai")) == 1 else 30070] = 4.0
    out = cm.next_token(tiny_tokenizer, a, qwen_tok, b, k=2)
    by = {r["text"]: r for r in out}
    za = math.exp(3) + math.exp(1) + 270                                 # 272 rows, two raised
    zb = math.exp(2) + math.exp(4) + 151934
    assert by[" the"]["p_a"] == pytest.approx(math.exp(3) / za) and by[" the"]["rank_a"] == 1
    assert by[" the"]["p_b"] == pytest.approx(math.exp(2) / zb) and by[" the"]["rank_b"] == 2
    assert by["x"]["p_a"] == pytest.approx(math.exp(1) / za) and by["x"]["id_b"] == qwen_tok.encode("x")[0]
    top_b = [r for r in out if r["rank_b"] == 1][0]
    assert top_b["p_a"] is None and top_b["id_a"] is None               # not one token of the tiny vocabulary
    assert len(out) == 3                                                 # the, x, and B's top


# ---- the words: every placeholder filled, the sentences true of whichever pair ------------------------------------
@pytest.mark.parametrize("pair", [(QWEN, SMOL), (SMOL, QWEN), (QWEN, QWEN)], ids=["qwen-smol", "smol-qwen", "same"])
def test_explanation_filled_and_model_aware(pair):
    from content import texts

    a, b = pair
    r = cm.config_rows(a, b)
    nums = words.numbers(a, b, "AA", "BB", r)
    for lang in texts.LANGS:
        for level in texts.LEVELS:
            text = texts.explain("models", lang, level, texts.in_lang(nums, lang))
            outside_math = re.sub(r"\$[^$]*\$", "", text)
            assert not re.findall(r"\{[A-Za-z_]\w*\}|\{\{|\}\}", outside_math), (lang, level)
            assert f"{costs.kv_bytes_per_token(a):,}" in text and f"{costs.kv_bytes_per_token(b):,}" in text
    if a.attention_bias != b.attention_bias:
        has = "AA" if a.attention_bias else "BB"
        assert nums["bias_sentence_en"].startswith(has) and nums["bias_sentence_zh"].startswith(has)
    else:
        assert "Both" in nums["bias_sentence_en"]
    assert len(words.config_table(r, "zh")) == len(r) == len(words.effect_table(r, "en"))


def test_the_kv_bytes_per_token_are_said_once():
    """Issue 47: the difference table repeated "12,288 B / token" on layers, KV heads and head dim (one figure that
    all three set). Qwen2.5-0.5B beside SmolLM2 (their config.json files): the figure is written once, on the first
    row that drives it, 2 · L · nkv · hd · 2 by hand (2·24·2·64·2 = 12,288; 2·30·3·64·2 = 23,040); the later rows
    with the same figure point up to it; n_rep's own figure (MHA's cache, 7x and 3x) stays."""
    refs = costs.reference_configs()
    rows = cm.config_rows(refs["Qwen2.5-0.5B-Instruct"], refs["SmolLM2-135M-Instruct"])
    table = {line["config"]: (line["A: params · bytes"], line["B: params · bytes"])
             for line in words.config_table(rows, "en", effects=False)}
    cells = [c for pair in table.values() for c in pair]
    assert cells.count("12,288 B / token") == 1 and cells.count("23,040 B / token") == 1
    assert table["layers L"] == ("12,288 B / token", "23,040 B / token")
    assert table["KV heads nkv"] == table["head dim hd"] == ("↑", "↑")
    assert table["n_rep = nh / nkv"] == (f"{12_288 * 7:,} B / token", f"{23_040 * 3:,} B / token")
    assert table["KV cache per token"] == ("", "")
