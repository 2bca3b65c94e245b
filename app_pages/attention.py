"""Stage 4 · Attention: q/k/v, RoPE, scores, causal + padding mask, softmax, GQA, context, o_proj."""
import pandas as pd
import streamlit as st

from content.attention import MEANING, formulas, pair, text
from content.attention_rope import frequency_view
from content.texts import live_tokens
from ops.arith import costs
from ops.engine import functional as fn
from ops.lab import checks, stage_data
from ui import blocks, by_hand, predict, predict_questions as pq
from ui.page import StagePage
from ui.pickers import picker
from ui.session import lang, projector, t
from viz import heatmap
from viz.attention import context_heads, scores_map
from viz.attention_rope import frequency_pairs
from viz.diagrams import gqa_diagram, heads_grid, rope_pairs

PROJECTOR_H = 410      # px: the map and the heads' grid whole above a 1500x900 projector's fold (bench/lesson_fold.py)

page = StagePage("attention")
model, trace, c = page.model, page.trace, page.config
B, S, H, L = trace.B, trace.S, c.hidden_size, c.num_hidden_layers
nh, nkv, hd, n_rep = c.num_attention_heads, c.num_key_value_heads, c.head_dim, c.n_rep
T = lambda key, **numbers: text(key, lang(), **numbers)   # noqa: E731

with (cols := st.columns(3))[0]:
    i = page.layer()
with cols[1]:
    h = picker(t("查询头 h", "query head h"), "head", 0, nh - 1)
with cols[2]:
    b = page.row()
    predict.on("attention")          # in the pickers' row: the map stays above the fold on a projector
n, g = trace.lengths[b], h // n_rep
labels, labels_all = page.labels(b), page.labels(b, with_pad=True)
if missing := [p for p in ("q", "k", "v", "q_rope", "k_rope", "probs", "context", "out")
               if f"layers.{i}.attn.{p}" not in trace]:
    st.info(T("missing") + ", ".join(missing))
    st.stop()
probs, ctx, out = trace.attention_probs(i), trace.layer(i, "attn.context"), trace.layer(i, "attn.out")
one = page.memo(("head", i, b, h), lambda: stage_data.attention_head(trace, i, b, h))   # raw scores, mask, probs
key_j, query_i = T("key_j"), T("query_i")

# ---- the main picture: where this head looks, beside every head of the layer (after a guess, if asked) ----
shown = predict.gate("attention", (tuple(labels), i, b, h), lambda: pq.attention(one, n, labels, i, h), "key")
if shown:
    c1, c2 = st.columns([11, 9])
    with c1:
        head_map = page.memo(("probs", i, b, h), lambda: heatmap(
            one["probs"], x=labels_all, y=labels_all, title=T("map_title", i=i, h=h, g=g, b=b),
            subtitle=T("map_sub"), colorscale="Viridis", zmin=0, zmax=1, xlabel=key_j, ylabel=query_i, text_fmt=".2f",
            height=500, width_px=620))
        page.view(f"layers.{i}.attn.probs", probs, head_map, key="probs", caption=T("padding") if S > n else "",
                  projector_height=PROJECTOR_H)
        page.merged_note(b)
    with c2:
        per_row = 7 if projector() else 5        # two rows on a projector: each keeps room for its label
        grid = page.memo(("grid", i, b, h, per_row), lambda: heads_grid(
            probs[b, :, :n, :n], one["allowed"][:n, :n], cols=per_row, subtitle=lambda hh: f"h{hh} · kv{hh // n_rep}",
            highlight=h, title=T("grid_title", i=i, nh=nh), note=T("grid_note", h=h)))
        page.view(f"layers.{i}.attn.probs[{b}" + ("]" if n == S else f", :, :{n}, :{n}]"), probs[b, :, :n, :n], grid,
                  key="grid", projector_height=PROJECTOR_H)     # [b] alone when unpadded: the line fits its column

page.explain(formulas(c, lang()), fn.rope_cos_sin, fn.rotate_half, fn.apply_rope, fn.repeat_kv, fn.attention_mask,
             fn.attention_scores, fn.softmax, fn.attention_context,
             by_hand=lambda: by_hand.attention_blocks(c.rope_theta, hd),
             numbers=page.numbers | live_tokens(labels))          # the plain text names row b's live last token

if shown and (box := page.more(*pair("scores_fold"), "scores")):      # the raw scores show the answer too
    with box:
        c1, c2 = st.columns(2)
        with c1:
            page.view(T("raw"), one["raw"],
                      scores_map(one["raw"], one["allowed"], labels_all, xlabel=t("键 j", "key j"),
                                 ylabel=t("查询 i", "query i"), text_fmt=".1f", title="q·kᵀ/√hd",
                                 subtitle=T("raw_sub")),
                      key="raw", caption=T("scores_shift"))
        with c2:
            page.view(T("mask"), one["mask"],
                      heatmap(one["allowed"], x=labels_all, y=labels_all, colorscale=[[0, "#444444"], [1, "#fff3c4"]],
                              zmin=0, zmax=1, title=T("mask_title"), xlabel=t("键 j", "key j"),
                              ylabel=t("查询 i", "query i"), width_px=560).update_traces(showscale=False), key="mask")

# ---- shapes ---------------------------------------------------------------------------------------
page.section("形状", "Shapes")
st.dataframe([{t("张量", "tensor"): f"layers.{i}.attn.{p}",
               t("形状", "shape"): blocks.shape_str(trace.layer(i, f"attn.{p}").shape), t("含义", "meaning"): m}
              for p, m in MEANING.items() if f"layers.{i}.attn.{p}" in trace],
             hide_index=True, width="stretch", row_height=40)
st.caption(T("shapes_note", nh=nh, nkv=nkv, hd=hd, nhd=nh * hd, H=H))

if box := page.more(*pair("rope_fold"), "rope"):
    with box:
        half = hd // 2
        j = picker(T("rope_pick", half=half), "pair", 0, half - 1)
        rp = stage_data.rope_pair(trace, i, b, h, j)
        c1, c2 = st.columns([1, 1])
        with c1:
            few = min(n, 16)          # a drawn arc per position: a few read best, and draw fast
            page.chart(rope_pairs(rp["before"][:few], rp["after"][:few], rp["angles"][:few].numpy(), labels[:few],
                                  title=T("rope_title", j=j, j2=j + half, h=h),
                                  names=(t("旋转轨迹", "rotation"), t("空心 = RoPE 前", "hollow = before RoPE"),
                                         t("实心 = RoPE 后", "filled = after RoPE")),
                                  axes=(t("维 j", "dim j"), t("维 j + hd/2", "dim j + hd/2"))), key="rope")
            if few < n:
                st.caption(T("rope_shown", shown=few, n=n))
        with c2:
            table = {t("位置 p", "pos p"): range(n), "token": labels[:n], "θ_j·p": rp["angles"].numpy(),
                     t("角度°", "angle°"): rp["angle_deg"].numpy(), t("实测°", "measured°"): rp["measured_deg"].numpy(),
                     t("长度 前", "length before"): rp["len_before"].numpy(),
                     t("长度 后", "length after"): rp["len_after"].numpy()}
            st.dataframe(pd.DataFrame(table), hide_index=True, width="stretch", height=min(560, 40 + 36 * n),
                         column_config={k: st.column_config.NumberColumn(format=f)
                                        for k, f in zip(list(table)[2:], ["%.3f", "%.1f", "%.1f", "%.3f", "%.3f"])})
            st.caption(T("rope_note", theta=f"{c.rope_theta:g}", j=j, hd=hd, inv=rp["inv_freq_base"]))
        fq = page.memo(("rope_freq",), lambda: stage_data.rope_frequencies(trace))    # the pass's own frequencies
        fv = frequency_view(fq, j, c, S, lang())
        page.chart(frequency_pairs(fq, j, **fv["figure"]), key="rope_freq")
        st.caption(fv["caption"])

if box := page.more(*pair("gqa_fold", nh=nh, nkv=nkv, n_rep=n_rep), "gqa"):
    with box:
        page.chart(gqa_diagram(nh, nkv, highlight=h, q_label=t("查询头", "Q heads"), kv_label=t("KV 头", "KV heads"),
                               title=T("gqa_title", n_rep=n_rep, h=h, g=g)), key="gqa")
        kv = costs.gqa_saving(c)
        cols = st.columns(4)
        cols[0].metric(t("KV 缓存 / token（GQA, bf16）", "KV cache / token (GQA, bf16)"), costs.human(kv["tok"], "B"),
                       help=f"2 · L · nkv · hd · 2 = 2·{L}·{nkv}·{hd}·2")
        cols[1].metric(t("若为 MHA", "if it were MHA"), costs.human(kv["tok_mha"], "B"),
                       help=f"2 · L · nh · hd · 2 = 2·{L}·{nh}·{hd}·2")
        cols[2].metric(t("32B：GQA / token", "32B: GQA / token"), costs.human(kv["ref_tok"], "B"))
        cols[3].metric(t("32B：32k 上下文", "32B: 32k context"), costs.human(kv["ref_ctx"], "B"), delta_color="off",
                       delta="MHA: " + costs.human(kv["ref_ctx_mha"], "B"))
        st.caption(T("gqa_note", n_rep=n_rep, ref_rep=kv["ref"].n_rep))

if box := page.more(*pair("ctx_fold"), "context"):
    with box:
        c1, c2 = st.columns(2)
        with c1:
            page.view(f"layers.{i}.attn.context", ctx,
                      context_heads(ctx[b, :n], nh, labels, highlight=h, xlabel=t("头 h", "head h"), ylabel="token",
                                    title=T("ctx_title", nh=nh, hd=hd), subtitle=T("ctx_sub")), key="ctx")
        with c2:
            page.view(f"layers.{i}.attn.out", out,
                      heatmap(out[b, :n, :128], y=labels, title=T("out_title"), ylabel="token", height=330,
                              xlabel=t("隐藏维度", "hidden dimension"), width_px=560), key="out")

page.checks(page.memo(("checks", i, b, h), lambda: checks.attention(model, trace, i, b, h)))
page.at_scale()
