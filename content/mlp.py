"""The MLP / MoE page's sentences beside its figures, in both languages: notes filled with live numbers by `say`,
and the MoE reference table's labels, all in assets/words/mlp.<lang>.json. Never imports streamlit."""
from __future__ import annotations

from . import words

NOTES = ("strips_title", "strips", "moe_layer", "silu_title", "silu_some", "silu", "dense_32b", "dense_loaded",
         "moe_real", "moe_random", "moe_cost")                  # note_<name> in the catalogue


def say(key: str, lang: str, **numbers) -> str:
    """The note `key` in lang, filled with numbers."""
    return words.say(f"mlp.note_{key}", lang, **numbers)


def dense_warning(config, lang: str) -> str:
    """The correction about Qwen2.5-32B, and, on a dense loaded model, that it is dense too."""
    name = config.name or config.model_type
    return say("dense_32b", lang) + ("" if config.is_moe else say("dense_loaded", lang, name=name))


def moe_table(rows: list[dict], lang: str) -> list[dict]:
    """The reference models' MoE facts (ops/lab/stage_data.moe_reference_rows) as the page's table rows."""
    dense, none = words.say("mlp.dense_none", lang), words.say("mlp.none", lang)
    head = {k: words.say(f"mlp.col_{k}", lang) for k in ("model", "experts", "width", "shared", "total", "active")}
    return [{head["model"]: r["model"], head["experts"]: str(r["experts"] or dense), "top-k": str(r["top_k"] or "—"),
             head["width"]: str(r["width"]) + ("" if r["experts"] else " (MLP)"),
             head["shared"]: "—" if r["shared"] is None else str(r["shared"] or none),
             "norm_topk_prob": "—" if r["norm_topk_prob"] is None else str(r["norm_topk_prob"]),
             head["total"]: r["total"], head["active"]: r["active"]} for r in rows]
