"""Experiments: one edit of the forward pass (an ablation, a patch, a steering vector, no RoPE, a scaled tensor); the
next token before and after, the stream's move, the logit attribution, a head sweep. Every setting is in the URL."""
import streamlit as st

from ops.lab import attribution, checks, edits, experiments_data as analysis, stage_data, sweeps
from ui import experiments_state
from ui.page import StagePage
from ui.pickers import picker
from ui.session import t
from ui.widgets import url_choice
from viz.experiments import layer_head_map, layer_lines, part_bars, top_bars, waterfall
from viz.labels import pieces, short

KINDS = {  # key: (zh, en, what the "after" chart says was edited)
    "head": ("消融一个头", "ablate a head", "L{i} H{h} {mode}"), "attn": ("去掉一层注意力", "remove a layer's attention", "L{i} attn.out = 0"),
    "mlp": ("去掉一层 MLP", "remove a layer's MLP", "L{i} mlp.out = 0"), "patch": ("修补", "patch", "L{i} resid_out @ {pos}"),
    "steer": ("引导", "steer", "L{i} + {scale}·(A − B)"), "norope": ("去掉 RoPE", "no RoPE", "L{i} no RoPE"),
    "name": ("按名字缩放张量", "scale a tensor by name", "{name} × {pct}%")}
MODES = {"zero": ("置零", "zero"), "mean": ("均值", "mean")}   # how an ablated head is replaced

TEXTS = {  # the edit's prompts / names: (setting, URL key, default, zh, en)
    "patch": [("src", "x_src", "I hate shanghai", "来源提示词（token 数须与本行相同）", "source prompt (as many tokens as the row)")],
    "steer": [("a", "x_sa", "I love", "提示词 A（方向 = A − B）", "prompt A (direction = A − B)"), ("b", "x_sb", "I hate", "提示词 B", "prompt B")],
    "name": [("name", "x_name", "", "张量名（trace 约定，如 layers.3.attn.out）", "tensor name (trace contract, e.g. layers.3.attn.out)")]}

page = StagePage("experiments")
model, trace, c = page.model, page.trace, page.config
L, nh, tok = c.num_hidden_layers, c.num_attention_heads, model.tokenizer

kind = url_choice(t("编辑方式", "edit"), "x_edit", list(KINDS), format_func=lambda k: t(*KINDS[k][:2]))
cols = st.columns([2, 2, 2, 5])
with cols[0]:
    b = page.row()
    i = page.layer()
ids = analysis.row_ids(trace, b)
key, s = experiments_state.model_key() + (tuple(ids),), len(ids) - 1              # s: the next token after the row's last token
base = trace if trace.B == 1 else experiments_state.kept(key + ("base",), lambda: model.trace_ids([ids], capture=experiments_state.CAPTURE), share=True)
top = stage_data.next_token_top(base, 0, s, 10)
top_ids = top["ids"].tolist()
with cols[3]:
    target = int(url_choice(t("目标 token（编辑前的前 5 名）", "target token (the top 5 before the edit)"), "x_target",
                            [str(x) for x in top_ids[:5]], format_func=lambda x: repr(pieces(tok, [x])[0])))
p = {}                                                             # this edit's settings (all in the URL)
with cols[1]:
    if kind == "head":
        p["h"] = picker(t("头 h", "head h"), "head", 0, nh - 1)
    elif kind == "patch":
        p["pos"] = picker(t("位置 p", "position p"), "x_pos", 0, s, default=s)
    elif kind == "steer":
        p["scale"] = picker(t("系数 α", "scale α"), "x_scale", -12, 12, default=4)
    elif kind == "name":
        p["pct"] = picker(t("保留百分比", "percent kept"), "x_pct", 0, 200, default=0)
with cols[2]:
    if kind == "head":
        p["mode"] = url_choice(t("方式", "mode"), "x_mode", ["zero", "mean"],
                               format_func=lambda m: t(*MODES[m]))
for col, (k, url, default, zh, en) in zip(st.columns(2) if kind in TEXTS else [], TEXTS.get(kind, [])):
    with col:
        p[k] = experiments_state.url_text(t(zh, en), url, default or f"layers.{i}.mlp.out")


def make_edits():
    if kind == "head":
        return edits.ablate_heads(c, i, [p["h"]], p["mode"], reference=base)
    if kind in ("attn", "mlp", "norope"):
        return {"attn": edits.zero_attention, "mlp": edits.zero_mlp, "norope": edits.no_rope}[kind](c, i)
    if kind == "patch":
        return edits.patch(runs["src"], f"layers.{i}.resid_out", positions=[p["pos"]])
    if kind == "steer":
        return edits.steer(runs["a"], runs["b"], i, p["scale"])
    return analysis.scale_edit(p["name"], p["pct"] / 100)


runs = {k: experiments_state.prompt_trace(model, p[k]) for k in ("src", "a", "b") if k in p}    # the other prompts' runs, shared
edited = None if None in runs.values() else experiments_state.kept(experiments_state.experiments_key(experiments_state.model_key(), ids, kind, i, p),
                                                      lambda: model.trace_ids([ids], edits=make_edits(), capture=experiments_state.CAPTURE),
                                                      share=True)
what = KINDS[kind][2].format(i=i, **dict(p, mode=t(*MODES[p["mode"]])) if "mode" in p else p)

# ---- the main picture: the next token before and after the edit -------------------------------------------
after = stage_data.next_token_top(edited, 0, s, 10) if edited is not None else None
xmax = max(float(top["probs"].max()), float(after["probs"].max()) if after else 0.0)
label = lambda xs: [f"{short(pc, 10)} ({x})" for pc, x in zip(pieces(tok, xs), xs)]  # noqa: E731
tgt = repr(pieces(tok, [target])[0])
c1, c2 = st.columns(2)
with c1:
    pb = analysis.token_prob(base, 0, s, target)
    page.chart(top_bars(top["probs"], label(top_ids), top_ids, target, xmax=xmax, height=400,
                        title=t(f"编辑前（位置 {s} 之后）：{tgt} 概率 {pb['prob']:.3f}，logit {pb['logit']:.2f}",
                                f"Before (row {b}, after position {s}): {tgt} p = {pb['prob']:.3f}, logit {pb['logit']:.2f}")), "x-before")
with c2:
    if after is None:
        st.info(t("编辑没有运行（原因见上方红框）；修改设置后会自动重试。", "The edit did not run (see the red box above); it reruns when you change a setting."))
    else:
        pa, a_ids = analysis.token_prob(edited, 0, s, target), after["ids"].tolist()
        page.chart(top_bars(after["probs"], label(a_ids), a_ids, target, xmax=xmax, height=400,
                            title=t(f"编辑后（{what}）：{tgt} 概率 {pa['prob']:.3f}，logit {pa['logit']:.2f}",
                                    f"After ({what}): {tgt} p = {pa['prob']:.3f}, logit {pa['logit']:.2f}")), "x-after")

page.explain([r"\text{%s } t_{name} \leftarrow f(t_{name}),\ \text{%s}" % (t("编辑：", "edit:"), t("其后全部重算", "everything downstream recomputed")),
              r"\ell_t = \sum_{p\,\in\,\{e,\ a_{i,h},\ m_i\}} \Big(g \odot \frac{p}{\mathrm{rms}(x_L)}\Big) \cdot w_t,\quad \mathrm{rms}(x_L) \text{ %s}"
              % t("固定不变", "frozen")],
             edits.ablate_heads, attribution.logit_attribution)

states, HL = ["embed"] + [f"L{k}" for k in range(L)], dict(xlabel=t("头 h", "head h"), ylabel=t("层 i", "layer i"))
if edited is not None and (box := page.more("残差流被改变了多少（逐层）", "How far the residual stream moved, layer by layer", "moved")):
    with box:
        ch = analysis.residual_change(base, edited, 0, s)
        page.chart(layer_lines({t(f"位置 {s}", f"position {s}"): ch["at"], t("所有位置中的最大值", "max over positions"): ch["max"]},
                               states, ylabel="‖x′ − x‖ / ‖x‖", height=380,
                               title=t("编辑后的残差流与原来的相对差", "Relative difference of the edited residual stream from the original")), "x-change")
        first = analysis.first_changed(ch["max"])
        st.caption(t(f"编辑之前的状态完全不变；第一个被改变的状态：{states[first] if first is not None else '无'}。",
                     f"States before the edit are untouched; the first one changed: {states[first] if first is not None else 'none'}."))

page.section(f"直接 logit 归因：{tgt} 的 logit 由哪些部分组成", f"Direct logit attribution: what the logit of {tgt} is made of")
which = url_choice(t("归因哪一次运行", "attribute which run"), "x_attr", ["before", "after"] if edited is not None else ["before"],
                   format_func=lambda w: t(*{"before": ("编辑前", "before the edit"), "after": ("编辑后", "after the edit")}[w]))
run = base if which == "before" else edited
attr = run.memo(("attribution", s, target), lambda: attribution.logit_attribution(model, run, 0, s, target))
logit = analysis.token_prob(run, 0, s, target)["logit"]
if box := page.more("瀑布图与每个头的贡献", "The waterfall, and each head's part", "attribution"):
    with box:
        page.chart(waterfall(*analysis.attribution_layers(attr, L), logit, total_label="logit", height=480,
                             title=t(f"嵌入 → 各层注意力与 MLP → logit {logit:.2f}（最终 RMSNorm 的缩放固定为本次运行的值）",
                                     f"embedding → each layer's attention and MLP → logit {logit:.2f} (final RMSNorm scale frozen at this run's value)")), "x-waterfall")
        c1, c2 = st.columns(2)
        with c1:
            page.chart(part_bars(analysis.top_head_parts(attr, 12), height=460, xlabel=t("对 logit 的直接贡献", "direct contribution to the logit"),
                                 title=t("直接贡献最大的 12 个头（按 |值|）", "The 12 heads with the largest direct effect")), "x-parts")
        with c2:
            page.chart(layer_head_map(analysis.attribution_heads(attr, L, nh), zlabel="logit", height=460, **HL,
                                      title=t("每个头的直接贡献（层 × 头）", "Each head's direct contribution (layer × head)")), "x-heads")

page.section(f"头扫描：逐个消融全部 {L * nh} 个头", f"Head sweep: ablate each of the {L * nh} heads in turn")
mode = p.get("mode", "zero")
res = experiments_state.sweep(key + ("sweep", target, mode), lambda progress: sweeps.head_sweep(model, base, 0, s, target, mode=mode, progress=progress),
                t(f"运行头扫描（{L * nh} 个变体，{MODES[mode][0]}）", f"Run the head sweep ({L * nh} variants, {mode})"),
                t("需要几十秒；结果按提示词、目标和方式保存在本会话中。", "Takes tens of seconds; the result is kept for this prompt, target and mode."),
                "run-head-sweep")
if res is not None:
    page.chart(layer_head_map(res["heads"], zlabel="Δ logit", highlight=(i, p["h"]) if kind == "head" else None, **HL,
                              title=t(f"消融每个头后 {tgt} 的 logit 变化（原 logit {res['base_logit']:.2f}）",
                                      f"Change of {tgt}'s logit when each head is ablated (base logit {res['base_logit']:.2f})")), "x-sweep")
    page.chart(layer_lines({t("去掉注意力", "attention removed"): res["attn"], "MLP": res["mlp"]}, states[1:], ylabel="Δ logit",
                           height=360, title=t("整层去掉注意力或 MLP 时的 logit 变化", "Logit change when a layer's attention or MLP is removed")), "x-sweep-layers")

at = analysis.edited_layer(p["name"], L) if kind == "name" else i                  # the stream before it is untouched
page.checks(checks.attribution_sum(attr, logit) + (checks.untouched_before(base, edited, at) if edited is not None and at is not None else []),
            "检查", "Checks")
