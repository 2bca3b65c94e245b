"""Explanation texts for every stage, at two levels (academic / plain) in two languages (zh / en).

Layout: assets/explain/<stage>.<lang>.md, one file per stage and language, holding two sections
headed exactly `## academic` and `## plain` (Markdown, LaTeX inside $...$ allowed).

Placeholders: `{name}` (a Python identifier) is replaced by numbers[name]; a name missing from
`numbers` raises KeyError. Literal braces, as LaTeX needs them, are written doubled, `{{` and `}}`,
exactly as in str.format: `$\\sqrt{{d}}$` renders as `$\\sqrt{d}$`. Numbers are never typed into the
texts; `numbers()` builds them from configs:
    {H} {L} {nh} ... the loaded model;  {H_32b} {nh_32b} ... Qwen2.5-32B-Instruct (the seeds' model);
    {H_moe} {E_moe} ... Qwen3-30B-A3B (the MoE example);  {B} {S} {T} the run;  {V_tok} tokenizer size.
Sentences true only of some models are chosen from the loaded model's facts (content/facts.py): a name ending
in _en / _zh is one language's sentence, and a text of that language uses it without the suffix
({tie_sentence} reads tie_sentence_en in English).
Shape dimensions are plain integers (they sit inside [B, S, H] lists); counts and byte sizes carry
thousands separators ("32,763,876,352") or units ("1.00 GiB").
"""
from __future__ import annotations

import json
import math
import re
from functools import lru_cache

from content import facts, stages
from content.template import fill
from ops.arith import costs
from ops.engine import speculate
from ops.engine.config import ModelConfig

EXPLAIN_DIR = costs.ASSETS / "explain"
PAIRED = ("models",)                    # texts about two models at once: placeholders from content/models.py
STAGES = tuple(k for k in stages.explained() if k not in PAIRED)   # the stages whose placeholders numbers() fills
LANGS = ("zh", "en")
LEVELS = ("academic", "plain")
MOE_LABEL = "Qwen3-30B-A3B"
QWEN_TOKENIZER_SIZE = 151_665  # 151,643 BPE tokens + 22 special/added (docs/facts.md)
MIN_P_EXAMPLE = 0.1             # the min-p worked in the decode texts

_SECTION = re.compile(r"^## (academic|plain)\s*$", re.M)


def stages() -> list[str]:
    return list(STAGES)


@lru_cache(maxsize=None)
def _sections(stage: str, lang: str) -> dict[str, str]:
    path = EXPLAIN_DIR / f"{stage}.{lang}.md"
    text = path.read_text("utf-8")
    parts = _SECTION.split(text)
    # parts = [preamble, level, body, level, body, ...]
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts), 2)}


def template(stage: str, lang: str, level: str) -> str:
    """The raw (unfilled) text of one stage/lang/level."""
    if stage not in STAGES + PAIRED or lang not in LANGS or level not in LEVELS:
        raise KeyError(f"no text for ({stage!r}, {lang!r}, {level!r})")
    return _sections(stage, lang)[level]


def in_lang(numbers: dict, lang: str) -> dict:
    """numbers plus each `{name}_{lang}` sentence under its plain name (what a text in `lang` reads)."""
    suffix = "_" + lang
    return {**numbers, **{k[:-len(suffix)]: v for k, v in numbers.items() if k.endswith(suffix)}}


def explain(stage: str, lang: str, level: str, numbers: dict) -> str:
    """The filled explanation; KeyError names the first missing placeholder."""
    return fill(template(stage, lang, level), in_lang(numbers, lang))


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
        embed_params=_fmt(costs.operator_costs(c, "embedding", 1, 1)["params"]),        # the At-scale card's count
        embed_bytes_bf16=costs.human(2 * costs.operator_costs(c, "embedding", 1, 1)["params"], "B"),
        attn_params_layer=_fmt(attn_layer), mlp_params_layer=_fmt(mlp_layer),
        mlp_share=f"{100 * mlp_layer * c.num_hidden_layers / p_total:.0f}",
        kv_bytes_per_token=_fmt(kv_tok), kv_per_token=costs.human(kv_tok, "B"),
        kv_bytes_per_token_mha=_fmt(kv_tok * c.n_rep),
        kv_4096=costs.human(costs.kv_cache_bytes(c, 4096, 2), "B"),
        weights_bf16_gb=f"{w16 / 1e9:.1f}", weights_int4_gb=f"{costs.weight_bytes(c, 4) / 1e9:.1f}",
        decode_ms_h200=f"{w16 / (costs.GPUS['H200 141GB']['tb_per_s'] * 1e12) * 1e3:.2f}",
        heads_total=_fmt(c.num_hidden_layers * c.num_attention_heads),
        weights_fp32_gb=f"{costs.weight_bytes(c, 32) / 1e9:.1f}",
        weights_int8_gb=f"{costs.weight_bytes(c, 8) / 1e9:.1f}",
        decode_ms_h200_int8=f"{costs.weight_bytes(c, 8) / (costs.GPUS['H200 141GB']['tb_per_s'] * 1e12) * 1e3:.2f}",
        E=c.num_experts, k=c.num_experts_per_tok, Im=c.moe_intermediate_size,
        Is=c.shared_expert_intermediate_size, E_idle=c.num_experts - c.num_experts_per_tok,
        I_over_H=f"{c.intermediate_size / c.hidden_size:.2f}",
        params_untied=_fmt(costs.total_params(c.replace(tie_word_embeddings=False))),
    )
    return {k: str(v) for k, v in d.items()}


def numbers(config: ModelConfig, tokenizer_vocab: int | None = None, B: int = 1, S: int = 8,
            ref: ModelConfig | None = None, moe_ref: ModelConfig | None = None,
            tokenizer_facts: dict | None = None, lm_head_stored: bool | None = None) -> dict:
    """Placeholders for the texts: loaded model (plain names), ref (_32b), MoE example (_moe), the run.

    The loaded model's facts beyond its config (content/facts.py; `**facts.loaded(model)` passes both):
    tokenizer_facts: facts.tokenizer_facts(tokenizer), its size, added and special tokens; None with a
    tokenizer_vocab uses that size alone; with neither, a qwen2 config gets the Qwen2.5 tokenizer (151,665)
    and any other config the embedding row count. lm_head_stored: whether the loaded weights hold their own
    LM head (None: as config.tie_word_embeddings says).
    """
    refs = costs.reference_configs()
    ref = ref or refs[costs.REF_LABEL]
    moe_ref = moe_ref or refs[MOE_LABEL]
    out = config_numbers(config)
    out.update({f"{k}_32b": v for k, v in config_numbers(ref).items()})
    out.update({f"{k}_moe": v for k, v in config_numbers(moe_ref).items()})
    if tokenizer_facts is None and tokenizer_vocab is not None:
        tokenizer_facts = dict(size=tokenizer_vocab)      # its size only: special tokens unknown
    model = facts.sentences(config, tokenizer_facts, lm_head_stored, _fmt)
    tokenizer_vocab = model.pop("V_tok_loaded")
    if model["tie"] != out["tie"]:          # the loaded weights say otherwise than the config: count what is loaded
        out.update(config_numbers(config.replace(tie_word_embeddings=model["tie"] == "true")))
    out.update({k: str(v) for k, v in model.items()})
    v_tok_ref = QWEN_TOKENIZER_SIZE
    ref_tok = facts.QWEN25_TOKENIZER
    above, below = facts.swiglu_widths()
    cross = costs.prefill_crossover(ref, 1)
    out.update(
        V_added_32b=_fmt(ref_tok["added"]), swiglu_above_4h=above, swiglu_below_4h=below,
        ridge_h200=f"{costs.roofline(ref, 1, 1)['ridge']:.0f}", h200_tb_s=f"{costs.GPUS['H200 141GB']['tb_per_s']:g}",
        prefill_cross_32b=_fmt(cross), prefill_mem_32b=_fmt(cross // 2),
        B=str(B), S=str(S), T=str(B * S), S1=str(S + 1),
        V_tok=_fmt(tokenizer_vocab), V_pad=_fmt(config.vocab_size - tokenizer_vocab),
        V_tok_32b=_fmt(v_tok_ref), V_pad_32b=_fmt(ref.vocab_size - v_tok_ref),
        probs_shape=str([B, config.num_attention_heads, S, S]),
        scores_elems=_fmt(B * config.num_attention_heads * S * S),
        logits_bytes_32b=costs.human(4 * B * S * ref.vocab_size, "B"),
        kv_run=costs.human(costs.kv_cache_bytes(config, B * S, 2), "B"),
        kv_run_fp32=costs.human(costs.kv_cache_bytes(config, B * S, 4), "B"),
        lm_head_flops_32b=_fmt(costs.operator_costs(ref, "lm_head", B, S)["flops"]),
        decode_tok_s_h200_32b=f"{1000 / float(out['decode_ms_h200_32b']):.0f}",
        params_72b=costs.human(costs.total_params(refs['Qwen2.5-72B-Instruct'])),
        # the Generate page's options: prompt-lookup drafts as ops/engine/speculate.py makes them, a min-p example
        lookup_ngram=str(speculate.MAX_NGRAM), lookup_draft=str(speculate.MAX_DRAFT),
        lookup_pass=str(speculate.MAX_DRAFT + 1), minp_m=f"{MIN_P_EXAMPLE:g}", minp_pct=f"{100 * MIN_P_EXAMPLE:g}",
        minp_gap=f"{-math.log(MIN_P_EXAMPLE):.2f}",
    )
    from content import serving_numbers
    out.update(serving_numbers.numbers(ref))
    out.update(live_tokens([]))              # no trace: the texts that point at a chart speak of "the last token"
    return out


_MARKUP = re.compile(r"([\\`*_\[\]$<>~|#])")      # what would turn a prompt's token into markup in a text


def live_tokens(labels: list[str]) -> dict:
    """The live prompt's tokens for the texts that point at a chart (labels: a row's tokens as the chart labels
    them): {last_token}, the last one quoted (with the space it needs in English), as plain text; empty without one."""
    last = _MARKUP.sub(r"\\\1", labels[-1]) if labels else ""
    return dict(last_token_zh=f"“{last}”" if last else "", last_token_en=f" “{last}”" if last else "")


def model_sentence(model, name: str, lang: str) -> str:
    """One sentence about a loaded ops.Model (content/facts.py: "tie_sentence", "vocab_sentence", ...) in lang."""
    return in_lang(numbers(model.config, **facts.loaded(model)), lang)[name]


def cheatsheet(numbers: dict) -> list[dict]:
    """assets/cheatsheet.json rows with their shape templates filled from `numbers`."""
    rows = json.loads((costs.ASSETS / "cheatsheet.json").read_text("utf-8"))
    zh, en = in_lang(numbers, "zh"), in_lang(numbers, "en")
    return [{k: fill(v, zh if k.endswith("_zh") else en) if isinstance(v, str) else v for k,
             v in r.items()} for r in rows]
