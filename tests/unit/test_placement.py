"""Placing a model on several GPUs: the split of Qwen2.5-32B / 72B checked by hand-worked arithmetic, and the runner
running each layer where the device map puts it (on this CPU machine every device is "cpu": the multi-GPU
run itself waits for hardware, bench/RESULTS.md)."""
import pytest
import torch

from ops.arith import costs, placement
from ops.engine.config import ModelConfig
from ops.engine.model import Model
from ops.errors import InputError
from ops.models.checkpoints import expected_shapes

GB = 1e9
C32 = costs.reference_config("Qwen2.5-32B-Instruct")


def test_32b_on_one_80gb_gpu_and_on_two():
    one = placement.plan(C32, gpus=1, gpu_gb=80, context=4096)
    assert one["fits"] and one["spill_layers"] == []
    (gpu,) = one["devices"]
    assert gpu["weights"] == costs.weight_bytes(C32, 16)          # every weight counted once, in bf16
    assert gpu["kv"] == costs.kv_cache_bytes(C32, 4096, 2)         # all 64 layers' KV at 4k tokens
    two = placement.plan(C32, gpus=2, gpu_gb=80, context=4096)
    layers = [d["layers"] for d in two["devices"]]
    assert sorted(sum(layers, [])) == list(range(64)) and all(layers)       # every layer once, both GPUs used
    assert layers[0] == list(range(len(layers[0])))                # contiguous: layer 0.. on GPU 0
    assert sum(d["weights"] for d in two["devices"]) == costs.weight_bytes(C32, 16)
    assert abs(len(layers[0]) - len(layers[1])) <= 4               # balanced, not GPU 0 filled first


def test_32b_does_not_fit_one_24gb_gpu_but_fits_four():
    one = placement.plan(C32, gpus=1, gpu_gb=24, context=4096)
    assert not one["fits"] and one["spill_layers"]                 # 65.5 GB of weights: layers spill to CPU
    four = placement.plan(C32, gpus=4, gpu_gb=24, context=4096)
    assert four["fits"] and all(d["total"] <= 24 * GB for d in four["devices"])


def test_72b_needs_two_141gb_gpus_at_32k():
    c72 = costs.reference_config("Qwen2.5-72B-Instruct")
    assert costs.weight_bytes(c72, 16) > 141 * GB                  # 145 GB of bf16 weights
    assert not placement.plan(c72, 1, 141, context=32768)["fits"]
    assert placement.plan(c72, 2, 141, context=32768)["fits"]


def test_table_and_bad_input():
    rows = placement.table(C32, gpu_counts=(1, 2), gpu_sizes=(80,))
    assert [(r["gpus"], r["fits"]) for r in rows] == [(1, True), (2, True)]
    with pytest.raises(InputError):
        placement.plan(C32, gpus=0, gpu_gb=80)


def _tiny(device_map=None):
    c = ModelConfig(vocab_size=96, hidden_size=32, intermediate_size=48, num_hidden_layers=3,
                    num_attention_heads=4, num_key_value_heads=2)
    g = torch.Generator().manual_seed(0)
    w = {n: torch.randn(s, generator=g) * 0.2 for n, s in expected_shapes(c).items()}
    return Model(c, w, device="cpu", dtype="float32", device_map=device_map)


def test_runner_follows_the_device_map():
    dm = {"model.embed_tokens": "cpu", "model.layers.0": "cpu", "model.layers.1": "cpu", "model.layers.2": "cpu",
          "model.norm": "cpu", "lm_head": "cpu"}
    plain, placed = _tiny(), _tiny(dm)
    assert placed.place("model.layers.1.mlp.up_proj.weight") == torch.device("cpu")
    assert placed.cache_devices == [torch.device("cpu")] * 3
    ids = torch.tensor([[5, 7, 9, 11]])
    pos, valid = torch.arange(4)[None], torch.ones(1, 4, dtype=torch.bool)
    assert torch.equal(plain.forward(ids, pos, valid), placed.forward(ids, pos, valid))
    int_map = {"model.layers.0": 0}                                 # accelerate's ints mean cuda:<n>
    m = Model.__new__(Model)
    m.device, m.device_map = "cpu", int_map
    assert m.place("model.layers.0.self_attn.q_proj.weight") == torch.device("cuda:0")
    assert m.place("model.norm.weight") == torch.device("cpu")


def _params_by_hand(V, H, I, L, nh, nkv, hd, tied):
    """Qwen2's tensors counted one by one: q/k/v with biases, o, gate/up/down, two norms per layer."""
    layer = (H * nh * hd + nh * hd) + 2 * (H * nkv * hd + nkv * hd) + nh * hd * H + 3 * H * I + 2 * H
    return V * H * (1 if tied else 2) + L * layer + H


def test_module_sizes_match_a_hand_count():
    sizes = placement.module_sizes(C32)
    assert sum(sizes.values()) == 2 * _params_by_hand(152064, 5120, 27648, 64, 40, 8, 128, tied=False)
    assert len({sizes[f"model.layers.{i}"] for i in range(64)}) == 1 and "lm_head" in sizes


def test_72b_on_two_80gb_gpus_at_32k_by_hand():
    """145.4 GB of bf16 weights + 80 layers x 2 x 8 KV heads x 128 x 2 B x 32,768 tokens of KV + 2 x 2 GB reserve
    = 160.1 GB > 2 x 80 GB: it cannot fit, and the plan must not claim it does (not even with only the LM head
    left over on the CPU)."""
    c72 = costs.reference_config("Qwen2.5-72B-Instruct")
    need = 2 * _params_by_hand(152064, 8192, 29568, 80, 64, 8, 128, tied=False) + 80 * 2 * 8 * 128 * 2 * 32768 + 4 * GB
    assert need > 160 * GB
    p = placement.plan(c72, 2, 80, context=32768)
    assert not p["fits"]
    assert p["devices"][-1]["device"] == "cpu"


def test_balanced_split_differs_by_at_most_one_module():
    for gpus in (2, 4, 8):
        p = placement.plan(C32, gpus, 80, context=4096)
        loads = [d["weights"] for d in p["devices"] if d["device"] != "cpu"]
        biggest = max(placement.module_sizes(C32).values())
        assert p["fits"] and max(loads) - min(loads) <= 2 * biggest, (gpus, loads)


def test_local_gpus_follows_torch():
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    assert len(placement.local_gpus()) == n
