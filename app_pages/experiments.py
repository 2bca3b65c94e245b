"""Experiments: one edit of the forward pass (an ablation, a patch, a steering vector, no RoPE, a scaled tensor); the
next token before and after, the stream's move, the logit attribution, a head sweep. Every setting is in the URL."""
import streamlit as st

from content.experiments import ATTR_RUNS, FIELDS, KINDS, MODES, formulas, pair, text
from content.experiments_parts import part_label
from ops.lab import checks, experiments_attribution, experiments_data, experiments_edits, experiments_sweeps, stage_data
from ui import experiments_state as xstate, predict, predict_questions
from ui.page import StagePage
from ui.pickers import picker
from ui.session import lang, t
from ui.widgets import url_choice
from viz.experiments import layer_head_map, layer_lines, part_bars, top_bars, waterfall
from viz.labels import pieces, short

page = StagePage("experiments")
model, trace, c = page.model, page.trace, page.config
L, nh, tok = c.num_hidden_layers, c.num_attention_heads, model.tokenizer
T = lambda key, **numbers: text(key, lang(), **numbers)   # noqa: E731

kind = url_choice(t("编辑方式", "edit"), "x_edit", list(KINDS), format_func=lambda k: t(*KINDS[k][:2]))
cols = st.columns([2, 2, 2, 5])
with cols[0]:
    b = page.row()
    i = page.layer()
ids = experiments_data.row_ids(trace, b)
key, s = xstate.model_key() + (tuple(ids),), len(ids) - 1              # s: the next token after the row's last token
base = trace if trace.B == 1 else xstate.kept(key + ("base",), lambda: model.trace_ids([ids], capture=xstate.CAPTURE),
                                           share=True)
top = stage_data.next_token_top(base, 0, s, 10)
top_ids = top["ids"].tolist()
with cols[3]:
    target = int(url_choice(T("target"), "x_target", [str(x) for x in top_ids[:5]],
                            format_func=lambda x: repr(pieces(tok, [x])[0])))
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
        p["mode"] = url_choice(t("方式", "mode"), "x_mode", ["zero", "mean"], format_func=lambda m: t(*MODES[m]))
for col, (k, url, default, zh, en) in zip(st.columns(2) if kind in FIELDS else [], FIELDS.get(kind, [])):
    with col:
        p[k] = xstate.url_text(t(zh, en), url, default or f"layers.{i}.mlp.out")
predict.on("experiments")

edited = xstate.edited_run(model, ids, kind, i, p, base)
what = t(KINDS[kind][3], KINDS[kind][2]).format(i=i, **dict(p, mode=t(*MODES[p["mode"]])) if "mode" in p else p)
mode = p.get("mode", "zero")
shown = predict.gate("experiments", (tuple(ids), target, i, p.get("h"), mode), lambda: predict_questions.ablation(
    model, base, ids, s, target, i, p.get("h"), mode, MODES[mode]), "ablation")

# ---- the main picture: the next token before and after the edit (after a guess, if asked) -----------------
after = stage_data.next_token_top(edited, 0, s, 10) if edited is not None else None
xmax = max(float(top["probs"].max()), float(after["probs"].max()) if after else 0.0)
label = lambda xs: [f"{short(pc, 10)} ({x})" for pc, x in zip(pieces(tok, xs), xs)]  # noqa: E731
tgt = repr(pieces(tok, [target])[0])
c1, c2 = st.columns(2)
with c1:
    pb = experiments_data.token_prob(base, 0, s, target)
    page.chart(top_bars(top["probs"], label(top_ids), top_ids, target, xmax=xmax, height=400,
                        title=T("before", b=b, s=s, tgt=tgt, p=pb["prob"], logit=pb["logit"])), "x-before")
with c2:
    if after is None:
        st.info(T("not_run"))
    elif shown:
        pa, a_ids = experiments_data.token_prob(edited, 0, s, target), after["ids"].tolist()
        page.chart(top_bars(after["probs"], label(a_ids), a_ids, target, xmax=xmax, height=400,
                            title=T("after", what=what, tgt=tgt, p=pa["prob"], logit=pa["logit"])), "x-after")

page.explain(formulas(lang()), experiments_edits.ablate_heads, experiments_attribution.logit_attribution)

states = [t("嵌入", "embed")] + [t(f"第 {k} 层", f"L{k}") for k in range(L)]
HL = dict(xlabel=t("头 h", "head h"), ylabel=t("层 i", "layer i"))
if shown and edited is not None and (box := page.more(*pair("moved_fold"), "moved")):
    with box:
        ch = experiments_data.residual_change(base, edited, 0, s)
        lines = {t(f"位置 {s}", f"position {s}"): ch["at"], t("所有位置中的最大值", "max over positions"): ch["max"]}
        page.chart(layer_lines(lines, states, ylabel="‖x′ − x‖ / ‖x‖", height=380, title=T("moved_title")),
                   "x-change")
        first = experiments_data.first_changed(ch["max"])
        st.caption(T("moved_note", first=states[first] if first is not None else t("无", "none")))

page.section(*pair("attr_section", tgt=tgt))
which = url_choice(t("归因哪一次运行", "attribute which run"), "x_attr",
                   ["before", "after"] if edited is not None else ["before"], format_func=lambda w: t(*ATTR_RUNS[w]))
run = base if which == "before" else edited
attr = run.memo(("attribution", s, target), lambda: experiments_attribution.logit_attribution(model, run, 0, s, target))
logit = experiments_data.token_prob(run, 0, s, target)["logit"]
if box := page.more(*pair("attr_fold"), "attribution"):
    with box:
        steps, values = experiments_data.attribution_layers(attr, L)
        page.chart(waterfall([part_label(x, lang()) for x in steps], values, logit, total_label="logit", height=480,
                             title=T("waterfall", logit=logit)), "x-waterfall")
        c1, c2 = st.columns(2)
        with c1:
            page.chart(part_bars([(part_label(x, lang()), v) for x, v in experiments_data.top_head_parts(attr, 12)],
                                 height=460, title=T("parts"),
                                 xlabel=t("对 logit 的直接贡献", "direct contribution to the logit")), "x-parts")
        with c2:
            page.chart(layer_head_map(experiments_data.attribution_heads(attr, L, nh), zlabel="logit", height=460, **HL,
                                      title=T("heads")), "x-heads")

page.section(*pair("sweep_section", n=L * nh))
res = xstate.sweep(key + ("sweep", target, mode),
                lambda progress: experiments_sweeps.head_sweep(model, base, 0, s, target, mode=mode, progress=progress),
                T("sweep_button", n=L * nh, mode=t(*MODES[mode])), T("sweep_note"), "run-head-sweep")
if res is not None:
    page.chart(layer_head_map(res["heads"], zlabel="Δ logit", highlight=(i, p["h"]) if kind == "head" else None, **HL,
                              title=T("sweep_title", tgt=tgt, base=res["base_logit"])), "x-sweep")
    page.chart(layer_lines({t("去掉注意力", "attention removed"): res["attn"], "MLP": res["mlp"]}, states[1:],
                           ylabel="Δ logit", height=360, title=T("sweep_layers")), "x-sweep-layers")

at = experiments_data.edited_layer(p["name"], L) if kind == "name" else i      # the stream before it is untouched
page.checks(checks.attribution_sum(attr, logit) + (checks.untouched_before(base, edited, at)
                                                   if edited is not None and at is not None else []), "检查", "Checks")
