"""Stage 2 · Embedding: a gather of rows from the [V, H] table."""
import streamlit as st
import torch.nn.functional as F

from ops import functional as fn
from content import texts
from ui import components as ui
from ui.state import require_trace, t, row_picker
from viz import heatmap

model, trace = require_trace()
c = model.config
B, S, H, V = trace.B, trace.S, c.hidden_size, c.vocab_size

st.title(t("2 · 嵌入（Embedding）：按编号查表", "2 · Embedding: look rows up by id"))
ui.pipeline_strip("embedding", f"tokens.ids [{B}, {S}]", f"embed.out [{B}, {S}, {H}]")
ui.explanation("embedding", texts.numbers(c, model.tokenizer.vocab_size, B, S))

st.header(t("公式与代码", "Formula and code"))
ui.formula_and_code(r"\mathrm{embed}[b, s, :] = W_E[\,\mathrm{ids}[b, s],\, :\,], \qquad W_E \in \mathbb{R}^{V \times H} = \mathbb{R}^{%d \times %d}" % (V, H),
                    fn.embedding)

st.header(t("实时张量", "Live tensors"))
b = row_picker(B)
n = trace.lengths[b]
ids = trace.token_ids[b, :n].tolist()
labels = ui.token_labels(model, trace, b)

st.subheader(t("查表：从表中取出这些行", "The gather: these rows are picked out of the table"))
st.dataframe([{t("位置", "position"): s, "token": labels[s], "id": ids[s],
               t("取出的行", "row taken"): f"W_E[{ids[s]}, :]",
               t("前 4 个数", "first 4 numbers"): ", ".join(f"{v:.4f}" for v in trace.embeddings[b, s, :4].tolist())}
              for s in range(n)], hide_index=True, width="stretch")
st.caption(t(f"表共有 {V:,} 行，分词器只会产生 {model.tokenizer.vocab_size:,} 个编号；多出的行是为硬件对齐的填充，从不被取到。",
             f"The table has {V:,} rows; the tokenizer only ever produces {model.tokenizer.vocab_size:,} ids. "
             "The extra rows are padding for hardware alignment and are never looked up."))

emb = trace.embeddings[b, :n]                                                   # (S, H)
dims = st.slider(t("显示前多少维", "dimensions shown"), 16, H, min(128, H), step=16)
ui.tensor_view("embed.out", trace.embeddings,
               heatmap(emb[:, :dims], x=None, y=labels, title=t("每个 token 的向量（前几维）", "Each token's vector (first dims)"),
                       xlabel=t("隐藏维度", "hidden dimension"), ylabel="token"), key="emb")

st.subheader(t("token 之间的余弦相似度", "Cosine similarity between the prompt's tokens"))
unit = F.normalize(emb.float(), dim=-1)
ui.tensor_view("cosine(embed.out)", unit @ unit.T,
               heatmap(unit @ unit.T, x=labels, y=labels, title=t("余弦相似度", "cosine similarity"),
                       xlabel=t("token（位置:片段）", "token (position:piece)"),
                       ylabel=t("token（位置:片段）", "token (position:piece)"), zmin=-1, zmax=1, text_fmt=".2f"), key="cos")

tied = c.tie_word_embeddings
st.info(t(f"LM head 与嵌入表{'共享' if tied else '不共享'}权重（tie_word_embeddings = {tied}）。Qwen2.5-0.5B 共享；Qwen2.5-32B 不共享；内置 GGUF 单独存了 output.weight。",
          f"The LM head {'shares' if tied else 'does not share'} the embedding table (tie_word_embeddings = {tied}). "
          "Qwen2.5-0.5B ties them; Qwen2.5-32B does not; the bundled GGUF stores its own output.weight."))

st.header(t("与 PyTorch 对照", "Check against PyTorch"))
ref = F.embedding(trace.token_ids, model.weights["model.embed_tokens.weight"].float().cpu())
ui.check("fn.embedding vs F.embedding", trace.embeddings, ref, tol=0.0)

ui.at_scale("embedding", B, S)
