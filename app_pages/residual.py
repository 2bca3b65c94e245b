"""Stage 5 · Residual add: each sub-layer adds its output onto the running stream."""
import streamlit as st
import torch

from content import texts
from ui import components as ui
from ui import tokens as tk
from ui.state import require_trace, t, layer_picker, row_picker, token_picker
from viz import heatmap, lines
from viz.diagrams import roomy

model, trace = require_trace()
c = model.config
B, S, H, L = trace.B, trace.S, c.hidden_size, c.num_hidden_layers

st.title(t("5 · 残差相加：在主干上累加", "5 · Residual add: adding onto the stream"))
ui.pipeline_strip("residual", f"x, f(x) [{B}, {S}, {H}] × 2", f"x + f(x) [{B}, {S}, {H}]")
ui.explanation("residual", texts.numbers(c, model.tokenizer.vocab_size, B, S))

st.header(t("公式与代码", "Formula and code"))
ui.formula_and_code([r"h = x + \mathrm{Attn}(\mathrm{RMSNorm}_1(x)) \qquad (\texttt{resid\_mid})",
                     r"x' = h + \mathrm{MLP}(\mathrm{RMSNorm}_2(h)) \qquad (\texttt{resid\_out})"])
with st.expander(t("代码：ops/model.py 中的一层", "Code: one layer in ops/model.py"), expanded=False):
    import inspect
    from ops.model import Model
    st.code(inspect.getsource(Model.layer), language="python")

st.header(t("实时张量", "Live tensors"))
cols = st.columns(3)
with cols[0]:
    i = layer_picker(L)
with cols[1]:
    b = row_picker(B)
n = trace.lengths[b]
with cols[2]:
    s = token_picker(n)
labels = tk.row_labels(model, trace, b)

# ---- the stream's norm through the layers -----------------------------------------------------------
MAX_LINES = 24
stream = trace.residual_stream()                                          # L + 1 tensors (B, S, H)
norms = torch.stack([x[b, :n].float().norm(dim=-1) for x in stream])      # (L + 1, n)
xs = [t("嵌入", "embed")] + [f"{t('层', 'L')}{k}" for k in range(len(stream) - 1)]
if n <= MAX_LINES:                                                          # one line per token
    series = {f"{k}:{lab}": norms[:, k] for k, lab in enumerate(labels)}
else:                                    # hundreds of lines read as a blur (and draw slowly): summarise
    series = {f"0:{labels[0]}": norms[:, 0], f"{s}:{labels[s]}": norms[:, s],
              t(f"{n} 个 token 的中位数", f"median of the {n} tokens"): norms.median(dim=1).values,
              t("90% 分位", "90th percentile"): norms.quantile(0.9, dim=1)}
ui.tensor_view(t("残差流的 L2 范数", "residual stream L2 norm"), norms,
               roomy(lines(series, x=xs,
                     title=t("每个 token 的 ‖x‖ 随层增长（0 = 嵌入输出）", "Each token's ‖x‖ through the layers (0 = embedding)"),
                     xlabel=t("经过的层", "after layer"), ylabel="‖x‖₂", height=480)), key="stream")
st.caption(t("第一个 token 的范数常常远大于其他 token（“注意力汇聚点”）；主干越来越长，每层只在上面加一小步。",
             "The first token's norm often grows far beyond the others (an “attention sink”); the stream lengthens "
             "and each layer adds a small step onto it."))

# ---- how much each sub-layer adds --------------------------------------------------------------------
st.subheader(t(f"每层的注意力与 MLP 各加了多少（token {s}：“{labels[s]}”）",
               f"How much attention and the MLP add at each layer (token {s}: “{labels[s]}”)"))
layers_ok = [k for k in range(L) if all(f"layers.{k}.{p}" in trace for p in ("attn.out", "mlp.out", "resid_mid"))]
if layers_ok:
    attn_rel = torch.stack([trace.layer(k, "attn.out")[b, s].float().norm() / trace.layer_input(k)[b, s].float().norm()
                            for k in layers_ok])
    mlp_rel = torch.stack([trace.layer(k, "mlp.out")[b, s].float().norm() / trace.layer(k, "resid_mid")[b, s].float().norm()
                           for k in layers_ok])
    ui.tensor_view(t("相对增量", "relative update"), torch.stack([attn_rel, mlp_rel]),
                   roomy(lines({"‖attn.out‖ / ‖x‖": attn_rel, "‖mlp.out‖ / ‖resid_mid‖": mlp_rel}, x=layers_ok,
                         title=t("加上去的量相对主干的大小", "Size of what is added, relative to the stream"),
                         xlabel=t("层", "layer"), ylabel=t("比值（对数轴）", "ratio (log axis)"), height=440)).update_yaxes(type="log"), key="rel")
    rel_all = torch.stack([trace.layer(k, "mlp.out")[b, :n].float().norm(dim=-1)
                           / trace.layer(k, "resid_mid")[b, :n].float().norm(dim=-1) for k in layers_ok])   # (L, n)
    ui.tensor_view(t("MLP 相对增量（层 × token）", "MLP relative update (layer × token)"), rel_all,
                   heatmap(rel_all.T.clamp_min(1e-6).log10(), x=None, y=labels, colorscale="Viridis", zmid=None,
                           title=t("log₁₀(‖mlp.out‖ / ‖resid_mid‖)：每个 token、每一层",
                                   "log₁₀(‖mlp.out‖ / ‖resid_mid‖) per token and layer"),
                           xlabel=t("层", "layer"), ylabel="token", height=160 + 32 * n), key="relmap")
else:
    st.info(t("这次运行没有记录 attn.out / mlp.out。", "This run did not record attn.out / mlp.out."))

# ---- the add itself, on one token --------------------------------------------------------------------
st.subheader(t(f"第 {i} 层的两次相加（token {s}，前 64 维）", f"Layer {i}'s two adds (token {s}, first 64 dims)"))
try:
    x_in, a_out, mid = trace.layer_input(i), trace.layer(i, "attn.out"), trace.layer(i, "resid_mid")
    m_out, r_out = trace.layer(i, "mlp.out"), trace.layer(i, "resid_out")
except KeyError as e:
    st.info(t("这次运行没有记录：", "This run did not record: ") + str(e))
    st.stop()
D = min(64, H)
rows = torch.stack([x_in[b, s, :D], a_out[b, s, :D], mid[b, s, :D], m_out[b, s, :D], r_out[b, s, :D]]).float()
names = ["x (layer input)", "+ attn.out", "= resid_mid", "+ mlp.out", "= resid_out"]
ui.tensor_view(f"layers.{i}.resid_out", r_out,
               heatmap(rows, y=names, title=t("逐元素相加：每一列 = 同一维", "Element-wise: each column is one dimension"),
                       xlabel=t("隐藏维度", "hidden dimension"), height=360), key="adds")

# ---- check ---------------------------------------------------------------------------------------------
st.header(t("对照：逐元素完全相等", "Check: exactly equal, element by element"))
ui.check(f"layers.{i}.resid_mid == layer_input({i}) + attn.out", mid, x_in + a_out, tol=0.0)
ui.check(f"layers.{i}.resid_out == resid_mid + mlp.out", r_out, mid + m_out, tol=0.0)
worst = max(float((trace.layer(k, "resid_out") - trace.layer(k, "resid_mid") - trace.layer(k, "mlp.out")).abs().max())
            for k in layers_ok) if layers_ok else 0.0
st.caption(t(f"全部 {len(layers_ok)} 层 resid_out − resid_mid − mlp.out 的最大 |差| = {worst:g}。残差相加是纯加法：没有参数。",
             f"Across all {len(layers_ok)} layers max |resid_out − resid_mid − mlp.out| = {worst:g}. The residual add is a "
             "plain sum: no parameters."))

ui.at_scale("residual", B, S)
