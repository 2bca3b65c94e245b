"""Precision: the same prompt through float32, bfloat16 and int8 weights (ops.lab.precision.precision_report):
the residual stream's relative error layer by layer, top-1 / top-5 agreement, KL, the bytes each format
needs, and what that means when serving (memory, bandwidth, error)."""
import streamlit as st

from content.predict import GREEDY_SECTION
from content.words import say
from ops.arith import costs
from ops.lab import checks, precision, precision_data
from ops.lab.experiments_data import row_ids
from ui import experiments_state, predict, predict_questions
from ui.page import StagePage
from ui.session import lang, t
from viz.precision import byte_bars, error_lines

page = StagePage("precision")
model, trace, c = page.model, page.trace, page.config
L = c.num_hidden_layers

b = page.row()
asking = predict.on("precision")
prompt = trace.prompts[b]
chat = bool(st.session_state.get("chat", False))
rep = experiments_state.kept(experiments_state.precision_key(experiments_state.model_key(), prompt, chat),
                             lambda report: precision.precision_report(model, prompt, chat, report),
                             share=True, steps=True)
if rep is None:
    st.stop()
errs = rep["resid_rel_err"]
dtypes = list(errs)
states = [t("嵌入", "embed")] + [t(str(k), f"L{k}") for k in range(L)]   # zh: the axis title says 层

# ---- the main picture: how far each format drifts from float32, layer by layer -----------------------------
left, right = st.columns([3, 2])
with left:
    page.chart(error_lines(errs, states, ylabel="‖x_d − x_32‖ / ‖x_32‖", height=470, xlabel=t("层", ""),
                           title=say("page_precision.residual_stream_s_error", lang())),
               "prec-err")
with right:
    st.dataframe([{t("数据类型", "dtype"): d, "top-1": f"{100 * float(rep['top1_agree'][d]):.0f}%",
                   "top-5": f"{100 * float(rep['top5_agree'][d]):.0f}%",
                   "KL": f"{float(rep['kl'][d]):.1e}",
                   t("本进程中的权重", "weights held here"): f"{rep['weight_bytes'][d] / 2**30:.2f} GiB"}
                  for d in dtypes], hide_index=True, width="stretch")
    page.chart(byte_bars(rep["weight_bytes"], height=300, ylabel="GiB", scale=2**30,
                         title=t("本进程中的权重字节（相对 float32）", "Weight bytes held here (against float32)")),
               "prec-bytes")
    st.caption(say("page_precision.bytes_three_ways", lang()))
st.caption(say("page_precision.prompt_top_top_agreement", lang(), prompt=prompt))

ids = row_ids(trace, b)
if asking:                            # asked in place with the switch on; otherwise folded: it decodes twice
    page.section(*GREEDY_SECTION)
if box := st.container() if asking else page.more(*GREEDY_SECTION, "greedy"):
    with box:
        if predict.gate("precision", tuple(ids), lambda: predict_questions.greedy(model, ids), "greedy"):
            if (greedy := predict_questions.greedy_data(model, ids)) is not None:
                predict_questions.show_greedy(greedy)

page.explain(say("page_precision.formula", lang()),
             precision.precision_report)

page.section("对部署意味着什么", "What it means for serving")
ref = costs.reference_config()
rows = precision_data.serving_rows({c.name or t("本模型", "this model"): c, ref.name or "Qwen2.5-32B-Instruct": ref})
st.dataframe([{t("模型", "model"): r["model"], t("数据类型", "dtype"): r["dtype"],
               t("权重", "weights"): costs.human(r["weights"], "B"),
               t("每步解码下限 (H200)", "decode step bound (H200)"): f"{r['decode_ms']:.2f} ms",
               t("每秒 token 上限", "tokens/s bound"): f"{1000 / r['decode_ms']:.0f}",
               say("page_precision.kv_cache_tokens_that", lang()): f"{r['kv_tokens']:,}" if r["fits"] else
               t("放不下", "does not fit")} for r in rows], hide_index=True, width="stretch")
st.caption(say("page_precision.decode_bound", lang(), cross=page.numbers["prefill_cross_32b"]))

page.checks(checks.precision_embed(rep), "检查", "Checks")
