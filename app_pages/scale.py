"""Scale: parameters, FLOPs, memory and the roofline of any Qwen2-family config at the user's B and S."""
import math

import plotly.graph_objects as go
import streamlit as st

from ops import costs
from ui.components import human as si
from ui.state import get_model, get_trace, t
from viz import bars
from viz.figures import FONT

LOADED = "__loaded__"           # the selectbox value that stands for the model in the sidebar
GPU_ORDER = ["RTX 4090 24GB", "A100 80GB", "H200 141GB"]
PRECISIONS = [("bf16", 16), ("int8", 8), ("int4", 4)]

st.title(t("规模：参数、FLOPs、显存与屋顶线", "Scale: parameters, FLOPs, memory and the roofline"))
st.markdown(t(
    "同一套算子，换一个 config 就是另一个模型。本页只用 config 计算（ops/costs.py），对已加载的模型还与真实权重逐个计数对照。",
    "The same operators with a different config make a different model. This page computes everything from the "
    "config alone (ops/costs.py); for the loaded model it also counts the real weights and compares."))

model = get_model()
trace = get_trace(model) if model else None
refs = costs.reference_configs()

# ---- what to measure ---------------------------------------------------------------------------
options = ([LOADED] if model is not None else []) + list(refs)
loaded_name = (model.config.name or model.config.model_type) if model is not None else ""


def _label(v):
    return f"{loaded_name} (loaded · 已加载)" if v == LOADED else v


if "scale_B" not in st.session_state:
    st.session_state.scale_B = int(trace.B) if trace is not None else 1
if "scale_S" not in st.session_state:
    st.session_state.scale_S = int(trace.S) if trace is not None else 1024
cols = st.columns([3, 1, 1])
choice = cols[0].selectbox(t("模型配置", "Model config"), options, key="scale_cfg", format_func=_label)
B = int(cols[1].number_input(t("批大小 B", "batch B"), min_value=1, max_value=256, step=1, key="scale_B"))
S = int(cols[2].number_input(t("序列长度 S", "sequence S"), min_value=1, max_value=131072, step=1, key="scale_S"))
c = model.config if choice == LOADED else refs[choice]
name = _label(choice)
T = B * S
st.caption(t(
    f"B、S 的初值取自当前提示词的 trace（B = {trace.B}, S = {trace.S}）。" if trace is not None else "",
    f"B and S start from your prompts' trace (B = {trace.B}, S = {trace.S}). " if trace is not None else "")
    + t("参考配置来自各模型官方 config.json（assets/configs/）；GPU 数字是厂商公开的规格表数值，不是本机实测。",
        "Reference configs are the models' published config.json files (assets/configs/); GPU figures are "
        "vendors' published spec-sheet numbers, not measured here."))

total = costs.total_params(c)
active = costs.active_params(c)
m = st.columns(5)
m[0].metric(t("总参数", "total parameters"), costs.human(total))
m[1].metric(t("每个 token 激活的参数", "active per token"), costs.human(active))
m[2].metric(t("权重 (bf16)", "weights (bf16)"), f"{costs.weight_bytes(c, 16) / 1e9:.1f} GB")
m[3].metric(t("KV cache / token", "KV cache / token"), costs.human(costs.kv_cache_bytes(c, 1), "B"))
m[4].metric(t(f"KV cache（B·S = {T:,}）", f"KV cache (B·S = {T:,})"), costs.human(costs.kv_cache_bytes(c, T), "B"))

# ---- parameters ----------------------------------------------------------------------------------
st.header(t("参数量：按算子", "Parameters per operator"))
if choice == LOADED:
    real = model.num_parameters
    if real == total:
        st.success(t(f"实时核对：costs.total_params(config) = {total:,} = model.num_parameters（逐个数真实权重）= {real:,} ✓",
                     f"Live check: costs.total_params(config) = {total:,} = model.num_parameters (counting the real "
                     f"weight tensors) = {real:,} ✓"))
    else:
        st.error(t(f"实时核对不一致：costs.total_params = {total:,}，model.num_parameters = {real:,} ✗",
                   f"Live check mismatch: costs.total_params = {total:,}, model.num_parameters = {real:,} ✗"))
    if not c.tie_word_embeddings:
        st.caption(t(f"这个模型的 LM head 不与嵌入共享权重（tie_word_embeddings = false），所以多出 V×H = {c.vocab_size * c.hidden_size:,} 个参数；"
                     "内置 GGUF 单独存了 output.weight，而官方 Qwen2.5-0.5B 是共享的（494,032,768 个）。",
                     f"This model's LM head is not tied to the embedding (tie_word_embeddings = false): V×H = "
                     f"{c.vocab_size * c.hidden_size:,} more parameters. The bundled GGUF stores its own output.weight; "
                     "the published Qwen2.5-0.5B ties them (494,032,768)."))

ptable = costs.param_table(c)
st.dataframe([{t("算子", "operator"): r["operator"],
               t("权重张量", "tensors"): ", ".join(n.replace("model.layers.{i}.", "") for n in r["tensors"]),
               t("形状", "shapes"): " · ".join(str(s) for s in r["shapes"]),
               t("每层", "per layer"): f"{r['per_layer']:,}", t("层数", "layers"): r["layers"],
               t("参数", "params"): f"{r['params']:,}", t("占比", "share"): f"{100 * r['params'] / total:.1f}%"}
              for r in ptable], hide_index=True, width="stretch")
st.markdown(t(f"### 合计 {total:,} 个参数（{costs.human(total)}）", f"### Total: {total:,} parameters ({costs.human(total)})"))
shown = [r for r in ptable if r["params"] > 0]
st.plotly_chart(bars([r["params"] / 1e6 for r in shown], [r["operator"] for r in shown], horizontal=True,
                     title=t(f"{name}：各算子参数量（百万）", f"{name}: parameters per operator (millions)"),
                     xlabel=t("参数量（百万）", "parameters (millions)"), ylabel=t("算子", "operator"),
                     height=120 + 48 * len(shown), text_fmt=",.1f"),
                width="stretch", key="params-bars", theme=None)
st.caption(t("注意力与 MLP 按所有层求和；RMSNorm 的参数极少，几乎看不见。",
             "Attention and MLP rows are summed over all layers; the RMSNorm weights are too few to see."))

st.subheader(t("稠密 vs MoE：总参数与激活参数", "Dense vs MoE: total and active parameters"))
moe_rows = []
for label, rc in refs.items():
    moe_rows.append({t("模型", "model"): label, t("类型", "kind"): f"MoE ({rc.num_experts} × top-{rc.num_experts_per_tok})" if rc.is_moe else t("稠密", "dense"),
                     t("总参数", "total params"): f"{costs.total_params(rc):,}",
                     t("每 token 激活", "active per token"): f"{costs.active_params(rc):,}",
                     t("激活占比", "active share"): f"{100 * costs.active_params(rc) / costs.total_params(rc):.0f}%"})
st.dataframe(moe_rows, hide_index=True, width="stretch")
st.info(t("Qwen2.5-32B 是**稠密**模型：每个 token 都走同一个 SwiGLU MLP，32.8B 参数全部参与（激活 = 总数）。"
          "所有开源 Qwen2.5 都是稠密的；MoE 的是 Qwen1.5-MoE-A2.7B、Qwen2-57B-A14B、Qwen3-30B-A3B——它们的名字里就写着激活参数量。",
          "Qwen2.5-32B is **dense**: every token runs the same SwiGLU MLP, so all 32.8B parameters are active. "
          "Every open Qwen2.5 model is dense; the MoE Qwen models are Qwen1.5-MoE-A2.7B, Qwen2-57B-A14B and "
          "Qwen3-30B-A3B, whose names carry their active parameter count."))

# ---- FLOPs ---------------------------------------------------------------------------------------
st.header(t("FLOPs：预填充与一步解码", "FLOPs: prefill and one decode step"))
st.markdown(t(
    f"**预填充**一次处理 B·S = {T:,} 个 token，每个查询看 S = {S:,} 个键；**解码一步**每行只算 1 个新 token（共 B = {B}），"
    f"它要看缓存里的 S 个 token 加上自己（{S + 1:,} 个键）。矩阵乘 [m, k]·[k, n] 记 2·m·n·k。",
    f"**Prefill** processes B·S = {T:,} tokens, each query seeing S = {S:,} keys; **one decode step** computes one new "
    f"token per row (B = {B} in all), each seeing the S cached tokens plus itself ({S + 1:,} keys). A matmul "
    "[m, k]·[k, n] counts 2·m·n·k."))
fl = {ph: costs.flops(c, B, S, ph) for ph in ("prefill", "decode")}
tot = {ph: sum(r["flops"] for r in rows) for ph, rows in fl.items()}
mc = st.columns(4)
mc[0].metric(t("预填充 FLOPs", "prefill FLOPs"), si(tot["prefill"], "FLOP"))
mc[1].metric(t("解码一步 FLOPs", "decode-step FLOPs"), si(tot["decode"], "FLOP"))
mc[2].metric(t("≈ 2 × 激活参数 × 预填充 token", "≈ 2 × active params × prefill tokens"), si(2 * active * T, "FLOP"))
mc[3].metric(t("≈ 2 × 激活参数 × B", "≈ 2 × active params × B"), si(2 * active * B, "FLOP"))
ftabs = st.tabs([t("预填充（逐算子）", "Prefill (per operator)"), t("解码一步（逐算子）", "One decode step (per operator)")])
for tab, ph in zip(ftabs, ("prefill", "decode")):
    with tab:
        st.dataframe([{t("算子", "operator"): r["operator"], t("公式", "formula"): r["formula"],
                       t("每层", "per layer"): si(r["per_layer"], "FLOP"), t("层数", "layers"): r["layers"],
                       "FLOPs": f"{r['flops']:,}", t("占比", "share"): f"{100 * r['flops'] / tot[ph]:.1f}%"}
                      for r in fl[ph]], hide_index=True, width="stretch")
        st.markdown(t(f"**合计：{tot[ph]:,} FLOPs（{si(tot[ph], 'FLOP')}）**", f"**Total: {tot[ph]:,} FLOPs ({si(tot[ph], 'FLOP')})**"))
st.caption(t("预填充的注意力按完整 S×S 分数矩阵计数（与本实验室的 eager 实现一致，上三角被掩码）；FlashAttention 一类因果内核约省一半。"
             "预填充对全部 S 个位置算 logits（与 trace 一致），服务端通常只算最后一个位置。经验公式 2·N·T 忽略了注意力的 S² 项。",
             "Prefill attention is counted over the full S×S score matrix, as this lab's eager path computes it (the upper "
             "triangle is masked); a causal kernel such as FlashAttention skips about half. Prefill computes logits for all "
             "S positions, as the trace does; a server usually keeps only the last. The 2·N·T rule of thumb leaves out "
             "attention's S² terms."))

# ---- memory --------------------------------------------------------------------------------------
st.header(t("显存：权重 + KV cache", "Memory: weights + KV cache"))
kv_tok, kv_all = costs.kv_cache_bytes(c, 1), costs.kv_cache_bytes(c, T)
st.markdown(t(
    f"每个 token 的 KV cache = 2 (K 和 V) × L {c.num_hidden_layers} × nkv {c.num_key_value_heads} × hd {c.head_dim} × 2 字节 (bf16) "
    f"= **{kv_tok:,} 字节（{costs.human(kv_tok, 'B')}）**；B·S = {T:,} 个 token 共 **{costs.human(kv_all, 'B')}**（{kv_all / 1e9:.2f} GB）。",
    f"KV cache per token = 2 (K and V) × L {c.num_hidden_layers} × nkv {c.num_key_value_heads} × hd {c.head_dim} × 2 bytes (bf16) "
    f"= **{kv_tok:,} bytes ({costs.human(kv_tok, 'B')})**; for B·S = {T:,} tokens **{costs.human(kv_all, 'B')}** ({kv_all / 1e9:.2f} GB)."))
wc = st.columns(3)
for col, (lab, bits) in zip(wc, PRECISIONS):
    col.metric(t(f"权重 {lab}", f"weights {lab}"), f"{costs.weight_bytes(c, bits) / 1e9:.1f} GB")
fit_rows = []
for gpu in GPU_ORDER:
    gb = costs.GPUS[gpu]["mem_gb"]
    row = {"GPU": gpu}
    for lab, bits in PRECISIONS:
        f = costs.fits(c, B, S, gb, bits=bits)
        row[t(f"权重 {lab}", f"weights {lab}")] = f"{'✓' if f['fits'] else '✗'}  {f['total'] / 1e9:,.1f} / {gb} GB"
    row[t("bf16 时可缓存的 token 数", "tokens of KV cache that fit (bf16)")] = f"{costs.max_tokens_in_cache(c, gb):,}"
    fit_rows.append(row)
st.dataframe(fit_rows, hide_index=True, width="stretch")
st.caption(t("每格：✓/✗ 与 所需总量 = 权重 + B·S 个 token 的 KV cache（KV 按 bf16）/ 显存（1 GB = 10⁹ 字节）。"
             "不含激活、CUDA 上下文与碎片，实际还要留出几 GB；int8/int4 的量化 scale 未计入。",
             "Each cell: ✓/✗ and total needed = weights + KV cache for B·S tokens (KV in bf16) / GPU memory (1 GB = 10⁹ bytes). "
             "Activations, the CUDA context and fragmentation are not counted, so leave a few GB; int8/int4 scales are not counted."))

# ---- roofline ------------------------------------------------------------------------------------
st.header(t("屋顶线：预填充 vs 解码", "Roofline: prefill vs decode"))
gpu = st.selectbox("GPU", GPU_ORDER, index=GPU_ORDER.index("H200 141GB"), key="scale_gpu")
g = costs.GPUS[gpu]
peak, bw = g["tflops_bf16"] * 1e12, g["tb_per_s"] * 1e12
rl = {ph: costs.roofline(c, B, S, ph, gpu=gpu) for ph in ("prefill", "decode")}
ridge = peak / bw
xs = [10 ** (e / 20) for e in range(-40, 101)]           # 0.01 .. 1e5 FLOP/byte
fig = go.Figure()
fig.add_trace(go.Scatter(x=xs, y=[min(peak, bw * x) / 1e12 for x in xs], mode="lines", line=dict(width=4, color="#444"),
                         name=t("可达性能上限", "attainable peak"),
                         hovertemplate="%{x:.3g} FLOP/B → %{y:.4g} TFLOP/s<extra></extra>"))
colors = {"prefill": "#d62728", "decode": "#1f77b4"}
names = {"prefill": t("预填充", "prefill"), "decode": t("解码一步", "decode step")}
for ph, r in rl.items():
    y = min(peak, bw * r["intensity"]) / 1e12
    fig.add_trace(go.Scatter(x=[r["intensity"]], y=[y], mode="markers+text", name=names[ph],
                             marker=dict(size=22, color=colors[ph], line=dict(width=2, color="white")),
                             text=[f"{names[ph]}: {r['intensity']:,.1f} FLOP/B"], textposition="bottom right",
                             textfont=dict(size=18, color=colors[ph])))
fig.add_vline(x=ridge, line_dash="dash", line_color="#888")
fig.add_annotation(x=math.log10(ridge), y=math.log10(peak / 1e12), text=t(f"拐点 {ridge:,.0f} FLOP/B<br>峰值 {g['tflops_bf16']:g} TFLOP/s",
                   f"ridge {ridge:,.0f} FLOP/B<br>peak {g['tflops_bf16']:g} TFLOP/s"), showarrow=False, yshift=-40, xshift=10,
                   xanchor="left", font=dict(size=18, color="#444"))
fig.add_annotation(x=-0.6, y=math.log10(bw * 10 ** -0.6 / 1e12), text=t(f"带宽 {g['tb_per_s']:g} TB/s", f"bandwidth {g['tb_per_s']:g} TB/s"),
                   showarrow=False, yshift=20, xanchor="right", font=dict(size=18, color="#444"))
fig.update_xaxes(type="log", title_text=t("算术强度（FLOP / 字节，对数）", "arithmetic intensity (FLOP per byte, log)"),
                 range=[-2, 5], exponentformat="power", dtick=1, tickfont=dict(size=18))
fig.update_yaxes(type="log", title_text=t("可达算力（TFLOP/s，对数）", "attainable compute (TFLOP/s, log)"),
                 exponentformat="power", dtick=1, tickfont=dict(size=18))
fig.update_layout(title=dict(text=t(f"{name} 在 {gpu} 上（B = {B}, S = {S:,}）", f"{name} on {gpu} (B = {B}, S = {S:,})"),
                             font=dict(size=22)),
                  font=dict(FONT, size=18), height=560, margin=dict(l=80, r=30, t=70, b=70),
                  legend=dict(orientation="h", y=-0.2, font=dict(size=18)))
st.plotly_chart(fig, width="stretch", key="roofline", theme=None)

bound_word = {"compute": t("算力受限（compute-bound）", "compute-bound"), "memory": t("带宽受限（memory-bound）", "memory-bound")}
p, d = rl["prefill"], rl["decode"]
st.markdown(t(
    f"#### 预填充的强度是 {p['intensity']:,.1f} FLOP/字节，{'高于' if p['intensity'] >= ridge else '低于'}拐点 {ridge:,.0f}，是 **{bound_word[p['bound']]}**："
    f"约 {p['time_s'] * 1e3:,.2f} ms。解码一步只有 {d['intensity']:,.1f} FLOP/字节，是 **{bound_word[d['bound']]}**："
    f"约 {d['time_s'] * 1e3:,.2f} ms / 步（每行每秒约 {1 / d['time_s']:,.0f} 个 token）。",
    f"#### Prefill runs at {p['intensity']:,.1f} FLOP/byte, {'above' if p['intensity'] >= ridge else 'below'} the ridge at {ridge:,.0f}: "
    f"**{bound_word[p['bound']]}**, about {p['time_s'] * 1e3:,.2f} ms. One decode step runs at only {d['intensity']:,.1f} FLOP/byte: "
    f"**{bound_word[d['bound']]}**, about {d['time_s'] * 1e3:,.2f} ms per step (≈ {1 / d['time_s']:,.0f} tokens/s per row)."))
if p["bound"] == "memory":      # where prefill crosses the ridge, for this B
    cross = next((s2 for s2 in (2 ** k for k in range(0, 18)) if costs.roofline(c, B, s2, "prefill", gpu=gpu)["bound"] == "compute"), None)
    if cross:
        st.caption(t(f"提示：S 这么短时预填充也受带宽限制；B = {B} 时 S ≥ {cross:,} 左右预填充就越过拐点，变成算力受限。把上面的 S 调大试试。",
                     f"Hint: with S this short even prefill is memory-bound; at B = {B} it crosses the ridge and becomes "
                     f"compute-bound from about S = {cross:,}. Raise S above to see it."))
st.dataframe([{t("阶段", "phase"): names[ph], "FLOPs": si(r["flops"], "FLOP"), t("读写字节", "bytes moved"): costs.human(r["bytes"], "B"),
               t("强度 FLOP/B", "intensity FLOP/B"): f"{r['intensity']:,.1f}",
               t("算力时间", "compute time"): f"{r['t_compute_s'] * 1e3:,.3f} ms",
               t("访存时间", "memory time"): f"{r['t_memory_s'] * 1e3:,.3f} ms",
               t("下界时间", "lower-bound time"): f"{r['time_s'] * 1e3:,.3f} ms", t("受限于", "bound"): bound_word[r["bound"]]}
              for ph, r in rl.items()], hide_index=True, width="stretch")
st.caption(t("时间 = max(FLOPs / 峰值算力, 字节 / 带宽)，是理想下界；解码每一步都要把全部权重从显存读一遍，所以批越大越划算。"
             "数据来源：" + g["note"] + "（厂商公开规格，非实测）。",
             "Time = max(FLOPs / peak, bytes / bandwidth), an ideal lower bound; every decode step reads all the weights "
             "from memory once, which is why bigger batches pay off. Source: " + g["note"] + " (published spec figures, not measured)."))
if not costs.fits(c, B, S, g["mem_gb"])["fits"]:
    st.warning(t(f"注意：bf16 下这个配置在 B = {B}, S = {S:,} 时放不进一张 {gpu}；上面的时间假设放得下（或多卡均摊）。",
                 f"Note: in bf16 this config at B = {B}, S = {S:,} does not fit one {gpu}; the times above assume it does "
                 "(or that several GPUs share the work)."))
