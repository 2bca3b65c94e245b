"""Stage 6 · MLP (SwiGLU) and MoE: each token widened, gated, and narrowed back."""
import streamlit as st
import torch
import torch.nn.functional as F

from ops import costs
from ops import functional as fn
from content import texts
from ui import components as ui
from ui import decoding as dec
from ui.state import require_trace, t, layer_picker, row_picker, token_picker
from viz import bars, heatmap, histogram

model, trace = require_trace()
c = model.config
B, S, H, L, I = trace.B, trace.S, c.hidden_size, c.num_hidden_layers, c.intermediate_size
nums = texts.numbers(c, model.tokenizer.vocab_size, B, S)

st.title(t("6 · MLP（SwiGLU）与 MoE：先变宽、门控、再变窄", "6 · MLP (SwiGLU) and MoE: widen, gate, narrow back"))
ui.pipeline_strip("mlp", f"mlp_norm.out [{B}, {S}, {H}]", f"mlp.out [{B}, {S}, {H}]")
ui.explanation("mlp", nums)

st.header(t("公式与代码", "Formula and code"))
ui.formula_and_code([r"\mathrm{MLP}(x) = W_{down}\big(\mathrm{silu}(W_{gate}x) \odot W_{up}x\big),\quad \mathrm{silu}(z) = z\,\sigma(z)",
                     r"W_{gate}, W_{up} \in \mathbb{R}^{%d\times %d},\quad W_{down}\in\mathbb{R}^{%d\times %d}" % (I, H, H, I)],
                    fn.swiglu)

st.header(t("实时张量", "Live tensors"))
cols = st.columns(3)
with cols[0]:
    i = layer_picker(L)
with cols[1]:
    b = row_picker(B)
n = trace.lengths[b]
with cols[2]:
    s = token_picker(n, default=n - 1)
labels = ui.token_labels(model, trace, b)
tok = dec.short(labels[s], 12)

dense = f"layers.{i}.mlp.gate" in trace
if not dense:
    st.info(t(f"第 {i} 层是 MoE 层：没有单一的 gate/up，而是路由到专家；见下方 MoE 部分。",
              f"Layer {i} is a MoE layer: there is no single gate/up, tokens are routed to experts; see the MoE section below."))
else:
    gate, up, act = (trace.layer(i, f"mlp.{p}") for p in ("gate", "up", "act"))   # (B, S, I)
    g, u, a = gate[b, s].float(), up[b, s].float(), act[b, s].float()
    st.subheader(t(f"token “{tok}” 的 {I} 个中间神经元", f"The {I} hidden neurons of token “{tok}”"))
    c1, c2 = st.columns(2)
    with c1:
        ui.tensor_view(f"layers.{i}.mlp.gate / up", gate,
                       histogram({"gate = W_gate·x": g, "up = W_up·x": u},
                                 title=t("gate 与 up 的分布", "gate and up distributions"),
                                 xlabel=t("数值", "value"), ylabel=t("神经元个数", "neurons")), key="mlp-gu")
    with c2:
        ui.tensor_view(f"layers.{i}.mlp.act", act,
                       histogram({"silu(gate)·up": a}, title=t("激活 silu(gate)·up 的分布", "activation silu(gate)·up"),
                                 xlabel=t("数值", "value"), ylabel=t("神经元个数", "neurons")), key="mlp-act")

    thr = st.select_slider(t("“接近 0”的阈值 |act| <", "“near zero” threshold |act| <"),
                           options=[0.001, 0.01, 0.05, 0.1, 0.5], value=0.01)
    row_act = act[b, :n].float().abs()                                      # (n, I)
    sparsity = (row_act < thr).float().mean(-1)                             # (n,)
    m1, m2, m3 = st.columns(3)
    m1.metric(t(f"token “{tok}” 的稀疏度", f"sparsity of “{tok}”"), f"{100 * float(sparsity[s]):.1f}%")
    m2.metric(t("gate < 0 的比例（silu 几乎关掉）", "share with gate < 0 (silu nearly off)"), f"{100 * float((g < 0).float().mean()):.1f}%")
    m3.metric(t("最大 |act|", "max |act|"), f"{float(a.abs().max()):.3g}")
    ui.tensor_view("sparsity", sparsity,
                   bars(100 * sparsity, [dec.short(x) for x in labels],
                        title=t(f"每个 token 中 |act| < {thr} 的神经元占比 (%)", f"Share of neurons with |act| < {thr}, per token (%)"),
                        xlabel="token", ylabel="%", text_fmt=".1f"), key="mlp-sparsity")

    c1, c2 = st.columns(2)
    with c1:
        ui.tensor_view(f"layers.{i}.mlp.gate[{b}, {s}]", gate[b, s],
                       dec.silu_curve(g, title=t(f"silu 曲线，点 = “{tok}” 的 {I} 个 gate 值", f"silu, dots = the {I} gate values of “{tok}”"),
                                      xlabel="z = gate", ylabel="silu(z)"), key="mlp-silu",
                       caption=t("负的 gate 被压到接近 0（最小约 −0.28），正的几乎原样通过：这就是“门”。",
                                 "Negative gates are squashed towards 0 (minimum about −0.28), positive ones pass almost unchanged: the gate."))
    with c2:
        k = 20
        top = a.abs().topk(min(k, I))
        ui.tensor_view(f"layers.{i}.mlp.act[{b}, {s}] top-{k}", a[top.indices],
                       bars(a[top.indices], [f"#{j}" for j in top.indices.tolist()],
                            title=t(f"“{tok}” 最活跃的 {k} 个神经元", f"The {k} most active neurons of “{tok}”"),
                            xlabel=t("神经元编号", "neuron index"), ylabel="silu(gate)·up", text_fmt=".1f").update_xaxes(tickangle=-45),
                       key="mlp-top")

    st.header(t("与 PyTorch 对照", "Check against PyTorch"))
    x = trace.layer(i, "mlp_norm.out")[b, s].float()                     # token s: three matrix-vector products
    p = f"model.layers.{i}.mlp."
    wg, wu, wd = (model.w(p + f"{m}_proj.weight").float().cpu() for m in ("gate", "up", "down"))
    ref_act = F.silu(x @ wg.T) * (x @ wu.T)
    ui.check(t(f"fn.swiglu 的 act vs F.silu(x W_gateᵀ) · (x W_upᵀ)（token {s}）",
               f"fn.swiglu act vs F.silu(x W_gateᵀ) · (x W_upᵀ) (token {s})"), a, ref_act, tol=1e-4)
    ui.check(t(f"fn.swiglu 的输出 mlp.out vs F.linear(act, W_down)（token {s}）",
               f"fn.swiglu output mlp.out vs F.linear(act, W_down) (token {s})"),
             trace.layer(i, "mlp.out")[b, s], F.linear(ref_act, wd), tol=1e-4)

# ---- MoE -----------------------------------------------------------------------------------------
st.header(t("MoE：混合专家", "MoE: mixture of experts"))
ui.explanation("moe", nums)
loaded_moe = c.is_moe
st.warning(t("纠正常见说法：**Qwen2.5-32B 是稠密（dense）模型，不是 MoE**，没有“32 个专家、每次激活 2–3 个”这回事；所有开源 Qwen2.5 模型都是稠密的。"
             + ("" if loaded_moe else f"当前加载的 {c.name or c.model_type} 也是稠密模型：每个 token 都走同一个 SwiGLU MLP。"),
             "A correction: **Qwen2.5-32B is DENSE, not MoE**; there are no “32 experts with 2-3 active”. All open Qwen2.5 models are dense."
             + ("" if loaded_moe else f" The loaded {c.name or c.model_type} is dense too: every token runs the same SwiGLU MLP.")))

refs = costs.reference_configs()
rows = []
for name in ("Qwen1.5-MoE-A2.7B", "Qwen2-57B-A14B", "Qwen3-30B-A3B", "Qwen2.5-32B-Instruct"):
    if name not in refs:
        continue
    r = refs[name]
    rows.append({t("模型", "model"): name, t("专家数 E", "experts E"): r.num_experts if r.is_moe else t("无（稠密）", "none (dense)"),
                 "top-k": r.num_experts_per_tok if r.is_moe else "—",
                 t("专家宽度", "expert width"): r.moe_intermediate_size if r.is_moe else f"{r.intermediate_size} (MLP)",
                 t("共享专家", "shared expert"): (r.shared_expert_intermediate_size or t("无", "none")) if r.is_moe else "—",
                 "norm_topk_prob": r.norm_topk_prob if r.is_moe else "—",
                 t("总参数", "total params"): ui.human(costs.total_params(r)),
                 t("每 token 激活参数", "active per token"): ui.human(costs.active_params(r))})
rows = [{key: str(v) for key, v in r.items()} for r in rows]          # one type per column for Arrow
st.dataframe(rows, hide_index=True, width="stretch")

mt, mmodel, real = dec.moe_trace(trace, model)
mc = mmodel.config
moe_layers = [j for j in range(mc.num_hidden_layers) if mt.has_moe(j)]
if real:
    st.success(t(f"当前模型是 MoE：下面是真实路由（{mc.num_experts} 个专家，每个 token 选 {mc.num_experts_per_tok} 个）。",
                 f"The loaded model is MoE: below is its real routing ({mc.num_experts} experts, top-{mc.num_experts_per_tok})."))
else:
    st.error(t(f"⚠️ 以下是**随机权重**的微型 MoE（{mc.num_experts} 个专家，top-{mc.num_experts_per_tok}，隐藏维度 {mc.hidden_size}），"
               "只用来演示机制；路由结果没有任何语义。输入是你的 token 编号对其词表取模。",
               f"⚠️ Below is a tiny MoE with **random weights, for showing the mechanism only** ({mc.num_experts} experts, "
               f"top-{mc.num_experts_per_tok}, hidden {mc.hidden_size}); its routing means nothing. "
               "Its input is your token ids modulo its vocabulary."))
j = i if i in moe_layers else moe_layers[0]
if len(moe_layers) > 1 and not real:
    j = st.radio(t("微型 MoE 的层", "tiny MoE layer"), moe_layers, horizontal=True, key="moe_layer")
probs = mt.layer(j, "moe.router_probs")                    # (B, S, E)
idx, wts = mt.layer(j, "moe.topk_idx"), mt.layer(j, "moe.topk_weight")
E, k = probs.shape[-1], idx.shape[-1]
tl = [dec.short(x) for x in labels]
ui.tensor_view(f"layers.{j}.moe.router_probs", probs,
               heatmap(probs[b, :n], x=[f"E{e}" for e in range(E)], y=tl, colorscale="Blues", zmid=None, zmin=0,
                       title=t(f"路由概率 softmax(W_r x)，第 {j} 层 [S, E]", f"Router probabilities softmax(W_r x), layer {j} [S, E]"),
                       xlabel=t("专家", "expert"), ylabel="token", text_fmt=".2f" if n * E <= 400 else None,
                       height=max(360, 40 * n + 140)), key="moe-probs")
c1, c2 = st.columns(2)
with c1:
    st.markdown(f"**`layers.{j}.moe.topk_idx / topk_weight`** {t('形状', 'shape')} `{ui.shape_str(idx.shape)}`")
    col_pos, col_exp, col_w = t("位置", "pos"), t("选中的专家", "experts chosen"), t("权重", "weights")
    st.dataframe([{col_pos: q, "token": labels[q], col_exp: ", ".join(f"E{e}" for e in ex),
                   col_w: ", ".join(f"{w:.3f}" for w in ws)}
                  for q, (ex, ws) in enumerate(zip(idx[b, :n].tolist(), wts[b, :n].float().tolist()))],
                 hide_index=True, width="stretch")
with c2:
    load = torch.bincount(idx[b, :n].reshape(-1), minlength=E).float()
    ui.tensor_view(t("专家负载", "expert load"), load,
                   bars(load, [f"E{e}" for e in range(E)], title=t("每个专家接到多少个 token", "Tokens sent to each expert"),
                        xlabel=t("专家", "expert"), ylabel=t("token 数", "tokens"), text_fmt=".0f"), key="moe-load")
st.caption(t(f"每个 token 只算 {k} 个专家：专家部分的计算量约为全部专家的 {k}/{E}；但所有专家的权重都必须放在显存里。",
             f"Each token runs only {k} experts: about {k}/{E} of the experts' compute; but every expert's weights must sit in memory."))

ui.at_scale("mlp", B, S)
