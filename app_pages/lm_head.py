"""Stage 7 · Final norm and LM head: one score per vocabulary row, then the logit lens."""
import pandas as pd
import streamlit as st

from content.words import say
from ops.engine import functional as fn
from ops.lab import checks, stage_data
from ops.lab.lm_head_lens import lens_start, logit_lens, top_next
from ui import predict, predict_questions
from ui.page import StagePage
from ui.pickers import picker, top_n_picker
from ui.session import lang, t
from viz import bars
from viz.labels import NEUTRAL, pieces, short, visible
from viz.lm_head import text_heatmap

page = StagePage("lm_head")
model, trace, c = page.model, page.trace, page.config
B, S, H, V, L = trace.B, trace.S, c.hidden_size, c.vocab_size, c.num_hidden_layers
tok = model.tokenizer

c1, c2, c3 = st.columns(3)
with c1:
    b = page.row()
n = trace.lengths[b]
with c2:
    s = picker(t("第几个位置 s", "position s"), "pos", 0, n - 1, default=n - 1)
with c3:
    topn = top_n_picker(t("显示前几名", "top N shown"))
labels = [visible(p) for p in page.labels(b, None)]                # newlines as \n, spaces as ␣
top = stage_data.next_token_top(trace, b, s, topn)
ids = top["ids"].tolist()
names = [f"{short(p, 16)} ({i})" for p, i in zip(pieces(tok, ids), ids)]
where = short(labels[s], 12)
predict.first("lm_head", (tuple(labels), b, s),
              say("page_lm_head.after_position_which_next", lang(), s=s, where=where), names[:4], names[0],
              say("page_lm_head.look_at_the_longest", lang()))
page.view("logits", trace.logits,
          bars(top["probs"], names, horizontal=True, height=max(360, 30 * topn + 110),
               title=t(f"位置 {s}（“{short(labels[s], 12)}”）之后的下一个 token："
                       f"softmax(logits[{b}, {s}]) 前 {topn} 名",
                       f"Next token after position {s} (“{short(labels[s], 12)}”): softmax(logits[{b}, {s}]), "
                       f"top {topn}"),
               xlabel=t("概率", "probability"), ylabel="token (id)", text_fmt=".3f", color=NEUTRAL), key="lm-top",
          projector_height=380 if topn <= 10 else None,   # a projector: the top 10 whole above the fold
          caption=say("page_lm_head.logits_are_b_s", lang(), B=B, S=S, V=format(V, ",")))

page.explain([say("page_lm_head.formula_logits", lang(), V=V, H=H),
              say("page_lm_head.formula_softmax", lang(), B=B, S=S, H=H, V=V)],
             fn.rms_norm, fn.lm_head)
st.info(page.sentence("tie_sentence") + t("Qwen2.5-32B 不共享。", " Qwen2.5-32B does not tie them."))

page.section("最终 RMSNorm", "The final RMSNorm")
page.explain(key="final_norm")

page.section(f"位置 {s} 之后的前 {topn} 名", f"The top {topn} after position {s}")
st.dataframe([{t("名次", "rank"): r + 1, "token": visible(p), "id": i, "logit": round(float(lg), 3),
               t("概率", "prob"): round(float(pr), 4)}
              for r, (p, i, lg, pr) in enumerate(zip(pieces(tok, ids), ids, top["logits"].tolist(),
                                                     top["probs"].tolist()))],
             hide_index=True, width="stretch")

page.section("每个位置的第一名", "The top token at every position")
best_ids, best_p = top_next(trace, b)                            # (n,) each
st.dataframe(pd.DataFrame({t("位置", "pos"): range(n), t("输入 token", "input token"): labels[:n],
                           t("预测的下一个", "predicted next"): [visible(p) for p in pieces(tok, best_ids.tolist())],
                           t("概率", "prob"): best_p.numpy().round(4),
                           t("实际的下一个", "actual next"): labels[1:n] + ["—"]}),
             hide_index=True, width="stretch")

lens_checks = []                          # the lens costs (L + 1) LM-head products: checked only where it is drawn
if box := page.more("Logit lens：每一层“已经想到”了什么", "Logit lens: what each layer already “thinks”", "lens"):
    with box:
        st.caption(say("page_lm_head.lens_caption", lang(), rows=L + 1))
        if predict.gate("lm_head", (tuple(labels), b), lambda: predict_questions.lens(model, trace, b), "lens"):
            lens_ids, lens_p = logit_lens(model, trace, b)           # (L+1, w): the last w positions
            start = lens_start(trace, b)
            if start:
                st.caption(say("page_lm_head.lens_cut", lang(), shown=n - start, start=start, last=n - 1))
            text = [pieces(tok, r) for r in lens_ids.tolist()]      # whole pieces: text_heatmap cuts them to fit
            rows = [t("嵌入", "embed")] + [t(f"第 {j} 层", f"L{j}") for j in range(L)]
            cols = [f"{q}:{x}" for q, x in enumerate(labels)][start:]
            page.view("logit_lens.top_prob", lens_p,
                      text_heatmap(lens_p, text, cols, rows,
                                   title=t("Logit lens（行 = 层，列 = 位置）",
                                           "Logit lens (rows = layers, columns = positions)"),
                                   xlabel=t("位置：输入 token", "position: input token"), ylabel=t("层", "layer"),
                                   height=max(500, 26 * (L + 1) + 160)), key="lens")
            lens_checks = checks.logit_lens(model, trace, b)

page.checks(page.memo(("checks", b, s), lambda: checks.lm_head(model, trace, b, s)) + lens_checks)
page.at_scale()
