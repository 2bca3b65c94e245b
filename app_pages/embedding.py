"""Stage 2 · Embedding: a gather of rows from the [V, H] table."""
import streamlit as st

from content.words import say
from ops.engine import functional as fn
from ops.lab import checks, stage_data
from ui.page import StagePage
from ui.session import lang, t
from viz.embedding import cosine_map, gather_figure

page = StagePage("embedding")
model, trace, c = page.model, page.trace, page.config
H, V, V_tok = c.hidden_size, c.vocab_size, model.tokenizer.vocab_size

b = page.row()
n = trace.lengths[b]
labels = page.labels(b)
emb = trace.embeddings[b, :n]                                                   # (n, H)
ids = trace.token_ids[b, :n].tolist()
gather = page.memo(("gather", b), lambda: gather_figure(
    ids, labels, emb, V, V_tok, pad_text=t("填充行", "padding rows"),
    title=say("page_embedding.the_gather_rows_taken", lang(), V=format(V, ","), n=n)))
page.view("embed.out", trace.embeddings, gather,
          key="emb", caption=t(f"表 W_E 有 {V:,} 行 × {H} 列。", f"The table W_E has {V:,} rows × {H} columns. ")
          + page.sentence("pad_sentence") + say("page_embedding.bpe_numbers_pieces_in", lang()))

page.explain(say("page_embedding.formula", lang(), V=V, H=H), fn.embedding)

st.subheader(say("page_embedding.the_gather_these_rows", lang()))
st.dataframe([{t("位置", "position"): r["position"], "token": labels[r["position"]], "id": r["id"],
               t("取出的行", "row taken"): f"W_E[{r['id']}, :]",
               t("前 4 个数", "first 4 numbers"): ", ".join(f"{v:.4f}" for v in r["first"])}
              for r in stage_data.gathered_rows(trace, b)], hide_index=True, width="stretch")

if box := page.more("token 之间的余弦相似度", "Cosine similarity between the prompt's tokens", "cosine"):
    with box:
        cos = stage_data.cosine_similarity(emb)
        page.view("cosine(embed.out)", cos,
                  cosine_map(cos, labels,
                             title=say("page_embedding.cosine_similarity_the_diagonal", lang()),
                             xlabel=t("token（位置:片段）", "token (position:piece)"),
                             ylabel=t("token（位置:片段）", "token (position:piece)")),
                  key="cos")

st.info(page.sentence("tie_sentence") + t("Qwen2.5-32B 不共享。", " Qwen2.5-32B does not tie them."))

page.checks(page.memo(("checks",), lambda: checks.embedding(model, trace)))
page.at_scale()
