"""Explanation texts for every stage, at two levels (academic / plain) in two languages (zh / en).

Layout: assets/explain/<stage>.<lang>.md, one file per stage and language, holding two sections
headed exactly `## academic` and `## plain` (Markdown, LaTeX inside $...$ allowed).

Placeholders: `{name}` (a Python identifier) is replaced by numbers[name]; a name missing from
`numbers` raises KeyError. Literal braces, as LaTeX needs them, are written doubled, `{{` and `}}`,
exactly as in str.format: `$\\sqrt{{d}}$` renders as `$\\sqrt{d}$`. Numbers are never typed into the
texts; `numbers()` builds them from configs:
    {H} {L} {nh} ... the loaded model;  {H_32b} {nh_32b} ... Qwen2.5-32B-Instruct (the seeds' model);
    {H_moe} {E_moe} ... Qwen3-30B-A3B (the MoE example);  {B} {S} {T} the run;  {V_tok} tokenizer size.
Shape dimensions are plain integers (they sit inside [B, S, H] lists); counts and byte sizes carry
thousands separators ("32,763,876,352") or units ("1.00 GiB").
"""
from __future__ import annotations

import json
import re
from functools import lru_cache

from content import stages
from ops import costs
from ops.config import ModelConfig

EXPLAIN_DIR = costs.ASSETS / "explain"
STAGES = tuple(stages.explained())      # the registry's stages with an explanation file
LANGS = ("zh", "en")
LEVELS = ("academic", "plain")
MOE_LABEL = "Qwen3-30B-A3B"
QWEN_TOKENIZER_SIZE = 151_665  # 151,643 BPE tokens + 22 special/added (FACTS.md)

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SECTION = re.compile(r"^## (academic|plain)\s*$", re.M)


def stages() -> list[str]:
    return list(STAGES)


def fill(template: str, numbers: dict) -> str:
    """Replace {name} with str(numbers[name]) (KeyError if absent); {{ and }} become { and }."""
    def sub(m):
        if m.group(0) == "{{":
            return "{"
        if m.group(0) == "}}":
            return "}"
        return str(numbers[m.group(1)])
    return _TOKEN.sub(sub, template)


def placeholders(template: str) -> set[str]:
    """The placeholder names a template uses."""
    return {m.group(1) for m in _TOKEN.finditer(template) if m.group(1)}


@lru_cache(maxsize=None)
def _sections(stage: str, lang: str) -> dict[str, str]:
    path = EXPLAIN_DIR / f"{stage}.{lang}.md"
    text = path.read_text("utf-8")
    parts = _SECTION.split(text)
    # parts = [preamble, level, body, level, body, ...]
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts), 2)}


def template(stage: str, lang: str, level: str) -> str:
    """The raw (unfilled) text of one stage/lang/level."""
    if stage not in STAGES or lang not in LANGS or level not in LEVELS:
        raise KeyError(f"no text for ({stage!r}, {lang!r}, {level!r})")
    return _sections(stage, lang)[level]


def explain(stage: str, lang: str, level: str, numbers: dict) -> str:
    """The filled explanation; KeyError names the first missing placeholder."""
    return fill(template(stage, lang, level), numbers)


# ---- numbers ---------------------------------------------------------------------------------
def _fmt(n: int) -> str:
    return f"{int(n):,}"


def config_numbers(c: ModelConfig) -> dict:
    """Every value the texts quote about one model, as strings ready to print."""
    p_total = costs.total_params(c)
    rows = {r["operator"]: r for r in costs.param_table(c)}
    attn_layer = sum(r["per_layer"] for k, r in rows.items() if k.startswith("attention"))
    mlp_layer = rows["mlp (SwiGLU)"]["per_layer"] if "mlp (SwiGLU)" in rows else 0
    kv_tok = costs.kv_cache_bytes(c, 1, 2)
    w16 = costs.weight_bytes(c, 16)
    d = dict(
        model_name=c.name or c.model_type, model_type=c.model_type,
        H=c.hidden_size, L=c.num_hidden_layers, nh=c.num_attention_heads, nkv=c.num_key_value_heads,
        hd=c.head_dim, n_rep=c.n_rep, I=c.intermediate_size, V=c.vocab_size, V_fmt=_fmt(c.vocab_size),
        q_dim=c.num_attention_heads * c.head_dim, kv_dim=c.num_key_value_heads * c.head_dim,
        half_hd=c.head_dim // 2, eps=f"{c.rms_norm_eps:g}", theta=_fmt(c.rope_theta),
        max_pos=_fmt(c.max_position_embeddings), tie="true" if c.tie_word_embeddings else "false",
        params=costs.human(p_total), params_exact=_fmt(p_total),
        params_active=costs.human(costs.active_params(c)),
        embed_params=_fmt(c.vocab_size * c.hidden_size),
        embed_bytes_bf16=costs.human(2 * c.vocab_size * c.hidden_size, "B"),
        attn_params_layer=_fmt(attn_layer), mlp_params_layer=_fmt(mlp_layer),
        mlp_share=f"{100 * mlp_layer * c.num_hidden_layers / p_total:.0f}",
        kv_bytes_per_token=_fmt(kv_tok), kv_per_token=costs.human(kv_tok, "B"),
        kv_bytes_per_token_mha=_fmt(kv_tok * c.n_rep),
        kv_4096=costs.human(costs.kv_cache_bytes(c, 4096, 2), "B"),
        weights_bf16_gb=f"{w16 / 1e9:.1f}", weights_int4_gb=f"{costs.weight_bytes(c, 4) / 1e9:.1f}",
        decode_ms_h200=f"{w16 / (costs.GPUS['H200 141GB']['tb_per_s'] * 1e12) * 1e3:.2f}",
        heads_total=_fmt(c.num_hidden_layers * c.num_attention_heads),
        weights_fp32_gb=f"{costs.weight_bytes(c, 32) / 1e9:.1f}", weights_int8_gb=f"{costs.weight_bytes(c, 8) / 1e9:.1f}",
        decode_ms_h200_int8=f"{costs.weight_bytes(c, 8) / (costs.GPUS['H200 141GB']['tb_per_s'] * 1e12) * 1e3:.2f}",
        E=c.num_experts, k=c.num_experts_per_tok, Im=c.moe_intermediate_size,
        Is=c.shared_expert_intermediate_size,
    )
    return {k: str(v) for k, v in d.items()}


def numbers(config: ModelConfig, tokenizer_vocab: int | None = None, B: int = 1, S: int = 8,
            ref: ModelConfig | None = None, moe_ref: ModelConfig | None = None) -> dict:
    """Placeholders for the texts: loaded model (plain names), ref (_32b), MoE example (_moe), the run.

    tokenizer_vocab: the loaded tokenizer's size; None assumes Qwen's 151,665 when the embedding is at
    least that large (a Qwen-family model), else the embedding row count.
    """
    refs = costs.reference_configs()
    ref = ref or refs[costs.REF_LABEL]
    moe_ref = moe_ref or refs[MOE_LABEL]
    out = config_numbers(config)
    out.update({f"{k}_32b": v for k, v in config_numbers(ref).items()})
    out.update({f"{k}_moe": v for k, v in config_numbers(moe_ref).items()})
    if tokenizer_vocab is None:
        tokenizer_vocab = QWEN_TOKENIZER_SIZE if config.vocab_size >= QWEN_TOKENIZER_SIZE else config.vocab_size
    v_tok_ref = QWEN_TOKENIZER_SIZE
    out.update(
        B=str(B), S=str(S), T=str(B * S), S1=str(S + 1),
        V_tok=_fmt(tokenizer_vocab), V_pad=_fmt(config.vocab_size - tokenizer_vocab),
        V_tok_32b=_fmt(v_tok_ref), V_pad_32b=_fmt(ref.vocab_size - v_tok_ref),
        probs_shape=str([B, config.num_attention_heads, S, S]),
        scores_elems=_fmt(B * config.num_attention_heads * S * S),
        logits_bytes_32b=costs.human(4 * B * S * ref.vocab_size, "B"),
        kv_run=costs.human(costs.kv_cache_bytes(config, B * S, 2), "B"),
        lm_head_flops_32b=_fmt(costs.matmul_flops(B * S, ref.vocab_size, ref.hidden_size)),
        decode_tok_s_h200_32b=f"{1000 / float(out['decode_ms_h200_32b']):.0f}",
        params_72b=costs.human(costs.total_params(refs['Qwen2.5-72B-Instruct'])),
    )
    return out


def cheatsheet(numbers: dict) -> list[dict]:
    """assets/cheatsheet.json rows with their shape templates filled from `numbers`."""
    rows = json.loads((costs.ASSETS / "cheatsheet.json").read_text("utf-8"))
    return [{k: fill(v, numbers) if isinstance(v, str) else v for k, v in r.items()} for r in rows]
