"""Interview questions and the live-trace quiz."""
import pytest

from content import practice, texts
from ops.arith import costs
from ops.engine.config import ModelConfig
from ops.lab import practice_data

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


# ---- the live quiz's pool: the trace, experiments rerun on it, the serving chapter --------------------------
@pytest.fixture(scope="module")
def tiny_model(tiny_hf_folder):
    from ops import load_model

    return load_model(str(tiny_hf_folder("qwen2")), device="cpu")


def _by_source(pool, group):
    return {it["source"]: it for it in pool if it["group"] == group}


def test_quiz_pool_draws_from_trace_experiments_and_serving(tiny_model):
    import torch

    c = tiny_model.config
    L, nh = c.num_hidden_layers, c.num_attention_heads
    trace = tiny_model.trace(["the tea is hot"])
    n = trace.lengths[0]
    pool = practice.quiz_pool(tiny_model, trace, NUMS, practice_data.experiment_runs(tiny_model, trace))
    assert {it["group"] for it in pool} == set(practice.QUIZ_GROUPS)
    for it in pool:
        for lang in texts.LANGS:
            assert it["question"][lang] and "{" not in it["question"][lang], it["source"]
            assert practice.answer_text(it, lang) and practice.where_text(it, lang, trace.shapes())
        assert practice.check_answer(it, practice.answer_text(it, "en").split(" (")[0]), it["source"]
    # serving: every computed serving question but the follow-up, answered by its formula
    bank = {q["id"]: q for q in practice.load_questions() if q["stage"] == "serving" and "compute" in q}
    serving = _by_source(pool, "serving")
    assert set(serving) == {k for k, q in bank.items() if q.get("quiz") is not False} and len(serving) >= 10
    assert all(serving[k]["answer"] == practice.compute(bank[k]) for k in serving)
    # experiments: what the reruns found, as causality and the residual stream say it must be
    exp = [it for it in pool if it["group"] == "experiment"]
    first, changed, parts = exp
    assert first["answer"] == (L - 1) // 2                         # resid_out = resid_mid + mlp.out: that very layer
    assert changed["answer"] == n - n // 2     # the edited position and, through later layers' attention, every one after
    bias = tiny_model.w("model.layers.0.self_attn.o_proj.bias") is not None
    assert parts["answer"] == 1 + L * nh + L + (L if bias else 0)
    # the trace: the top next token's probability, from the logits
    top = next(it for it in pool if it["source"] == "softmax(logits)")
    assert top["answer"] == pytest.approx(float(torch.softmax(trace.logits[0, n - 1].float(), -1).max()), abs=1e-6)
    assert practice.check_answer(top, f"{top['answer'] + 0.015:.3f}") and not practice.check_answer(top, f"{top['answer'] + 0.05:.3f}")


def test_quiz_answers_are_computed_not_typed(tiny_model, monkeypatch):
    """A longer prompt changes the experiments' answers; another reference config changes the serving answers."""
    def changed(trace):                        # the second experiment: at how many positions the logits changed
        return [it for it in practice.quiz_pool(tiny_model, trace, NUMS, practice_data.experiment_runs(tiny_model, trace)) if it["group"] == "experiment"][1]["answer"]

    short, long = (tiny_model.trace([p]) for p in ("hi there", "the cat sat on the mat and then it ran"))
    ns, nl = short.lengths[0], long.lengths[0]
    assert ns != nl and changed(short) == ns - ns // 2 and changed(long) == nl - nl // 2
    before = {k: it["answer"] for k, it in _by_source(practice.quiz_pool(tiny_model, short, NUMS, practice_data.experiment_runs(tiny_model, short)), "serving").items()}
    refs = costs.reference_configs()
    label = "Qwen2.5-32B-Instruct"
    monkeypatch.setattr(costs, "reference_configs", lambda: {**refs, label: refs[label].replace(num_key_value_heads=4)})
    after = {k: it["answer"] for k, it in _by_source(practice.quiz_pool(tiny_model, short, NUMS, practice_data.experiment_runs(tiny_model, short)), "serving").items()}
    assert after["sv-paged-block"] == before["sv-paged-block"] // 2       # 8 -> 4 KV heads: half the bytes per block
    assert after["sv-kv-requests-141"] > before["sv-kv-requests-141"]  # and more requests fit beside the weights
