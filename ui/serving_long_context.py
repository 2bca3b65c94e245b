"""The Serving page's long-context topic, live: the loaded model with a YaRN rope_scaling on a prompt longer than a
pretended original window (ops/lab/serving_long_context.py computes, content/attention_rope.py words it,
viz/attention_rope.py draws)."""
from __future__ import annotations

import streamlit as st

from content.attention_rope import long_view
from content.words import say
from ops.lab.serving_long_context import PRETEND, long_context_run
from viz.attention_rope import attention_rows, frequency_pairs

from .blocks import metrics, table
from .session import t


def live(page, model, lang: str):
    """A fold under the long-context tab; the two runs happen when it is opened, once per prompt language."""
    if not (box := page.more(say("rope.long_fold", "zh"), say("rope.long_fold", "en"), "longctx")):
        return
    with box:
        ids = model.tokenizer.encode(say("rope.long_prompt", lang))
        if len(ids) <= PRETEND["original_max_position_embeddings"]:
            st.info(say("rope.long_short", lang, n=len(ids), window=PRETEND["original_max_position_embeddings"]))
            return
        n = len(ids)
        with st.spinner(t(f"模型正在把 {n} 个 token 跑两遍……", f"Running the model twice on {n} tokens...")):
            r = page.memo(("longctx", lang), lambda: long_context_run(model, ids))
        v = long_view(r, lang, model.config.name or "?", model.config.max_position_embeddings)
        st.caption(v["intro"])
        metrics(v["metrics"])
        c1, c2 = st.columns(2)
        with c1:
            page.chart(frequency_pairs(r["freq"], None, **v["freq"]), "longctx-freq")
        with c2:
            page.chart(attention_rows(r["rows"], r["window"], **v["attn"]), "longctx-attn")
        table(v["tops"])
        table(v["rows"], height=300)
        st.caption(v["caption"])
