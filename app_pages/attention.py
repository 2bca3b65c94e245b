"""Stage 4 · Attention: q/k/v, RoPE, scores, causal + padding mask, softmax, GQA, context, o_proj."""
import math

import pandas as pd
import streamlit as st
import torch
import torch.nn.functional as F

from ops import costs
from ops import functional as fn
from content import texts
from ui import components as ui
from ui import tokens as tk
from ui.state import require_trace, picker, t, layer_picker, row_picker
from viz import heatmap
from viz.diagrams import gqa_diagram, heads_grid, rope_pairs

ROPE_POSITIONS = 16

model, trace = require_trace()
c = model.config
B, S, H, L = trace.B, trace.S, c.hidden_size, c.num_hidden_layers
nh, nkv, hd, n_rep = c.num_attention_heads, c.num_key_value_heads, c.head_dim, c.n_rep

st.title(t("4 · 注意力（Attention）：每个位置回看前文", "4 · Attention: every position looks back"))
ui.pipeline_strip("attention", f"x [{B}, {S}, {H}]", f"attn.out [{B}, {S}, {H}]")
ui.explanation("attention", texts.numbers(c, model.tokenizer.vocab_size, B, S))

st.header(t("公式与代码", "Formula and code"))
ui.formula_and_code([r"q = xW_q^\top + b_q,\ k = xW_k^\top + b_k,\ v = xW_v^\top + b_v"
                     r"\quad q\!:\![B, %d, S, %d],\ k, v\!:\![B, %d, S, %d]" % (nh, hd, nkv, hd),
                     r"\tilde q_{p} = R(p\,\theta)\,q_p,\quad \theta_j = %s^{-2j/%d}" % (f"{c.rope_theta:g}", hd),
                     r"P = \mathrm{softmax}\!\left(\frac{\tilde q \tilde k^\top}{\sqrt{%d}} + M\right),\quad "
                     r"M_{ij} = \begin{cases}0 & j \le i \text{ and } j \text{ real}\\ -\infty & \text{otherwise}\end{cases}" % hd,
                     r"\mathrm{out} = \mathrm{concat}_h(P_h V_{g(h)})\, W_o^\top,\quad g(h) = \lfloor h / %d \rfloor" % n_rep],
                    fn.rope_cos_sin, fn.rotate_half, fn.apply_rope, fn.repeat_kv, fn.attention_mask,
                    fn.attention_scores, fn.softmax, fn.attention_context)

# ---- pickers --------------------------------------------------------------------------------------
st.header(t("实时张量", "Live tensors"))
cols = st.columns(3)
with cols[0]:
    i = layer_picker(L)
with cols[1]:
    h = picker(t("查询头 h", "query head h"), "head", 0, nh - 1)
with cols[2]:
    b = row_picker(B)
n = trace.lengths[b]
g = h // n_rep
labels = tk.row_labels(model, trace, b)
labels_all = tk.row_labels(model, trace, b, with_pad=True)

need = ["attn.q", "attn.k", "attn.v", "attn.q_rope", "attn.k_rope", "attn.probs", "attn.context", "attn.out"]
missing = [p for p in need if f"layers.{i}.{p}" not in trace]
if missing:
    st.info(t("这次运行没有记录：", "This run did not record: ") + ", ".join(missing))
    st.stop()
q, k, v = trace.layer(i, "attn.q"), trace.layer(i, "attn.k"), trace.layer(i, "attn.v")
q_rope, k_rope = trace.layer(i, "attn.q_rope"), trace.layer(i, "attn.k_rope")
probs, ctx, out = trace.attention_probs(i), trace.layer(i, "attn.context"), trace.layer(i, "attn.out")

st.subheader(t("形状", "Shapes"))
shape_rows = [(f"layers.{i}.attn.{p}", trace.layer(i, f"attn.{p}")) for p in
              ("q", "k", "v", "q_rope", "k_rope", "scores", "probs", "context", "out") if f"layers.{i}.attn.{p}" in trace]
st.dataframe([{t("张量", "tensor"): name, t("形状", "shape"): ui.shape_str(x.shape),
               t("含义", "meaning"): dict(q="[B, nh, S, hd]", k="[B, nkv, S, hd]", v="[B, nkv, S, hd]",
                                         q_rope="[B, nh, S, hd]", k_rope="[B, nkv, S, hd]", scores="[B, nh, S, S]",
                                         probs="[B, nh, S, S]", context="[B, S, nh·hd]", out="[B, S, H]")[name.rsplit(".", 1)[1]]}
              for name, x in shape_rows], hide_index=True, width="stretch", row_height=40)
st.caption(t(f"nh = {nh} 个查询头，nkv = {nkv} 个 KV 头，每头 hd = {hd} 维；nh·hd = {nh * hd}，H = {H}。",
             f"nh = {nh} query heads, nkv = {nkv} KV heads, hd = {hd} dims each; nh·hd = {nh * hd}, H = {H}."))

# ---- RoPE -----------------------------------------------------------------------------------------
st.subheader(t("RoPE：按位置旋转每一对维度", "RoPE: each dimension pair rotated by position"))
half = hd // 2
j = picker(t(f"维度对 j（j 与 j+{half} 组成一对；j 越小转得越快）", f"dimension pair j (j with j+{half}; small j turns fastest)"),
           "pair", 0, half - 1)
inv_freq = c.rope_theta ** (-2 * j / hd)
pos = torch.arange(n, dtype=torch.float64)
angles = pos * inv_freq
before = torch.stack([q[b, h, :n, j], q[b, h, :n, j + half]], -1).float()
after = torch.stack([q_rope[b, h, :n, j], q_rope[b, h, :n, j + half]], -1).float()
c1, c2 = st.columns([1, 1])
with c1:
    shown = min(n, ROPE_POSITIONS)                  # a drawn arc per position: a few read best, and draw fast
    st.plotly_chart(rope_pairs(before[:shown], after[:shown], angles[:shown].numpy(), labels[:shown],
                               title=t(f"q 的维度对 ({j}, {j + half})，头 {h}：空心 = RoPE 前，实心 = 后",
                                       f"q pair ({j}, {j + half}), head {h}: hollow = before RoPE, filled = after")),
                    width="stretch", key="rope", theme=None)
    if shown < n:
        st.caption(t(f"图中只画前 {shown} 个位置；右表列出全部 {n} 个。", f"The plot draws the first {shown} positions; the table lists all {n}."))
with c2:
    measured = torch.atan2(after[:, 1], after[:, 0]) - torch.atan2(before[:, 1], before[:, 0])   # (n,) radians
    cols_ = {t("位置 p", "pos p"): range(n), "token": labels[:n], "θ_j·p": angles.numpy(),
             t("角度°", "angle°"): (torch.rad2deg(angles) % 360).numpy(),
             t("实测°", "measured°"): (torch.rad2deg(measured.double()) % 360).numpy(),
             t("长度 前", "length before"): before.norm(dim=-1).numpy(), t("长度 后", "length after"): after.norm(dim=-1).numpy()}
    fmt_ = ["%.3f", "%.1f", "%.1f", "%.3f", "%.3f"]
    st.dataframe(pd.DataFrame(cols_), hide_index=True, width="stretch", height=min(560, 40 + 36 * n),
                 column_config={k: st.column_config.NumberColumn(format=f) for k, f in zip(list(cols_)[2:], fmt_)})
    st.caption(t(f"θ_j = {c.rope_theta:g}^(-2·{j}/{hd}) = {inv_freq:.4g} rad/位置。旋转不改变长度，只改变方向；"
                 "q·k 于是只依赖两者的位置差。",
                 f"θ_j = {c.rope_theta:g}^(-2·{j}/{hd}) = {inv_freq:.4g} rad per position. A rotation keeps the length and "
                 "changes only the direction, so q·k depends on the positions' difference."))

# ---- scores, mask, probabilities ------------------------------------------------------------------
st.subheader(t(f"分数 → 掩码 → 概率（层 {i}，头 {h}，第 {b} 行）", f"Scores → mask → probabilities (layer {i}, head {h}, row {b})"))
k_full = fn.repeat_kv(k_rope, n_rep)
raw = (q_rope[b, h].float() @ k_full[b, h].float().T) / math.sqrt(hd)            # (S, S) before the mask
mask = fn.attention_mask(trace.attention_mask[b:b + 1], torch.arange(S)[None], torch.arange(S)[None])[0, 0]   # (S, S)
fmt = ".2f" if S <= 16 else None
c1, c2 = st.columns(2)
with c1:
    ui.tensor_view(t("分数（掩码前）", "scores (before the mask)"), raw,
                   heatmap(raw, x=labels_all, y=labels_all, title=t("q·kᵀ/√hd，掩码前", "q·kᵀ/√hd before the mask"),
                           xlabel=t("键 j", "key j"), ylabel=t("查询 i", "query i"), text_fmt=fmt), key="raw")
with c2:
    allowed = torch.isfinite(mask).float()
    ui.tensor_view(t("掩码（因果 + 填充）", "mask (causal + padding)"), mask,
                   heatmap(allowed, x=labels_all, y=labels_all, colorscale=[[0, "#444444"], [1, "#fff3c4"]], zmid=None,
                           zmin=0, zmax=1, title=t("浅色 = 可见 (0)，深色 = -inf", "light = visible (0), dark = -inf"),
                           xlabel=t("键 j", "key j"), ylabel=t("查询 i", "query i")).update_traces(showscale=False), key="mask")
p_show = probs[b, h].float().masked_fill(~torch.isfinite(mask), float("nan"))     # masked cells blank
ui.tensor_view(f"layers.{i}.attn.probs", probs,
               heatmap(p_show, x=labels_all, y=labels_all, colorscale="Viridis", zmid=None, zmin=0, zmax=1,
                       title=t("注意力概率（每行和为 1，空白 = 被屏蔽）", "attention probabilities (rows sum to 1, blank = masked)"),
                       xlabel=t("键 j（被看的位置）", "key j (looked at)"), ylabel=t("查询 i（正在看的位置）", "query i (looking)"),
                       text_fmt=fmt, height=520), key="probs")
if S > n:
    st.caption(t("右侧填充：填充位置的列被屏蔽；填充位置自己的行照样计算但结果被丢弃。",
                 "Right padding: padding columns are masked; the padding rows are computed too, and ignored."))

# ---- all heads --------------------------------------------------------------------------------------
st.subheader(t(f"第 {i} 层全部 {nh} 个头", f"All {nh} heads of layer {i}"))
ui.tensor_view(f"layers.{i}.attn.probs[{b}, :, :{n}, :{n}]", probs[b, :, :n, :n],
               heads_grid(probs[b, :, :n, :n], torch.isfinite(mask[:n, :n]),
                          title=t("每个小图一个头（同一色标 0..1）", "One small map per head (same scale 0..1)"),
                          cols=7, subtitle=lambda hh: f"h{hh} · kv{hh // n_rep}"), key="grid")

# ---- GQA --------------------------------------------------------------------------------------------
st.subheader(t(f"GQA：{nh} 个查询头共享 {nkv} 个 KV 头（每 {n_rep} 个一组）",
               f"GQA: {nh} query heads share {nkv} KV heads ({n_rep} per group)"))
st.plotly_chart(gqa_diagram(nh, nkv, highlight=h, title=t(f"查询头 h 读取 KV 头 ⌊h / {n_rep}⌋（当前头 {h} → KV 头 {g}）",
                                                       f"query head h reads KV head ⌊h / {n_rep}⌋ (head {h} → KV head {g})"),
                            q_label=t("查询头", "Q heads"), kv_label=t("KV 头", "KV heads")),
                width="stretch", key="gqa", theme=None)
kv_tok = costs.kv_cache_bytes(c, 1, 2)
ref = costs.reference_config()
kv_ref = costs.kv_cache_bytes(ref, 1, 2)
cols = st.columns(4)
cols[0].metric(t("KV 缓存 / token（GQA, bf16）", "KV cache / token (GQA, bf16)"), costs.human(kv_tok, "B"),
               help=f"2 · L · nkv · hd · 2 = 2·{L}·{nkv}·{hd}·2")
cols[1].metric(t("若为 MHA", "if it were MHA"), costs.human(kv_tok * n_rep, "B"), help=f"2 · L · nh · hd · 2 = 2·{L}·{nh}·{hd}·2")
cols[2].metric(t("32B：GQA / token", "32B: GQA / token"), costs.human(kv_ref, "B"))
cols[3].metric(t("32B：32k 上下文", "32B: 32k context"), costs.human(costs.kv_cache_bytes(ref, 32768, 2), "B"),
               delta=t(f"MHA 需 {costs.human(costs.kv_cache_bytes(ref, 32768, 2) * ref.n_rep, 'B')}",
                       f"MHA: {costs.human(costs.kv_cache_bytes(ref, 32768, 2) * ref.n_rep, 'B')}"), delta_color="off")
st.caption(t(f"KV 缓存只存 nkv 个头：省下 {n_rep} 倍显存（32B 为 {ref.n_rep} 倍）。",
             f"The KV cache keeps only nkv heads: {n_rep}× less memory ({ref.n_rep}× for 32B)."))

# ---- context and o_proj -----------------------------------------------------------------------------
st.subheader(t("合并各头，再经 o_proj 投影回 H", "Heads concatenated, then o_proj back to H"))
c1, c2 = st.columns(2)
with c1:
    ui.tensor_view(f"layers.{i}.attn.context", ctx,
                   heatmap(ctx[b, :n, h * hd:(h + 1) * hd], y=labels, title=t(f"context：头 {h} 的 {hd} 维", f"context: head {h}'s {hd} dims"),
                           xlabel=t(f"维度 {h * hd}..{(h + 1) * hd - 1}", f"dims {h * hd}..{(h + 1) * hd - 1}"), ylabel="token", height=380),
                   key="ctx")
with c2:
    ui.tensor_view(f"layers.{i}.attn.out", out,
                   heatmap(out[b, :n, :128], y=labels, title=t("o_proj 输出（前 128 维）", "o_proj output (first 128 dims)"),
                           xlabel=t("隐藏维度", "hidden dimension"), ylabel="token", height=380), key="out")

# ---- check ----------------------------------------------------------------------------------------
st.header(t("与 PyTorch 对照", "Check against PyTorch"))
qb = q_rope[b:b + 1, :, :n].float()
kb = fn.repeat_kv(k_rope[b:b + 1, :, :n].float(), n_rep)
vb = fn.repeat_kv(v[b:b + 1, :, :n].float(), n_rep)
sdpa = F.scaled_dot_product_attention(qb, kb, vb, is_causal=True)                # (1, nh, n, hd)
sdpa = sdpa.transpose(1, 2).reshape(1, n, nh * hd)
tol = 1e-4 if ctx.dtype == torch.float32 else 3e-2
ui.check(t(f"context（第 {b} 行的 {n} 个真实 token）vs F.scaled_dot_product_attention",
           f"context (row {b}'s {n} real tokens) vs F.scaled_dot_product_attention"), ctx[b:b + 1, :n].float(), sdpa, tol=tol)
if f"layers.{i}.attn.scores" in trace:
    ui.check(f"attn.probs[{b}, {h}] vs torch.softmax(attn.scores[{b}, {h}])", probs[b, h].float(),
             torch.softmax(trace.attention_scores(i)[b, h].float(), dim=-1), tol=1e-6 if probs.dtype == torch.float32 else 1e-2)

ui.at_scale("attention", B, S)
