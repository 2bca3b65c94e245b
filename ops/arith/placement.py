"""Placing a model too big for one GPU: which layers go on which device, and what each device then holds.

Whole decoder layers stay together, in order: the embedding, layers 0..L-1, the final norm and an untied LM
head, split into contiguous runs, one run per GPU, as `from_pretrained(device_map="balanced")` places them.
Before the split, each GPU's budget is cut by what it must hold beside its weights: the KV cache of its layers
at the chosen context and batch, and a working reserve. A model that does not fit the GPUs keeps its first
modules on them, filled in order, and the rest spill to the CPU. Then, per device: its layers, weight bytes,
KV bytes, the bytes a float32 trace capture of its layers would hold, and whether it fits. Plain arithmetic
on the config (bf16 weights, sizes from the expected tensor shapes): no weights and no extra packages.

    plan(reference_config("Qwen2.5-32B-Instruct"), gpus=2, gpu_gb=80, context=4096)

`Model(..., device_map=plan["device_map"])` runs each layer on the device that holds its weights.
"""
from __future__ import annotations

import math
from collections import defaultdict

from ..engine.config import ModelConfig
from ..engine.inputs import estimate_trace_bytes
from ..errors import InputError
from ..models.checkpoints import expected_shapes
from . import costs

GB = 1e9                     # GPU sizes are quoted in decimal GB (80 GB, 141 GB), as the spec sheets do
RESERVE_GB = 2.0             # CUDA context, allocator slack and activations, per GPU
BF16 = 2


def local_gpus() -> list[str]:
    """The names of this machine's CUDA GPUs ([] where there are none)."""
    import torch

    if not torch.cuda.is_available():
        return []
    return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]


def module_sizes(config: ModelConfig) -> dict[str, int]:
    """bf16 bytes of each placeable module, in forward order: model.embed_tokens, model.layers.{i}, model.norm,
    and lm_head when it is not tied to the embedding (a tied head is the embedding table, on its device)."""
    sizes: dict[str, int] = defaultdict(int)
    for name, shape in expected_shapes(config).items():
        parts = name.split(".")
        owner = ".".join(parts[:3]) if parts[1] == "layers" else ".".join(parts[:-1])
        sizes[owner] += math.prod(shape) * BF16
    return dict(sizes)


def _split(sizes: dict[str, int], gpus: int, budget: int) -> dict[str, object]:
    """Contiguous runs of modules, one per GPU, balanced by bytes; where they do not fit, GPUs filled in order and
    the rest on "cpu"."""
    names, total = list(sizes), sum(sizes.values())
    if total <= gpus * budget:
        # each module goes to the GPU whose share of the total holds the module's middle byte
        done, device_map = 0, {}
        for n in names:
            device_map[n] = min(gpus - 1, int((done + sizes[n] / 2) * gpus // total))
            done += sizes[n]
        load = defaultdict(int)
        for n, d in device_map.items():
            load[d] += sizes[n]
        if max(load.values()) <= budget:
            return device_map
    device_map, d, used = {}, 0, 0
    for n in names:                   # fill each GPU to its budget, in order; what is left goes to the CPU
        while d < gpus and used + sizes[n] > budget:
            d, used = d + 1, 0
        device_map[n] = d if d < gpus else "cpu"
        used += sizes[n] if d < gpus else 0
    return device_map


def plan(config: ModelConfig, gpus: int, gpu_gb: float, context: int = 4096, batch: int = 1,
         kv_dtype_bytes: int = 2, capture: bool = False) -> dict:
    """The placement of `config` in bfloat16 on `gpus` GPUs of `gpu_gb` GB each.

    Returns {device_map, devices: [{device, layers, weights, kv, capture, total, budget, fits}], fits,
    spill_layers (layers that found no GPU), kv_per_layer}. Bytes are ints."""
    if gpus < 1 or gpu_gb <= 0 or context < 1 or batch < 1:
        raise InputError(f"need gpus >= 1, gpu_gb > 0, context >= 1, batch >= 1; got {gpus}, {gpu_gb}, "
                         f"{context}, {batch}")
    L = config.num_hidden_layers
    kv_per_layer = costs.kv_cache_bytes(config, context * batch, kv_dtype_bytes) // L
    cap_per_layer = estimate_trace_bytes(config, batch, context, capture=("layers.0.*",)) if capture else 0
    # every GPU gets an even share of the layers' KV cache and capture taken off its budget up front
    per_gpu_extra = -(-L // gpus) * (kv_per_layer + cap_per_layer) + int(RESERVE_GB * GB)
    budget = max(int(gpu_gb * GB) - per_gpu_extra, 0)
    sizes = module_sizes(config)
    device_map = _split(sizes, gpus, budget)

    gpu_total = int(gpu_gb * GB)
    devices = []
    for d in list(range(gpus)) + ["cpu"]:
        layers = [i for i in range(L) if device_map[f"model.layers.{i}"] == d]
        weights = sum(b for n, b in sizes.items() if device_map[n] == d)
        if d == "cpu" and not layers and not weights:
            continue
        kv, cap = len(layers) * kv_per_layer, len(layers) * cap_per_layer
        total = weights + kv + cap
        devices.append(dict(device=d, layers=layers, weights=weights, kv=kv, capture=cap, total=total,
                            budget=gpu_total if d != "cpu" else None,
                            fits=d != "cpu" and total + int(RESERVE_GB * GB) <= gpu_total))
    spill = [i for i in range(L) if device_map[f"model.layers.{i}"] == "cpu"]
    on_cpu = any(d == "cpu" for d in device_map.values())          # a layer, or only the LM head: not on the GPUs
    return dict(device_map=device_map, devices=devices, spill_layers=spill, kv_per_layer=kv_per_layer,
                fits=not on_cpu and all(x["fits"] for x in devices if x["device"] != "cpu"))


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
