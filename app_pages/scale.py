"""Scale: parameters, FLOPs, memory and the roofline of a config at the user's B, S (ops/arith/scale_data.py)."""
import streamlit as st

from content import costs_text, scale as words, texts, words as catalogue
from content.scale import say
from ops.arith import costs, scale_data
from ui import blocks, scale_configs, scale_placement
from ui.page import StagePage
from ui.session import lang, t
from ui.state import get_model, get_trace
from viz import scale as vs

LOADED = "__loaded__"           # the selectbox value that stands for the model in the sidebar
GPU_ORDER = list(scale_data.GPU_ORDER)

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
L = lang()

# ---- what to measure, then the main picture: where prefill and decode sit on the GPU's roofline ------------
cols = st.columns([3, 1, 1, 2])
configs = ([LOADED] if model else []) + list(refs)
choice = cols[0].selectbox(t("模型配置", "Model config"), configs, key="scale_cfg", format_func=label)
B = int(cols[1].number_input(t("批大小 B", "batch B"), min_value=1, max_value=256, step=1, key="scale_B"))
S = int(cols[2].number_input(t("序列长度 S", "sequence S"), min_value=1, max_value=131072, step=1, key="scale_S"))
gpu = cols[3].selectbox("GPU", GPU_ORDER, index=GPU_ORDER.index("H200 141GB"), key="scale_gpu")
c, name, g = model.config if choice == LOADED else refs[choice], label(choice), costs.GPUS[gpu]
v = page.memo(("view", choice, B, S, gpu), lambda: scale_data.view(c, B, S, gpu))
page.chart(page.memo(("roofline-fig", choice, B, S, gpu), lambda: vs.roofline(
    v["roofline"], g, words.phase_names(L), words.roofline_title(name, gpu, B, S, L), L)), "roofline",
           projector_height=440)
st.markdown(words.headline(v, L))
if v["crossover"]:
    st.caption(words.crossover_hint(B, v["crossover"], L))
st.caption(say("intro", L, start=say("start", L, B=trace.B, S=trace.S) if trace is not None else ""))
page.metrics(words.top_metrics(v, L))

# ---- parameters ----------------------------------------------------------------------------------------
st.header(t("参数量：按算子", "Parameters per operator"))
if choice == LOADED:
    check = scale_data.param_check(c, model.num_parameters)
    (st.success if check["same"] else st.error)(words.live_check(check, L))
    if not c.tie_word_embeddings:
        st.caption(texts.model_sentence(model, "tie_sentence", L))
blocks.table(words.param_rows(v, L))
st.markdown(words.param_total(v, L))
page.chart(page.memo(("params-fig", choice), lambda: vs.param_bars(words.param_bar_rows(v, L),
                                                                   *words.param_bars_words(name, L))), "params-bars")
st.caption(say("bars", L))

st.subheader(t("稠密与 MoE：总参数与激活参数", "Dense vs MoE: total and active parameters"))
blocks.table(words.reference_table(page.memo(("refs",), lambda: scale_data.reference_rows(refs)), L))
st.info(words.dense_note(L))

# ---- FLOPs ---------------------------------------------------------------------------------------------
st.header(t("FLOPs：预填充与一步解码", "FLOPs: prefill and one decode step"))
st.markdown(words.flops_intro(B, S, L))
page.metrics(words.flops_metrics(v, L))
tabs = page.tabs(words.flops_tabs(L), "flops")
for tab, ph in ((tab, ph) for tab, ph in zip(tabs, scale_data.PHASES) if tab):     # only the open tab is drawn
    with tab:
        blocks.table(words.flops_rows(v, ph, L))
        st.markdown(words.flops_total(v, ph, L))
st.caption(say("flops", L))

# ---- memory --------------------------------------------------------------------------------------------
st.header(t("显存：权重 + KV cache", "Memory: weights + KV cache"))
st.markdown(words.kv_sentence(c, v, L))
page.metrics(words.weight_metrics(v, L))
blocks.table(words.fit_table(v, L))
st.caption(say("fit", L))

# ---- the roofline in numbers ---------------------------------------------------------------------------
st.header(t("屋顶线：预填充与解码", "Roofline: prefill vs decode"))
blocks.table(words.roofline_table(v, L))
st.caption(say("time", L, note=costs_text.gpu_note(gpu, g, L)))
if not v["fits_gpu"]:
    st.warning(say("too_big", L, B=B, S=f"{S:,}", gpu=gpu))

# folded: its first plan builds the model on the meta device, which imports transformers' model code (seconds)
if box := page.more(*(catalogue.say("page_scale.more_placement", x) for x in ("zh", "en")), "placement"):
    with box:
        scale_placement.section(c, name, gpu, g["mem_gb"], S, B)
scale_configs.fold(page.more(*(catalogue.say("page_scale.more_configs", x) for x in ("zh", "en")), "configs"),
                    refs, name, c)
