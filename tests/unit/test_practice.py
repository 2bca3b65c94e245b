"""Interview questions and the live-trace quiz."""
import pytest

from ops import costs
from content import practice, texts
from ops.config import ModelConfig

NUMS = texts.numbers(costs.reference_config("Qwen2.5-0.5B-Instruct"))


def test_question_count_and_texts():
    qs = practice.load_questions()
    seeds = [q for q in qs if q["seed"]]
    assert len(seeds) >= 6 and len(qs) - len(seeds) >= 30
    stages = {q["stage"] for q in qs}
    assert stages <= set(texts.STAGES) and len(stages) >= 10
    for lang in texts.LANGS:
        for r in practice.questions(NUMS, lang):
            assert r["question"] and r["short"] and r["long"], r["id"]
            assert "{" not in r["short"] + r["long"] or "$" in r["long"], r["id"]


def test_numeric_answers_equal_costs():
    refs = costs.reference_configs()
    c32 = refs["Qwen2.5-32B-Instruct"]
    want = {
        "kv-32b-4096": costs.kv_cache_bytes(c32, 4096, 2),
        "params-32b": costs.total_params(c32),
        "params-05b": costs.total_params(refs["Qwen2.5-0.5B-Instruct"]),
        "lm-head-flops-32b": costs.matmul_flops(1024, 152064, 5120),
        "embed-bytes-32b": 152064 * 5120 * 2,
        "weights-32b-int4": costs.weight_bytes(c32, "int4"),
        "active-params-moe": costs.active_params(refs["Qwen3-30B-A3B"]),
        "n-rep-32b": 5,
        "attn-params-32b": 62_921_728,
        "mlp-params-32b": 3 * 5120 * 27648,
        "kv-mha-vs-gqa": 2 * 64 * 40 * 128 * 2,
    }
    got = {q["id"]: practice.compute(q) for q in practice.load_questions() if "compute" in q}
    assert len(got) >= 10
    for k, v in want.items():
        assert got[k] == v, k
    assert got["kv-32b-4096"] == 2**30
    r = practice.render(next(q for q in practice.load_questions() if q["id"] == "kv-32b-4096"), NUMS, "en")
    assert "1,073,741,824" in r["short"] and "1.00 GiB" in r["short"]
    assert abs(got["decode-ms-32b-h200"] - 13.65) < 0.01


def test_every_compute_block_runs():
    for q in practice.load_questions():
        if "compute" in q:
            assert practice.compute(q) > 0, q["id"]
            assert q["compute"]["formula"] in practice.FORMULAS


@pytest.mark.parametrize("text, shape", [
    ("[1, 14, 5, 5]", [1, 14, 5, 5]), ("1x14x5x5", [1, 14, 5, 5]), ("(1,14,5,5)", [1, 14, 5, 5]),
    ("1 × 14 × 5 × 5", [1, 14, 5, 5]),
])
def test_parse_shape(text, shape):
    assert practice.parse_shape(text) == shape


@pytest.mark.parametrize("text, value", [
    ("1,073,741,824", 2**30), ("1 GiB", 2**30), ("1073741824 bytes", 2**30), ("32.76B", 32.76e9),
    ("3.3e9", 3.3e9), ("12 万", 1.2e5), ("5", 5), ("262_144", 262144),
])
def test_parse_number(text, value):
    assert practice.parse_number(text) == pytest.approx(value)


def test_parse_number_rejects_garbage():
    assert practice.parse_number("about five") is None
    assert practice.parse_number("12 parsecs") is None


def _shapes(c: ModelConfig, B: int, S: int) -> dict:
    H, nh, nkv, hd = c.hidden_size, c.num_attention_heads, c.num_key_value_heads, c.head_dim
    return {"tokens.ids": (B, S), "embed.out": (B, S, H), "layers.0.attn.q": (B, nh, S, hd),
            "layers.0.attn.k": (B, nkv, S, hd), "layers.0.attn.probs": (B, nh, S, S),
            "layers.0.attn.context": (B, S, nh * hd), "layers.0.mlp.gate": (B, S, c.intermediate_size),
            "logits": (B, S, c.vocab_size)}


def test_quiz_items_and_checking():
    c = costs.reference_config("Qwen2.5-0.5B-Instruct")
    items = practice.quiz_items(c, _shapes(c, 1, 5))
    by_src = {}
    for it in items:
        by_src.setdefault(it["source"], []).append(it)
        assert it["question"]["zh"] and it["question"]["en"] and it["kind"] in ("shape", "number")
    probs = next(i for i in by_src["layers.0.attn.probs"] if i["kind"] == "shape")
    assert probs["answer"] == [1, 14, 5, 5]
    assert practice.check_answer(probs, "[1, 14, 5, 5]")
    assert practice.check_answer(probs, "1x14x5x5")
    assert not practice.check_answer(probs, "[1, 2, 5, 5]")
    n_rep = by_src["config.n_rep"][0]
    assert n_rep["answer"] == 7 and practice.check_answer(n_rep, "7") and not practice.check_answer(n_rep, "8")
    kv = by_src["config.kv_bytes_per_token"][0]
    assert practice.check_answer(kv, "12,288") and practice.check_answer(kv, "12 KiB")
    total = by_src["config.total_params"][0]
    assert practice.check_answer(total, "494,032,768") and practice.check_answer(total, "0.494 B")
    assert not practice.check_answer(total, "0.6B")
    zeros = [i for i in by_src["layers.0.attn.probs"] if i["kind"] == "number"]
    assert {i["answer"] for i in zeros} == {1 * 14 * 25, 10}


def test_quiz_items_moe_router_only_when_traced():
    c = costs.reference_config("Qwen3-30B-A3B")
    shapes = _shapes(c, 2, 3)
    assert not any(i["source"].endswith("router_probs") for i in practice.quiz_items(c, shapes))
    shapes["layers.0.moe.router_probs"] = (2, 3, 128)
    item = next(i for i in practice.quiz_items(c, shapes) if i["source"].endswith("router_probs"))
    assert practice.check_answer(item, "[2, 3, 128]")
