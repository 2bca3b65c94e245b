"""What the texts say about the loaded model, chosen by its facts, in both languages.

A sentence about "the loaded model" has to be true of whatever is loaded: the bundled Qwen2.5 GGUF (whose file
stores its own LM head), SmolLM2 (llama: tied, no biases, another tokenizer), a Qwen3 MoE config... The facts
come from the config and, when a model is loaded, from its tokenizer and weights (`loaded(model)`);
`sentences()` turns them into placeholders. A key ending in `_en` / `_zh` is one language's sentence: texts
of that language see it under the name without the suffix (texts.in_lang). Never imports streamlit.
"""
from __future__ import annotations

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
def _both(key: str, en: str, zh: str) -> dict:
    return {f"{key}_en": en, f"{key}_zh": zh}


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
    out.update(_both("attn_gloss", *(  # attn_kind in a few words, where a first screen names it
        ("every query head has its own K/V", "每个查询头各有一组 K/V") if c.n_rep == 1 else
        ("all query heads share one K/V", "所有查询头共用一组 K/V") if c.num_key_value_heads == 1 else
        ("grouped-query attention: each group of query heads shares one K/V",
         "分组查询注意力：每组查询头共用一组 K/V"))))

    # vocabulary: the tokenizer's tokens and the embedding's padding rows
    if tok is not None:
        size, pad, added = tok["size"], V - tok["size"], tok.get("added")
        if added is None:                   # only the size is known
            out.update(_both("vocab_sentence", f"{name}'s tokenizer has {fmt(size)} tokens.",
                             f"{name} 的分词器共 {fmt(size)} 个 token。"))
        else:
            shown = _listed(tok["specials"][:3]) + (", …" if added > 3 else "")
            out.update(_both("vocab_sentence",
                             f"{name}'s tokenizer has {fmt(size)} tokens: {fmt(size - added)} ordinary BPE tokens plus "
                             f"{fmt(added)} special/added ones ({shown}).",
                             f"{name} 的分词器共 {fmt(size)} 个 token：{fmt(size - added)} 个普通 BPE token，加 "
                             f"{fmt(added)} 个特殊/附加 token（{shown}）。"))
        if pad > 0:
            why_en = ", padded to a multiple of 128 for hardware efficiency" if V % 128 == 0 else ""
            why_zh = "，为了硬件效率对齐到 128 的倍数" if V % 128 == 0 else ""
            out.update(_both("pad_sentence",
                             f"The embedding matrix has $V$ = {fmt(V)} rows, {fmt(pad)} more than the tokenizer has "
                             f"tokens{why_en}; those padding rows are never produced by the tokenizer.",
                             f"嵌入矩阵有 $V$ = {fmt(V)} 行，比分词器的 token 多 {fmt(pad)} 行{why_zh}；这些填充行分词"
                             "器从不会产生。"))
            out.update(_both("pad_plain",
                             f"The model's big internal table has {fmt(pad)} more rows than the booklet has entries "
                             f"({fmt(V)} rows against {fmt(size)}). The spare rows only make the hardware happy and "
                             "are never used.",
                             f"模型内部那张大表比小册子多了 {fmt(pad)} 行空位（{fmt(V)} 行对 {fmt(size)} 个条目），"
                             "只是为了让机器算得顺手，从来用不上。"))
            out.update(_both("pad_logits",
                             f"Its {fmt(pad)} padding rows (id ≥ {fmt(size)}) get scores too; the tokenizer never "
                             "produces them and sampling can mask them out.",
                             f"它的 {fmt(pad)} 个填充行（id ≥ {fmt(size)}）也会得到分数，但分词器不会产生它们，采样时可"
                             "以屏蔽。"))
        else:
            out.update(_both("pad_sentence",
                             f"The embedding matrix has exactly one row per token ($V$ = {fmt(V)}): no padding rows.",
                             f"嵌入矩阵每个 token 正好一行（$V$ = {fmt(V)}），没有填充行。"))
            out.update(_both("pad_plain",
                             f"In {name} the model's big internal table has exactly one row per booklet entry "
                             f"({fmt(V)}).",
                             f"{name} 内部那张大表正好一行对应小册子的一个条目（{fmt(V)} 行）。"))
            out.update(_both("pad_logits", f"{name} has no padding rows: every score belongs to a real token.",
                             f"{name} 没有填充行：每个分数都对应一个真实的 token。"))
        eos = _listed(tok.get("eos") or [("id", i) for i in c.eos_ids]) or "?"
        out.update(_both("eos_sentence", f"Stop when {name} produces an end token ({eos}) or at the length limit.",
                         f"{name} 生成结束符（{eos}）或达到最大长度时停止。"))
        im_end = dict(tok.get("specials", ())).get("<|im_end|>")
        out.update(_both("chat_stop",
                         f"In {name}'s tokenizer `<|im_end|>` is id {im_end}." if im_end is not None else
                         f"{name}'s tokenizer has no `<|im_end|>`: it uses another chat format.",
                         f"{name} 的分词器里 `<|im_end|>` 的 id 是 {im_end}。" if im_end is not None else
                         f"{name} 的分词器没有 `<|im_end|>`：它用的是别的对话格式。"))
    else:
        size = V
        out.update(_both("vocab_sentence",
                         f"No tokenizer is loaded with this config ({name}), so its token count is not known here.",
                         f"这份 config（{name}）没有附带分词器，这里不知道它的 token 数。"))
        out.update(_both("pad_sentence",
                         f"The embedding matrix has $V$ = {fmt(V)} rows; how many are padding depends on "
                                         "the tokenizer.",
                                         f"嵌入矩阵有 $V$ = {fmt(V)} 行；其中多少是填充行取决于分词器。"))
        out.update(_both("pad_plain", f"The model's internal table has {fmt(V)} rows.",
                         f"模型内部那张大表有 {fmt(V)} 行。"))
        out.update(_both("pad_logits",
                         "Rows beyond the tokenizer's size, if any, get scores too but are never produced.",
                         "超出分词器大小的行（如果有）也会得到分数，但永远不会被产生。"))
        ids = ", ".join(str(i) for i in c.eos_ids) or "?"
        out.update(_both("eos_sentence", f"Stop at {name}'s end token (id {ids}) or at the length limit.",
                         f"采到 {name} 的结束符（id {ids}）或达到最大长度即停止。"))
        out.update(_both("chat_stop", "The tokenizer is not loaded here.", "这里没有加载分词器。"))
    out["V_tok_loaded"] = size

    # tying: the loaded weights decide; the published config of the same shapes may say otherwise
    tied = c.tie_word_embeddings if lm_head_stored is None else not lm_head_stored
    twin = published_twin(c)
    if tied:
        out.update(_both("tie_sentence",
                         f"{name} ties them: its LM head is the embedding matrix itself (tie_word_embeddings = true), "
                         f"so the [{V}, {H}] table is stored and counted once.",
                         f"{name} 共享二者：它的 LM head 就是嵌入矩阵本身（tie_word_embeddings = true），"
                         f"这张 [{V}, {H}] 的表只存一份、参数只算一次。"))
        out.update(_both("tie_plain", f"{name} uses one table for both.", f"{name} 两边用的就是同一张表。"))
    elif twin is not None and twin.tie_word_embeddings:
        p_tied = costs.total_params(c.replace(tie_word_embeddings=True))
        p_own = costs.total_params(c.replace(tie_word_embeddings=False))
        out.update(_both("tie_sentence",
                         f"{twin.name}'s published config sets tie_word_embeddings = true, but the file loaded here "
                         f"stores the LM head as a tensor of its own (in a GGUF file: output.weight), so {name} as "
                         "loaded has "
                         f"its own LM head matrix and {fmt(p_own)} parameters ({fmt(p_tied)} when tied).",
                         f"{twin.name} 官方 config 是共享的（tie_word_embeddings = true），但这里加载的文件把 LM head "
                         "单独存成"
                         f"一个张量（GGUF 里的 output.weight），所以加载后的 {name} 有单独的 LM head 矩阵，共"
                         f" {fmt(p_own)} 个参数"
                         f"（共享时为 {fmt(p_tied)}）。"))
        out.update(_both("tie_plain", f"{twin.name} officially shares one table, but the file loaded here keeps two.",
                         f"{twin.name} 官方是共用一张表的，但这里加载的文件存了两张。"))
    else:
        out.update(_both("tie_sentence",
                         f"{name} does not tie them: it has its own LM head matrix (tie_word_embeddings = false), "
                         f"[{V}, {H}] more parameters.",
                         f"{name} 不共享：它有单独的 LM head 矩阵（tie_word_embeddings = false），多出 [{V}, {H}] 的参"
                         "数。"))
        out.update(_both("tie_plain", f"{name} keeps two separate tables.", f"{name} 用两张不同的表。"))
    out["tie"] = "true" if tied else "false"

    # attention projections: biases, per-head q/k norms
    o_bias = c.attention_bias and not c.model_type.startswith("qwen2")    # Qwen2: q/k/v only
    if c.attention_bias and not o_bias:
        out.update(_both("bias_sentence", f"In {name} the q/k/v linears carry a bias and o_proj does not",
                         f"{name} 的 q/k/v 三个线性层带偏置，o_proj 不带"))
    elif c.attention_bias:
        out.update(_both("bias_sentence", f"In {name} all four projections carry a bias, o_proj included",
                         f"{name} 的四个投影都带偏置，包括 o_proj"))
    else:
        out.update(_both("bias_sentence",
                         f"{name} has no bias on any of the four projections (Qwen2 models put one on q/k/v)",
                         f"{name} 的四个投影都不带偏置（Qwen2 系列在 q/k/v 上带偏置）"))
    out.update({f"b{x}": f" + b_{x}" if c.attention_bias else "" for x in "qkv"})
    out.update(_both("o_bias", "with a bias" if o_bias else "no bias", "带偏置" if o_bias else "无偏置"))
    out.update(_both("qkv_op", "Attention q/k/v" + (" (+bias)" if c.attention_bias else ""),
                     "注意力 q/k/v" + ("（带偏置）" if c.attention_bias else "")))
    extras_en = ["the causal mask", "RoPE on Q and K"] + (["the q/k/v biases"] if c.attention_bias else []) \
        + (["per-head RMSNorm of q and k"] if c.has_qk_norm else [])
    extras_zh = ["因果掩码", "Q/K 上的 RoPE"] + (["q/k/v 的偏置"] if c.attention_bias else []) \
        + (["对 q、k 逐头做的 RMSNorm"] if c.has_qk_norm else [])
    n_en, n_zh = {2: "two", 3: "three", 4: "four"}[len(extras_en)], {2: "两", 3: "三", 4: "四"}[len(extras_zh)]
    out.update(_both("textbook_sentence",
                     f"leaves out {n_en} things {name} does: " + ", ".join(extras_en[:-1])
                     + ("," if len(extras_en) > 2 else "") + f" and {extras_en[-1]}. "
                     "This page shows " + ("both." if len(extras_en) == 2 else f"all {n_en}."),
                     f"省略了 {name} 实际在做的{n_zh}件事：" + "、".join(extras_zh) + f"。本页{n_zh}者都展示。"))
    out.update(_both("qk_norm_loaded", f"{name} has them too." if c.has_qk_norm else f"{name} has none.",
                     f"{name} 也有。" if c.has_qk_norm else f"{name} 没有。"))

    # the feed-forward block: dense SwiGLU or a mixture of experts
    E, k, Im = c.num_experts, c.num_experts_per_tok, c.moe_intermediate_size
    out["I_ffn"] = Im if c.is_moe else c.intermediate_size
    out["I_over_H"] = f"{c.intermediate_size / H:.2f}"
    if c.is_moe:
        out.update(_both("mlp_loaded",
                         f"{name} is a mixture of experts: in its MoE layers this MLP is replaced by {E} experts of "
                         "width "
                         f"$I_m$ = {Im}, {k} chosen per token (see the MoE section); each expert is a SwiGLU of "
                         "exactly this form.",
                         f"{name} 是混合专家模型：它的 MoE 层把这个 MLP 换成 {E} 个宽度 $I_m$ = {Im} 的专家，每个 "
                         f"token 选 {k} 个"
                         "（见 MoE 一节）；每个专家都正是上面这种 SwiGLU。"))
        out.update(_both("ffn_short", f"MoE ({k} of {E} SwiGLU experts)", f"MoE（{E} 个 SwiGLU 专家选 {k} 个）"))
        out.update(_both("ffn_plain", f"{name} splits this warehouse into {E} small ones and sends each word into {k}.",
                         f"{name} 把这个仓库拆成了 {E} 个小仓库，每个词只进其中 {k} 个。"))
        shared_en = "plus a shared expert" if c.shared_expert_intermediate_size else "no shared expert"
        shared_zh = "另有共享专家" if c.shared_expert_intermediate_size else "无共享专家"
        out.update(_both("mlp_params_text", f"In {name} one expert has $3HI_m$ = {fmt(3 * H * Im)} parameters, "
                         f"{fmt(E * 3 * H * Im)} for the {E} experts of a MoE layer",
                         f"{name} 每个专家有 $3HI_m$ = {fmt(3 * H * Im)} 个参数，一个 MoE 层的 {E} 个专家共"
                         f" {fmt(E * 3 * H * Im)} 个"))
        out.update(_both("moe_loaded", f"The loaded {name} is a MoE model: {k} of {E} experts per token, {shared_en}.",
                         f"当前加载的 {name} 是 MoE 模型：每个 token 从 {E} 个专家中选 {k} 个，{shared_zh}。"))
    else:
        out.update(_both("mlp_loaded", f"{name} is dense: every layer runs this one MLP, $I$ = {c.intermediate_size}.",
                         f"{name} 是稠密模型：每一层都跑这一个 MLP，$I$ = {c.intermediate_size}。"))
        out.update(_both("ffn_short", "SwiGLU MLP", "SwiGLU MLP"))
        out.update(_both("ffn_plain", f"In {name} every word goes into the same warehouse in every layer.",
                         f"{name} 里每个词每一层都进同一个仓库。"))
        out.update(_both("mlp_params_text", f"$3HI$ = {fmt(3 * H * c.intermediate_size)} parameters per layer",
                         f"每层 $3HI$ = {fmt(3 * H * c.intermediate_size)} 个参数"))
        out.update(_both("moe_loaded", f"The loaded {name} is dense: its trace has no router tensors.",
                         f"当前加载的 {name} 是稠密模型，trace 里没有路由张量。"))
    return out
