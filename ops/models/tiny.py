"""A tiny random-weight MoE model, only to show the mixture-of-experts mechanism when the loaded model is dense.

Its weights are seeded noise under the Hugging Face names of a 2-layer qwen2_moe: the routing it shows is
real routing arithmetic, not a trained model's choices.
"""
from __future__ import annotations

from functools import lru_cache

import torch

from ..engine.config import ModelConfig
from ..engine.model import Model
from .checkpoints import expected_shapes

TINY_MOE = dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=32,
                shared_expert_intermediate_size=64, max_position_embeddings=4096)


@lru_cache(maxsize=4)
def tiny_moe_model(seed: int = 0) -> Model:
    """ops.Model of a 2-layer qwen2_moe with seeded random weights (built once per seed, then shared)."""
    c = ModelConfig(model_type="qwen2_moe", name="tiny random MoE (8 experts, top-2)", **TINY_MOE)
    g = torch.Generator().manual_seed(seed)
    weights = {}
    for name, shape in expected_shapes(c).items():
        if name.endswith("layernorm.weight") or name == "model.norm.weight":
            weights[name] = torch.ones(shape)
        elif name.endswith(".bias"):
            weights[name] = torch.zeros(shape)
        else:
            weights[name] = torch.randn(shape, generator=g) * (1.0 / shape[-1] ** 0.5)
    return Model(c, weights, tokenizer=None, device="cpu", dtype="float32")


def tiny_moe_trace(trace):
    """A trace of the tiny MoE model on the same token ids (folded into its vocabulary), kept
    with the trace (Trace.memo) so it is made once per trace."""
    def make():
        tiny = tiny_moe_model()
        rows = [[int(v) % tiny.config.vocab_size for v in trace.token_ids[b, :trace.lengths[b]].tolist()]
                for b in range(trace.B)]
        return tiny.trace_ids(rows)
    return trace.memo(("tiny_moe", None), make)


def moe_trace(trace, model):
    """(a trace with MoE tensors, the model that made it, real?): the trace itself when its model has MoE
    layers, else the tiny random MoE's trace of the same ids."""
    if any(trace.has_moe(i) for i in range(trace.config.num_hidden_layers)):
        return trace, model, True
    return tiny_moe_trace(trace), tiny_moe_model(), False
