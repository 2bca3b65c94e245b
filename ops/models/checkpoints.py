"""A Hugging Face model folder or a GGUF file, read and checked: the tensors a config expects (names and shapes),
safetensors read without pickle (pickled checkpoints are refused), the folder's tokenizer, float32 weights."""
from __future__ import annotations

import json
from pathlib import Path

import torch

from ..engine.config import ModelConfig
from ..errors import LoadError
from .gguf import read_gguf
from .tokenizer import Tokenizer

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")


def _noop(fraction, message):
    pass


# ---- expected tensors -----------------------------------------------------
def expected_shapes(config: ModelConfig) -> dict[str, tuple]:
    """Every tensor name the runner needs, with the shape the config implies."""
    H, V, hd = config.hidden_size, config.vocab_size, config.head_dim
    q, kv = config.num_attention_heads * hd, config.num_key_value_heads * hd
    s = {"model.embed_tokens.weight": (V, H)}
    for i in range(config.num_hidden_layers):
        p = f"model.layers.{i}."
        s[p + "input_layernorm.weight"] = (H,)
        s[p + "self_attn.q_proj.weight"] = (q, H)
        s[p + "self_attn.k_proj.weight"] = (kv, H)
        s[p + "self_attn.v_proj.weight"] = (kv, H)
        s[p + "self_attn.o_proj.weight"] = (H, q)
        if config.attention_bias:
            s[p + "self_attn.q_proj.bias"] = (q,)
            s[p + "self_attn.k_proj.bias"] = (kv,)
            s[p + "self_attn.v_proj.bias"] = (kv,)
        if config.o_bias:                                   # llama / Qwen3: attention_bias covers o_proj too
            s[p + "self_attn.o_proj.bias"] = (H,)
        if config.has_qk_norm:
            s[p + "self_attn.q_norm.weight"] = (hd,)
            s[p + "self_attn.k_norm.weight"] = (hd,)
        s[p + "post_attention_layernorm.weight"] = (H,)
        if config.is_moe_layer(i):
            s[p + "mlp.gate.weight"] = (config.num_experts, H)
            for e in range(config.num_experts):
                s.update(_mlp_shapes(f"{p}mlp.experts.{e}.", H, config.moe_intermediate_size))
            if config.shared_expert_intermediate_size:
                s.update(_mlp_shapes(p + "mlp.shared_expert.", H, config.shared_expert_intermediate_size))
                s[p + "mlp.shared_expert_gate.weight"] = (1, H)
        else:
            s.update(_mlp_shapes(p + "mlp.", H, config.intermediate_size))
            if config.mlp_bias:                             # llama's mlp_bias
                s.update({p + f"mlp.{m}_proj.bias": (n,) for m, n in
                          (("gate", config.intermediate_size), ("up", config.intermediate_size), ("down", H))})
    s["model.norm.weight"] = (H,)
    if not config.tie_word_embeddings:
        s["lm_head.weight"] = (V, H)
    return s


def _mlp_shapes(prefix, H, I):
    return {prefix + "gate_proj.weight": (I, H), prefix + "up_proj.weight": (I, H),
            prefix + "down_proj.weight": (H, I)}


def check_weights(weights: dict, config: ModelConfig, where: str, config_from: str = "config.json") -> dict:
    """Strict check: raise LoadError naming the first missing/unexpected/misshapen tensor.

    `where` names the file(s) the weights came from; returns the weights (a tied lm_head that
    duplicates the embedding is dropped: it is the same matrix)."""
    expected = expected_shapes(config)
    if config.tie_word_embeddings and "lm_head.weight" in weights:
        if torch.equal(weights["lm_head.weight"], weights.get("model.embed_tokens.weight", torch.empty(0))):
            weights = {k: v for k, v in weights.items() if k != "lm_head.weight"}
    missing = [k for k in expected if k not in weights]
    unexpected = [k for k in weights if k not in expected]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise LoadError(f"{where}: missing tensor {missing[0]}{more}, expected from {config_from}")
    if unexpected:
        more = f" (and {len(unexpected) - 1} more)" if len(unexpected) > 1 else ""
        raise LoadError(f"{where}: unexpected tensor {unexpected[0]}{more}, not part of a "
                        f"{config.model_type} model as {config_from} describes it")
    for k, shape in expected.items():
        got = tuple(weights[k].shape)
        if got != shape:
            raise LoadError(f"{where}: tensor {k} has shape {list(got)}, expected {list(shape)} from {config_from}")
    return weights


def _as_float32(weights: dict) -> dict:
    return {k: (v if v.dtype == torch.float32 else v.float()).contiguous() for k, v in weights.items()}


# ---- Hugging Face folders -------------------------------------------------
def _refuse_pickle(path: Path):
    raise LoadError(f"{path}: refusing to load a pickle checkpoint ({path.suffix}): unpickling can run "
                    "arbitrary code. Convert it to safetensors (model.save_pretrained(folder, "
                    "safe_serialization=True)) and load that folder.")


def _read_safetensors(path: Path) -> dict:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        return load_file(str(path))
    except (SafetensorError, OSError, RuntimeError, ValueError) as e:
        raise LoadError(f"{path.name}: not a readable safetensors file (truncated or corrupted?): {e}") from e


def _safetensors_files(folder: Path) -> list[Path]:
    index = folder / "model.safetensors.index.json"
    if index.exists():
        try:
            weight_map = json.loads(index.read_text())["weight_map"]
        except (ValueError, KeyError) as e:
            raise LoadError(f"{index}: not a valid safetensors index ({e})") from e
        files = [folder / f for f in dict.fromkeys(weight_map.values())]
        for f in files:
            if not f.exists():
                raise LoadError(f"{index.name} lists shard {f.name}, which is missing from {folder}")
        return files
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        pickles = [p for p in sorted(folder.iterdir()) if p.suffix in PICKLE_SUFFIXES]
        if pickles:
            _refuse_pickle(pickles[0])
        raise LoadError(f"{folder}: no weights found (no *.safetensors file)")
    return files


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise LoadError(f"{path}: cannot read JSON ({e})") from e


def _folder_tokenizer(folder: Path, config: ModelConfig) -> Tokenizer:
    tj = folder / "tokenizer.json"
    if not tj.exists():
        raise LoadError(f"{folder}: no tokenizer.json (Operator Lab needs the fast-tokenizer file)")
    tc = _read_json(folder / "tokenizer_config.json") if (folder / "tokenizer_config.json").exists() else {}
    template = tc.get("chat_template")
    if (folder / "chat_template.jinja").exists():  # transformers 5 saves the template beside the config
        template = (folder / "chat_template.jinja").read_text()
    eos = None
    gen = folder / "generation_config.json"
    if gen.exists():
        eos = _read_json(gen).get("eos_token_id")
    if eos is None and config.eos_ids:
        eos = list(config.eos_ids)
    try:
        tok = Tokenizer.from_file(tj, chat_template=template)
    except Exception as e:
        raise LoadError(f"{tj}: not a readable tokenizer.json ({e})") from e
    if eos is None and isinstance(tc.get("eos_token"), str):
        eos = tok.added_tokens.get(tc["eos_token"])
    if eos is not None:
        tok = Tokenizer(tok.backend, template, eos, bos_token_id=config.bos_token_id)
    return tok


def load_hf_folder(folder, progress=None) -> tuple[ModelConfig, dict, Tokenizer]:
    """A Hugging Face model folder: config.json, *.safetensors (maybe sharded), tokenizer.json."""
    progress = progress or _noop
    folder = Path(folder)
    cfg_path = folder / "config.json"
    if not cfg_path.exists():
        raise LoadError(f"{folder}: no config.json (a Hugging Face model folder needs one)")
    config = ModelConfig.from_dict(_read_json(cfg_path))
    if not config.name:
        config = config.replace(name=folder.name)
    files = _safetensors_files(folder)
    weights = {}
    for k, f in enumerate(files):
        progress(k / len(files), f"loading {f.name}")
        weights.update(_read_safetensors(f))
    where = files[0].name if len(files) == 1 else f"{folder.name} ({len(files)} safetensors shards)"
    weights = check_weights(_as_float32(weights), config, where)
    tokenizer = _folder_tokenizer(folder, config)
    progress(1.0, "loaded")
    return config, weights, tokenizer


def load_gguf_file(path, progress=None):
    config, weights, tokenizer = read_gguf(path, progress)
    weights = check_weights(weights, config, Path(path).name, config_from="the GGUF metadata")
    return config, weights, tokenizer
