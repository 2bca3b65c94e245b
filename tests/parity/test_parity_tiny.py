"""Parity with transformers on tiny random models of every supported architecture (no download needed)."""
import json
import pathlib
import tempfile

import conftest as tiny_shapes
import pytest
import safetensors.torch
import torch
import transformers

from ops import Model, ModelConfig
from ops.engine.decode import KVCache

SMALL = dict(tiny_shapes.SMALL, max_position_embeddings=256)
MOE = dict(num_experts=6, num_experts_per_tok=2, moe_intermediate_size=32)
ARCHS = {
    "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM, {}),
    "qwen2_moe": (transformers.Qwen2MoeConfig, transformers.Qwen2MoeForCausalLM,
                  dict(MOE, shared_expert_intermediate_size=48, decoder_sparse_step=1, mlp_only_layers=[1])),
    "qwen3": (transformers.Qwen3Config, transformers.Qwen3ForCausalLM, dict(head_dim=24)),
    "qwen3_moe": (transformers.Qwen3MoeConfig, transformers.Qwen3MoeForCausalLM, dict(MOE, norm_topk_prob=True)),
    "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM, dict(tie_word_embeddings=True)),
}


def tiny_pair(arch, seed=0, folder=None):
    """(our Model, transformers' model) with the same random weights, read back from the files
    transformers saves (config.json + model.safetensors), as a user's model folder would be."""
    cfg_cls, model_cls, extra = ARCHS[arch]
    torch.manual_seed(seed)
    ref = model_cls(cfg_cls(**SMALL, **extra, attn_implementation="eager")).eval()
    with torch.no_grad():                      # random norms, so a wrong gamma would show
        for n, p in ref.named_parameters():
            if "norm" in n:
                p.add_(torch.randn_like(p) * 0.1)
    folder = folder or pathlib.Path(tempfile.mkdtemp(prefix=f"tiny-{arch}-"))
    ref.save_pretrained(folder)
    config = ModelConfig.from_dict(json.loads((folder / "config.json").read_text()))
    weights = safetensors.torch.load_file(folder / "model.safetensors")
    return Model(config, weights), ref


def max_diff(a, b):
    return (a.float() - b.float()).abs().max().item()


@pytest.mark.parametrize("arch", list(ARCHS))
def test_every_layer_and_logits_match_transformers(arch):
    model, ref = tiny_pair(arch)
    ids = torch.randint(0, SMALL["vocab_size"], (1, 11))
    trace = model.trace_ids(ids.tolist())
    with torch.no_grad():
        out = ref(ids, output_hidden_states=True)
    for i in range(model.config.num_hidden_layers - 1):      # HF's last hidden state is after the final norm
        d = max_diff(trace.layer(i, "resid_out"), out.hidden_states[i + 1])
        assert d < 1e-5, f"{arch} layer {i} resid_out differs by {d}"
    d = max_diff(trace.logits, out.logits)
    assert d < 1e-4, f"{arch} logits differ by {d}"


@pytest.mark.parametrize("arch", ["qwen2", "qwen2_moe"])
def test_padded_batch_rows_equal_prompts_alone(arch):
    model, _ = tiny_pair(arch)
    rows = [[5, 6, 7, 8, 9, 10, 11], [12, 13, 14], [3]]
    batch = model.trace_ids(rows)
    for b, r in enumerate(rows):
        alone = model.trace_ids([r])
        d = max_diff(batch.logits[b, :len(r)], alone.logits[0])
        assert d < 1e-5, f"row {b} differs from its prompt alone by {d}"
        probs = batch.attention_probs(0)[b, :, :len(r), len(r):]
        assert probs.numel() == 0 or probs.abs().max() == 0, "a real token attended to padding"


@pytest.mark.parametrize("arch", list(ARCHS))
def test_kv_cache_decoding_equals_full_forward(arch):
    model, ref = tiny_pair(arch)
    ids = torch.randint(0, SMALL["vocab_size"], (1, 9))
    full = model.trace_ids(ids.tolist()).logits[0]
    cache = KVCache(model.config, 1, 9, "cpu", torch.float32)
    prefill = model.forward(ids[:, :5], torch.arange(5)[None], torch.ones(1, 5, dtype=torch.bool), cache=cache)
    steps = [prefill[0]]
    for t in range(5, 9):
        logit = model.forward(ids[:, t:t + 1], torch.tensor([[t]]), torch.ones(1, t + 1, dtype=torch.bool), cache=cache)
        steps.append(logit[0])
    d = max_diff(torch.cat(steps), full)
    assert d < 1e-4, f"{arch}: cached decoding differs from the full forward by {d}"
    assert cache.nbytes == 2 * model.config.num_hidden_layers * model.config.num_key_value_heads * 9 * model.config.head_dim * 4


def test_moe_trace_has_routing_and_dense_layer_none():
    model, _ = tiny_pair("qwen2_moe")
    trace = model.trace_ids([[1, 2, 3, 4]])
    E, k = model.config.num_experts, model.config.num_experts_per_tok
    assert trace.layer(0, "moe.router_probs").shape == (1, 4, E)
    assert trace.layer(0, "moe.topk_idx").shape == (1, 4, k)
    assert not trace.has_moe(1) and "layers.1.mlp.act" in trace     # mlp_only_layers=[1] stays dense
    torch.testing.assert_close(trace.layer(0, "moe.router_probs").sum(-1), torch.ones(1, 4))
