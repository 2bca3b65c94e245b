"""The words around ops/arith/costs.py's numbers, in both languages: operator names, FLOPs formulas, the notes of
each page's "At scale" section and the GPUs' sources, all in assets/words/costs.<lang>.json. ops/ stays free of
translations; the pages ask here. Never imports streamlit."""
from __future__ import annotations

from .words import catalogue, say

# the stages whose "At scale" numbers carry a note (at_scale_<stage> in the catalogue)
AT_SCALE = ("embedding", "rmsnorm", "attention", "residual", "mlp", "moe", "lm_head", "lm_head_tied", "sampling")
# the GPUs whose source is written out (gpu_note_<id>); another GPU shows ops.arith.costs.GPUS[gpu]["note"]
GPU_NOTES = {"H200 141GB": "h200", "A100 80GB": "a100", "RTX 4090 24GB": "rtx4090"}


def _known(prefix: str, name: str, lang: str) -> str:
    """op_<name> / formula_<name> in lang; a name the catalogue does not list (a formula of symbols only, an
    operator ops/ adds later) is shown as it is."""
    return say(f"costs.{prefix}_{name}", lang) if f"{prefix}_{name}" in catalogue("costs", "en") else name


def operator(name: str, lang: str) -> str:
    """An operator row of costs.param_table / costs.flops, named by ops/arith/costs.py in English."""
    return _known("op", name, lang)


def formula(text: str, lang: str) -> str:
    """The formula column of costs.flops."""
    return _known("formula", text, lang)


def at_scale_note(stage: str, lang: str, **fields) -> str:
    return say(f"costs.at_scale_{stage}", lang, **fields)


def gpu_note(gpu: str, spec: dict, lang: str) -> str:
    """Where a GPU's figures come from; spec is ops.arith.costs.GPUS[gpu] (its numbers and English note)."""
    if gpu not in GPU_NOTES:
        return spec["note"]
    return say(f"costs.gpu_note_{GPU_NOTES[gpu]}", lang, tflops=f"{spec['tflops_bf16']:g}", tb=spec["tb_per_s"])
