"""Operator Lab's compute layer: load a Qwen2-family model and run it operator by operator.

    from ops import load_model
    model = load_model()                       # the bundled Qwen2.5-Coder-0.5B-Instruct, offline
    trace = model.trace(["I like shanghai", "你好"])
    trace["layers.0.attn.probs"].shape         # (B, nh, S, S)
"""
from .engine.config import ModelConfig
from .engine.inputs import token_limit
from .engine.model import Model
from .engine.sampling import SamplingParams
from .engine.trace import Trace
from .errors import ConfigError, InputError, LoadError, SamplingError


def configure(cache=None, limits=None, store_bytes=None) -> None:
    """What the app hands the compute layer (ops never reads the environment): the cache folder for prepared
    models and the native library (None: the user cache folder), and the prompt / generation / batch limits
    (an ops.engine.inputs.Limits; None: the defaults), and the byte budget of the one store of prompt data
    (ops.engine.store.STORE; None: leave it as it is)."""
    from .engine import inputs
    from .engine.store import STORE
    from .models import bundled
    bundled.CACHE = cache
    inputs.set_limits(limits or inputs.Limits())
    if store_bytes is not None:
        STORE.set_budget(store_bytes)


def load_model(source=None, device=None, dtype=None, progress=None) -> Model:
    """source: None/"default" (bundled), a Hugging Face model folder, or a GGUF file."""
    from .models.loading import load_source
    config, weights, tokenizer = load_source(source, progress=progress)
    return Model(config, weights, tokenizer, device=device, dtype=dtype)


__all__ = ["configure", "load_model", "Model", "ModelConfig", "Trace", "ConfigError", "InputError", "LoadError",
           "SamplingError",
           "SamplingParams", "token_limit"]
