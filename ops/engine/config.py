"""ModelConfig: the shape of a Qwen2-family model, with Hugging Face config.json field names.

A config.json loads without a mapping table: ModelConfig.from_dict(json.load(f)).
Derived values (head_dim when absent, GQA group size, which layers are MoE) are properties.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..errors import ConfigError, Refused
from . import rope

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
    attention_bias: bool = True          # bias on q/k/v (Qwen2: yes; Qwen3 and llama: no, o_proj's too when yes)
    mlp_bias: bool = False               # bias on gate/up/down (llama's mlp_bias)
    rope_scaling: tuple = ()             # RoPE scaling as sorted (key, value) pairs, () = plain (ops/engine/rope.py)
    rope_freq_factors: tuple = ()        # a GGUF's rope_freqs: per-pair divisors of the frequencies (llama.cpp)
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
        if self.hidden_act not in ("silu", "swish"):
            raise Refused("hidden_act", self.hidden_act, "hidden_act")
        rope.check(self)

    @classmethod
    def from_dict(cls, d: dict, **overrides) -> "ModelConfig":
        """Build from a Hugging Face config.json dict. A field that changes the arithmetic in a way the engine
        does not compute is refused (Refused, naming it: refuse_fields); other unknown keys are ignored."""
        d = dict(d)
        d.update(overrides)
        model_type = d.get("model_type", "qwen2")
        refuse_fields(d, model_type)
        params = d.get("rope_scaling") or d.get("rope_parameters") or {}
        if isinstance(params, dict) and params.get("rope_theta") is not None:   # transformers: the dict's wins
            d["rope_theta"] = params["rope_theta"]
        if not isinstance(d.get("rope_scaling"), tuple):
            d["rope_scaling"] = rope.standardize(d)
        if d.get("num_key_value_heads") is None and d.get("num_attention_heads"):
            d["num_key_value_heads"] = d["num_attention_heads"]
        if "num_experts" not in d and "num_local_experts" in d:   # transformers 5 writes this name
            d["num_experts"] = d["num_local_experts"]
        if "head_dim" in d:
            d["head_dim_"] = d.pop("head_dim")
        # Qwen2 always puts a bias on q/k/v whatever attention_bias says, Qwen2-MoE when qkv_bias (default yes)
        if model_type == "qwen2":
            d["attention_bias"] = True
        elif model_type == "qwen2_moe":
            d["attention_bias"] = d.get("qkv_bias", True)
        else:                                   # llama, Qwen3: attention_bias, default no
            d["attention_bias"] = bool(d.get("attention_bias"))
        d["mlp_bias"] = bool(d.get("mlp_bias")) and model_type == "llama"     # only llama's MLP reads it
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
        d.pop("rope_freq_factors")
        d["rope_scaling"] = dict(self.rope_scaling) or None
        if not self.mlp_bias:
            d.pop("mlp_bias")
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
    def o_bias(self) -> bool:
        """o_proj has a bias: llama and Qwen3 put attention_bias on all four projections, Qwen2 only on q/k/v."""
        return self.attention_bias and self.model_type in ("llama", "qwen3", "qwen3_moe")

    @property
    def rope_type(self) -> str:
        return rope.params(self)["rope_type"]

    @property
    def context_length(self) -> int:
        """The longest context this model runs: max_position_embeddings, or longer under dynamic / yarn scaling."""
        return rope.context_length(self)

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


# ---- fields that change the arithmetic and are not computed: refused when the model loads (docs/models.md) ----
# field -> (value that is fine, reason): a config with any other value is refused. Fields only some families read
# (sliding windows) are handled in refuse_fields.
OFF_VALUES = {
    "attn_logit_softcapping": (None, "softcapping"), "final_logit_softcapping": (None, "softcapping"),
    "logit_softcapping": (None, "softcapping"), "logit_scale": (None, "multiplier"),
    "logits_scaling": (None, "multiplier"), "embedding_multiplier": (None, "multiplier"),
    "residual_multiplier": (None, "multiplier"), "attention_multiplier": (None, "multiplier"),
    "query_pre_attn_scalar": (None, "multiplier"), "use_qk_norm": (None, "qk_norm"),
    "no_rope_layers": (None, "no_rope"), "attn_temperature_tuning": (None, "no_rope"),
    "quantization_config": (None, "quantized"),
}
NEUTRAL = {"use_qk_norm": (False,), "attn_temperature_tuning": (False, 0), "logit_scale": (1, 1.0),
           "logits_scaling": (1, 1.0), "embedding_multiplier": (1, 1.0), "residual_multiplier": (1, 1.0),
           "no_rope_layers": ((), [])}


def sliding_layers(d: dict, model_type: str) -> list[int]:
    """The layers transformers runs with a sliding window for this config.json dict (its config classes' rule)."""
    L = int(d.get("num_hidden_layers") or 0)
    types = d.get("layer_types")
    if types:
        return [i for i, t in enumerate(types) if t != "full_attention"]
    if not d.get("use_sliding_window") or not d.get("sliding_window"):
        return []
    if model_type == "qwen2_moe":
        return [i for i in range(L) if (i + 1) % 2 and i < d.get("max_window_layers", 28)]
    if model_type == "qwen3_moe":
        return list(range(L))
    if model_type in ("qwen2", "qwen3"):
        return [i for i in range(L) if i >= d.get("max_window_layers", 28)]
    return []


def refuse_fields(d: dict, model_type: str) -> None:
    """Refused for the first field of a config.json dict that would change the arithmetic in a way the engine does
    not compute (sliding windows, soft-capping, multipliers, quantized weights, ...); RoPE's: rope.check."""
    for field, (off, reason) in OFF_VALUES.items():
        v = d.get(field, off)
        if v != off and v not in NEUTRAL.get(field, ()):
            raise Refused(field, v.get("quant_method", v) if isinstance(v, dict) else v, reason)
    types = d.get("layer_types") or ()
    odd = [t for t in types if t not in ("full_attention", "sliding_attention")]
    if odd:
        raise Refused("layer_types", odd[0], "layer_types")
    sliding = sliding_layers(d, model_type)
    if sliding and types:
        raise Refused("layer_types", f"sliding_attention in {len(sliding)} of {len(types)} layers", "sliding_window")
    if sliding:
        raise Refused("use_sliding_window", f"True (sliding_window {d.get('sliding_window')}, "
                      f"layers {sliding[0]}..{sliding[-1]})", "sliding_window")
