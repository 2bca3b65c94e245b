"""GGUF file -> (ModelConfig, float32 weights with Hugging Face names, Tokenizer).

GGUF is llama.cpp's single-file format: a metadata table (config + tokenizer), a tensor table,
then the (often quantized) tensor data. The header is parsed here with `struct` on a memory map
(gguf.GGUFReader builds a numpy view per vocabulary string, seconds on Qwen's 151,936 tokens); the numbers are
dequantized by the `gguf` package (llama.cpp's own reference code).
"""
from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass
from math import prod

import numpy as np
import torch

from ..engine.config import ModelConfig
from ..errors import ConfigError, GGUFError, LoadError, Refused
from .tokenizer import Tokenizer

GGUF_MAGIC = b"GGUF"
SUPPORTED_ARCHS = {"qwen2": "qwen2", "qwen2moe": "qwen2_moe", "qwen3": "qwen3", "qwen3moe": "qwen3_moe",
                   "llama": "llama"}

# metadata value types: fixed-size scalars; 8 is a string, 9 an array
_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


@dataclass(frozen=True)
class TensorInfo:
    name: str          # GGUF name, e.g. blk.0.attn_q.weight
    shape: tuple       # numpy order (rows, cols): GGUF's ne order reversed
    ggml_type: int     # gguf.GGMLQuantizationType value
    offset: int        # absolute byte offset in the file
    nbytes: int


@dataclass
class GGUFFile:
    path: str
    metadata: dict
    tensors: dict      # name -> TensorInfo
    blob: np.ndarray   # the whole file, memory-mapped uint8


# ---- header parsing -----------------------------------------------------
def _read_string(blob, pos):
    (n,) = struct.unpack_from("<Q", blob, pos)
    pos += 8
    if pos + n > len(blob):
        raise GGUFError("a string runs past the end of the file")
    return str(blob[pos:pos + n], "utf-8", errors="replace"), pos + n


def _read_value(blob, pos, vtype):
    if vtype in _SCALAR:
        fmt = _SCALAR[vtype]
        return struct.unpack_from(fmt, blob, pos)[0], pos + struct.calcsize(fmt)
    if vtype == 8:
        return _read_string(blob, pos)
    if vtype == 9:
        etype, count = struct.unpack_from("<IQ", blob, pos)
        pos += 12
        if etype in _SCALAR:  # numeric arrays (token types, scores) in one numpy read
            dt = np.dtype(_SCALAR[etype])
            end = pos + count * dt.itemsize
            if end > len(blob):
                raise GGUFError("an array runs past the end of the file")
            return np.frombuffer(blob[pos:end], dtype=dt).tolist(), end
        values = []
        for _ in range(count):
            v, pos = _read_value(blob, pos, etype)
            values.append(v)
        return values, pos
    raise GGUFError(f"unknown metadata value type {vtype}")


def open_gguf(path) -> GGUFFile:
    """Parse a GGUF header and tensor table (no tensor data is read). Raises GGUFError."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    path = str(path)
    try:
        blob = np.memmap(path, mode="r", dtype=np.uint8)
    except (ValueError, OSError) as e:  # an empty file cannot be mapped
        raise GGUFError(f"cannot map the file: {e}") from e
    if bytes(blob[:4]) != GGUF_MAGIC:
        raise GGUFError("it does not start with the GGUF magic bytes")
    header = memoryview(blob)  # slicing a memoryview is far cheaper than slicing the memmap: 151,936 strings
    try:
        version, n_tensors, n_kv = struct.unpack_from("<IQQ", blob, 4)
        if version not in (2, 3):
            raise GGUFError(f"GGUF version {version} is not supported (2 and 3 are)")
        pos, metadata = 24, {}
        for _ in range(n_kv):
            key, pos = _read_string(header, pos)
            (vtype,) = struct.unpack_from("<I", header, pos)
            metadata[key], pos = _read_value(header, pos + 4, vtype)
        entries = []
        for _ in range(n_tensors):
            name, pos = _read_string(header, pos)
            (ndim,) = struct.unpack_from("<I", header, pos)
            dims = struct.unpack_from(f"<{ndim}Q", header, pos + 4)
            gtype, off = struct.unpack_from("<IQ", header, pos + 4 + 8 * ndim)
            pos += 4 + 8 * ndim + 12
            entries.append((name, tuple(reversed(dims)), gtype, off))
    except struct.error as e:  # ran off the end of a truncated file
        raise GGUFError(f"the header ends early ({e})") from e
    align = int(metadata.get("general.alignment", 32))
    data_start = (pos + align - 1) // align * align
    tensors = {}
    for name, shape, gtype, off in entries:
        try:
            block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(gtype)]
        except (ValueError, KeyError) as e:
            raise GGUFError(f"tensor {name} has unknown ggml type {gtype}") from e
        nbytes = prod(shape) // block * type_size
        start = data_start + off
        if start + nbytes > len(blob):
            raise GGUFError(f"tensor {name} needs bytes {start}..{start + nbytes} but the file has "
                            f"{len(blob)} bytes")
        tensors[name] = TensorInfo(name, shape, gtype, start, nbytes)
    return GGUFFile(path, metadata, tensors, blob)


# ---- config -------------------------------------------------------------
# a quantisation tag at the end of a GGUF file name: .Q4_1, -q8_0, .Q4_K_M, -IQ3_XS, .f16, -BF16
_QUANT_TAG = re.compile(r"[.\-_](?:I?Q\d\w*|BF16|FP?16|FP?32)$", re.I)


def display_name(metadata: dict, path) -> str:
    """A readable model name for the UI. llama.cpp's converter often writes general.name as a title-cased
    folder name ("Smollm2 135M 8k Lc100K Mix1 Ep2"), so: the file name without .gguf and its quantisation tag
    when it holds the model's general.basename ("SmolLM2-135M-Instruct.Q4_1.gguf" -> "SmolLM2-135M-Instruct");
    else basename-size_label ("smollm2-135M"); else general.name; else the tidied file name."""
    stem = os.path.basename(str(path))
    stem = stem[:-5] if stem.lower().endswith(".gguf") else stem
    while _QUANT_TAG.search(stem):
        stem = _QUANT_TAG.sub("", stem)
    base, size = metadata.get("general.basename"), metadata.get("general.size_label")
    if isinstance(base, str) and base and base.lower() in stem.lower():
        return stem
    if isinstance(base, str) and base and isinstance(size, str) and size:
        return f"{base}-{size}"
    return metadata.get("general.name") or stem


def gguf_config(f: GGUFFile, name: str | None = None) -> ModelConfig:
    """ModelConfig from {arch}.* metadata; vocab_size from token_embd's rows."""
    md = f.metadata
    arch = md.get("general.architecture")
    if arch not in SUPPORTED_ARCHS:
        raise GGUFError(f"unsupported architecture '{arch}' (Operator Lab reads GGUF files of "
                        + ", ".join(SUPPORTED_ARCHS) + ")")

    def get(key, default=None):
        return md.get(f"{arch}.{key}", default)

    if "token_embd.weight" not in f.tensors:
        raise GGUFError("missing tensor token_embd.weight")
    n_head = int(get("attention.head_count"))
    hidden = int(get("embedding_length"))
    model_type = SUPPORTED_ARCHS[arch]
    d = dict(
        model_type=model_type,
        vocab_size=f.tensors["token_embd.weight"].shape[0],
        hidden_size=hidden,
        intermediate_size=int(get("feed_forward_length", 0) or get("expert_feed_forward_length", 0)),
        num_hidden_layers=int(get("block_count")),
        num_attention_heads=n_head,
        num_key_value_heads=int(get("attention.head_count_kv", n_head)),
        head_dim=int(get("attention.key_length", hidden // n_head)),
        max_position_embeddings=int(get("context_length", 32768)),
        rope_theta=float(get("rope.freq_base", 10000.0)),
        rms_norm_eps=float(np.float32(get("attention.layer_norm_rms_epsilon", 1e-6))),
        tie_word_embeddings="output.weight" not in f.tensors,
        attention_bias="blk.0.attn_q.bias" in f.tensors,
        bos_token_id=md.get("tokenizer.ggml.bos_token_id"),
        eos_token_id=md.get("tokenizer.ggml.eos_token_id"),
        name=name or display_name(md, f.path),
    )
    # float32 metadata: print 1e-06 rather than 9.999999974752427e-07
    d["rms_norm_eps"] = float(f"{d['rms_norm_eps']:.7g}")
    d.update(gguf_rope(f, get, d["head_dim"], d["max_position_embeddings"]))
    if model_type in ("qwen2_moe", "qwen3_moe"):
        d.update(num_experts=int(get("expert_count", 0)), num_experts_per_tok=int(get("expert_used_count", 0)),
                 moe_intermediate_size=int(get("expert_feed_forward_length", 0)),
                 shared_expert_intermediate_size=int(get("expert_shared_feed_forward_length", 0)),
                 norm_topk_prob=model_type == "qwen3_moe")
        if model_type == "qwen2_moe" and d["shared_expert_intermediate_size"] == 0 \
                and "blk.0.ffn_up_shexp.weight" in f.tensors:
            d["shared_expert_intermediate_size"] = f.tensors["blk.0.ffn_up_shexp.weight"].shape[0]
        if get("expert_weights_norm") is not None:  # else: Qwen3-MoE always renormalises, Qwen2-MoE never
            d["norm_topk_prob"] = bool(get("expert_weights_norm"))
    return ModelConfig.from_dict(d)


# RoPE keys llama.cpp may write whose meaning differs from transformers' parameters: refused unless neutral
_ROPE_NEUTRAL = {"rope.scaling.attn_factor": 1.0, "rope.scaling.yarn_attn_factor": 1.0,
                 "rope.scaling.yarn_log_multiplier": 0.0, "rope.scaling.yarn_ext_factor": None}


def gguf_rope(f: GGUFFile, get, head_dim: int, context: int) -> dict:
    """The config's RoPE fields from {arch}.rope.* metadata and the rope_freqs tensor (llama.cpp writes it for
    llama3 scaling: per-pair divisors of the frequencies). Refused for what the engine does not compute."""
    out, kind = {}, str(get("rope.scaling.type", "none"))
    dims = get("rope.dimension_count")
    if dims is not None and int(dims) != head_dim:
        raise Refused("rope.dimension_count", int(dims), "partial_rotary")
    for key, neutral in _ROPE_NEUTRAL.items():
        v = get(key)
        if v is not None and (neutral is None or float(v) != neutral):
            raise Refused(key, float(v), "rope_key")
    factor = get("rope.scaling.factor")
    if kind == "linear":
        out["rope_scaling"] = dict(rope_type="linear", factor=float(factor))
    elif kind == "yarn":
        out["rope_scaling"] = dict(rope_type="yarn", factor=float(factor), original_max_position_embeddings=int(
            get("rope.scaling.original_context_length", context)))
        for key in ("beta_fast", "beta_slow"):
            if get(f"rope.scaling.yarn_{key}") is not None:
                out["rope_scaling"][key] = float(get(f"rope.scaling.yarn_{key}"))
    elif kind != "none":
        raise Refused("rope.scaling.type", kind, "rope_type")
    if "rope_freqs.weight" in f.tensors:
        out["rope_freq_factors"] = tuple(float(x) for x in dequantize(f, f.tensors["rope_freqs.weight"]).reshape(-1))
    return out


# ---- tensors ------------------------------------------------------------
_LAYER_NAMES = {  # GGUF blk.N.<x> -> HF model.layers.N.<y>
    "attn_norm.weight": "input_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight", "attn_q.bias": "self_attn.q_proj.bias",
    "attn_k.weight": "self_attn.k_proj.weight", "attn_k.bias": "self_attn.k_proj.bias",
    "attn_v.weight": "self_attn.v_proj.weight", "attn_v.bias": "self_attn.v_proj.bias",
    "attn_output.weight": "self_attn.o_proj.weight",
    "attn_q_norm.weight": "self_attn.q_norm.weight", "attn_k_norm.weight": "self_attn.k_norm.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight", "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
    "ffn_gate_inp.weight": "mlp.gate.weight",
    "ffn_gate_shexp.weight": "mlp.shared_expert.gate_proj.weight",
    "ffn_up_shexp.weight": "mlp.shared_expert.up_proj.weight",
    "ffn_down_shexp.weight": "mlp.shared_expert.down_proj.weight",
    "ffn_gate_inp_shexp.weight": "mlp.shared_expert_gate.weight",
}
_EXPERT_NAMES = {"ffn_gate_exps.weight": "gate_proj", "ffn_up_exps.weight": "up_proj",
                 "ffn_down_exps.weight": "down_proj"}
_GLOBAL_NAMES = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
                 "output.weight": "lm_head.weight"}


def gguf_name_of(hf: str) -> str:
    """The GGUF name of an HF parameter name (not per-expert tensors): hf_name's inverse, for writing files."""
    for g, h in _GLOBAL_NAMES.items():
        if h == hf:
            return g
    _, _, n, rest = hf.split(".", 3)
    for g, h in _LAYER_NAMES.items():
        if h == rest:
            return f"blk.{n}.{g}"
    raise KeyError(hf)


def hf_name(gguf_name: str) -> str | None:
    """HF parameter name for a GGUF tensor name (None: a tensor we do not use, e.g. rope_freqs)."""
    if gguf_name in _GLOBAL_NAMES:
        return _GLOBAL_NAMES[gguf_name]
    if gguf_name.startswith("blk."):
        _, n, rest = gguf_name.split(".", 2)
        if rest in _LAYER_NAMES:
            return f"model.layers.{n}.{_LAYER_NAMES[rest]}"
        if rest in _EXPERT_NAMES:
            return f"model.layers.{n}.mlp.experts.{{e}}.{_EXPERT_NAMES[rest]}.weight"
    return None


def dequantize(f: GGUFFile, info: TensorInfo) -> np.ndarray:
    """One tensor as float32 numpy in numpy (row-major) order."""
    from gguf import GGMLQuantizationType, dequantize as gg_dequantize

    raw = f.blob[info.offset:info.offset + info.nbytes]
    qtype = GGMLQuantizationType(info.ggml_type)
    if qtype == GGMLQuantizationType.F32:  # a copy: the map is read-only and may be deleted
        return raw.view(np.float32).reshape(info.shape).copy()
    if qtype == GGMLQuantizationType.BF16:  # numpy has no bfloat16: widen the bits by hand
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).reshape(info.shape)
    # gguf.dequantize works on rows of blocks: give it (rows, bytes per row)
    rows = prod(info.shape[:-1]) if len(info.shape) > 1 else 1
    return gg_dequantize(raw.reshape(rows, -1), qtype).reshape(info.shape)


def unpermute(w: torch.Tensor, n_head: int) -> torch.Tensor:
    """Undo llama.cpp's q/k row permutation for llama-arch files (its rope is the interleaved form)."""
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def gguf_tensors(f: GGUFFile, config: ModelConfig, progress=None):
    """Yield (hf_name, float32 contiguous torch tensor) for every tensor, dequantized one by one."""
    infos = list(f.tensors.values())
    for k, info in enumerate(infos):
        name = hf_name(info.name)
        if progress:
            progress(k / len(infos), f"dequantizing {info.name} ({info.shape})")
        if name is None:
            continue
        w = torch.from_numpy(np.ascontiguousarray(dequantize(f, info), dtype=np.float32))
        if config.model_type == "llama" and info.name.endswith(("attn_q.weight", "attn_k.weight")):
            n = config.num_attention_heads if "attn_q" in info.name else config.num_key_value_heads
            w = unpermute(w, n).contiguous()
        if name.endswith("shared_expert_gate.weight") and w.ndim == 1:  # GGUF keeps it as a vector [H]
            w = w[None, :]
        if "{e}" in name:  # stacked experts [E, rows, cols] -> one HF tensor per expert
            for e in range(w.shape[0]):
                yield name.format(e=e), w[e].clone()
        else:
            yield name, w


def gguf_tokenizer(f: GGUFFile) -> Tokenizer:
    md = f.metadata
    if md.get("tokenizer.ggml.model") != "gpt2":
        raise GGUFError(f"tokenizer model '{md.get('tokenizer.ggml.model')}' is not supported "
                        "(Operator Lab reads byte-level BPE, tokenizer.ggml.model = gpt2)")
    return Tokenizer.from_gguf_fields(
        tokens=md["tokenizer.ggml.tokens"], merges=md.get("tokenizer.ggml.merges", []),
        token_types=md.get("tokenizer.ggml.token_type"), pre=md.get("tokenizer.ggml.pre", "default"),
        eos_token_id=md.get("tokenizer.ggml.eos_token_id"), bos_token_id=md.get("tokenizer.ggml.bos_token_id"),
        pad_token_id=md.get("tokenizer.ggml.padding_token_id"), chat_template=md.get("tokenizer.chat_template"))


def read_gguf(path, progress=None, name: str | None = None):
    """(ModelConfig, {hf_name: float32 tensor}, Tokenizer) from a GGUF file. Raises LoadError."""
    try:
        f = open_gguf(path)
        config = gguf_config(f, name)
        tokenizer = gguf_tokenizer(f)
        weights = dict(gguf_tensors(f, config, progress))
    except GGUFError as e:
        if "unsupported architecture" in str(e):
            raise LoadError(f"{path}: {e}") from e
        raise LoadError(f"{path} is not a readable GGUF file (truncated or corrupted?): {e}") from e
    except (ConfigError, LoadError):
        raise
    except Exception as e:  # numpy/gguf errors on damaged data
        raise LoadError(f"{path} is not a readable GGUF file (truncated or corrupted?): "
                        f"{type(e).__name__}: {e}") from e
    return config, weights, tokenizer
