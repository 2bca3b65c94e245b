"""Stage 9 · Generate: prefill, then one forward pass per click with a KV cache (ops.engine.decode.Decoder per
session), the prefill in chunks or prompt-lookup drafts if chosen (ui/generate_state.py keeps the decoding)."""
import streamlit as st

from classroom import mode as class_mode
from classroom.jobs import decode_step, decode_to_end
from content import facts, generate_text as gt, texts
from content.words import say
from ops.arith import costs
from ops.engine import decode, sampling as smp
from ops.engine.inputs import max_new_tokens_limit
from ops.fast import quant
from ops.lab import generate_data, stage_data
from ui import generate_state as gs
from ui.page import StagePage
from ui.pickers import sampling_input
from ui.session import lang, projector, settings, t
from ui.state import get_model, get_trace
from viz import lines
from viz.generate import next_token_preview, text_box
from viz.labels import pieces

page = StagePage("generate", trace=False, io_text=t("提示词 ids [1, S] → 文本", "prompt ids [1, S] → text"))
model = get_model()
if model is None:
    st.stop()
c, s_, L = model.config, settings(), lang()
if not s_.prompts:
    st.warning(t("请在左侧输入框中写一句话。", "Type a prompt in the sidebar."))
    st.stop()
prompt = s_.prompts[0]

# on a projector the settings fold away, so the text and the preview stay above the fold under the lesson bar
box = st.expander(t("⚙️ 生成设置", "⚙️ Generation settings")) if projector() else st.container()
cols, limit = box.columns(7), max_new_tokens_limit(c)
max_new = int(cols[0].number_input(t("最多生成 token 数", "max new tokens"), min_value=1, max_value=min(256, limit),
                                   value=min(24, limit), step=1, key="gen_max"))
temp = sampling_input(cols[1].number_input, t("温度 T", "temperature T"), "temperature", "gen_temp", format="%.2f",
                      help=t("0 = 贪心", "0 = greedy"))
top_k = sampling_input(cols[2].number_input, "top-k", "top_k", "gen_topk", help=t("0 = 关闭", "0 = off"))
top_p = sampling_input(cols[3].number_input, "top-p", "top_p", "gen_topp", format="%.2f", help=t("1 = 关闭", "1 = off"))
min_p = sampling_input(cols[4].number_input, "min-p", "min_p", "gen_minp", format="%.2f",
                       help=t(*gt.MIN_P_HELP))
rp = sampling_input(cols[5].number_input, t("重复惩罚", "repetition penalty"), "repetition_penalty", "gen_rp",
                    format="%.2f")
seed = sampling_input(cols[6].number_input, t("种子", "seed"), "seed", "gen_seed")
per_path, own = quant.path_bytes(model), str(model.dtype).replace("torch.", "")
names = {"eager": own, "bf16": "bfloat16", "int8": "int8"}
path = box.radio(t("⚡ 解码用的权重（每个 token 读的字节）", "⚡ Decode with weights (bytes read per token)"),
                list(per_path),
                index=list(per_path).index(class_mode.default_decode_path()),
                format_func=lambda k: f"{names[k]} · {costs.human(per_path[k], 'B')}",
                key="gen_fast", horizontal=True, help=t(*gt.FAST_HELP))
try:
    params = smp.SamplingParams(float(temp), int(top_k), float(top_p), float(rp), int(seed), float(min_p))
except (smp.SamplingError, ValueError) as e:
    st.error(t("参数超出范围：", "Out of range: ") + str(e))
    st.stop()
o1, o2 = box.columns(2)
chunk = o1.radio(t("预填充分块", "Prefill in chunks"), gt.CHUNKS, key="gen_chunk", horizontal=True,
                 format_func=lambda C: gt.chunk_label(C, L), help=t(*gt.CHUNK_HELP))
draft = o2.radio(t("草稿（投机解码）", "Draft (speculative decoding)"), gt.DRAFTS, key="gen_draft", horizontal=True,
                 format_func=lambda x: gt.draft_label(x, L), help=t(*gt.DRAFT_HELP),
                 disabled=not params.greedy)
if draft and not params.greedy:
    o2.caption(gt.greedy_only(params.temperature, L))
d: decode.Decoder = gs.decoding(model, prompt, s_.chat, max_new, params, path, chunk,
                                draft if params.greedy else "")
gs.ask_first(model, params.greedy, params.temperature, params.seed)     # predict first: may stop the page here

b1, b2, b3 = st.columns(3)
clicked_next = b1.button(t("▶ 下一个 token", "▶ Next token"), key="gen_next", type="primary", width="stretch",
                         disabled=d.done)
clicked_run = b2.button(t("⏩ 一直生成到结束", "⏩ Run to the end"), key="gen_run", width="stretch")
clicked_reset = b3.button(t("↺ 重来", "↺ Reset"), key="gen_reset", width="stretch")
box = st.empty()


def show_text(live=False):
    box.markdown(text_box(prompt, d.text, live), unsafe_allow_html=True)


if clicked_reset or (clicked_run and d.done):
    d = gs.restart()
if clicked_next and not d.done:
    decode_step(d, gs.queue_note())
elif clicked_run:
    decode_to_end(d, lambda: show_text(live=True), on_wait=gs.queue_note())     # drawn at most 5 times a second
show_text()
greedy = params.greedy and params.repetition_penalty == 1
tr = get_trace(model)
if not d.steps and tr.token_ids[0, :tr.lengths[0]].tolist() == list(d.prompt_ids):
    top = stage_data.next_token_top(tr, 0, tr.lengths[0] - 1, gs.PREVIEW)          # the preview, from the trace
    page.chart(next_token_preview(top, pieces(model.tokenizer, top["ids"].tolist()), greedy,
                                  t("概率", "probability"), gt.preview_title(greedy, L, gs.PREVIEW)), key="gen-preview",
               projector_height=310)
    if path != "eager":                            # the run's weights are not the preview's: said before it differs
        st.caption(say("agree.weights_before", L, own=own, path=names[path]))
elif d.steps:                                      # after the first click: a step's candidates in the preview's place
    gs.step_chart(page, d, tr, names[d.path])
if d.done:
    st.success(gt.finished(d.stopped, d.budget, L))
if d.steps and (d.draft or chunk):                               # what the prefill chunk and the draft did
    report = generate_data.generation_report(d)
    page.metrics(gt.option_metrics(report, L))
    st.markdown(gt.option_text(report, L))
S0 = len(d.prompt_ids)
st.caption(gt.chat_caption(s_.chat, S0, len(s_.prompts) > 1, L))

page.explain(gt.latex(L), decode.Decoder.step, numbers=texts.numbers(c, B=1, S=S0, **facts.loaded(model)))
page.section("每一步", "Step by step")
if not d.steps:
    st.info(gt.nothing_yet(S0, L))
    st.stop()
rows = gs.step_rows(d)
st.dataframe(rows, hide_index=True, width="stretch", key="gen_table")
steps, summary = [r["#"] for r in rows], generate_data.decode_summary(d)
kvb, ms = summary["kv_bytes"], summary["ms"]
c1, c2 = st.columns(2)
with c1:
    page.view("kv_cache.bytes", kvb, lines({t("KV 缓存字节", "KV cache bytes"): kvb}, x=steps, xlabel=t("步", "step"),
                                            title=t("KV 缓存随步数增长", "The KV cache grows every step"),
                                            ylabel=t("字节", "bytes")), key="gen-kv")
with c2:
    page.view("step.ms", ms, lines({"ms": ms}, x=steps, title=t("每一步的耗时", "Time per step"),
                                   xlabel=t("步", "step"), ylabel="ms"), key="gen-ms")
if d.path != "eager":
    st.caption(gt.fast_caption(d.path, d.weight_dtype, d.compute_dtype, L))
pre, mean_dec, per_tok = summary["prefill_ms"], summary["decode_ms"], summary["kv_per_token"]
page.metrics(gt.speed_metrics(S0, pre, mean_dec, per_tok, L))
st.markdown(gt.prefill_vs_decode(S0, d.prefill_passes, pre, mean_dec, per_tok, c.num_hidden_layers,
                                 c.num_key_value_heads, c.head_dim, d.steps[-1].kv_tokens, d.steps[-1].kv_bytes, L))
