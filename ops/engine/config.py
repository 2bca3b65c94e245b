"""ModelConfig: the shape of a Qwen2-family model, with Hugging Face config.json field names.

A config.json loads without a mapping table: ModelConfig.from_dict(json.load(f)).
Derived values (head_dim when absent, GQA group size, which layers are MoE) are properties.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..errors import ConfigError

SUPPORTED_MODEL_TYPES = ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "llama")


@dataclass(frozen=True)
class ModelConfig:
    model_type: str = "qwen2"            # qwen2 | qwen2_moe | qwen3 | qwen3_moe | llama
    vocab_size: int = 151936             # embedding rows (padded beyond the tokenizer's size)
    hidden_size: int = 896               # H, the width of the residual stream
    intermediate_size: int = 4864        # I, the dense SwiGLU MLP width
    num_hidden_layers: int = 24          # decoder layers
    num_attention_heads: int = 14        # nh, query heads
    num_key_value_heads: int = 2         # nkv, key/value heads (GQA when < nh)
    head_dim_: int | None = None         # hd; None means hidden_size // num_attention_heads
    max_position_embeddings: int = 32768 # longest context the model was trained for
    rope_theta: float = 1_000_000.0      # RoPE base
    rms_norm_eps: float = 1e-6           # epsilon inside RMSNorm's square root
    tie_word_embeddings: bool = False    # lm_head reuses embed_tokens when true
    hidden_act: str = "silu"             # SwiGLU's gate activation
    attention_bias: bool = True          # bias on q/k/v (Qwen2: yes; Qwen3 and llama: no)
    # mixture of experts (qwen2_moe / qwen3_moe only)
    num_experts: int = 0                 # E, routed experts per MoE layer
    num_experts_per_tok: int = 0         # k, experts each token is sent to
    moe_intermediate_size: int = 0       # width of one routed expert's SwiGLU
    shared_expert_intermediate_size: int = 0  # width of the always-on shared expert (0: none)
    norm_topk_prob: bool = False         # renormalise the k routing weights to sum to 1
    decoder_sparse_step: int = 1         # every n-th layer is MoE
    mlp_only_layers: tuple = ()          # layers forced to stay dense
    bos_token_id: int | None = None
    eos_token_id: int | tuple | None = None
    name: str = ""                       # a human label, e.g. "Qwen2.5-Coder-0.5B-Instruct"

    def __post_init__(self):
        if self.model_type not in SUPPORTED_MODEL_TYPES:
            raise ConfigError(
                f"unsupported architecture '{self.model_type}': Operator Lab runs "
                + ", ".join(SUPPORTED_MODEL_TYPES))
        for f in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                  "num_key_value_heads", "intermediate_size"):
            if int(getattr(self, f)) <= 0:
                raise ConfigError(f"config field {f} must be a positive integer, got {getattr(self, f)}")
        if self.num_attention_heads % self.num_key_value_heads:
            raise ConfigError(f"num_attention_heads ({self.num_attention_heads}) is not a multiple of "
                              f"num_key_value_heads ({self.num_key_value_heads})")
        if self.is_moe and not (0 < self.num_experts_per_tok <= self.num_experts):
            raise ConfigError(f"num_experts_per_tok={self.num_experts_per_tok} must be in "
                              f"1..num_experts={self.num_experts}")

    @classmethod
    def from_dict(cls, d: dict, **overrides) -> "ModelConfig":
        """Build from a Hugging Face config.json dict; unknown keys are ignored."""
        d = dict(d)
        d.update(overrides)
        model_type = d.get("model_type", "qwen2")
        rope = d.get("rope_parameters") or d.get("rope_scaling") or {}
        if "rope_theta" not in d and isinstance(rope, dict) and "rope_theta" in rope:
            d["rope_theta"] = rope["rope_theta"]
        if "num_experts" not in d and "num_local_experts" in d:   # transformers 5 writes this name
            d["num_experts"] = d["num_local_experts"]
        if "head_dim" in d:
            d["head_dim_"] = d.pop("head_dim")
        if "attention_bias" not in d:
            # Qwen2 and Qwen2-MoE always put a bias on q/k/v (config field qkv_bias in newer files)
            d["attention_bias"] = d.get("qkv_bias", model_type in ("qwen2", "qwen2_moe"))
        if isinstance(d.get("eos_token_id"), list):
            d["eos_token_id"] = tuple(d["eos_token_id"])
        d["mlp_only_layers"] = tuple(d.get("mlp_only_layers") or ())
        # _name_or_path is a hub id or a local path ("HuggingFaceTB/SmolLM2-135M-Instruct"): its last part names it
        d["name"] = d.get("name") or str(d.get("_name_or_path") or "").replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names and v is not None})

    def to_dict(self) -> dict:
        """Back to config.json field names (what transformers reads)."""
        d = dataclasses.asdict(self)
        d["head_dim"] = self.head_dim
        del d["head_dim_"]
        d["mlp_only_layers"] = list(self.mlp_only_layers)
        if isinstance(d["eos_token_id"], tuple):
            d["eos_token_id"] = list(d["eos_token_id"])
        arch = {"qwen2": "Qwen2ForCausalLM", "qwen2_moe": "Qwen2MoeForCausalLM", "qwen3": "Qwen3ForCausalLM",
                "qwen3_moe": "Qwen3MoeForCausalLM", "llama": "LlamaForCausalLM"}[self.model_type]
        d["architectures"] = [arch]
        if not self.is_moe:
            for k in ("num_experts", "num_experts_per_tok", "moe_intermediate_size",
                      "shared_expert_intermediate_size", "norm_topk_prob", "decoder_sparse_step", "mlp_only_layers"):
                d.pop(k)
        return d

    # ---- derived values -------------------------------------------------
    @property
    def head_dim(self) -> int:
        return self.head_dim_ or self.hidden_size // self.num_attention_heads

    @property
    def n_rep(self) -> int:
        """How many query heads share one KV head (GQA group size)."""
        return self.num_attention_heads // self.num_key_value_heads

    @property
    def is_moe(self) -> bool:
        return self.model_type in ("qwen2_moe", "qwen3_moe") and self.num_experts > 0

    @property
    def has_qk_norm(self) -> bool:
        """Qwen3 RMS-normalises q and k per head before RoPE."""
        return self.model_type in ("qwen3", "qwen3_moe")

    def is_moe_layer(self, i: int) -> bool:
        return self.is_moe and i not in self.mlp_only_layers and (i + 1) % self.decoder_sparse_step == 0

    @property
    def eos_ids(self) -> tuple:
        e = self.eos_token_id
        return () if e is None else (tuple(e) if isinstance(e, (tuple, list)) else (e,))

    def replace(self, **changes) -> "ModelConfig":
        return dataclasses.replace(self, **changes)
