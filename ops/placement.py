"""Placing a model too big for one GPU: which layers go on which device, and what each device then holds.

The split is accelerate's own `infer_auto_device_map` over the model built on the meta device (no memory, no
weights), with whole decoder layers kept together, as `from_pretrained(device_map=...)` would place them.
Before it runs, each GPU's budget is cut by what it must hold beside its weights: the KV cache of its layers
at the chosen context and batch, and a working reserve. Then, per device: its layers, weight bytes, KV
bytes, the bytes a float32 trace capture of its layers would hold, and whether it fits.

    plan(reference_config("Qwen2.5-32B-Instruct"), gpus=2, gpu_gb=80, context=4096)

`Model(..., device_map=plan["device_map"])` runs each layer on the device that holds its weights.
"""
from __future__ import annotations

import logging
from functools import lru_cache

import torch

from . import costs
from .config import ModelConfig
from .errors import InputError
from .inputs import estimate_trace_bytes

GB = 1e9                     # GPU sizes are quoted in decimal GB (80 GB, 141 GB), as the spec sheets do
RESERVE_GB = 2.0             # CUDA context, allocator slack and activations, per GPU


@lru_cache(maxsize=4)
def _meta_model(config: ModelConfig):
    """The transformers model of this config on the meta device (shapes only), and its layer sizes."""
    from accelerate import init_empty_weights
    from accelerate.utils import compute_module_sizes
    from transformers import AutoConfig, AutoModelForCausalLM

    hf = AutoConfig.for_model(**config.to_dict())
    with init_empty_weights():
        model = AutoModelForCausalLM.from_config(hf, dtype=torch.bfloat16)
    return model, compute_module_sizes(model, dtype=torch.bfloat16)


def _device_of(device_map: dict, module: str):
    """The device of a module name under a map whose keys may be its parents ("model.layers.3")."""
    while module:
        if module in device_map:
            return device_map[module]
        module = module.rpartition(".")[0]
    return device_map.get("", "cpu")


def plan(config: ModelConfig, gpus: int, gpu_gb: float, context: int = 4096, batch: int = 1,
         kv_dtype_bytes: int = 2, capture: bool = False) -> dict:
    """The placement of `config` in bfloat16 on `gpus` GPUs of `gpu_gb` GB each.

    Returns {device_map, devices: [{device, layers, weights, kv, capture, total, budget, fits}], fits,
    spill_layers (layers that found no GPU), kv_per_layer}. Bytes are ints."""
    if gpus < 1 or gpu_gb <= 0 or context < 1 or batch < 1:
        raise InputError(f"need gpus >= 1, gpu_gb > 0, context >= 1, batch >= 1; got {gpus}, {gpu_gb}, "
                         f"{context}, {batch}")
    from accelerate import infer_auto_device_map
    from accelerate.utils import get_balanced_memory

    model, sizes = _meta_model(config)
    L = config.num_hidden_layers
    tokens = context * batch
    kv_per_layer = costs.kv_cache_bytes(config, tokens, kv_dtype_bytes) // L
    cap_per_layer = estimate_trace_bytes(config, batch, context, capture=("layers.0.*",)) if capture else 0
    # every GPU gets an even share of the layers' KV cache and capture taken off its budget up front
    per_gpu_extra = -(-L // gpus) * (kv_per_layer + cap_per_layer) + int(RESERVE_GB * GB)
    budget = int(gpu_gb * GB) - per_gpu_extra
    max_memory = {i: max(budget, 0) for i in range(gpus)} | {"cpu": 10**15}
    quiet = logging.getLogger("accelerate.utils.modeling")
    level, quiet.level = quiet.level, logging.ERROR              # "Device 0 is not available" on a CPU machine
    try:
        keep_whole = list(model._no_split_modules)
        if gpus > 1:            # spread the layers evenly (what device_map="balanced" does), not GPU 0 first
            max_memory = get_balanced_memory(model, max_memory=max_memory, dtype=torch.bfloat16,
                                             no_split_module_classes=keep_whole)
        device_map = infer_auto_device_map(model, max_memory=max_memory, dtype=torch.bfloat16,
                                           no_split_module_classes=keep_whole)
    finally:
        quiet.setLevel(level)

    owners = ["model.embed_tokens", "model.norm"] + [f"model.layers.{i}" for i in range(L)]
    owners += [] if config.tie_word_embeddings else ["lm_head"]        # a tied head is the embedding table
    devices = []
    for d in list(range(gpus)) + ["cpu"]:
        layers = [i for i in range(L) if _device_of(device_map, f"model.layers.{i}") == d]
        weights = sum(sizes[name] for name in owners if _device_of(device_map, name) == d)
        if d == "cpu" and not layers and not weights:
            continue
        kv, cap = len(layers) * kv_per_layer, len(layers) * cap_per_layer
        total = weights + kv + cap
        gpu_total = int(gpu_gb * GB)
        devices.append(dict(device=d, layers=layers, weights=weights, kv=kv, capture=cap, total=total,
                            budget=gpu_total if d != "cpu" else None,
                            fits=d != "cpu" and total + int(RESERVE_GB * GB) <= gpu_total))
    spill = [i for i in range(L) if _device_of(device_map, f"model.layers.{i}") == "cpu"]
    return dict(device_map=device_map, devices=devices, spill_layers=spill, kv_per_layer=kv_per_layer,
                fits=not spill and all(x["fits"] for x in devices if x["device"] != "cpu"))


def table(config: ModelConfig, gpu_counts=(1, 2, 4, 8), gpu_sizes=(24, 80, 141), context: int = 4096,
          batch: int = 1) -> list[dict]:
    """One row per (GPUs, GB): fits?, layers per GPU, the fullest GPU's weights / KV / total."""
    rows = []
    for gb in gpu_sizes:
        for n in gpu_counts:
            p = plan(config, n, gb, context, batch)
            gpus = [d for d in p["devices"] if d["device"] != "cpu"]
            full = max(gpus, key=lambda d: d["total"])
            rows.append(dict(gpus=n, gpu_gb=gb, fits=p["fits"], spill=len(p["spill_layers"]),
                             layers=[len(d["layers"]) for d in gpus], weights=full["weights"], kv=full["kv"],
                             total=full["total"]))
    return rows
