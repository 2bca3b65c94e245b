"""ops/arith/costs.py against published totals, hand counts, and real transformers models."""

import pytest
from conftest import SMALL

from content import stages as registry
from ops.arith import costs
from ops.engine.config import ModelConfig

COST_STAGES = list(dict.fromkeys(s.costs for s in registry.STAGES if s.costs))   # each cost stage once (two pages may show one)


@pytest.fixture(scope="module")
def refs():
    return costs.reference_configs()


def test_reference_configs_load(refs):
    assert set(refs) == {"Qwen2.5-0.5B-Instruct", "Qwen2.5-7B-Instruct", "Qwen2.5-32B-Instruct",
                         "Qwen2.5-72B-Instruct", "Qwen1.5-MoE-A2.7B", "Qwen2-57B-A14B", "Qwen3-30B-A3B",
                         "SmolLM2-135M-Instruct"}
    assert not refs["Qwen2.5-32B-Instruct"].is_moe  # 32B is dense
    assert refs["Qwen3-30B-A3B"].has_qk_norm and not refs["Qwen3-30B-A3B"].attention_bias
    assert refs["Qwen2.5-0.5B-Instruct"].tie_word_embeddings
    assert not refs["Qwen2.5-32B-Instruct"].tie_word_embeddings
    smol = refs["SmolLM2-135M-Instruct"]                 # the one llama: no bias anywhere, tied, no q/k norm
    assert smol.model_type == "llama" and not smol.attention_bias and smol.tie_word_embeddings
    assert not smol.has_qk_norm and not smol.is_moe


@pytest.mark.parametrize("label, counted, published", [
    ("Qwen2.5-0.5B-Instruct", 494_032_768, 0.49e9),
    ("Qwen2.5-7B-Instruct", 7_615_616_512, 7.61e9),
    ("Qwen2.5-32B-Instruct", 32_763_876_352, 32.5e9),
    ("Qwen2.5-72B-Instruct", 72_706_203_648, 72.7e9),
    ("Qwen1.5-MoE-A2.7B", 14_315_784_192, 14.3e9),
    ("Qwen2-57B-A14B", 57_408_658_944, 57.4e9),
    ("Qwen3-30B-A3B", 30_532_122_624, 30.5e9),
    ("SmolLM2-135M-Instruct", 134_515_008, 135e6),      # the "135M" in its name
])
def test_total_params(refs, label, counted, published):
    n = costs.total_params(refs[label])
    assert n == counted
    assert abs(n - published) / published < 0.01, (label, n, published)


def test_fact_sheet_rounding(refs):
    assert round(costs.total_params(refs["Qwen2.5-32B-Instruct"]) / 1e9, 3) == 32.764
    assert round(costs.total_params(refs["Qwen2.5-0.5B-Instruct"]) / 1e9, 3) == 0.494
    assert round(costs.total_params(refs["Qwen2.5-72B-Instruct"]) / 1e9, 3) == 72.706


def test_active_params(refs):
    assert costs.active_params(refs["Qwen2.5-32B-Instruct"]) == costs.total_params(refs["Qwen2.5-32B-Instruct"])
    assert abs(costs.active_params(refs["Qwen3-30B-A3B"]) / 1e9 - 3.3) < 0.1    # "A3B"
    assert abs(costs.active_params(refs["Qwen2-57B-A14B"]) / 1e9 - 14.2) < 0.2  # "A14B"
    assert abs(costs.active_params(refs["Qwen1.5-MoE-A2.7B"]) / 1e9 - 2.7) < 0.1


def test_tied_lm_head_counts_zero(refs):
    rows = {r["operator"]: r for r in costs.param_table(refs["Qwen2.5-0.5B-Instruct"])}
    assert rows["lm_head"]["params"] == 0 and "tied" in rows["lm_head"]["note"]
    rows32 = {r["operator"]: r for r in costs.param_table(refs["Qwen2.5-32B-Instruct"])}
    assert rows32["lm_head"]["params"] == 152064 * 5120


def test_matmul_flops_hand_count(refs):
    # q_proj of 32B on 3 tokens: each of 3*5120 outputs is a 5120-long dot product = 5120 mul + 5120 add
    c = refs["Qwen2.5-32B-Instruct"]
    hand = 3 * 5120 * (5120 + 5120)
    rows = {r["operator"]: r for r in costs.flops(c, 1, 3)}
    assert rows["attention q_proj"]["per_layer"] == hand
    assert rows["attention q_proj"]["flops"] == hand * 64
    assert rows["lm_head"]["flops"] == 2 * 3 * 5120 * 152064


def test_attention_flops_full_and_causal(refs):
    c = refs["Qwen2.5-0.5B-Instruct"]
    S = 10
    full = {r["operator"]: r for r in costs.flops(c, 2, S)}
    half = {r["operator"]: r for r in costs.flops(c, 2, S, causal_half=True)}
    assert full["attention scores QK^T"]["per_layer"] == 2 * 2 * 14 * S * S * 64
    assert half["attention scores QK^T"]["per_layer"] == 2 * 2 * 14 * (S * (S + 1) // 2) * 64


def test_decode_flops_and_moe_active_only(refs):
    c = refs["Qwen3-30B-A3B"]
    rows = {r["operator"]: r for r in costs.flops(c, 1, 100, "decode")}
    assert rows["moe experts (active only)"]["per_layer"] == 8 * 3 * 2 * 2048 * 768
    assert rows["attention scores QK^T"]["per_layer"] == 2 * 32 * 101 * 128
    with pytest.raises(ValueError):
        costs.flops(c, 1, 1, "train")


def test_kv_cache_32b_4096_is_one_gib(refs):
    c = refs["Qwen2.5-32B-Instruct"]
    assert costs.kv_cache_bytes(c, 4096, 2) == 2 * 64 * 8 * 128 * 2 * 4096 == 2**30


def test_weight_bytes_and_fits(refs):
    c = refs["Qwen2.5-32B-Instruct"]
    assert costs.weight_bytes(c, "bf16") == 2 * 32_763_876_352
    assert costs.weight_bytes(c, "int4") == 32_763_876_352 // 2
    assert costs.weight_bytes(c, 8) == 32_763_876_352
    assert costs.fits(c, 1, 4096, 141)["fits"]
    assert costs.fits(c, 1, 4096, 80)["fits"]           # 65.5 GB weights + 1 GiB cache
    assert not costs.fits(c, 16, 8192, 80)["fits"]      # + 32 GiB of cache does not
    assert not costs.fits(c, 1, 4096, 24)["fits"]
    assert costs.fits(c, 1, 4096, 24, bits=4)["fits"]
    assert costs.max_tokens_in_cache(c, 24) == 0


def test_roofline_decode_32b_h200(refs):
    r = costs.roofline(refs["Qwen2.5-32B-Instruct"], 1, 4096, "decode")
    assert r["bound"] == "memory"
    assert 13.6e-3 < r["t_memory_s"] < 14.5e-3   # weights alone: 65.5 GB / 4.8 TB/s = 13.65 ms, + KV read
    assert "published" in r["spec"]
    pre = costs.roofline(refs["Qwen2.5-32B-Instruct"], 1, 4096, "prefill")
    assert pre["bound"] == "compute" and pre["intensity"] > pre["ridge"]
    assert costs.arithmetic_intensity(refs["Qwen2.5-32B-Instruct"], 1, 1, "decode") < 2


@pytest.mark.parametrize("stage", COST_STAGES)
def test_operator_costs_every_stage(refs, stage):
    for label in ("Qwen2.5-32B-Instruct", "Qwen3-30B-A3B"):
        c = refs[label]
        oc = costs.operator_costs(c, stage, 2, 16)
        assert oc["stage"] == stage and oc["input_shape"][0] == 2
        if stage == "moe":
            assert oc["applies"] == c.is_moe
        if stage == "mlp":
            assert oc["applies"] == (not c.is_moe)


def test_operator_costs_sum_to_total(refs):
    c = refs["Qwen2.5-32B-Instruct"]
    s = sum(costs.operator_costs(c, st, 1, 8)["params"] for st in COST_STAGES)
    assert s == costs.total_params(c)
    oc = costs.operator_costs(c, "attention", 1, 8)
    assert oc["params_per_layer"] == 62_921_728


# ---- against real transformers models (tiny, random) ---------------------------------------
transformers = pytest.importorskip("transformers")


def _hf_count(model) -> int:
    """Sum of numel over the state dict, a tensor shared by two names counted once."""
    seen, n = set(), 0
    for t in model.state_dict().values():
        key = (t.data_ptr(), tuple(t.shape))
        if key not in seen:
            seen.add(key)
            n += t.numel()
    return n


TINY = dict(SMALL, max_position_embeddings=128)


@pytest.mark.parametrize("kind, extra", [
    ("qwen2", dict(tie_word_embeddings=True)),
    ("qwen2", dict(tie_word_embeddings=False)),
    ("qwen2_moe", dict(tie_word_embeddings=False, num_experts=6, num_experts_per_tok=2, moe_intermediate_size=24,
                       shared_expert_intermediate_size=40, decoder_sparse_step=1, mlp_only_layers=[1])),
    ("qwen2_moe", dict(tie_word_embeddings=True, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                       shared_expert_intermediate_size=32, decoder_sparse_step=2, mlp_only_layers=[])),
    ("qwen3_moe", dict(tie_word_embeddings=False, head_dim=32, num_experts=8, num_experts_per_tok=2,
                       moe_intermediate_size=24, norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[])),
    ("qwen3_moe", dict(tie_word_embeddings=True, head_dim=16, num_experts=4, num_experts_per_tok=1,
                       moe_intermediate_size=8, decoder_sparse_step=1, mlp_only_layers=[0])),
])
def test_total_params_equals_transformers(kind, extra):
    import torch
    cls = {"qwen2": ("Qwen2Config", "Qwen2ForCausalLM"), "qwen2_moe": ("Qwen2MoeConfig", "Qwen2MoeForCausalLM"),
           "qwen3_moe": ("Qwen3MoeConfig", "Qwen3MoeForCausalLM")}[kind]
    hf_cfg = getattr(transformers, cls[0])(**TINY, **extra)
    torch.manual_seed(0)
    model = getattr(transformers, cls[1])(hf_cfg)
    ours = ModelConfig.from_dict(dict(TINY, model_type=kind, **extra))
    assert costs.total_params(ours) == _hf_count(model), (kind, extra)


def test_reference_configs_are_read_once_and_handed_out_fresh():
    first = costs.reference_configs()
    first.pop(costs.REF_LABEL)                                  # a caller changing its dict changes nobody else's
    again = costs.reference_configs()
    assert costs.REF_LABEL in again and again is not first
    assert all(again[k] is v for k, v in first.items())          # the same frozen configs: the files were read once
