"""Stage 3 · RMSNorm: rescale each token's vector by its root mean square, then by a learned gamma."""
import pandas as pd
import streamlit as st

from content.words import say
from ops.engine import functional as fn
from ops.lab import checks, stage_data
from ui import by_hand
from ui.page import StagePage
from ui.session import lang, t
from ui.widgets import url_choice
from viz import bars, lines
from viz.diagrams import roomy
from viz.labels import token_color
from viz.rmsnorm import before_after, histograms

page = StagePage("rmsnorm")
model, trace, c = page.model, page.trace, page.config
H, L, eps = c.hidden_size, c.num_hidden_layers, c.rms_norm_eps

NAMES = {"attn_norm": t("input_layernorm（注意力前）", "input_layernorm (before attention)"),
         "mlp_norm": t("post_attention_layernorm（MLP 前）", "post_attention_layernorm (before the MLP)"),
         "final": t("最终 RMSNorm（LM head 前）", "final norm (before the LM head)")}
cols = st.columns([3, 2, 2, 2])          # one row: the chart stays above the fold on a projector
with cols[0]:
    which = url_choice(t("哪一个 RMSNorm", "Which RMSNorm"), "norm", list(NAMES), format_func=NAMES.get,
                       horizontal=False)
with cols[1]:
    i = page.layer() if which != "final" else L - 1
with cols[2]:
    b = page.row()
n = trace.lengths[b]
with cols[3]:
    s = page.token(b)
try:
    x, y, gamma, xname, yname = checks.norm_io(model, trace, which, i)
except KeyError as e:
    st.info(t("这次运行没有记录这个张量：", "This run did not record the tensor: ") + str(e))
    st.stop()
page.io(xname, yname)                              # the header: this norm's input -> output, as the trace names them
wname = checks.NORMS[which][2].format(i=i)
labels = page.labels(b)
one = stage_data.rmsnorm_steps(x[b, s], gamma, eps)

# ---- the main picture: one token before and after, each on its own axis ------------------------------
both = page.memo(("y", which, i, b, s), lambda: before_after(
    one["x"], y[b, s], xlabel=t("隐藏维度", "hidden dimension"), color=token_color(s),
    title=t(f"第 {b} 行、位置 {s}（“{labels[s]}”）：RMSNorm 前后，每一维的值",
            f"Row {b}, position {s} (“{labels[s]}”): every dimension before and after"),
    x_name=t(f"归一化前 x（RMS = {one['rms']:.3f}）", f"x before (RMS = {one['rms']:.3f})"),
    y_name=t("之后 y = γ · x / RMS", "y after = γ · x / RMS")))
page.view(yname, y, both, key="y", caption=f"`{xname}` → RMSNorm(`{wname}`) → `{yname}`", projector_height=370)

page.explain([say("page_rmsnorm.formula_rmsnorm", lang(), H=H, eps="%g" % eps),
              say("page_rmsnorm.formula_layernorm", lang())],
             fn.rms_norm, by_hand=lambda: by_hand.rmsnorm_block(eps))

if box := page.more("所选 token 的计算步骤", "The steps on the chosen token's vector", "steps"):
    with box:
        K = min(6, H)
        fmt = lambda v: [f"{float(a):.4f}" for a in v[:K]]
        steps = [("x", fmt(one["x"]), ""),
                 ("x²", fmt(one["sq"]), ""),
                 (t("mean(x²)（对 H 维求平均）", "mean(x²) over H"), [""] * K, f"{one['mean']:.6f}"),
                 (f"+ ε ({eps:g})", [""] * K, f"{one['mean'] + eps:.6f}"),
                 ("rsqrt = 1/√(…)", [""] * K, f"{one['inv']:.6f}"),
                 ("x · rsqrt", fmt(one["normed"]), ""),
                 ("γ", fmt(gamma), ""),
                 ("y = γ · x · rsqrt", fmt(one["y"]), ""),
                 (t("trace 中的 y", "y in the trace"), fmt(y[b, s]), "")]
        st.dataframe(pd.DataFrame([[name, scalar] + vals for name, vals, scalar in steps],
                                  columns=[t("步骤", "step"),
                                           t("标量", "scalar")] + [t(f"维 {d}", f"dim {d}") for d in range(K)]),
                     hide_index=True, width="stretch", row_height=40)
        st.caption(say("page_rmsnorm.rms_worked", lang(), b=b, s=s, tok=labels[s], rms=format(one["rms"], ".4f")))

        page.chart(histograms({"x": one["x"], "x · rsqrt": one["normed"], "y = γ·x·rsqrt": one["y"]},
                              color=token_color(s),
                              title=say("page_rmsnorm.values_before_after_this", lang()),
                              xlabel=t("数值", "value"), ylabel=t("个数", "count")), key="hist")
        rms_all = stage_data.token_rms(x[b, :n])
        page.view(f"rms({xname})", rms_all,
                  bars(rms_all, [f"{k}:{lab}" for k, lab in enumerate(labels)], height=360,
                       title=say("page_rmsnorm.rms_of_each_token", lang()),
                       xlabel="token", ylabel="RMS", color=[token_color(k) for k in range(n)], highlight=s), key="rms")

        page.view(wname, gamma,
                  lines({"γ": gamma}, title=t(f"γ（可学习的缩放，{H} 维）", f"γ (the learned scale, {H} dims)"),
                                      xlabel=t("隐藏维度", "hidden dimension"), ylabel="γ", markers=False), key="gamma",
                  caption=say("page_rmsnorm.a_few_dimensions_have", lang()))

if box := page.more("对比 LayerNorm：不减均值，没有 β", "Contrast with LayerNorm: no mean subtraction, no β",
                    "layernorm"):
    with box:
        ln = stage_data.layer_norm_contrast(x[b, s], gamma, eps)
        page.metrics([(t("均值 μ", "mean μ"), f"{ln['mean']:.4f}"),
                      (t("RMS（RMSNorm 除以它）", "RMS (RMSNorm divides by)"), f"{one['rms']:.4f}"),
                      (t("标准差 σ（LayerNorm 除以它）", "std σ (LayerNorm divides by)"), f"{ln['std']:.4f}"),
                      (t("两者输出 max |差|", "max |diff| of outputs"), f"{ln['max_diff']:.4g}")])
        page.chart(roomy(lines({"RMSNorm": ln["rms_norm"][:128],
                                "LayerNorm (F.layer_norm, β=0)": ln["layer_norm"][:128]},
                               title=t("同一输入、同一 γ：前 128 维", "Same input, same γ: first 128 dims"),
                               xlabel=t("隐藏维度", "hidden dimension"), ylabel="y", markers=False)), key="ln")
        st.caption(say("page_rmsnorm.when_the_mean_is", lang()))

page.checks(page.memo(("checks", which, i), lambda: checks.rmsnorm(model, trace, which, i)))
page.at_scale()
