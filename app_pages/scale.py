"""Scale: parameters, FLOPs, memory and the roofline of a Qwen2-family config at the user's B, S (ops/arith/costs.py)."""
import streamlit as st

from content import costs_text, texts
from content.scale import say
from ops.arith import costs
from ops.arith.costs import human
from ui import blocks, config_compare, placement
from ui.page import StagePage
from ui.session import frozen, lang, t
from ui.state import get_model, get_trace
from viz import scale as vs

LOADED = "__loaded__"           # the selectbox value that stands for the model in the sidebar
GPU_ORDER = ["RTX 4090 24GB", "A100 80GB", "H200 141GB"]
PRECISIONS = [("bf16", 16), ("int8", 8), ("int4", 4)]

page = StagePage("scale", trace=False)
model = get_model()
trace = get_trace(model) if model else None
page.attach(model, trace)          # figures below are kept with the trace (page.memo)
refs = costs.reference_configs()
loaded_name = (model.config.name or model.config.model_type) if model is not None else ""
label = lambda v: (f"{loaded_name} " + t("（已加载）", "(loaded)")) if v == LOADED else v
ss = st.session_state
ss.setdefault("scale_B", int(trace.B) if trace is not None else 1)
ss.setdefault("scale_S", int(trace.S) if trace is not None else 1024)

# ---- what to measure, then the main picture: where prefill and decode sit on the GPU's roofline ------------
cols = st.columns([3, 1, 1, 2])
configs = ([LOADED] if model else []) + list(refs)
choice = cols[0].selectbox(t("模型配置", "Model config"), configs, key="scale_cfg", format_func=frozen(label, configs))
B = int(cols[1].number_input(t("批大小 B", "batch B"), min_value=1, max_value=256, step=1, key="scale_B"))
S = int(cols[2].number_input(t("序列长度 S", "sequence S"), min_value=1, max_value=131072, step=1, key="scale_S"))
gpu = cols[3].selectbox("GPU", GPU_ORDER, index=GPU_ORDER.index("H200 141GB"), key="scale_gpu")
c, name, T, g = model.config if choice == LOADED else refs[choice], label(choice), B * S, costs.GPUS[gpu]
names = {"prefill": t("预填充", "prefill"), "decode": t("解码一步", "decode step")}
bound_word = {"compute": t("算力受限（compute-bound）", "compute-bound"), "memory": t("带宽受限（memory-bound）", "memory-bound")}
rl = page.memo(("roofline", choice, B, S, gpu),
               lambda: {ph: costs.roofline(c, B, S, ph, gpu=gpu) for ph in ("prefill", "decode")})
p, d, ridge = rl["prefill"], rl["decode"], rl["prefill"]["ridge"]
page.chart(page.memo(("roofline-fig", choice, B, S, gpu), lambda: vs.roofline(
    rl, g, names, t(f"{name} 在 {gpu} 上（B = {B}, S = {S:,}）", f"{name} on {gpu} (B = {B}, S = {S:,})"), lang())), "roofline")
st.markdown(t(
    f"#### 预填充的强度是 {p['intensity']:,.1f} FLOP/字节，{'高于' if p['intensity'] >= ridge else '低于'}拐点 {ridge:,.0f}，是 **{bound_word[p['bound']]}**："
    f"约 {p['time_s'] * 1e3:,.2f} ms。解码一步只有 {d['intensity']:,.1f} FLOP/字节，是 **{bound_word[d['bound']]}**："
    f"约 {d['time_s'] * 1e3:,.2f} ms / 步（每行每秒约 {1 / d['time_s']:,.0f} 个 token）。",
    f"#### Prefill runs at {p['intensity']:,.1f} FLOP/byte, {'above' if p['intensity'] >= ridge else 'below'} the ridge at {ridge:,.0f}: "
    f"**{bound_word[p['bound']]}**, about {p['time_s'] * 1e3:,.2f} ms. One decode step runs at only {d['intensity']:,.1f} FLOP/byte: "
    f"**{bound_word[d['bound']]}**, about {d['time_s'] * 1e3:,.2f} ms per step (≈ {1 / d['time_s']:,.0f} tokens/s per row)."))
cross = costs.prefill_crossover(c, B, gpu) if p["bound"] == "memory" else None
if cross:
    st.caption(t(f"提示：S 这么短时预填充也受带宽限制；B = {B} 时 S ≥ {cross:,} 左右预填充就越过拐点，变成算力受限。把上面的 S 调大试试。",
                 f"Hint: with S this short even prefill is memory-bound; at B = {B} it crosses the ridge and becomes "
                 f"compute-bound from about S = {cross:,}. Raise S above to see it."))
st.caption(say("intro", lang(), start=say("start", lang(), B=trace.B, S=trace.S) if trace is not None else ""))
total, active = costs.total_params(c), costs.active_params(c)
page.metrics([(t("总参数", "total parameters"), human(total)),
         (t("每个 token 激活的参数", "active per token"), human(active)),
         (t("权重 (bf16)", "weights (bf16)"), f"{costs.weight_bytes(c, 16) / 1e9:.1f} GB"),
         (t("KV cache / token", "KV cache / token"), human(costs.kv_cache_bytes(c, 1), "B")),
         (t(f"KV cache（B·S = {T:,}）", f"KV cache (B·S = {T:,})"), human(costs.kv_cache_bytes(c, T), "B"))])

# ---- parameters ----------------------------------------------------------------------------------------
st.header(t("参数量：按算子", "Parameters per operator"))
if choice == LOADED:
    real = model.num_parameters
    (st.success if real == total else st.error)(t(
        f"实时核对：costs.total_params(config) = {total:,} {'=' if real == total else '≠'} model.num_parameters（逐个数真实权重）= {real:,} {'✓' if real == total else '✗'}",
        f"Live check: costs.total_params(config) = {total:,} {'=' if real == total else '≠'} model.num_parameters (counting the real "
        f"weight tensors) = {real:,} {'✓' if real == total else '✗'}"))
    if not c.tie_word_embeddings:
        st.caption(texts.model_sentence(model, "tie_sentence", lang()))
ptable = page.memo(("params", choice), lambda: costs.param_table(c))
blocks.table([{t("算子", "operator"): costs_text.operator(r["operator"], lang()),
        t("权重张量", "tensors"): ", ".join(n.replace("model.layers.{i}.", "") for n in r["tensors"]),
               t("形状", "shapes"): " · ".join(str(s) for s in r["shapes"]),
               t("每层", "per layer"): f"{r['per_layer']:,}", t("层数", "layers"): r["layers"],
               t("参数", "params"): f"{r['params']:,}", t("占比", "share"): f"{100 * r['params'] / total:.1f}%"}
              for r in ptable])
st.markdown(t(f"### 合计 {total:,} 个参数（{human(total)}）", f"### Total: {total:,} parameters ({human(total)})"))
page.chart(page.memo(("params-fig", choice), lambda: vs.param_bars(
    ptable, t(f"{name}：各算子参数量（百万）", f"{name}: parameters per operator (millions)"),
    t("参数量（百万）", "parameters (millions)"), t("算子", "operator"))), "params-bars")
st.caption(say("bars", lang()))

st.subheader(t("稠密 vs MoE：总参数与激活参数", "Dense vs MoE: total and active parameters"))
blocks.table([{t("模型", "model"): k, t("类型", "kind"): f"MoE ({rc.num_experts} × top-{rc.num_experts_per_tok})" if rc.is_moe else t("稠密", "dense"),
               t("总参数", "total params"): f"{costs.total_params(rc):,}", t("每 token 激活", "active per token"): f"{costs.active_params(rc):,}",
               t("激活占比", "active share"): f"{100 * costs.active_params(rc) / costs.total_params(rc):.0f}%"}
              for k, rc in refs.items()])
st.info(say("dense", lang()))

# ---- FLOPs ---------------------------------------------------------------------------------------------
st.header(t("FLOPs：预填充与一步解码", "FLOPs: prefill and one decode step"))
st.markdown(t(
    f"**预填充**一次处理 B·S = {T:,} 个 token，每个查询看 S = {S:,} 个键；**解码一步**每行只算 1 个新 token（共 B = {B}），"
    f"它要看缓存里的 S 个 token 加上自己（{S + 1:,} 个键）。矩阵乘 [m, k]·[k, n] 记 2·m·n·k。",
    f"**Prefill** processes B·S = {T:,} tokens, each query seeing S = {S:,} keys; **one decode step** computes one new "
    f"token per row (B = {B} in all), each seeing the S cached tokens plus itself ({S + 1:,} keys). A matmul "
    "[m, k]·[k, n] counts 2·m·n·k."))
fl = {ph: costs.flops(c, B, S, ph) for ph in ("prefill", "decode")}
tot = {ph: sum(r["flops"] for r in rows) for ph, rows in fl.items()}
page.metrics([(t("预填充 FLOPs", "prefill FLOPs"), human(tot["prefill"], "FLOP")),
         (t("解码一步 FLOPs", "decode-step FLOPs"), human(tot["decode"], "FLOP")),
         (t("≈ 2 × 激活参数 × 预填充 token", "≈ 2 × active params × prefill tokens"), human(2 * active * T, "FLOP")),
         (t("≈ 2 × 激活参数 × B", "≈ 2 × active params × B"), human(2 * active * B, "FLOP"))])
tabs = page.tabs([t("预填充（逐算子）", "Prefill (per operator)"), t("解码一步（逐算子）", "One decode step (per operator)")], "flops")
for tab, ph in ((tab, ph) for tab, ph in zip(tabs, fl) if tab):     # only the open tab is drawn
    with tab:
        blocks.table([{t("算子", "operator"): costs_text.operator(r["operator"], lang()),
                t("公式", "formula"): costs_text.formula(r["formula"], lang()),
                t("每层", "per layer"): human(r["per_layer"], "FLOP"), t("层数", "layers"): r["layers"],
                "FLOPs": f"{r['flops']:,}", t("占比", "share"): f"{100 * r['flops'] / tot[ph]:.1f}%"} for r in fl[ph]])
        st.markdown(t(f"**合计：{tot[ph]:,} FLOPs（{human(tot[ph], 'FLOP')}）**", f"**Total: {tot[ph]:,} FLOPs ({human(tot[ph], 'FLOP')})**"))
st.caption(say("flops", lang()))

# ---- memory --------------------------------------------------------------------------------------------
st.header(t("显存：权重 + KV cache", "Memory: weights + KV cache"))
kv_tok, kv_all = costs.kv_cache_bytes(c, 1), costs.kv_cache_bytes(c, T)
dims = f"L {c.num_hidden_layers} × nkv {c.num_key_value_heads} × hd {c.head_dim}"
st.markdown(t(f"每个 token 的 KV cache = 2 (K 和 V) × {dims} × 2 字节 (bf16) = **{kv_tok:,} 字节（{human(kv_tok, 'B')}）**；"
              f"B·S = {T:,} 个 token 共 **{human(kv_all, 'B')}**（{kv_all / 1e9:.2f} GB）。",
              f"KV cache per token = 2 (K and V) × {dims} × 2 bytes (bf16) = **{kv_tok:,} bytes ({human(kv_tok, 'B')})**; "
              f"for B·S = {T:,} tokens **{human(kv_all, 'B')}** ({kv_all / 1e9:.2f} GB)."))
page.metrics([(t(f"权重 {lab}", f"weights {lab}"), f"{costs.weight_bytes(c, bits) / 1e9:.1f} GB") for lab, bits in PRECISIONS])
fit = lambda gb, bits: costs.fits(c, B, S, gb, bits=bits)
blocks.table([{"GPU": k, **{t(f"权重 {lab}", f"weights {lab}"): f"{'✓' if fit(gb, bits)['fits'] else '✗'}  {fit(gb, bits)['total'] / 1e9:,.1f} / {gb} GB"
                            for lab, bits in PRECISIONS},
               t("bf16 时可缓存的 token 数", "tokens of KV cache that fit (bf16)"): f"{costs.max_tokens_in_cache(c, gb):,}"}
              for k, gb in ((k, costs.GPUS[k]["mem_gb"]) for k in GPU_ORDER)])
st.caption(say("fit", lang()))

# ---- the roofline in numbers ---------------------------------------------------------------------------
st.header(t("屋顶线：预填充 vs 解码", "Roofline: prefill vs decode"))
blocks.table([{t("阶段", "phase"): names[ph], "FLOPs": human(r["flops"], "FLOP"), t("读写字节", "bytes moved"): human(r["bytes"], "B"),
               t("强度 FLOP/B", "intensity FLOP/B"): f"{r['intensity']:,.1f}",
               t("算力时间", "compute time"): f"{r['t_compute_s'] * 1e3:,.3f} ms", t("访存时间", "memory time"): f"{r['t_memory_s'] * 1e3:,.3f} ms",
               t("下界时间", "lower-bound time"): f"{r['time_s'] * 1e3:,.3f} ms", t("受限于", "bound"): bound_word[r["bound"]]}
              for ph, r in rl.items()])
st.caption(say("time", lang(), note=costs_text.gpu_note(gpu, g, lang())))
if not costs.fits(c, B, S, g["mem_gb"])["fits"]:
    st.warning(say("too_big", lang(), B=B, S=f"{S:,}", gpu=gpu))

# folded: its first plan builds the model on the meta device, which imports transformers' model code (seconds)
if box := page.more("放不下一张卡：把层分到几张 GPU 上", "Too big for one GPU: layers placed on several", "placement"):
    with box:
        placement.section(c, name, gpu, g["mem_gb"], S, B)
config_compare.fold(page.more("两个配置并排：差在哪里（不加载权重）", "Two configs side by side, without loading weights", "configs"),
                    refs, name, c)
