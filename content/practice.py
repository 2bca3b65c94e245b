"""Interview practice: questions with short/long answers (zh/en), and a quiz on the live trace.

assets/practice/*.json (every file, in sorted order): lists of
    {id, stage, difficulty, seed, question{zh,en}, short{zh,en}, long{zh,en}, compute?}
stage is a registry key (content/stages.py); difficulty 1 (recall) .. 3 (derive or reason across stages).
`compute` = {formula, config (label in assets/configs), params, unit, tol?}: the answer is computed by
ops/arith/costs.py at render time (FORMULAS below) and fills {answer} (exact, thousands separators) and
{answer_h} (human units); a question with a compute block is "computed". Its config's own values are
{cfg_H}, {cfg_L}, ... (every name of content.texts.config_numbers), so worked arithmetic is never typed.
Texts may also use every placeholder of content.texts.numbers(). `scenario` lists the numbers a question sets
itself (a batch of 64, groups of 128) that happen to equal a config field (tests/unit/test_model_aware.py).
`variants` ([{config, params, note?}]) asks a computed question again of other models, lengths or dtypes, each answer
computed by the question's own formula (one question, not one per model: the KV-bytes formula is asked once); `note`
({zh, en}, on the question or a variant) fills {note}.
`quiz: false` keeps a question out of the live quiz (a follow-up that reads only after the question before it);
the bank still shows it.

The live quiz (quiz_pool) draws from three groups, every answer computed as the page renders: "trace" (shapes
and numbers of the trace just run, and its config), "experiment" (the experiments engine rerun on that trace:
an ablation's reach, the logit attribution) and "serving" (the serving chapter's computed questions).
"""
from __future__ import annotations

import json
import math
import re

from content import serving_numbers, texts
from content.template import fill
from content.words import LANGS, say
from ops.arith import costs
from ops.engine.config import ModelConfig
from ops.lab import stage_data

PRACTICE_DIR = costs.ASSETS / "practice"  # every *.json here is a list of questions (same schema)


def _stage(c, stage, B=1, S=1, bits=16):
    """The "At scale" card's own numbers (costs.operator_costs): a practice answer and a card never count apart."""
    return costs.operator_costs(c, stage, B, S, bits)


def _flop_row(c, operator, tokens):
    """One row of costs.flops at `tokens` tokens, one layer (the rows the cards add up)."""
    return next(r for r in costs.flops(c, 1, tokens) if r["operator"] == operator)["per_layer"]


FORMULAS = {
    "kv_cache_bytes": lambda c, tokens, dtype_bytes=2: costs.kv_cache_bytes(c, tokens, dtype_bytes),
    "kv_cache_bytes_mha": lambda c, tokens, dtype_bytes=2: costs.kv_cache_bytes(c, tokens, dtype_bytes) * c.n_rep,
    "total_params": lambda c: costs.total_params(c),
    "active_params": lambda c: costs.active_params(c),
    "attn_layer_params": lambda c: _stage(c, "attention")["params_per_layer"],
    "mlp_layer_params": lambda c: _stage(c, "mlp")["params_per_layer"],
    "lm_head_flops": lambda c, tokens: _stage(c, "lm_head", 1, tokens)["flops"],
    "q_proj_flops": lambda c, tokens: _flop_row(c, "attention q_proj", tokens),
    "embedding_bytes": lambda c, bits=16: _stage(c, "embedding")["params"] * bits // 8,     # the whole [V, H] table
    "embedding_read_bytes": lambda c, tokens=1, bits=16: _stage(c, "embedding", 1, tokens, bits)["weight_bytes"],
    "weight_bytes": lambda c, bits=16: costs.weight_bytes(c, bits),
    "decode_ms": lambda c, gpu="H200 141GB": costs.weight_bytes(c, 16) / (costs.GPUS[gpu]["tb_per_s"] * 1e12) * 1e3,
    "max_tokens_in_cache": lambda c, gpu_gb: costs.max_tokens_in_cache(c, gpu_gb),
    "n_rep": lambda c: c.n_rep,
    "scores_elements": lambda c, B, S: B * c.num_attention_heads * S * S,
    "heads_total": lambda c: c.num_hidden_layers * c.num_attention_heads,
    "norm_params": lambda c: _stage(c, "rmsnorm")["params"],                    # two per layer + the final norm
    "mlp_flops_per_token": lambda c: _flop_row(c, "mlp gate+up+down", 1),          # gate, up, down
    "moe_layer_expert_params": lambda c: c.num_experts * 3 * c.hidden_size * c.moe_intermediate_size,
    "logits_bytes": lambda c, tokens, dtype_bytes=4: tokens * c.vocab_size * dtype_bytes,
    # the [V, H] table's share of all parameters, counted twice when the LM head is a separate matrix
    "vocab_share_pct": lambda c: 100 * c.vocab_size * c.hidden_size * (1 if c.tie_word_embeddings else 2)
    / costs.total_params(c),
    # cached tokens (over the whole batch) whose KV weighs as much as the bf16 weights: a decode step's turning point
    "kv_equal_tokens": lambda c: round(costs.weight_bytes(c, 16) / costs.kv_cache_bytes(c, 1, 2)),
}
FORMULAS.update(serving_numbers.FORMULAS)      # the serving chapter's (content/serving_numbers.py)


def load_questions() -> list[dict]:
    """Every question of every assets/practice/*.json, files in sorted order."""
    return [q for path in sorted(PRACTICE_DIR.glob("*.json")) for q in json.loads(path.read_text("utf-8"))]


def is_computed(q: dict) -> bool:
    """A question whose answer is computed from a config at render time (it has a compute block)."""
    return bool(q.get("compute"))


def compute(q: dict) -> float | int | None:
    """The numeric answer of a question with a `compute` block (None for conceptual questions)."""
    spec = q.get("compute")
    return _value(spec) if spec else None


def _value(spec: dict, **params) -> float | int:
    cfg = costs.reference_configs()[spec["config"]]
    return FORMULAS[spec["formula"]](cfg, **{**spec.get("params", {}), **params})


def variant_specs(q: dict) -> list[dict]:
    """A computed question's variants as compute blocks: the question's own formula and unit with each variant's
    config and params (`variants`: [{config, params, note?}], one question asked of several models, lengths or
    dtypes, each answer computed by the same function)."""
    return [{**q["compute"], "config": v["config"], "params": {**q["compute"].get("params", {}), **v.get("params", {})}}
            for v in q.get("variants", [])]


_DTYPES = {1: "FP8", 2: "bf16", 4: "float32"}          # bytes per number -> the name a variant's text shows


def _format_answer(value, unit: str) -> tuple[str, str]:
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.2f}", f"{value:.2f} {unit}".strip()
    v = int(value)
    human = costs.human(v, "B") if unit == "bytes" else costs.gb(v) if unit == "GB" else costs.human(v)
    return f"{v:,}", human


def _fill(q: dict, spec: dict | None, note: dict | None, numbers: dict, lang: str) -> dict:
    """question, short and long filled for one compute block (None: a conceptual question), and its answer shown.
    Beside the config's {cfg_*} names a computed text may use {p_<param>} (a param's value; {p_dtype} names
    dtype_bytes), {answer_per_token} (the formula at one token, when it takes `tokens`) and {note} (a variant's own
    remark)."""
    value = _value(spec) if spec else None
    nums, shown = texts.in_lang(numbers, lang), dict(exact="", human="", config=None)
    nums["note"] = ""
    if value is not None:
        unit = spec.get("unit", "")
        nums["answer"], nums["answer_h"] = _format_answer(value, unit)
        if unit == "elements":                # what those elements take in float32
            nums["answer_fp32"] = costs.human(4 * value, "B")
        params = spec.get("params", {})
        nums.update({f"p_{k}": f"{v:,}" if isinstance(v, int) else v for k, v in params.items()})
        if "dtype_bytes" in params:
            nums["p_dtype"] = _DTYPES.get(params["dtype_bytes"], f"{params['dtype_bytes']}-byte")
        if "tokens" in params:
            nums["answer_per_token"] = _format_answer(_value(spec, tokens=1), unit)[0]
        cfg = costs.reference_configs()[spec["config"]]
        nums.update({f"cfg_{k}": v for k, v in texts.config_numbers(cfg).items()})
        shown = dict(exact=nums["answer"], human=nums["answer_h"], config=spec["config"])
    if note:
        nums["note"] = fill(note[lang], nums)
    return dict(answer=value, **shown, **{part: fill(q[part][lang], nums) for part in ("question", "short",
                                                                                             "long")})


def render(q: dict, numbers: dict, lang: str = "en") -> dict:
    """One question filled for display: {id, stage, difficulty, computed, seed, question, short, long,
    answer (number or None), exact and human (the answer written out, "" when none), config (its label or None),
    standalone (False for a follow-up that reads only after the question before it: `quiz: false`), variants (the
    same fields, filled for each of the question's variants: [] when it has none)}."""
    notes = [v.get("note") for v in q.get("variants", [])]
    return dict(id=q["id"], stage=q["stage"], difficulty=q["difficulty"], computed=is_computed(q),
                seed=q.get("seed", False), standalone=q.get("quiz") is not False,
                **_fill(q, q.get("compute"), q.get("note"), numbers, lang),
                variants=[_fill(q, spec, n, numbers, lang) for spec, n in zip(variant_specs(q), notes)])


def questions(numbers: dict, lang: str = "en", stage: str | None = None) -> list[dict]:
    """Every question (optionally one stage's) rendered in one language."""
    return [render(q, numbers, lang) for q in load_questions() if stage in (None, q["stage"])]


# ---- quiz on the live trace ------------------------------------------------------------------
def _both(key: str, **fields) -> dict:
    """One text of assets/words in every language, {lang: text}; a field may be a function of the language."""
    return {lang: say(key, lang, **{k: v(lang) if callable(v) else v for k, v in fields.items()}) for lang in LANGS}


def _same(text: str) -> dict:
    """A text that reads the same in every language (a number)."""
    return {lang: text for lang in LANGS}


_SHAPE_QUESTIONS = [  # (trace name, its question in assets/words/practice_quiz.<lang>.json)
    ("tokens.ids", "practice_quiz.shape_ids"), ("embed.out", "practice_quiz.shape_embed"),
    ("layers.0.attn.q", "practice_quiz.shape_q"), ("layers.0.attn.k", "practice_quiz.shape_k"),
    ("layers.0.attn.probs", "practice_quiz.shape_probs"), ("layers.0.attn.context", "practice_quiz.shape_context"),
    ("layers.0.mlp.gate", "practice_quiz.shape_gate"), ("layers.0.moe.router_probs", "practice_quiz.shape_router"),
    ("logits", "practice_quiz.shape_logits"),
]


def quiz_items(config: ModelConfig, trace_shapes: dict[str, tuple], lengths: list[int] | None = None) -> list[dict]:
    """Predict-the-shape items for trace names present, plus number items from the config.

    lengths: real tokens per batch row (the rest is right padding); None: no padding.
    Each item: {question{zh,en}, answer (list of ints or number), kind "shape"|"number", source, tol}.
    """
    items = [dict(question=_both(key), answer=list(trace_shapes[name]), kind="shape", source=name, tol=0)
             for name, key in _SHAPE_QUESTIONS if name in trace_shapes]
    c = config
    q_proj = "practice_quiz.q_proj_params_bias" if c.attention_bias else "practice_quiz.q_proj_params_nobias"
    numbers = [
        ("config.n_rep", _both("practice_quiz.n_rep"), c.n_rep),
        ("config.head_dim", _both("practice_quiz.head_dim"), c.head_dim),
        ("config.kv_bytes_per_token", _both("practice_quiz.kv_bytes_per_token"), costs.kv_cache_bytes(c, 1, 2)),
        ("config.q_proj_params", _both(q_proj),
         next(r["per_layer"] for r in costs.param_table(c) if r["operator"] == "attention q_proj")),
        ("config.total_params", _both("practice_quiz.total_params"), costs.total_params(c)),
    ]
    if "layers.0.attn.probs" in trace_shapes:
        b, nh, s, _ = trace_shapes["layers.0.attn.probs"]
        numbers.append(("layers.0.attn.probs", _both("practice_quiz.probs_elements"), b * nh * s * s))
        n = lengths[0] if lengths else s
        # query i < n sees keys 0..i; a padding query (i >= n) sees the n real keys; every other entry is masked to 0
        zeros = s * s - n * (n + 1) // 2 - (s - n) * n
        pad = lambda lang: say("practice_quiz.zeros_pad", lang, n=n, s=s) if n < s else ""      # noqa: E731
        numbers.append(("layers.0.attn.probs", _both("practice_quiz.zeros", pad=pad), zeros))
    items += [dict(question=q, answer=v, kind="number", source=src, tol=0.01 if v > 1000 else 0)
              for src, q, v in numbers]
    return items


_UNITS = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "bn": 1e9, "g": 1e9, "t": 1e12, "kb": 1e3, "mb": 1e6, "gb": 1e9,
          "tb": 1e12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "万": 1e4, "亿": 1e8,
          "byte": 1, "bytes": 1, "字节": 1, "个": 1, "flops": 1, "flop": 1, "params": 1, "tokens": 1, "ms": 1}


_NUMBER = r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?"        # 12, 1.5, 3.3e9
_UNIT = r"[a-z\u4e00-\u9fff]*"                    # a key of _UNITS, Latin or CJK


def parse_shape(text: str) -> list[int] | None:
    """'[1, 14, 5, 5]', '1x14x5x5', '(1,14,5,5)', '1 × 14 × 5 × 5' -> [1, 14, 5, 5]."""
    nums = re.findall(r"\d+", text)
    return [int(n) for n in nums] if nums else None


def parse_number(text: str) -> float | None:
    """'1,073,741,824', '1 GiB', '32.76B', '3.3e9', '12 万' -> float; None if unreadable."""
    t = text.strip().lower().replace("_", "").replace("，", ",")
    t = re.sub(r"(?<=\d),(?=\d{3})", "", t)
    m = re.fullmatch(rf"\s*({_NUMBER})\s*({_UNIT})\s*\.?", t)
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
    tol, abs_tol = item.get("tol", 0), item.get("abs_tol", 0)
    return math.isclose(got, want, rel_tol=tol, abs_tol=abs_tol or 1e-9) if tol or abs_tol else got == want


# ---- the quiz's other groups: experiments on the live trace, and the serving chapter ---------------------------
QUIZ_GROUPS = ("trace", "experiment", "serving")


def group_label(group: str, lang: str) -> str:
    """A quiz group's name (QUIZ_GROUPS): assets/words/practice_quiz.<lang>.json's group_<group>."""
    return say(f"practice_quiz.group_{group}", lang)


def _item(group, source, question, answer, where, explain=None, tol=0.0, abs_tol=0.0, answer_text=None) -> dict:
    return dict(question=question, answer=answer, kind="number", source=source, tol=tol, abs_tol=abs_tol, group=group,
                where=where, explain=explain, answer_text=answer_text)


def trace_extra_items(model, trace, b: int = 0) -> list[dict]:
    """Numbers read off the live trace: the top next token's probability, and where the last layer's head 0
    looks from the last token."""
    c, n, tok = model.config, trace.lengths[b], model.tokenizer
    top = stage_data.next_token_top(trace, b, n - 1, 1)
    tid, prob = int(top["ids"][0]), float(top["probs"][0])
    word = tok.decode([tid])
    items = [_item("trace", "softmax(logits)", _both("practice_quiz.top_prob", b=b, word=word), prob,
                   _both("practice_quiz.top_prob_where"), abs_tol=0.02, answer_text=_same(f"{prob:.3f}"))]
    last = c.num_hidden_layers - 1
    name = f"layers.{last}.attn.probs"
    if name in trace:
        row = trace.attention_probs(last)[b, 0, n - 1, :n].float()
        j, w = int(row.argmax()), float(row.max())
        items.append(_item("trace", name, _both("practice_quiz.sink", layer=last, b=b, pos=n - 1), j,
                           _both("practice_quiz.in_trace", name=name),
                           _both("practice_quiz.sink_explain", j=j, w=f"{w:.3f}")))
    return items


def experiment_items(runs: dict) -> list[dict]:
    """Questions answered by running the experiments engine on one row of the live trace
    (ops.lab.practice_data.experiment_runs: an MLP zeroed at one position, and the top next token's logit
    attribution)."""
    b, L, nh, n, k, p, reach = (runs[x] for x in ("b", "L", "nh", "n", "layer", "position", "reach"))
    ran = _both("practice_quiz.rerun_where")
    setup = lambda lang: say("practice_quiz.setup", lang, k=k, p=p, b=b, n=n, last=n - 1)      # noqa: E731

    def asked(key, **fields):
        """A question after the experiment's setup."""
        return _both("practice_quiz.with_setup", setup=setup,
                     question=lambda lang: say(key, lang, **fields))

    items = []
    if reach["first_layer"] is not None:
        f = reach["first_layer"]
        items.append(_item("experiment", f"edit layers.{k}.mlp.out", asked("practice_quiz.first_layer"), f, ran,
                           _both("practice_quiz.first_layer_explain", f=f)))
    ch = reach["changed"]
    span = f"{ch[0]}…{ch[-1]}" if ch else "–"
    items.append(_item("experiment", f"edit layers.{k}.mlp.out", asked("practice_quiz.changed", n=n), len(ch), ran,
                       _both("practice_quiz.changed_explain", span=span)))
    attr = runs["attribution"]
    if attr is None:                          # a trace that did not keep attn.context / resid_out: no such question
        return items
    bias, word, logit = attr["bias"], attr["word"], attr["logit"]
    sum_txt = f"1 + {L}·{nh}" + (f" + {L}" if bias else "") + f" + {L} = {attr['parts']}"
    bias_part = lambda lang: say("practice_quiz.attribution_bias", lang) if bias else ""      # noqa: E731
    items.append(_item("experiment", "ops/lab/experiments_attribution.py",
                       _both("practice_quiz.attribution", word=word, b=b, bias=bias_part), attr["parts"],
                       _both("practice_quiz.attribution_where"),
                       _both("practice_quiz.attribution_explain", sum=sum_txt, total=f"{attr['total']:.4f}",
                             logit=f"{logit:.4f}")))
    return items


def serving_items(numbers: dict) -> list[dict]:
    """The serving chapter's computed questions (assets/practice/serving.json, not marked quiz: false), each
    answer computed as it renders by content/serving_numbers.py's formulas from the reference configs."""
    out = []
    for q in load_questions():
        if q["stage"] != "serving" or not is_computed(q) or q.get("quiz") is False:
            continue
        r = {lang: render(q, numbers, lang) for lang in LANGS}
        v, unit, cfg = r["en"]["answer"], q["compute"].get("unit", ""), q["compute"]["config"]
        exact, human = _format_answer(v, unit)
        shown = f"{exact} ({human})" if unit == "bytes" else exact
        whole = float(v).is_integer()
        tol = q["compute"].get("tol") or (0.01 if not whole or abs(v) > 1000 else 0)
        out.append(_item("serving", q["id"], {lang: r[lang]["question"] for lang in LANGS}, v,
                         _both("practice_quiz.serving_where", cfg=cfg),
                         {lang: r[lang]["short"] for lang in LANGS}, tol=tol, answer_text=_same(shown)))
    return out


def quiz_pool(model, trace, numbers: dict, runs: dict | None, b: int = 0) -> list[dict]:
    """Every quiz item, group by group: the trace's shapes and numbers, experiments on it (`runs`: what
    ops.lab.practice_data.experiment_runs found on row b; None when they could not run), the serving chapter.
    Each item has a "group" (QUIZ_GROUPS)."""
    base = [dict(it, group="trace") for it in quiz_items(model.config, trace.shapes(), trace.lengths)]
    try:
        extra = trace_extra_items(model, trace, b) + (experiment_items(runs) if runs else [])
    except KeyError:                                   # a trace that kept too little: skip those
        extra = []
    return base + extra + serving_items(numbers)


def answer_text(item: dict, lang: str) -> str:
    """The true answer as the quiz shows it: a shape as [1, 4, 896], a number with separators (and bytes in units)."""
    if item.get("answer_text"):
        return item["answer_text"][lang]
    a = item["answer"]
    if item["kind"] == "shape":
        return "[" + ", ".join(str(int(d)) for d in a) + "]"
    return f"{a:,}" + (f" ({costs.human(a, 'B')})" if "bytes" in item["source"] else "")


def where_text(item: dict, lang: str, trace_names) -> str:
    """Where the answer came from, in lang."""
    if item.get("where"):
        return item["where"][lang]
    if item["kind"] == "shape" and item["source"] in trace_names:
        return say("practice_quiz.from_trace", lang, source=item["source"])
    return say("practice_quiz.computed_from", lang, source=item["source"])
