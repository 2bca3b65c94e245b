"""Head atlas: every attention head of the loaded model scored (previous token, induction, sink, self, broad)
and labelled by its strongest score; the chosen head's map on your prompt and on the induction test sequence.
The atlas does not depend on the prompt: it is computed once per model (ui.experiments_state.atlas, st.cache_resource).
"""
import streamlit as st

from content.words import say
from ops.lab import atlas as head_atlas, checks
from ui import experiments_state
from ui.page import StagePage
from ui.pickers import picker
from ui.session import lang, t
from viz import heatmap
from viz.atlas import atlas_grid, label_counts
from viz.labels import pieces, short

NAMES = {"previous": ("前一个 token", "previous token"), "induction": ("归纳头", "induction"),
         "sink": ("注意力汇", "sink"),
         "self": ("看自己", "self"), "broad": ("广泛", "broad")}

page = StagePage("atlas")
model, trace, c = page.model, page.trace, page.config
L, nh = c.num_hidden_layers, c.num_attention_heads
A = experiments_state.atlas(*experiments_state.model_key())
scores, labels = A["scores"], A["labels"]
order = [k for k in NAMES if k in scores] + sorted({x for row in labels for x in row} - set(NAMES))
names = {k: t(*NAMES[k]) if k in NAMES else k for k in order}


def head_name(a: int, z: int) -> str:
    return t(f"第 {a} 层第 {z} 头", f"L{a} H{z}")


left, right = st.columns([3, 2])
with right:
    c1, c2, c3 = st.columns(3)
    with c1:
        i = page.layer()
    with c2:
        h = picker(t("头 h", "head h"), "head", 0, nh - 1)
    with c3:
        b = page.row()
    n = trace.lengths[b]
    mine = {k: float(scores[k][i, h]) for k in order if k in scores}
    st.markdown(f"**{head_name(i, h)}{t('：', ': ')}{names[labels[i][h]]}**")
    st.caption(" · ".join(f"{names[k]} {v:.2f}" for k, v in mine.items()))
    tok_labels = page.labels(b)
    on_prompt = page.memo(("prompt", i, h, b), lambda: heatmap(
        trace.attention_probs(i)[b, h, :n, :n], x=tok_labels, y=tok_labels,
        colorscale="Viridis", zmid=None, zmin=0, zmax=1, height=max(330, 26 * n + 150),
        text_fmt=".2f" if n <= 10 else None, xlabel=t("键 j", "key j"), ylabel=t("查询 i", "query i"), width_px=540,
        title=t(f"{head_name(i, h)}在你的提示词上（第 {b} 行）", f"L{i} H{h} on your prompt (row {b})")))
    page.chart(on_prompt, "atlas-prompt", projector_height=320)
with left:
    grid = page.memo(("grid", i, h), lambda: atlas_grid(
        labels, A["best"], order, names, highlight=(i, h), height=min(700, 110 + 24 * L),
        xlabel=t("头 h", "head h"), ylabel=t("层 i", "layer i"), lang=lang(),
        title=t(f"{L} 层 × {nh} 个头：颜色 = 标签，深浅 = 得分", f"{L} × {nh} heads: colour = label, shade = score")))
    page.chart(grid, "atlas-grid", projector_height=540)

page.explain([say("page_atlas.formula_scores", lang(), **{k: names[k] for k in ("previous", "sink", "self", "broad")}),
              say("page_atlas.formula_induction", lang(), induction=names["induction"])],
             head_atlas.pattern_scores, head_atlas.induction_score)

if box := page.more(say("page_atlas.more_induction", "zh"), say("page_atlas.more_induction", "en"),
                    "induction"):
    with box:
        test_ids = A["test_ids"]
        half = len(test_ids) // 2
        tl = [short(p, 6) for p in pieces(model.tokenizer, test_ids)]
        page.chart(heatmap(A["test_probs"][i, h], x=tl, y=tl, colorscale="Viridis", zmid=None, zmin=0, zmax=1,
                           height=640,
                           xlabel=t("键 j", "key j"), ylabel=t("查询 i", "query i"),
                           title=say("page_atlas.test_title", lang(), i=i, h=h, half=half,
                                     score=format(mine.get("induction", 0), ".2f"))), "atlas-test")
        st.caption(say("page_atlas.induction_caption", lang(), half=half, gap=half - 1))

if box := page.more("各类标签的头数", "How many heads carry each label", "counts"):
    with box:
        counts = A["counts"]
        c1, c2 = st.columns([2, 3])
        with c1:
            page.chart(label_counts(counts, order, names, height=340,
                                    title=t(f"本模型的 {L * nh} 个头", f"This model's {L * nh} heads")), "atlas-counts")
        with c2:
            st.dataframe([{t("标签", "label"): names[k], t("头数", "heads"): counts.get(k, 0),
                           t("得分最高的头", "top head"): head_name(a, z), t("得分", "score"): round(v, 3)}
                          for k, (v, a, z) in head_atlas.top_heads(scores).items()],
                         hide_index=True, width="stretch")

if box := page.more("每一种得分（层 × 头）", "Every score (layer × head)", "scores"):
    with box:
        kinds = [k for k in order if k in scores]
        for tab, k in zip(page.tabs([names[k] for k in kinds], "scores"), kinds):
            if tab:
                with tab:
                    page.chart(heatmap(scores[k], colorscale="Viridis", zmid=None, zmin=0, zmax=1, height=110 + 22 * L,
                                       xlabel=t("头 h", "head h"), ylabel=t("层 i", "layer i"),
                                       title=t(f"{names[k]} 得分", f"{names[k]} score")), f"atlas-score-{k}")

page.checks(checks.atlas_head(A, i, h), "检查", "Checks")
