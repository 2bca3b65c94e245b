"""The words of the Models page (two models side by side) and of the Scale page's config comparison, in both
languages: each config row's name and what it changes in the operator, the tables built from the rows of
ops/lab/compare_models.py, the tokenizer samples, and the placeholders of assets/explain/models.<lang>.md.
Every number comes from the rows (computed from the two configs); no sentence assumes which two models these are.
Never imports streamlit.
"""
from __future__ import annotations

from ops.arith import costs
from ops.engine.config import ModelConfig

# the same three texts through both tokenizers (the user's prompt is added as a fourth)
SAMPLES = {"zh": "人工智能正在改变我们学习和工作的方式。", "en": "The quick brown fox jumps over the lazy dog.",
           "code": "def add(a, b):\n    return a + b\n"}
SAMPLE_NAMES = {"zh": ("中文", "Chinese"), "en": ("英文", "English"), "code": ("代码", "code"),
                "prompt": ("你的提示词", "your prompt")}

NAMES = {
    "model_type": ("架构", "architecture"),
    "hidden_size": ("隐藏维度 H", "hidden size H"),
    "num_hidden_layers": ("层数 L", "layers L"),
    "num_attention_heads": ("查询头 nh", "query heads nh"),
    "num_key_value_heads": ("KV 头 nkv", "KV heads nkv"),
    "n_rep": ("n_rep = nh / nkv", "n_rep = nh / nkv"),
    "head_dim": ("头维度 hd", "head dim hd"),
    "intermediate_ratio": ("MLP 宽度比 I / H", "MLP ratio I / H"),
    "rope_theta": ("RoPE θ", "RoPE θ"),
    "rms_norm_eps": ("RMSNorm ε", "RMSNorm ε"),
    "qkv_bias": ("q/k/v 偏置", "q/k/v biases"),
    "tie_word_embeddings": ("LM head 与嵌入共享", "tied LM head"),
    "vocab_size": ("词表（嵌入行数）V", "vocabulary (embedding rows) V"),
    "special_tokens": ("特殊 token", "special tokens"),
    "total_params": ("参数总数", "parameters in all"),
    "kv_per_token": ("每 token 的 KV cache", "KV cache per token"),
}

# what each row changes in the operators; {x} placeholders are filled from the row (fmt_row)
EFFECT = {
    "model_type": ("决定每层跑哪段代码：Qwen2 的 q/k/v 带偏置，Qwen3 在 RoPE 前对 q、k 逐头做 RMSNorm，Llama 两者都没有"
                   "。",
                   "Picks each layer's code: Qwen2 adds q/k/v biases, Qwen3 RMS-normalises q and k per head "
                   "before RoPE, Llama does neither."),
    "hidden_size": ("残差流每个向量的长度：RMSNorm 在 H 个数上求均方，每个投影都读 H 维输入；右栏是每层的参数。",
                    "The length of every residual-stream vector: RMSNorm averages over H numbers, every projection "
                    "reads H inputs; the bytes column is one layer's parameters."),
    "num_hidden_layers": ("每个 token 把同一组层算子跑 L 遍；每层各存一份 K、V，所以 KV cache 随 L 线性增长。",
                          "Every token runs the layer's operators L times; each layer keeps its own K and V, so the KV "
                          "cache grows with L."),
    "num_attention_heads": ("q_proj 输出 nh·hd 个数，o_proj 读回 nh·hd 个数；分数矩阵是 [B, nh, S, S]；右栏是每层 "
                            "q_proj + o_proj 的参数。",
                            "q_proj writes nh·hd numbers and o_proj reads nh·hd back; the scores are [B, nh, S, S]; "
                            "the bytes column is one layer's q_proj + o_proj."),
    "num_key_value_heads": ("k_proj、v_proj 只输出 nkv·hd 个数，KV cache 每层存 2·nkv·hd 个数。",
                            "k_proj and v_proj write only nkv·hd numbers; the KV cache keeps 2·nkv·hd numbers "
                            "per layer."),
    "n_rep": ("repeat_kv 把每个 KV 头复制给 {a} / {b} 个查询头；若每个查询头都有自己的 KV 头（MHA），右栏就是每 token "
              "的 KV cache。",
              "repeat_kv hands each KV head to {a} / {b} query heads; with one KV head per query head (MHA) the KV "
              "cache per token would be the bytes column."),
    "head_dim": ("分数除以 √hd（{sqrt_a} / {sqrt_b}）；RoPE 旋转 hd/2 对坐标。",
                 "Scores are divided by √hd ({sqrt_a} / {sqrt_b}); RoPE rotates hd/2 pairs of coordinates."),
    "intermediate_ratio": ("SwiGLU 先升到 I = {I_a} / {I_b} 维再降回 H；gate_proj、up_proj、down_proj 每层共 3·H·I 个参"
                           "数（右栏）。",
                           "SwiGLU widens to I = {I_a} / {I_b} and narrows back to H; gate, up and down hold 3·H·I "
                           "parameters per layer (bytes column)."),
    "rope_theta": ("RoPE 的底数：转得最慢的一对坐标每 {wave_a} / {wave_b} 个 token 才转一圈。",
                   "RoPE's base: its slowest pair of coordinates turns once every {wave_a} / {wave_b} tokens."),
    "rms_norm_eps": ("加在 RMSNorm 的均方里再开方，只对几乎为零的向量有影响；不改变任何大小。",
                     "Added to RMSNorm's mean square before the root; it matters only for near-zero vectors and "
                     "changes no size."),
    "qkv_bias": ("有偏置时 q、k、v 投影后各加一个向量：L·(nh + 2·nkv)·hd 个参数（右栏）。",
                 "With biases, a vector is added after each q, k and v projection: L·(nh + 2·nkv)·hd parameters "
                 "(bytes column)."),
    "tie_word_embeddings": ("共享时 LM head 直接用嵌入表 W_E 打分，不占额外参数；不共享时另存一个 V×H 矩阵（右栏）。",
                            "Tied, the LM head scores with the embedding table W_E itself, no extra parameters; "
                            "untied, "
                            "it keeps its own V×H matrix (bytes column)."),
    "vocab_size": ("嵌入表和 LM head 各有 V 行，每个位置的 logits 有 V 个数；右栏是嵌入表 V·H。{tok}",
                   "The embedding table and the LM head have V rows, the logits V numbers per position; the bytes "
                   "column is the table's V·H.{tok}"),
    "special_tokens": ("控制用的 token，不来自 BPE 合并：两边都有 {both} 个，只在 A 有 {only_a} 个，只在 B 有 {only_b} "
                       "个（名字列在表下）。",
                       "Control tokens, not made by BPE merges: {both} in both, {only_a} only in A, {only_b} only in B "
                       "(named under the table)."),
    "total_params": ("每个权重张量只算一次（共享的 LM head 不重复计）。",
                     "Every weight tensor counted once (a tied LM head not twice)."),
    "kv_per_token": ("2（K 和 V）× L × nkv × hd × 2 字节（bf16）：解码时每个 token 都要存下、每一步都要读回。",
                     "2 (K and V) × L × nkv × hd × 2 bytes (bf16): kept for every token, read back at every decode "
                     "step."),
}


def _pick(pair, lang: str) -> str:
    return pair[0] if lang == "zh" else pair[1]


def value_text(key: str, v, lang: str) -> str:
    """A row's value as the table shows it."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return _pick(("是", "yes"), lang) if v else _pick(("否", "no"), lang)
    if key == "rms_norm_eps":
        return f"{v:g}"
    if key == "kv_per_token":
        return f"{v:,} B"
    if isinstance(v, float):
        return f"{v:,.3f}".rstrip("0").rstrip(".")
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def bytes_text(row: dict, side: str, lang: str) -> str:
    """What a row drives on one side ("a" or "b"): KV bytes per token, or parameters with their bf16 bytes."""
    if row.get("kind") is None:
        return ""
    if row["kind"] == "kv":
        return f"{row['bytes_' + side]:,} B / token"
    return f"{costs.human(row['cost_' + side])} · {costs.human(row['bytes_' + side], 'B')}"


def effect_text(row: dict, lang: str) -> str:
    """What the row changes in the operator, with the row's own numbers filled in."""
    fill = {"a": row["a"], "b": row["b"]}
    if row["key"] == "head_dim":
        fill.update(sqrt_a=f"{row['a'] ** 0.5:.2f}", sqrt_b=f"{row['b'] ** 0.5:.2f}")
    if row["key"] == "intermediate_ratio":
        fill.update(I_a=f"{row['I_a']:,}", I_b=f"{row['I_b']:,}")
    if row["key"] == "rope_theta":
        fill.update(wave_a=f"{row['wave_a']:,.0f}", wave_b=f"{row['wave_b']:,.0f}")
    if row["key"] == "vocab_size":
        fill["tok"] = "" if "tok_a" not in row else _pick(
            (f"分词器能产出 {row['tok_a']:,} / {row['tok_b']:,} 个 token，其余行只是对齐用的填充。",
             f" The tokenizers produce {row['tok_a']:,} / {row['tok_b']:,} tokens; the other rows are padding."), lang)
    if row["key"] == "special_tokens":
        fill.update(both=len(row["both"]), only_a=len(row["only_a"]), only_b=len(row["only_b"]))
    return _pick(EFFECT[row["key"]], lang).format(**fill)


def config_table(rows: list[dict], lang: str, effects: bool = True) -> list[dict]:
    """The difference table: one line per row of ops.lab.compare_models.config_rows (A and B named above it). The KV
    cache's bytes per token depend on several rows (layers, KV heads, head dim): the first of them gives the figure,
    a later one with the same figures points up to it (↑) rather than repeat it, and the KV-cache row itself, whose
    A and B are that figure, leaves the cells empty."""
    out, shown = [], set()
    for r in rows:
        both = (bytes_text(r, "a", lang), bytes_text(r, "b", lang))
        said = r.get("kind") == "kv" and both in shown      # the KV bytes per token of L, nkv, hd: said once
        mark = "" if r["key"] == "kv_per_token" else "↑"      # that row's own A and B already give the figure
        line = {"": "=" if r["same"] else "≠", _pick(("配置", "config"), lang): _pick(NAMES[r["key"]], lang),
                "A": value_text(r["key"], r["a"], lang), "B": value_text(r["key"], r["b"], lang),
                _pick(("A：参数 · 字节", "A: params · bytes"), lang): mark if said else both[0],
                _pick(("B：参数 · 字节", "B: params · bytes"), lang): mark if said else both[1]}
        if r.get("kind") == "kv":
            shown.add(both)
        if effects:
            line[_pick(("它改变了什么", "what it changes"), lang)] = effect_text(r, lang)
        out.append(line)
    return out


def effect_table(rows: list[dict], lang: str) -> list[dict]:
    """What each row changes in the operators, one line per row of ops.lab.compare_models.config_rows."""
    return [{_pick(("配置", "config"), lang): _pick(NAMES[r["key"]], lang),
             _pick(("它改变了什么", "what it changes"), lang): effect_text(r, lang)} for r in rows]


def special_lines(rows: list[dict], lang: str) -> list[tuple[str, list[str]]]:
    """(label, names) of the special tokens in both, only in A, only in B (empty when the row is absent)."""
    for r in rows:
        if r["key"] == "special_tokens":
            return [(_pick(("两边都有", "in both"), lang), r["both"]), (_pick(("只在 A", "only in A"), lang),
                                                                    r["only_a"]),
                    (_pick(("只在 B", "only in B"), lang), r["only_b"])]
    return []


def sample_name(name: str, lang: str) -> str:
    return _pick(SAMPLE_NAMES.get(name, (name, name)), lang)


def atlas_table(rows: list[dict], name_a: str, name_b: str, lang: str) -> list[dict]:
    """The head atlas counts of both models (ops.lab.compare_models.atlas_rows), with their shares."""
    names = atlas_names(lang)
    return [{_pick(("标签", "label"), lang): names.get(r["kind"], r["kind"]), f"A · {name_a}": r["a"],
             "A %": f"{100 * r['share_a']:.0f}%", f"B · {name_b}": r["b"], "B %": f"{100 * r['share_b']:.0f}%"}
            for r in rows]


def token_table(rows: list[dict], lang: str) -> list[dict]:
    """Tokens per character of each sample through both tokenizers."""
    return [{_pick(("文本", "text"), lang): _pick(SAMPLE_NAMES.get(r["name"], (r["name"], r["name"])), lang),
             _pick(("字符", "characters"), lang): r["chars"], _pick(("UTF-8 字节", "UTF-8 bytes"), lang): r["bytes"],
             "A tokens": r["n_a"], "B tokens": r["n_b"],
             _pick(("A token / 字符", "A tokens / char"), lang): f"{r['per_char_a']:.2f}",
             _pick(("B token / 字符", "B tokens / char"), lang): f"{r['per_char_b']:.2f}",
             _pick(("相同的片段", "same pieces"), lang): r["shared"]} for r in rows]


def next_table(rows: list[dict], lang: str) -> list[dict]:
    """The next-token union as a table (probabilities in %, '—' where the text is not one token of that side)."""
    pct = lambda p: "—" if p is None else f"{100 * p:.2f}%"
    rank = lambda r: "—" if r is None else str(r)
    return [{_pick(("下一个 token", "next token"), lang): repr(r["text"]), "A p": pct(r["p_a"]),
             _pick(("A 名次", "A rank"), lang): rank(r["rank_a"]), "B p": pct(r["p_b"]),
             _pick(("B 名次", "B rank"), lang): rank(r["rank_b"])} for r in rows]


def atlas_names(lang: str) -> dict:
    names = {"previous": ("前一个 token", "previous token"), "induction": ("归纳头", "induction"),
             "sink": ("注意力汇", "sink"), "self": ("看自己", "self"), "broad": ("广泛", "broad")}
    return {k: _pick(v, lang) for k, v in names.items()}


# ---- the explanation's placeholders ------------------------------------------------------------------------------
def _sentences(a: ModelConfig, b: ModelConfig, name_a: str, name_b: str) -> dict:
    """Sentences chosen by the two configs' facts (each true of whichever pair is loaded)."""
    out = {}
    ba, bb = a.attention_bias, b.attention_bias
    if ba == bb:
        out["bias_sentence_en"] = ("Both put a bias on q, k and v." if ba else "Neither puts a bias on q, k or v.")
        out["bias_sentence_zh"] = ("两者的 q、k、v 都带偏置。" if ba else "两者的 q、k、v 都不带偏置。")
    else:
        has, hasnt = (name_a, name_b) if ba else (name_b, name_a)
        out["bias_sentence_en"] = f"{has} adds a bias vector after q, k and v; {hasnt} does not."
        out["bias_sentence_zh"] = f"{has} 在 q、k、v 投影后各加一个偏置向量，{hasnt} 没有。"
    ta, tb = a.tie_word_embeddings, b.tie_word_embeddings
    if ta == tb:
        out["tie_sentence_en"] = ("Both tie the LM head to the embedding table." if ta
                                  else "Neither ties the LM head to the embedding table: each keeps its own.")
        out["tie_sentence_zh"] = ("两者的 LM head 都与嵌入表共享。" if ta else "两者的 LM head 都不与嵌入表共享，各存一"
                                                                               "份。")
    else:
        tied, untied = (name_a, name_b) if ta else (name_b, name_a)
        out["tie_sentence_en"] = f"{tied} scores with its embedding table itself; {untied} keeps a separate LM head."
        out["tie_sentence_zh"] = f"{tied} 直接用嵌入表打分，{untied} 另存一个 LM head。"
    more, fewer = (name_a, name_b) if costs.kv_bytes_per_token(a) >= costs.kv_bytes_per_token(b) else (name_b, name_a)
    out["kv_more"], out["kv_fewer"] = more, fewer
    return out


def numbers(a: ModelConfig, b: ModelConfig, name_a: str, name_b: str, rows: list[dict]) -> dict:
    """Placeholders of assets/explain/models.<lang>.md: each model's figures with the suffix _a or _b."""
    out = dict(name_a=name_a, name_b=name_b, differ=str(sum(not r["same"] for r in rows)), rows=str(len(rows)))
    for tag, c in (("a", a), ("b", b)):
        out.update({f"H_{tag}": c.hidden_size, f"L_{tag}": c.num_hidden_layers, f"nh_{tag}": c.num_attention_heads,
                    f"nkv_{tag}": c.num_key_value_heads, f"rep_{tag}": c.n_rep, f"hd_{tag}": c.head_dim,
                    f"I_{tag}": f"{c.intermediate_size:,}", f"V_{tag}": f"{c.vocab_size:,}",
                    f"theta_{tag}": f"{c.rope_theta:,.0f}", f"eps_{tag}": f"{c.rms_norm_eps:g}",
                    f"kv_{tag}": f"{costs.kv_bytes_per_token(c):,}",
                    f"kv_4k_{tag}": costs.human(costs.kv_cache_bytes(c, 4096), "B"),
                    f"params_{tag}": costs.human(costs.total_params(c))})
    out.update(_sentences(a, b, name_a, name_b))
    return {k: str(v) for k, v in out.items()}
