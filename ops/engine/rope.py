"""RoPE's frequencies from a config, as transformers computes them (transformers/modeling_rope_utils.py, 5.x).

One function, `frequencies(config, seq_len)`, gives the pass its per-pair inverse frequencies and the factor that
multiplies cos and sin (YaRN's attention factor; 1 otherwise). The one forward pass (ops/engine/model.py) calls it
for every call, the decoder's steps included, and records both frequency vectors in the trace (rope.inv_freq_base,
rope.inv_freq). Types:
  default   inv_freq_j = θ^(-2j/hd)
  linear    inv_freq / factor                                    (positions slowed down by `factor`)
  dynamic   θ grown to θ·(factor·n/max_pos − (factor − 1))^(hd/(hd−2)) once n = max position + 1 passes
            max_position_embeddings (NTK-aware; n below it: the default frequencies)
  yarn      per pair: the default frequency for fast pairs, inv_freq / factor for slow ones, a linear ramp
            between the pair indices where a pair turns beta_fast and beta_slow times within
            original_max_position_embeddings; cos and sin times attention_factor (0.1·ln(factor) + 1 unless given)
  llama3    wavelengths under original/high_freq_factor kept, over original/low_freq_factor divided by factor,
            smoothly interpolated between
A GGUF's rope_freqs tensor (llama.cpp writes it for llama3 scaling) divides the default frequencies pair by pair,
as llama.cpp does: config.rope_freq_factors.
"""
from __future__ import annotations

import math

import torch

from ..errors import Refused

TYPES = ("default", "linear", "dynamic", "yarn", "llama3")


def params(config) -> dict:
    """The config's RoPE parameters as a dict (rope_type always present)."""
    p = dict(config.rope_scaling)
    p.setdefault("rope_type", "default")
    return p


def standardize(d: dict) -> tuple:
    """A config.json dict -> the ModelConfig's rope_scaling: sorted (key, value) pairs, () for plain RoPE.
    As transformers' RotaryEmbeddingConfigMixin: rope_scaling wins over rope_parameters, "type" is the old name of
    "rope_type", a top-level original_max_position_embeddings wins for llama3 / yarn (else max_position_embeddings)."""
    raw = d.get("rope_scaling") or d.get("rope_parameters") or {}
    if not isinstance(raw, dict):
        raise Refused("rope_scaling", raw, "rope_format")
    p = {k: v for k, v in raw.items() if k not in ("rope_theta", "type")}
    p["rope_type"] = raw.get("rope_type", raw.get("type", "default"))
    if d.get("partial_rotary_factor") is not None:         # transformers moves a top-level one into the dict
        p.setdefault("partial_rotary_factor", d["partial_rotary_factor"])
    if p["rope_type"] in ("llama3", "yarn"):
        if d.get("original_max_position_embeddings") is not None:
            p["original_max_position_embeddings"] = d["original_max_position_embeddings"]
        p.setdefault("original_max_position_embeddings", d.get("max_position_embeddings", 32768))
    if p.get("partial_rotary_factor", 1.0) == 1.0:
        p.pop("partial_rotary_factor", None)
    if p == {"rope_type": "default"}:
        return ()
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in p.items()))


def check(config) -> None:
    """Refused (naming the field and its value) unless every RoPE parameter is one this module computes."""
    p = params(config)
    kind = p["rope_type"]
    if kind not in TYPES:
        raise Refused("rope_type", kind, "rope_type")
    if "partial_rotary_factor" in p:
        raise Refused("partial_rotary_factor", p["partial_rotary_factor"], "partial_rotary")
    if kind != "default" and kind != "yarn" and not isinstance(p.get("factor"), (int, float)):
        raise Refused("rope_parameters.factor", p.get("factor"), "rope_factor")
    if kind == "llama3":
        for k in ("low_freq_factor", "high_freq_factor"):
            if not isinstance(p.get(k), (int, float)):
                raise Refused(f"rope_parameters.{k}", p.get(k), "rope_factor")
    if config.head_dim % 2:
        raise Refused("head_dim", config.head_dim, "odd_head_dim")
    if config.rope_freq_factors and kind not in ("default", "linear"):
        raise Refused("rope_freqs", f"with rope_type {kind}", "rope_freqs")
    if config.rope_freq_factors and len(config.rope_freq_factors) != config.head_dim // 2:
        raise Refused("rope_freqs", f"{len(config.rope_freq_factors)} values", "rope_freqs")


def base_inv_freq(config) -> torch.Tensor:
    """RoPE's unscaled frequencies θ^(-2j/hd), j = 0 .. hd/2 − 1 (float32, as transformers computes them)."""
    hd = config.head_dim
    return 1.0 / (config.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))


def attention_factor(config) -> float:
    """What cos and sin are multiplied by (so q·k by its square): YaRN's mscale, 1 for every other type."""
    p = params(config)
    if p["rope_type"] != "yarn":
        return 1.0
    if p.get("attention_factor") is not None:
        return float(p["attention_factor"])
    factor = yarn_factor(config)
    mscale, mscale_all_dim = p.get("mscale"), p.get("mscale_all_dim")
    if mscale and mscale_all_dim:
        return float(_mscale(factor, mscale) / _mscale(factor, mscale_all_dim))
    return _mscale(factor)


def _mscale(scale, mscale=1):
    """YaRN's 0.1·mscale·ln(scale) + 1 (1 for scale <= 1)."""
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def yarn_factor(config) -> float:
    p = params(config)
    f = p.get("factor")
    return f if f is not None else config.max_position_embeddings / p["original_max_position_embeddings"]


def frequencies(config, seq_len: int | None = None) -> tuple[torch.Tensor, float]:
    """(inv_freq (hd/2,) float32, attention factor) for a call whose largest position is seq_len − 1.
    seq_len matters for dynamic only (transformers recomputes its frequencies once positions pass
    max_position_embeddings: n = max position + 1 of the call)."""
    p = params(config)
    kind = p["rope_type"]
    inv = base_inv_freq(config)
    if config.rope_freq_factors:                       # llama.cpp: theta / freq_factor, pair by pair
        inv = inv / torch.tensor(config.rope_freq_factors, dtype=torch.float32)
    if kind == "linear":
        inv = inv / p["factor"]
    elif kind == "dynamic":
        inv = _dynamic(config, p["factor"], seq_len)
    elif kind == "yarn":
        inv = _yarn(config, p)
    elif kind == "llama3":
        inv = _llama3(p, inv)
    return inv, attention_factor(config)


def _dynamic(config, factor: float, seq_len: int | None) -> torch.Tensor:
    hd, max_pos = config.head_dim, config.max_position_embeddings
    # transformers passes n as a 0-d int64 tensor (max(position_ids) + 1): the new base is computed in float32
    if not seq_len or seq_len <= max_pos:              # within the window: the plain frequencies
        return 1.0 / (config.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
    n = torch.tensor(seq_len)
    base = config.rope_theta * ((factor * n / max_pos) - (factor - 1)) ** (hd / (hd - 2))
    return 1.0 / (base ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))


def _yarn(config, p: dict) -> torch.Tensor:
    hd, base = config.head_dim, config.rope_theta
    factor, original = yarn_factor(config), p["original_max_position_embeddings"]
    beta_fast, beta_slow = p.get("beta_fast") or 32, p.get("beta_slow") or 1

    def pair_for(rotations):        # the pair index whose wavelength fits `rotations` times into `original`
        return (hd * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = pair_for(beta_fast), pair_for(beta_slow)
    if p.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, hd - 1)
    if low == high:
        high += 0.001                                   # transformers: prevent a division by zero
    ramp = ((torch.arange(hd // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)   # 0 keep .. 1 slow
    keep = 1 - ramp
    pos = base ** (torch.arange(0, hd, 2).float() / hd)
    return (1.0 / (factor * pos)) * (1 - keep) + (1.0 / pos) * keep


def _llama3(p: dict, inv: torch.Tensor) -> torch.Tensor:
    factor, low_f, high_f = p["factor"], p["low_freq_factor"], p["high_freq_factor"]
    old = p["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / low_f, old / high_f
    wavelen = 2 * math.pi / inv
    out = torch.where(wavelen > low_wavelen, inv / factor, inv)          # long wavelengths: slowed by `factor`
    smooth = (old / wavelen - low_f) / (high_f - low_f)
    smoothed = (1 - smooth) * out / factor + smooth * out
    medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
    return torch.where(medium, smoothed, out)


def context_length(config) -> int:
    """The longest context the scaled RoPE is meant for: max_position_embeddings, or the original window times the
    factor for dynamic (factor × max_position_embeddings) and yarn when that is longer."""
    p = params(config)
    if p["rope_type"] == "dynamic":
        return int(config.max_position_embeddings * p["factor"])
    if p["rope_type"] == "yarn":
        return max(config.max_position_embeddings, int(p["original_max_position_embeddings"] * yarn_factor(config)))
    return config.max_position_embeddings


def call_frequencies(config, positions: torch.Tensor) -> tuple[torch.Tensor, float]:
    """frequencies() for one forward call's positions (B, S): transformers' n is max(positions) + 1."""
    return frequencies(config, int(positions.max()) + 1 if positions.numel() else 1)
