"""The Precision page's serving table (app_pages/precision.py): what each weight format means for a model on one
GPU, from the configs alone."""
from __future__ import annotations

from ..arith import costs


def serving_rows(configs: dict, gpu: str = "H200 141GB", context: int = 32768) -> list[dict]:
    """What each weight format means when serving: per model and format the weight bytes, the decode-step
    bound (every weight read once per token at the GPU's bandwidth), and how many tokens of bf16 KV cache
    fit in the memory the weights leave free."""
    g = costs.GPUS[gpu]
    rows = []
    for label, c in configs.items():
        kv = costs.kv_cache_bytes(c, 1, 2)
        for name, bits in (("float32", 32), ("bfloat16", 16), ("int8", 8)):
            w = costs.weight_bytes(c, bits)
            free = g["mem_gb"] * 1e9 - w
            rows.append(dict(model=label, dtype=name, weights=w, decode_ms=w / (g["tb_per_s"] * 1e12) * 1e3,
                             kv_tokens=max(0, int(free // kv)), fits=free > 0,
                             contexts=max(0, int(free // (kv * context)))))
    return rows
