"""Pipeline, expert and context parallelism, computed from a config: what each GPU holds, the bytes that cross
between GPUs, and the pipeline's bubble. Tensor parallelism is serving_math.tensor_parallel. bf16 = 2 bytes."""
from __future__ import annotations

from ..engine.config import ModelConfig
from ..errors import InputError
from . import costs


def pipeline_bubble(stages: int, microbatches: int) -> float:
    """Idle share of a pipeline of p stages fed m microbatches (GPipe / 1F1B): (p - 1) / (m + p - 1)."""
    if stages < 1 or microbatches < 1:
        raise InputError("stages and microbatches must be at least 1")
    return (stages - 1) / (microbatches + stages - 1)


def pipeline_idle(stages: int, in_flight: int) -> float:
    """A serving engine's pipeline with `in_flight` micro-batches (sequences or groups of them) circulating: each
    stage works on one at a time, so with m < p in flight p - m stages wait; from m = p on, none does."""
    if stages < 1 or in_flight < 1:
        raise InputError("stages and in-flight micro-batches must be at least 1")
    return max(0, stages - in_flight) / stages


def pipeline_parallel(c: ModelConfig, degrees=(2, 4, 8), microbatches=(1, 8, 32), act_bytes: int = 2,
                      gpu: str = "H200 141GB") -> list[dict]:
    """Layers split into p consecutive stages: layers and bf16 weights per GPU (an end stage, which holds the
    embedding or the LM head, one V×H matrix, besides its layers), the bytes one token's hidden state sends across
    each stage boundary (H numbers), GPipe's training bubble and a server's idle share at each number of
    micro-batches, and one decode token's memory-bound time: the stages read their weights one after another, so it
    is all the weights over one GPU's bandwidth, whatever p (tensor parallelism reads the p shares at once)."""
    L, H = c.num_hidden_layers, c.hidden_size
    ends = sum(r["params"] for r in costs.param_table(c) if r["operator"] in ("embedding", "lm_head", "final_norm"))
    layer = (costs.total_params(c) - ends) // L
    rows = []
    for p in degrees:
        n = -(-L // p)
        rows.append(dict(stages=p, layers_per_stage=n, weights_per_gpu=(n * layer + c.vocab_size * H) * 2,
                         boundary_bytes_per_token=H * act_bytes,
                         bubble={m: pipeline_bubble(p, m) for m in microbatches},
                         idle={m: pipeline_idle(p, m) for m in microbatches},
                         token_s=costs.weight_bytes(c, 16) / (costs.GPUS[gpu]["tb_per_s"] * 1e12),
                         tp_token_s=costs.weight_bytes(c, 16) / p / (costs.GPUS[gpu]["tb_per_s"] * 1e12)))
    return rows


def expert_parallel(c: ModelConfig, degrees=(8, 16, 32), act_bytes: int = 2) -> list[dict]:
    """Experts spread over e GPUs. Each token's hidden state goes to its k experts and comes back (all-to-all
    dispatch and combine): at most 2·k·H·act_bytes per token per MoE layer, of which (e - 1) / e leaves the GPU
    when experts are picked evenly (an upper bound: tokens whose experts share a GPU can send one copy)."""
    if not c.is_moe:
        raise InputError(f"{c.name} has no experts")
    moe_layers = sum(c.is_moe_layer(i) for i in range(c.num_hidden_layers))
    per_layer = 2 * c.num_experts_per_tok * c.hidden_size * act_bytes
    expert_params = 3 * c.hidden_size * c.moe_intermediate_size
    return [dict(ep=e, experts_per_gpu=c.num_experts / e, valid=c.num_experts % e == 0,
                 expert_bytes_per_gpu=moe_layers * (c.num_experts // e) * expert_params * 2,
                 per_token_layer=per_layer, per_token_all_layers=per_layer * moe_layers,
                 leaves_gpu=per_layer * moe_layers * (e - 1) / e) for e in degrees]


def context_parallel(c: ModelConfig, context: int, degrees=(2, 4, 8), kv_dtype_bytes: int = 2) -> list[dict]:
    """One long sequence split into g slices of context / g tokens (ring attention): each GPU keeps its slice's KV
    and, for every layer, receives the other g - 1 slices' K and V as they pass round the ring."""
    per_tok_layer = costs.kv_bytes_per_token(c, kv_dtype_bytes) // c.num_hidden_layers
    rows = []
    for g in degrees:
        s = context // g
        rows.append(dict(cp=g, tokens_per_gpu=s, kv_per_gpu=costs.kv_cache_bytes(c, s, kv_dtype_bytes),
                         ring_bytes_layer=(g - 1) * s * per_tok_layer,
                         ring_bytes=(g - 1) * s * per_tok_layer * c.num_hidden_layers))
    return rows
