"""Stage 4 · Attention: q/k/v, RoPE, scores, causal + padding mask, softmax, GQA, context, o_proj."""
import pandas as pd
import streamlit as st

from content.attention import SCORES_SHIFT
from ops.arith import costs
from ops.engine import functional as fn
from ops.lab import checks, stage_data
from ui import blocks, by_hand
from ui.page import StagePage
from ui.pickers import picker
from ui.session import t
from viz import heatmap
from viz.attention import context_heads, scores_map
from viz.diagrams import gqa_diagram, heads_grid, rope_pairs

page = StagePage("attention")
model, trace, c = page.model, page.trace, page.config
B, S, H, L = trace.B, trace.S, c.hidden_size, c.num_hidden_layers
nh, nkv, hd, n_rep = c.num_attention_heads, c.num_key_value_heads, c.head_dim, c.n_rep

with (cols := st.columns(3))[0]:
    i = page.layer()
with cols[1]:
    h = picker(t("查询头 h", "query head h"), "head", 0, nh - 1)
with cols[2]:
    b = page.row()
n, g = trace.lengths[b], h // n_rep
labels, labels_all = page.labels(b), page.labels(b, with_pad=True)
if missing := [p for p in ("q", "k", "v", "q_rope", "k_rope", "probs", "context", "out") if f"layers.{i}.attn.{p}" not in trace]:
    st.info(t("这次运行没有记录：", "This run did not record: ") + ", ".join(missing))
    st.stop()
probs, ctx, out = trace.attention_probs(i), trace.layer(i, "attn.context"), trace.layer(i, "attn.out")
one = page.memo(("head", i, b, h), lambda: stage_data.attention_head(trace, i, b, h))   # its raw scores, mask, probabilities
key_j, query_i = t("键 j（被看的位置）", "key j (looked at)"), t("查询 i（正在看的位置）", "query i (looking)")

# ---- the main picture: where this head looks, beside every head of the layer ------------------------
c1, c2 = st.columns([11, 9])
with c1:
    head_map = page.memo(("probs", i, b, h), lambda: heatmap(one["probs"], x=labels_all, y=labels_all,
        title=t(f"层 {i}，头 {h}（KV 头 {g}），第 {b} 行", f"Layer {i}, head {h} (KV head {g}), row {b}"),
        subtitle=t("每行和为 1，空白 = 被屏蔽", "rows sum to 1, blank = masked"), colorscale="Viridis", zmin=0, zmax=1,
        xlabel=key_j, ylabel=query_i, text_fmt=".2f", height=500, width_px=620))
    page.view(f"layers.{i}.attn.probs", probs, head_map, key="probs",
              caption=t("右侧填充：填充位置的列被屏蔽；填充位置自己的行照样计算但结果被丢弃。",
                        "Right padding: padding columns are masked; the padding rows are computed too, and ignored.") if S > n else "")
    page.merged_note(b)
with c2:
    grid = page.memo(("grid", i, b, h), lambda: heads_grid(
        probs[b, :, :n, :n], one["allowed"][:n, :n], cols=5, subtitle=lambda hh: f"h{hh} · kv{hh // n_rep}",
        highlight=h, title=t(f"第 {i} 层全部 {nh} 个头", f"All {nh} heads of layer {i}"),
        note=t(f"同一色标 0..1，红框 = 头 {h}", f"one scale 0..1, red frame = head {h}")))
    page.view(f"layers.{i}.attn.probs[{b}, :, :{n}, :{n}]", probs[b, :, :n, :n], grid, key="grid")

page.explain([r"q = xW_q^\top + b_q,\ k = xW_k^\top + b_k,\ v = xW_v^\top + b_v"
              r"\quad q\!:\![B, %d, S, %d],\ k, v\!:\![B, %d, S, %d]" % (nh, hd, nkv, hd),
              r"\tilde q_{p} = R(p\,\theta)\,q_p,\quad \theta_j = %s^{-2j/%d}" % (f"{c.rope_theta:g}", hd),
              r"P = \mathrm{softmax}\!\left(\frac{\tilde q \tilde k^\top}{\sqrt{%d}} + M\right),\quad "
              r"M_{ij} = \begin{cases}0 & j \le i \text{ %s } j \text{ %s}\\ -\infty & \text{%s}\end{cases}"
              % (hd, *(t("且", "and"), t("是真实 token", "real"), t("其他", "otherwise"))),
              r"\mathrm{out} = \mathrm{concat}_h(P_h V_{g(h)})\, W_o^\top,\quad g(h) = \lfloor h / %d \rfloor" % n_rep],
             fn.rope_cos_sin, fn.rotate_half, fn.apply_rope, fn.repeat_kv, fn.attention_mask,
             fn.attention_scores, fn.softmax, fn.attention_context, by_hand=lambda: by_hand.attention_blocks(c.rope_theta, hd))

if box := page.more("分数 → 掩码 → 概率（所选的层、头、行）", "Scores → mask → probabilities (the chosen layer, head, row)", "scores"):
    with box:
        c1, c2 = st.columns(2)
        with c1:
            page.view(t("分数（掩码前）", "scores (before the mask)"), one["raw"],
                      scores_map(one["raw"], one["allowed"], labels_all, xlabel=t("键 j", "key j"), ylabel=t("查询 i", "query i"),
                                 text_fmt=".1f",
                                 title="q·kᵀ/√hd", subtitle=t("颜色只覆盖可见格；灰 = 被屏蔽（灰字为掩码前的值）",
                                                               "colour spans the visible cells; grey = masked (raw value in grey)")), key="raw",
                      caption=t(*SCORES_SHIFT))
        with c2:
            page.view(t("掩码（因果 + 填充）", "mask (causal + padding)"), one["mask"],
                      heatmap(one["allowed"], x=labels_all, y=labels_all, colorscale=[[0, "#444444"], [1, "#fff3c4"]],
                              zmin=0, zmax=1, title=t("浅色 = 可见 (0)，深色 = -inf", "light = visible (0), dark = -inf"),
                              xlabel=t("键 j", "key j"), ylabel=t("查询 i", "query i"), width_px=560).update_traces(showscale=False), key="mask")

# ---- shapes ---------------------------------------------------------------------------------------
page.section("形状", "Shapes")
MEANING = dict(q="[B, nh, S, hd]", k="[B, nkv, S, hd]", v="[B, nkv, S, hd]", q_rope="[B, nh, S, hd]",
               k_rope="[B, nkv, S, hd]", scores="[B, nh, S, S]", probs="[B, nh, S, S]", context="[B, S, nh·hd]",
               out="[B, S, H]")
st.dataframe([{t("张量", "tensor"): f"layers.{i}.attn.{p}", t("形状", "shape"): blocks.shape_str(trace.layer(i, f"attn.{p}").shape),
               t("含义", "meaning"): m} for p, m in MEANING.items() if f"layers.{i}.attn.{p}" in trace],
             hide_index=True, width="stretch", row_height=40)
st.caption(t(f"nh = {nh} 个查询头，nkv = {nkv} 个 KV 头，每头 hd = {hd} 维；nh·hd = {nh * hd}，H = {H}。",
             f"nh = {nh} query heads, nkv = {nkv} KV heads, hd = {hd} dims each; nh·hd = {nh * hd}, H = {H}."))

if box := page.more("RoPE：按位置旋转每一对维度", "RoPE: each dimension pair rotated by position", "rope"):
    with box:
        half = hd // 2
        j = picker(t(f"维度对 j（j 与 j+{half} 组成一对；j 越小转得越快）", f"dimension pair j (j with j+{half}; small j turns fastest)"),
                   "pair", 0, half - 1)
        rp = stage_data.rope_pair(trace, i, b, h, j, c.rope_theta)
        c1, c2 = st.columns([1, 1])
        with c1:
            shown = min(n, 16)          # a drawn arc per position: a few read best, and draw fast
            page.chart(rope_pairs(rp["before"][:shown], rp["after"][:shown], rp["angles"][:shown].numpy(), labels[:shown],
                                  title=t(f"q 的维度对 ({j}, {j + half})，头 {h}", f"q pair ({j}, {j + half}), head {h}"),
                                  names=(t("旋转轨迹", "rotation"), t("空心 = RoPE 前", "hollow = before RoPE"),
                                         t("实心 = RoPE 后", "filled = after RoPE")),
                                  axes=(t("维 j", "dim j"), t("维 j + hd/2", "dim j + hd/2"))), key="rope")
            if shown < n:
                st.caption(t(f"图中只画前 {shown} 个位置；右表列出全部 {n} 个。", f"The plot draws the first {shown} positions; the table lists all {n}."))
        with c2:
            table = {t("位置 p", "pos p"): range(n), "token": labels[:n], "θ_j·p": rp["angles"].numpy(),
                     t("角度°", "angle°"): rp["angle_deg"].numpy(), t("实测°", "measured°"): rp["measured_deg"].numpy(),
                     t("长度 前", "length before"): rp["len_before"].numpy(), t("长度 后", "length after"): rp["len_after"].numpy()}
            st.dataframe(pd.DataFrame(table), hide_index=True, width="stretch", height=min(560, 40 + 36 * n),
                         column_config={k: st.column_config.NumberColumn(format=f)
                                        for k, f in zip(list(table)[2:], ["%.3f", "%.1f", "%.1f", "%.3f", "%.3f"])})
            st.caption(t(f"θ_j = {c.rope_theta:g}^(-2·{j}/{hd}) = {rp['inv_freq']:.4g} rad/位置。旋转不改变长度，只改变方向；"
                         "q·k 于是只依赖两者的位置差。",
                         f"θ_j = {c.rope_theta:g}^(-2·{j}/{hd}) = {rp['inv_freq']:.4g} rad per position. A rotation keeps the length "
                         "and changes only the direction, so q·k depends on the positions' difference."))

if box := page.more(f"GQA：{nh} 个查询头共享 {nkv} 个 KV 头（每 {n_rep} 个一组）", f"GQA: {nh} query heads share {nkv} KV heads ({n_rep} per group)", "gqa"):
    with box:
        page.chart(gqa_diagram(nh, nkv, highlight=h, q_label=t("查询头", "Q heads"), kv_label=t("KV 头", "KV heads"),
                               title=t(f"查询头 h 读取 KV 头 ⌊h / {n_rep}⌋（当前头 {h} → KV 头 {g}）",
                                       f"query head h reads KV head ⌊h / {n_rep}⌋ (head {h} → KV head {g})")), key="gqa")
        kv = costs.gqa_saving(c)
        cols = st.columns(4)
        cols[0].metric(t("KV 缓存 / token（GQA, bf16）", "KV cache / token (GQA, bf16)"), costs.human(kv["tok"], "B"),
                       help=f"2 · L · nkv · hd · 2 = 2·{L}·{nkv}·{hd}·2")
        cols[1].metric(t("若为 MHA", "if it were MHA"), costs.human(kv["tok_mha"], "B"), help=f"2 · L · nh · hd · 2 = 2·{L}·{nh}·{hd}·2")
        cols[2].metric(t("32B：GQA / token", "32B: GQA / token"), costs.human(kv["ref_tok"], "B"))
        cols[3].metric(t("32B：32k 上下文", "32B: 32k context"), costs.human(kv["ref_ctx"], "B"), delta_color="off",
                       delta="MHA: " + costs.human(kv["ref_ctx_mha"], "B"))
        st.caption(t(f"KV 缓存只存 nkv 个头：省下 {n_rep} 倍显存（32B 为 {kv['ref'].n_rep} 倍）。",
                     f"The KV cache keeps only nkv heads: {n_rep}× less memory ({kv['ref'].n_rep}× for 32B)."))

if box := page.more("合并各头，再经 o_proj 投影回 H", "Heads concatenated, then o_proj back to H", "context"):
    with box:
        c1, c2 = st.columns(2)
        with c1:
            page.view(f"layers.{i}.attn.context", ctx,
                      context_heads(ctx[b, :n], nh, labels, highlight=h, xlabel=t("头 h", "head h"), ylabel="token",
                                    title=t(f"context = {nh} 个头 × {hd} 维拼接", f"context = {nh} heads × {hd} dims side by side"),
                                    subtitle=t("每格 = 该 token 在该头那一段的 ‖·‖", "each cell: ‖that head's slice‖ for that token")), key="ctx")
        with c2:
            page.view(f"layers.{i}.attn.out", out,
                      heatmap(out[b, :n, :128], y=labels, title=t("o_proj 输出（前 128 维）", "o_proj output (first 128 dims)"),
                              xlabel=t("隐藏维度", "hidden dimension"), ylabel="token", height=330, width_px=560), key="out")

page.checks(page.memo(("checks", i, b, h), lambda: checks.attention(model, trace, i, b, h)))
page.at_scale()
