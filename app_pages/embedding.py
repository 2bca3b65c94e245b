"""Stage 2 · Embedding: a gather of rows from the [V, H] table."""
import streamlit as st

from ops import analysis, checks
from ops import functional as fn
from ui.page import StagePage
from ui.state import t
from viz import heatmap

page = StagePage("embedding")
model, trace, c = page.model, page.trace, page.config
H, V, V_tok = c.hidden_size, c.vocab_size, model.tokenizer.vocab_size

b = page.row()
n = trace.lengths[b]
labels = page.labels(b)
emb = trace.embeddings[b, :n]                                                   # (n, H)
dims = min(128, H)
page.view("embed.out", trace.embeddings,
          heatmap(emb[:, :dims], y=labels, title=t(f"取出的 {n} 行：每个 token 的向量（前 {dims} 维）",
                                                   f"The {n} rows taken: each token's vector (first {dims} dims)"),
                  xlabel=t("隐藏维度", "hidden dimension"), ylabel="token", height=max(260, 34 * n + 140)),
          key="emb", caption=t(f"表 W_E 有 {V:,} 行 × {H} 列；分词器只会产生 {V_tok:,} 个编号，多出的 {V - V_tok:,} 行是为硬件对齐的填充，从不被取到。",
                               f"The table W_E has {V:,} rows × {H} columns; the tokenizer only ever produces {V_tok:,} ids. "
                               f"The other {V - V_tok:,} rows are padding for hardware alignment and are never looked up."))

page.explain(r"\mathrm{embed}[b, s, :] = W_E[\,\mathrm{ids}[b, s],\, :\,], \qquad W_E \in \mathbb{R}^{V \times H}"
             r" = \mathbb{R}^{%d \times %d}" % (V, H), fn.embedding)

page.section("查表：从表中取出这些行", "The gather: these rows are picked out of the table")
st.dataframe([{t("位置", "position"): r["position"], "token": labels[r["position"]], "id": r["id"],
               t("取出的行", "row taken"): f"W_E[{r['id']}, :]",
               t("前 4 个数", "first 4 numbers"): ", ".join(f"{v:.4f}" for v in r["first"])}
              for r in analysis.gathered_rows(trace, b)], hide_index=True, width="stretch")

page.section("token 之间的余弦相似度", "Cosine similarity between the prompt's tokens")
cos = analysis.cosine_similarity(emb)
page.view("cosine(embed.out)", cos,
          heatmap(cos, x=labels, y=labels, title=t("余弦相似度", "cosine similarity"),
                  xlabel=t("token（位置:片段）", "token (position:piece)"),
                  ylabel=t("token（位置:片段）", "token (position:piece)"), zmin=-1, zmax=1, text_fmt=".2f"), key="cos")

tied = c.tie_word_embeddings
st.info(t(f"LM head 与嵌入表{'共享' if tied else '不共享'}权重（tie_word_embeddings = {tied}）。Qwen2.5-0.5B 共享；Qwen2.5-32B 不共享；内置 GGUF 单独存了 output.weight。",
          f"The LM head {'shares' if tied else 'does not share'} the embedding table (tie_word_embeddings = {tied}). "
          "Qwen2.5-0.5B ties them; Qwen2.5-32B does not; the bundled GGUF stores its own output.weight."))

page.checks(checks.embedding(model, trace))
page.at_scale()
