"""What the texts say about the loaded model, chosen by its facts, in both languages.

A sentence about "the loaded model" has to be true of whatever is loaded: the bundled Qwen2.5 GGUF (whose file
stores its own LM head), SmolLM2 (llama: tied, no biases, another tokenizer), a Qwen3 MoE config... The facts
come from the config and, when a model is loaded, from its tokenizer and weights (`loaded(model)`);
`sentences()` turns them into placeholders, choosing each sentence's variant (assets/words/facts.<lang>.json,
<key>_<variant>) and filling it with the computed numbers. A key ending in `_en` / `_zh` is one language's
sentence: texts of that language see it under the name without the suffix (texts.in_lang). Never imports
streamlit.
"""
from __future__ import annotations

from content.words import say
from ops.arith import costs
from ops.engine.config import ModelConfig

# The Qwen2.5 tokenizer (every Qwen2.5 size, docs/facts.md): assumed for a qwen2 config loaded without a tokenizer.
QWEN25_TOKENIZER = dict(size=151_665, added=22,
                        specials=(("<|endoftext|>", 151643), ("<|im_start|>", 151644), ("<|im_end|>", 151645)),
                        eos=(("<|im_end|>", 151645), ("<|endoftext|>", 151643)))
ARCH = {"qwen2": "Qwen2", "qwen2_moe": "Qwen2-MoE", "qwen3": "Qwen3", "qwen3_moe": "Qwen3-MoE", "llama": "Llama"}


# ---- facts -------------------------------------------------------------------------------------------
def tokenizer_facts(tokenizer) -> dict:
    """size (tokens it can produce), added (special + added tokens), specials and eos as (text, id) pairs."""
    names = {i: s for s, i in tokenizer.added_tokens.items()}
    return dict(size=tokenizer.vocab_size, added=len(tokenizer.added_tokens),
                specials=tuple(tokenizer.special_tokens.items()),
                eos=tuple((names.get(i, str(i)), i) for i in tokenizer.eos_token_ids))


def stores_lm_head(weights) -> bool:
    """Whether the loaded weights hold an LM head of their own (not the embedding tensor itself)."""
    if "lm_head.weight" not in weights:
        return False
    return weights["lm_head.weight"].data_ptr() != weights["model.embed_tokens.weight"].data_ptr()


def loaded(model) -> dict:
    """texts.numbers() keyword arguments for a loaded ops.Model: its tokenizer's facts and its LM head."""
    return dict(tokenizer_facts=tokenizer_facts(model.tokenizer), lm_head_stored=stores_lm_head(model.weights))


def published_twin(c: ModelConfig) -> ModelConfig | None:
    """The reference config (assets/configs) with the same shapes, e.g. Qwen2.5-0.5B-Instruct for the bundled GGUF."""
    keys = ("model_type", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
            "num_key_value_heads", "vocab_size")
    return next((r for r in costs.reference_configs().values()
                 if all(getattr(r, k) == getattr(c, k) for k in keys)), None)


def swiglu_widths() -> tuple[str, str]:
    """The dense reference configs with an MLP wider than 4H, and narrower: 'Qwen2.5-7B-Instruct (5.29 H), ...'."""
    dense = [c for c in costs.reference_configs().values() if not c.is_moe]
    label = [f"{c.name} ({c.intermediate_size / c.hidden_size:.2f} H)" for c in dense]
    above = [s for s, c in zip(label, dense) if c.intermediate_size > 4 * c.hidden_size]
    below = [s for s, c in zip(label, dense) if c.intermediate_size < 4 * c.hidden_size]
    return ", ".join(above) or "-", ", ".join(below) or "-"


# ---- sentences ------------------------------------------------------------------------------------------
def _both(key: str, variant: str, **fields) -> dict:
    """{key}_en and {key}_zh: assets/words/facts' <key>_<variant> in each language, filled with fields."""
    return {f"{key}_{lang}": say(f"facts.{key}_{variant}", lang, **fields) for lang in ("en", "zh")}


def _word(name: str, **fields) -> dict:
    """A short text in each language, filled with fields: {"en": ..., "zh": ...}."""
    return {lang: say(f"facts.{name}", lang, **fields) for lang in ("en", "zh")}


def _listed(pairs) -> str:
    return ", ".join(f"`{s}` = {i}" for s, i in pairs)


def sentences(c: ModelConfig, tok: dict | None, lm_head_stored: bool | None, fmt) -> dict:
    """Every model-dependent sentence and value: tok = tokenizer_facts() (None: not loaded), lm_head_stored = whether
    the loaded weights hold their own LM head (None: as the config says). fmt formats counts ('151,665')."""
    name, V, H = c.name or c.model_type, c.vocab_size, c.hidden_size
    if c.model_type == "qwen2" and (tok is None and V >= QWEN25_TOKENIZER["size"]
                                    or tok is not None and tok == dict(size=QWEN25_TOKENIZER["size"])):
        tok = QWEN25_TOKENIZER              # a Qwen2.5 config or tokenizer size: its tokenizer is known (docs/facts.md)
    out = dict(arch=ARCH[c.model_type],
               attn_kind="MHA" if c.n_rep == 1 else ("MQA" if c.num_key_value_heads == 1 else "GQA"))
    out.update(_both("attn_gloss", out["attn_kind"].lower()))   # attn_kind in a few words, for a first screen

    # vocabulary: the tokenizer's tokens and the embedding's padding rows
    if tok is not None:
        size, pad, added = tok["size"], V - tok["size"], tok.get("added")
        if added is None:                   # only the size is known
            out.update(_both("vocab_sentence", "size", name=name, size=fmt(size)))
        else:
            shown = _listed(tok["specials"][:3]) + (", …" if added > 3 else "")
            out.update(_both("vocab_sentence", "full", name=name, size=fmt(size), ordinary=fmt(size - added),
                             added=fmt(added), shown=shown))
        if pad > 0:
            why = _word("pad_why") if V % 128 == 0 else dict(en="", zh="")
            out.update({f"pad_sentence_{lang}": say("facts.pad_sentence_padded", lang, V=fmt(V), pad=fmt(pad),
                                                    why=why[lang]) for lang in ("en", "zh")})
            out.update(_both("pad_plain", "padded", pad=fmt(pad), V=fmt(V), size=fmt(size)))
            out.update(_both("pad_logits", "padded", pad=fmt(pad), size=fmt(size)))
        else:
            out.update(_both("pad_sentence", "exact", V=fmt(V)))
            out.update(_both("pad_plain", "exact", name=name, V=fmt(V)))
            out.update(_both("pad_logits", "exact", name=name))
        eos = _listed(tok.get("eos") or [("id", i) for i in c.eos_ids]) or "?"
        out.update(_both("eos_sentence", "known", name=name, eos=eos))
        im_end = dict(tok.get("specials", ())).get("<|im_end|>")
        out.update(_both("chat_stop", "has" if im_end is not None else "none", name=name, im_end=im_end))
    else:
        size = V
        out.update(_both("vocab_sentence", "unknown", name=name))
        out.update(_both("pad_sentence", "unknown", V=fmt(V)))
        out.update(_both("pad_plain", "unknown", V=fmt(V)))
        out.update(_both("pad_logits", "unknown"))
        out.update(_both("eos_sentence", "unknown", name=name, ids=", ".join(str(i) for i in c.eos_ids) or "?"))
        out.update(_both("chat_stop", "unloaded"))
    out["V_tok_loaded"] = size

    # tying: the loaded weights decide; the published config of the same shapes may say otherwise
    tied = c.tie_word_embeddings if lm_head_stored is None else not lm_head_stored
    twin = published_twin(c)
    if tied:
        out.update(_both("tie_sentence", "tied", name=name, V=V, H=H))
        out.update(_both("tie_plain", "tied", name=name))
    elif twin is not None and twin.tie_word_embeddings:
        p_tied = costs.total_params(c.replace(tie_word_embeddings=True))
        p_own = costs.total_params(c.replace(tie_word_embeddings=False))
        out.update(_both("tie_sentence", "twin", twin=twin.name, name=name, own=fmt(p_own), tied=fmt(p_tied)))
        out.update(_both("tie_plain", "twin", twin=twin.name, name=name))
    else:
        out.update(_both("tie_sentence", "own", name=name, V=V, H=H))
        out.update(_both("tie_plain", "own", name=name))
    out["tie"] = "true" if tied else "false"

    # attention projections: biases, per-head q/k norms
    o_bias = c.attention_bias and not c.model_type.startswith("qwen2")    # Qwen2: q/k/v only
    out.update(_both("bias_sentence", "all" if o_bias else "qkv" if c.attention_bias else "none", name=name))
    out.update({f"b{x}": f" + b_{x}" if c.attention_bias else "" for x in "qkv"})
    out.update(_both("o_bias", "yes" if o_bias else "no"))
    out.update(_both("qkv_op", "bias" if c.attention_bias else "plain"))
    extras = ["mask", "rope"] + (["bias"] if c.attention_bias else []) + (["qk_norm"] if c.has_qk_norm else [])
    for lang in ("en", "zh"):
        items = [say(f"facts.extra_{x}", lang) for x in extras]
        out[f"textbook_sentence_{lang}"] = say(
            f"facts.textbook_sentence_{2 if len(extras) == 2 else 'more'}", lang, name=name,
            count=say(f"facts.count_{len(extras)}", lang),
            items=say(f"facts.list_{len(extras)}", lang, **dict(zip("abcd", items))))
    out.update(_both("qk_norm_loaded", "has" if c.has_qk_norm else "none", name=name))

    # the feed-forward block: dense SwiGLU or a mixture of experts
    E, k, Im = c.num_experts, c.num_experts_per_tok, c.moe_intermediate_size
    out["I_ffn"] = Im if c.is_moe else c.intermediate_size
    out["I_over_H"] = f"{c.intermediate_size / H:.2f}"
    if c.is_moe:
        out.update(_both("mlp_loaded", "moe", name=name, E=E, Im=Im, k=k))
        out.update(_both("ffn_short", "moe", k=k, E=E))
        out.update(_both("ffn_plain", "moe", name=name, E=E, k=k))
        out.update(_both("mlp_params_text", "moe", name=name, one=fmt(3 * H * Im), all=fmt(E * 3 * H * Im), E=E))
        shared = _word("shared_yes" if c.shared_expert_intermediate_size else "shared_no")
        out.update({f"moe_loaded_{lang}": say("facts.moe_loaded_moe", lang, name=name, k=k, E=E, shared=shared[lang])
                    for lang in ("en", "zh")})
    else:
        out.update(_both("mlp_loaded", "dense", name=name, I=c.intermediate_size))
        out.update(_both("ffn_short", "dense"))
        out.update(_both("ffn_plain", "dense", name=name))
        out.update(_both("mlp_params_text", "dense", p=fmt(3 * H * c.intermediate_size)))
        out.update(_both("moe_loaded", "dense", name=name))
    return out
