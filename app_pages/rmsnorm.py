"""Stage 3 · RMSNorm: rescale each token's vector by its root mean square, then by a learned gamma."""
import pandas as pd
import streamlit as st
import torch
import torch.nn.functional as F

from ops import functional as fn
from content import texts
from ui import components as ui
from ui import tokens as tk
from ui.state import require_trace, t, layer_picker, row_picker, token_picker
from viz import bars, histogram, lines
from viz.diagrams import roomy

model, trace = require_trace()
c = model.config
B, S, H, L, eps = trace.B, trace.S, c.hidden_size, c.num_hidden_layers, c.rms_norm_eps

st.title(t("3 · RMSNorm：按均方根缩放", "3 · RMSNorm: rescale by the root mean square"))
ui.pipeline_strip("rmsnorm", f"x [{B}, {S}, {H}]", f"y [{B}, {S}, {H}]")
ui.explanation("rmsnorm", texts.numbers(c, model.tokenizer.vocab_size, B, S))

st.header(t("公式与代码", "Formula and code"))
ui.formula_and_code([r"y = \frac{x}{\sqrt{\frac{1}{H}\sum_{i=1}^{H} x_i^2 + \varepsilon}} \odot \gamma, "
                     r"\qquad H = %d,\ \varepsilon = %g" % (H, eps),
                     r"\text{LayerNorm: } y = \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}} \odot \gamma + \beta"
                     r"\quad (\text{RMSNorm drops } \mu \text{ and } \beta)"],
                    fn.rms_norm)

# ---- which norm, where --------------------------------------------------------------------------
st.header(t("实时张量", "Live tensors"))
NORMS = ["attn_norm", "mlp_norm", "final"]
names = {"attn_norm": t("input_layernorm（注意力前）", "input_layernorm (before attention)"),
         "mlp_norm": t("post_attention_layernorm（MLP 前）", "post_attention_layernorm (before the MLP)"),
         "final": t("最终 norm（LM head 前）", "final norm (before the LM head)")}
which = tk.url_choice(t("哪一个 RMSNorm", "Which RMSNorm"), "norm", NORMS, format_func=lambda v: names[v])
cols = st.columns(3)
with cols[0]:
    i = layer_picker(L) if which != "final" else L - 1
with cols[1]:
    b = row_picker(B)
n = trace.lengths[b]
with cols[2]:
    s = token_picker(n)

try:
    if which == "attn_norm":
        x, y = trace.layer_input(i), trace.layer(i, "attn_norm.out")
        wname, xname, yname = f"model.layers.{i}.input_layernorm.weight", ("embed.out" if i == 0 else f"layers.{i - 1}.resid_out"), f"layers.{i}.attn_norm.out"
    elif which == "mlp_norm":
        x, y = trace.layer(i, "resid_mid"), trace.layer(i, "mlp_norm.out")
        wname, xname, yname = f"model.layers.{i}.post_attention_layernorm.weight", f"layers.{i}.resid_mid", f"layers.{i}.mlp_norm.out"
    else:
        x, y = trace.residual_stream()[-1], trace["final_norm.out"]
        wname, xname, yname = "model.norm.weight", f"layers.{L - 1}.resid_out", "final_norm.out"
except KeyError as e:
    st.info(t("这次运行没有记录这个张量：", "This run did not record the tensor: ") + str(e))
    st.stop()
gamma = model.weights[wname].float().cpu()
labels = tk.row_labels(model, trace, b)
st.markdown(f"`{xname}` → RMSNorm(`{wname}`) → `{yname}`")

# ---- one token, step by step --------------------------------------------------------------------
st.subheader(t(f"一个 token 的计算步骤（第 {b} 行，位置 {s}：“{labels[s]}”）",
               f"The steps on one token's vector (row {b}, position {s}: “{labels[s]}”)"))
v = x[b, s].float()
sq = v * v
mean = sq.mean()
inv = torch.rsqrt(mean + eps)
normed = v * inv
out = gamma * normed
K = min(6, H)
fmt = lambda t_: [f"{float(a):.4f}" for a in t_[:K]]
dims = [f"dim {d}" for d in range(K)]
steps = [
    ("x", fmt(v), ""),
    ("x²", fmt(sq), ""),
    (t("mean(x²)（对 H 维求平均）", "mean(x²) over H"), [""] * K, f"{float(mean):.6f}"),
    (f"+ ε ({eps:g})", [""] * K, f"{float(mean + eps):.6f}"),
    ("rsqrt = 1/√(…)", [""] * K, f"{float(inv):.6f}"),
    ("x · rsqrt", fmt(normed), ""),
    ("γ", fmt(gamma), ""),
    ("y = γ · x · rsqrt", fmt(out), ""),
    (t("trace 中的 y", "y in the trace"), fmt(y[b, s].float()), ""),
]
df = pd.DataFrame([[name, scalar] + vals for name, vals, scalar in steps],
                  columns=[t("步骤", "step"), t("标量", "scalar")] + dims)
st.dataframe(df, hide_index=True, width="stretch", row_height=40)
st.caption(t(f"RMS = √mean(x²) = {float(mean.sqrt()):.4f}；除以它之后向量的 RMS 变为 1，再逐维乘 γ。",
             f"RMS = √mean(x²) = {float(mean.sqrt()):.4f}; after dividing by it the vector's RMS is 1, then γ scales each dimension."))

c1, c2 = st.columns(2)
with c1:
    st.plotly_chart(roomy(histogram({"x": v, "x · rsqrt": normed, "y = γ·x·rsqrt": out},
                              title=t("归一化前后的数值分布（这个 token）", "Values before / after (this token)"),
                              xlabel=t("数值", "value"), ylabel=t("个数", "count"))), width="stretch", key="hist", theme=None)
with c2:
    rms_all = x[b, :n].float().pow(2).mean(-1).sqrt()
    fig = bars(rms_all, [f"{k}:{lab}" for k, lab in enumerate(labels)],
               title=t("每个 token 的 RMS（归一化前）", "RMS of each token (before the norm)"),
               xlabel="token", ylabel="RMS", color=["#d62728" if k == s else "#1f77b4" for k in range(n)])
    ui.tensor_view(f"rms({xname})", rms_all, fig, key="rms")

ui.tensor_view(yname, y, roomy(lines({t("归一化前 x", "x before"): v, t("之后 y", "y after"): y[b, s].float()},
                               title=t("这个 token 在每一维上的值", "This token, dimension by dimension"),
                               xlabel=t("隐藏维度", "hidden dimension"), ylabel=t("数值", "value"), markers=False)), key="y")
ui.tensor_view(wname, gamma, lines({"γ": gamma}, title=t(f"γ（可学习的缩放，{H} 维）", f"γ (the learned scale, {H} dims)"),
                                  xlabel=t("隐藏维度", "hidden dimension"), ylabel="γ", markers=False), key="gamma",
               caption=t("少数维度的 γ 特别大或特别小：模型借此放大或压低某些特征。",
                         "A few dimensions have a very large or small γ: the model uses it to amplify or damp features."))

# ---- contrast with LayerNorm ----------------------------------------------------------------------
st.subheader(t("对比 LayerNorm：不减均值，没有 β", "Contrast with LayerNorm: no mean subtraction, no β"))
ln = F.layer_norm(v, (H,), weight=gamma, bias=None, eps=eps)
cols = st.columns(4)
cols[0].metric(t("均值 μ", "mean μ"), f"{float(v.mean()):.4f}")
cols[1].metric(t("RMS（RMSNorm 除以它）", "RMS (RMSNorm divides by)"), f"{float(mean.sqrt()):.4f}")
cols[2].metric(t("标准差 σ（LayerNorm 除以它）", "std σ (LayerNorm divides by)"), f"{float(v.var(unbiased=False).sqrt()):.4f}")
cols[3].metric(t("两者输出 max |差|", "max |diff| of outputs"), f"{float((ln - out).abs().max()):.4g}")
st.plotly_chart(roomy(lines({"RMSNorm": out[:128], "LayerNorm (F.layer_norm, β=0)": ln[:128]},
                      title=t("同一输入、同一 γ：前 128 维", "Same input, same γ: first 128 dims"),
                      xlabel=t("隐藏维度", "hidden dimension"), ylabel="y", markers=False)), width="stretch", key="ln", theme=None)
st.caption(t("当均值 μ 接近 0 时两者几乎相同；RMSNorm 省掉求均值和 β，更快，效果相当。",
             "When the mean μ is near 0 they nearly agree; RMSNorm skips the mean and β: cheaper, and works as well."))

# ---- check ---------------------------------------------------------------------------------------
st.header(t("与 PyTorch 对照", "Check against PyTorch"))
ref = F.rms_norm(x.float(), (H,), weight=gamma, eps=eps)
tol = 1e-5 if y.dtype == torch.float32 else 2e-2
ui.check(f"fn.rms_norm vs F.rms_norm ({yname})", y.float(), ref, tol=tol)

ui.at_scale("rmsnorm", B, S)
