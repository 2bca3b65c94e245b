"""Interview practice: questions with short/long answers (zh/en), and a quiz on the live trace.

assets/practice/*.json (every file, in sorted order): lists of
    {id, stage, difficulty, seed, question{zh,en}, short{zh,en}, long{zh,en}, compute?}
stage is a registry key (content/stages.py); difficulty 1 (recall) .. 3 (derive or reason across stages).
`compute` = {formula, config (label in assets/configs), params, unit, tol?}: the answer is computed by
ops/costs.py at render time (FORMULAS below) and fills {answer} (exact, thousands separators) and
{answer_h} (human units); a question with a compute block is "computed". Its config's own values are
{cfg_H}, {cfg_L}, ... (every name of content.texts.config_numbers), so worked arithmetic is never typed.
Texts may also use every placeholder of content.texts.numbers().
"""
from __future__ import annotations

import json
import math
import re

from ops import costs
from content import serving, texts
from ops.config import ModelConfig

PRACTICE_DIR = costs.ASSETS / "practice"  # every *.json here is a list of questions (same schema)


def _attn_layer_params(c):
    return sum(r["per_layer"] for r in costs.param_table(c) if r["operator"].startswith("attention"))


def _mlp_layer_params(c):
    return 3 * c.hidden_size * c.intermediate_size


FORMULAS = {
    "kv_cache_bytes": lambda c, tokens, dtype_bytes=2: costs.kv_cache_bytes(c, tokens, dtype_bytes),
    "kv_cache_bytes_mha": lambda c, tokens, dtype_bytes=2: costs.kv_cache_bytes(c, tokens, dtype_bytes) * c.n_rep,
    "total_params": lambda c: costs.total_params(c),
    "active_params": lambda c: costs.active_params(c),
    "attn_layer_params": _attn_layer_params,
    "mlp_layer_params": _mlp_layer_params,
    "lm_head_flops": lambda c, tokens: costs.matmul_flops(tokens, c.vocab_size, c.hidden_size),
    "q_proj_flops": lambda c, tokens: costs.matmul_flops(tokens, c.num_attention_heads * c.head_dim, c.hidden_size),
    "embedding_bytes": lambda c, bits=16: c.vocab_size * c.hidden_size * bits // 8,
    "weight_bytes": lambda c, bits=16: costs.weight_bytes(c, bits),
    "decode_ms": lambda c, gpu="H200 141GB": costs.weight_bytes(c, 16) / (costs.GPUS[gpu]["tb_per_s"] * 1e12) * 1e3,
    "max_tokens_in_cache": lambda c, gpu_gb: costs.max_tokens_in_cache(c, gpu_gb),
    "n_rep": lambda c: c.n_rep,
    "scores_elements": lambda c, B, S: B * c.num_attention_heads * S * S,
    "heads_total": lambda c: c.num_hidden_layers * c.num_attention_heads,
}
FORMULAS.update(serving.FORMULAS)      # the serving chapter's (content/serving.py)


def load_questions() -> list[dict]:
    """Every question of every assets/practice/*.json, files in sorted order."""
    return [q for path in sorted(PRACTICE_DIR.glob("*.json")) for q in json.loads(path.read_text("utf-8"))]


def is_computed(q: dict) -> bool:
    """A question whose answer is computed from a config at render time (it has a compute block)."""
    return bool(q.get("compute"))


def compute(q: dict) -> float | int | None:
    """The numeric answer of a question with a `compute` block (None for conceptual questions)."""
    spec = q.get("compute")
    if not spec:
        return None
    cfg = costs.reference_configs()[spec["config"]]
    return FORMULAS[spec["formula"]](cfg, **spec.get("params", {}))


def _format_answer(value, unit: str) -> tuple[str, str]:
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.2f}", f"{value:.2f} {unit}".strip()
    v = int(value)
    human = costs.human(v, "B") if unit == "bytes" else costs.human(v)
    return f"{v:,}", human


def render(q: dict, numbers: dict, lang: str = "en") -> dict:
    """One question filled for display: {id, stage, difficulty, computed, seed, question, short, long,
    answer (number or None)}."""
    value = compute(q)
    nums = texts.in_lang(numbers, lang)
    if value is not None:
        unit = q["compute"].get("unit", "")
        nums["answer"], nums["answer_h"] = _format_answer(value, unit)
        if unit == "elements":                # what those elements take in float32
            nums["answer_fp32"] = costs.human(4 * value, "B")
        cfg = costs.reference_configs()[q["compute"]["config"]]
        nums.update({f"cfg_{k}": v for k, v in texts.config_numbers(cfg).items()})
    return dict(id=q["id"], stage=q["stage"], difficulty=q["difficulty"], computed=is_computed(q),
                seed=q.get("seed", False), answer=value,
                **{part: texts.fill(q[part][lang], nums) for part in ("question", "short", "long")})


def questions(numbers: dict, lang: str = "en", stage: str | None = None) -> list[dict]:
    """Every question (optionally one stage's) rendered in one language."""
    return [render(q, numbers, lang) for q in load_questions() if stage in (None, q["stage"])]


# ---- quiz on the live trace ------------------------------------------------------------------
_SHAPE_QUESTIONS = [  # (trace name, zh, en)
    ("tokens.ids", "分词后 token id 张量的形状？", "Shape of the token-id tensor after tokenising?"),
    ("embed.out", "嵌入层输出的形状？", "Shape of the embedding output?"),
    ("layers.0.attn.q", "第 0 层投影后 q 的形状（[B, nh, S, hd]）？", "Shape of layer 0's projected q ([B, nh, S, hd])?"),
    ("layers.0.attn.k", "第 0 层投影后 k 的形状？", "Shape of layer 0's projected k?"),
    ("layers.0.attn.probs", "第 0 层注意力概率的形状？", "Shape of layer 0's attention probabilities?"),
    ("layers.0.attn.context", "第 0 层多头拼接后 context 的形状？", "Shape of layer 0's concatenated context?"),
    ("layers.0.mlp.gate", "第 0 层 MLP gate 投影的形状？", "Shape of layer 0's MLP gate projection?"),
    ("layers.0.moe.router_probs", "第 0 层路由概率的形状？", "Shape of layer 0's router probabilities?"),
    ("logits", "logits 的形状？", "Shape of the logits?"),
]


def quiz_items(config: ModelConfig, trace_shapes: dict[str, tuple], lengths: list[int] | None = None) -> list[dict]:
    """Predict-the-shape items for trace names present, plus number items from the config.

    lengths: real tokens per batch row (the rest is right padding); None: no padding.
    Each item: {question{zh,en}, answer (list of ints or number), kind "shape"|"number", source, tol}.
    """
    items = [dict(question=dict(zh=zh, en=en), answer=list(trace_shapes[name]), kind="shape", source=name, tol=0)
             for name, zh, en in _SHAPE_QUESTIONS if name in trace_shapes]
    c = config
    numbers = [
        ("config.n_rep", "一个 KV 头被几个查询头共享？", "How many query heads share one KV head?", c.n_rep),
        ("config.head_dim", "每个注意力头的维度 hd 是多少？", "What is the head dimension hd?", c.head_dim),
        ("config.kv_bytes_per_token", "bf16 下每个 token 的 KV cache 有多少字节？",
         "How many bytes of KV cache per token in bf16?", costs.kv_cache_bytes(c, 1, 2)),
        ("config.q_proj_params", "一层 q_proj" + ("（含偏置）" if c.attention_bias else "（无偏置）") + "有多少参数？",
         "How many parameters in one layer's q_proj" + (" (with bias)?" if c.attention_bias else " (it has no bias)?"),
         next(r["per_layer"] for r in costs.param_table(c) if r["operator"] == "attention q_proj")),
        ("config.total_params", "整个模型有多少参数（共享权重只算一次）？",
         "How many parameters in the whole model (tied weights counted once)?", costs.total_params(c)),
    ]
    if "layers.0.attn.probs" in trace_shapes:
        b, nh, s, _ = trace_shapes["layers.0.attn.probs"]
        numbers.append(("layers.0.attn.probs", "第 0 层注意力概率张量一共有多少个元素？",
                        "How many elements are in layer 0's attention-probability tensor?", b * nh * s * s))
        n = lengths[0] if lengths else s
        # query i < n sees keys 0..i; a padding query (i >= n) sees the n real keys; every other entry is masked to 0
        zeros = s * s - n * (n + 1) // 2 - (s - n) * n
        pad_zh = f"（这一行有 {n} 个真实 token，补齐到 S = {s}）" if n < s else ""
        pad_en = f" (this row has {n} real tokens, padded to S = {s})" if n < s else ""
        numbers.append(("layers.0.attn.probs", f"因果掩码和填充掩码下，第 0 行每个头的概率矩阵里有多少个恰好为 0 的元素？{pad_zh}",
                        f"Under the causal and padding masks, how many entries of one head's probability matrix in batch "
                        f"row 0 are exactly 0?{pad_en}", zeros))
    items += [dict(question=dict(zh=zh, en=en), answer=v, kind="number", source=src, tol=0.01 if v > 1000 else 0)
              for src, zh, en, v in numbers]
    return items


_UNITS = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "bn": 1e9, "g": 1e9, "t": 1e12, "kb": 1e3, "mb": 1e6, "gb": 1e9,
          "tb": 1e12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "万": 1e4, "亿": 1e8,
          "byte": 1, "bytes": 1, "字节": 1, "个": 1, "flops": 1, "flop": 1, "params": 1, "tokens": 1, "ms": 1}


def parse_shape(text: str) -> list[int] | None:
    """'[1, 14, 5, 5]', '1x14x5x5', '(1,14,5,5)', '1 × 14 × 5 × 5' -> [1, 14, 5, 5]."""
    nums = re.findall(r"\d+", text)
    return [int(n) for n in nums] if nums else None


def parse_number(text: str) -> float | None:
    """'1,073,741,824', '1 GiB', '32.76B', '3.3e9', '12 万' -> float; None if unreadable."""
    t = text.strip().lower().replace("_", "").replace("，", ",")
    t = re.sub(r"(?<=\d),(?=\d{3})", "", t)
    m = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*([a-z\u4e00-\u9fff]*)\s*\.?", t)
    if not m or m.group(2) not in _UNITS:
        return None
    return float(m.group(1)) * _UNITS[m.group(2)]


def check_answer(item: dict, user_text: str) -> bool:
    """Shapes must match exactly; numbers within the item's relative tolerance (exact when tol=0)."""
    if item["kind"] == "shape":
        return parse_shape(user_text) == list(item["answer"])
    got = parse_number(user_text)
    if got is None:
        return False
    want = float(item["answer"])
    tol = item.get("tol", 0)
    return math.isclose(got, want, rel_tol=tol, abs_tol=1e-9) if tol else got == want
