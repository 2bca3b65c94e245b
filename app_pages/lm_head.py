"""Stage 7 · Final norm and LM head: one score per vocabulary row, then the logit lens."""
import pandas as pd
import streamlit as st
import torch
import torch.nn.functional as F

from ops import functional as fn
from content import texts
from ui import components as ui
from ui import decoding as dec
from ui.state import require_trace, picker, t, row_picker
from viz import bars

model, trace = require_trace()
c = model.config
B, S, H, V, L = trace.B, trace.S, c.hidden_size, c.vocab_size, c.num_hidden_layers
nums = texts.numbers(c, model.tokenizer.vocab_size, B, S)

st.title(t("7 · 最终归一化与 LM Head：给词表里每个 token 打分", "7 · Final norm and LM head: a score for every vocabulary token"))
ui.pipeline_strip("lm_head", f"layers.{L - 1}.resid_out [{B}, {S}, {H}]", f"logits [{B}, {S}, {V}]")
st.subheader(t("最终 RMSNorm", "Final RMSNorm"))
ui.explanation("final_norm", nums)
st.subheader("LM head")
ui.explanation("lm_head", nums)

st.header(t("公式与代码", "Formula and code"))
ui.formula_and_code([r"h = \mathrm{RMSNorm}(x_L)\,\odot\, g,\qquad \mathrm{logits} = h\,W_{out}^{\top},\quad W_{out}\in\mathbb{R}^{%d\times %d}" % (V, H),
                     r"p = \mathrm{softmax}(\mathrm{logits}):\ [%d, %d, %d] \to [%d, %d, %d]" % (B, S, H, B, S, V)],
                    fn.rms_norm, fn.lm_head)
tied = c.tie_word_embeddings
st.info(t(f"tie_word_embeddings = {tied}：当前模型的 LM head {'就是嵌入表（共享权重）' if tied else '是一张独立的矩阵'}。"
          "Qwen2.5-0.5B 共享；Qwen2.5-32B 不共享；内置 GGUF 单独存了 output.weight。",
          f"tie_word_embeddings = {tied}: this model's LM head {'is the embedding table (shared weights)' if tied else 'is a separate matrix'}. "
          "Qwen2.5-0.5B ties them; Qwen2.5-32B does not; the bundled GGUF stores its own output.weight."))

st.header(t("实时张量", "Live tensors"))
c1, c2, c3 = st.columns(3)
with c1:
    b = row_picker(B)
n = trace.lengths[b]
with c2:
    s = picker(t("第几个位置 s", "position s"), "pos", 0, n - 1, default=n - 1)
with c3:
    topn = st.slider(t("显示前几名", "top N shown"), 5, 30, 10, key="lm_topn")
labels = ui.token_labels(model, trace, b)
logits = trace.logits                                           # (B, S, V)
probs = torch.softmax(logits[b, s].float(), -1)
top = probs.topk(topn)
names = dec.short_labels(model, top.indices.tolist(), 10)
names = [f"{nm} ({i})" for nm, i in zip(names, top.indices.tolist())]
st.markdown(t(f"### 位置 {s}（“{dec.short(labels[s], 12)}”）之后，模型认为下一个 token 是：",
              f"### After position {s} (“{dec.short(labels[s], 12)}”) the model expects next:"))
ui.tensor_view("logits", logits,
               bars(probs[top.indices], names, horizontal=True, height=max(360, 34 * topn + 120),
                    title=t(f"softmax(logits[{b}, {s}]) 前 {topn} 名", f"softmax(logits[{b}, {s}]), top {topn}"),
                    xlabel=t("概率", "probability"), ylabel="token (id)", text_fmt=".3f"), key="lm-top",
               caption=t(f"logits 形状 [B, S, V] = [{B}, {S}, {V:,}]：每个位置都有 {V:,} 个分数；生成时只用最后一个位置。",
                         f"logits are [B, S, V] = [{B}, {S}, {V:,}]: {V:,} scores at every position; generation uses only the last."))
st.dataframe([{t("名次", "rank"): r + 1, "token": dec.pieces(model, [i])[0], "id": i,
               "logit": round(float(logits[b, s, i]), 3), t("概率", "prob"): round(float(probs[i]), 4)}
              for r, i in enumerate(top.indices.tolist())], hide_index=True, width="stretch")

st.subheader(t("每个位置的第一名", "The top token at every position"))
best_ids, best_p = dec.top_next(trace, b)                        # (n,) each
st.dataframe(pd.DataFrame({t("位置", "pos"): range(n), t("输入 token", "input token"): labels[:n],
                           t("预测的下一个", "predicted next"): dec.pieces(model, best_ids.tolist()),
                           t("概率", "prob"): best_p.numpy().round(4),
                           t("实际的下一个", "actual next"): labels[1:n] + ["—"]}),
             hide_index=True, width="stretch")

st.header(t("Logit lens：每一层“已经想到”了什么", "Logit lens: what each layer already “thinks”"))
st.caption(t(f"把最终 RMSNorm + LM head 套在嵌入和每一层的 resid_out 上（共 {L + 1} 行），看每个位置排第一的 token。颜色 = 它的概率。",
             f"Apply the final RMSNorm + LM head to the embedding and every layer's resid_out ({L + 1} rows) and read the top "
             "token at every position. Colour = its probability."))
lens_ids, lens_p = dec.logit_lens(model, trace, b)               # (L+1, w): the last w positions
start = dec.lens_start(trace, b)
if start:
    st.caption(t(f"为保持页面流畅，只显示最后 {n - start} 个位置（{start}…{n - 1}）。",
                 f"To keep the page fast, the last {n - start} positions ({start}…{n - 1}) are shown."))
text = [[dec.short(p, 6) for p in dec.pieces(model, r)] for r in lens_ids.tolist()]
rows = ["embed"] + [f"L{j}" for j in range(L)]
cols = [f"{q}:{dec.short(x)}" for q, x in enumerate(labels)][start:]
ui.tensor_view("logit_lens.top_prob", lens_p,
               dec.text_heatmap(lens_p, text, cols, rows, title=t("Logit lens（行 = 层，列 = 位置）", "Logit lens (rows = layers, columns = positions)"),
                                xlabel=t("位置：输入 token", "position: input token"), ylabel=t("层", "layer"),
                                height=max(500, 26 * (L + 1) + 160)), key="lens")

st.header(t("与 PyTorch 对照", "Check against PyTorch"))
w = model.w("lm_head.weight").float().cpu()
h = trace.final_hidden()[b, s].float()                           # position s: a V-wide product
ui.check(f"fn.lm_head vs torch.matmul(h, Wᵀ) (position {s})", logits[b, s], torch.matmul(h, w.T), tol=1e-4)
ui.check(f"fn.lm_head vs F.linear(h, W) (position {s})", logits[b, s], F.linear(h, w), tol=1e-4)
ref_top = torch.softmax(logits[b, start:n].float(), -1).max(-1)
ui.check(t("最后一层的 lens == trace 的 logits（第一名概率）", "last layer's lens == trace logits (top probability)"),
         lens_p[-1], ref_top.values, tol=1e-4)
same = bool((lens_ids[-1] == ref_top.indices).all())
(st.success if same else st.error)(t("最后一层 lens 的第一名 token 与 logits 一致 ✓" if same else "第一名 token 不一致 ✗",
                                     "last layer's lens top tokens equal the logits' ✓" if same else "top tokens differ ✗"))

ui.at_scale("lm_head", B, S)
