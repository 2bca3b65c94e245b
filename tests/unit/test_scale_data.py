"""ops/arith/scale_data.py (the Scale page's numbers in one call) against hand counts. (The scale / MLP pages'
sentences are in assets/words; tests/unit/test_words.py checks their placeholders in both languages.)"""
import pytest

from ops.arith import costs, scale_data


@pytest.fixture(scope="module")
def refs():
    return costs.reference_configs()


def test_view_of_smollm2_by_hand(refs):
    c = refs["SmolLM2-135M-Instruct"]
    v = scale_data.view(c, 2, 100, "A100 80GB")
    assert v["T"] == 200 and v["total"] == v["active"] == 134_515_008       # dense: every parameter active
    assert v["kv_tok"] == 2 * 30 * 3 * 64 * 2 == 23_040                      # K and V, L, nkv, hd, bf16
    assert v["kv_all"] == 200 * 23_040
    assert v["weights"] == {"bf16": 2 * 134_515_008, "int8": 134_515_008, "int4": 134_515_008 // 2}
    assert v["rule_prefill"] == 2 * 134_515_008 * 200 and v["rule_decode"] == 2 * 134_515_008 * 2
    assert sum(r["share"] for r in v["params"]) == pytest.approx(1)
    assert [r["gpu"] for r in v["fit"]] == ["RTX 4090 24GB", "A100 80GB", "H200 141GB"] and v["fits_gpu"]
    assert v["above_ridge"] == (v["roofline"]["prefill"]["intensity"] >= v["ridge"])


def test_crossover_only_when_prefill_is_memory_bound(refs):
    c = refs["Qwen2.5-32B-Instruct"]
    short, long = scale_data.view(c, 1, 4, "H200 141GB"), scale_data.view(c, 1, 4096, "H200 141GB")
    assert short["roofline"]["prefill"]["bound"] == "memory" and short["crossover"] > 4
    assert long["roofline"]["prefill"]["bound"] == "compute" and long["crossover"] is None
    assert not scale_data.view(c, 64, 32768, "RTX 4090 24GB")["fits_gpu"]    # 65.5 GB of bf16 weights alone


def test_reference_rows_and_param_check(refs):
    rows = {r["name"]: r for r in scale_data.reference_rows(refs)}
    assert not rows["SmolLM2-135M-Instruct"]["moe"] and rows["SmolLM2-135M-Instruct"]["share"] == 1
    moe = rows["Qwen3-30B-A3B"]
    assert moe["moe"] and (moe["experts"], moe["top_k"]) == (128, 8) and moe["share"] < 0.2
    assert scale_data.param_check(refs["SmolLM2-135M-Instruct"], 134_515_008)["same"]
    assert not scale_data.param_check(refs["SmolLM2-135M-Instruct"], 134_515_009)["same"]
