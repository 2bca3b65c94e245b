"""Precision: the same prompt through float32, bfloat16 and int8 weights (ops.lab.precision.precision_report):
the residual stream's relative error layer by layer, top-1 / top-5 agreement, KL, the bytes each format
needs, and what that means when serving (memory, bandwidth, error)."""
import streamlit as st

from content.predict import GREEDY_SECTION
from ops.arith import costs
from ops.lab import checks, precision, precision_data
from ops.lab.experiments_data import row_ids
from ui import experiments_state, predict, questions
from ui.page import StagePage
from ui.session import t
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
states = ["embed"] + [f"L{k}" for k in range(L)]

# ---- the main picture: how far each format drifts from float32, layer by layer -----------------------------
left, right = st.columns([3, 2])
with left:
    page.chart(error_lines(errs, states, ylabel="‖x_d − x_32‖ / ‖x_32‖", height=470,
                           title=t("残差流相对 float32 的误差，逐层（对数轴）",
                                   "Residual stream's error against float32, per layer (log axis)")),
               "prec-err")
with right:
    st.dataframe([{"dtype": d, "top-1": f"{100 * float(rep['top1_agree'][d]):.0f}%",
                   "top-5": f"{100 * float(rep['top5_agree'][d]):.0f}%",
                   "KL": f"{float(rep['kl'][d]):.1e}",
                   t("权重", "weights"): f"{rep['weight_bytes'][d] / 1e9:.2f} GB"} for d in dtypes],
                 hide_index=True, width="stretch")
    page.chart(byte_bars(rep["weight_bytes"], height=300,
                         title=t("权重字节数（相对 float32）", "Weight bytes (against float32)")), "prec-bytes")
st.caption(t(f"提示词：“{prompt}”。top-1 / top-5：与 float32 的第一名 / 前五名一致的比例（按每个位置统计）；KL(p32 ‖ "
             "p_d) 取最后一个位置的下一个 token 分布。误差曲线越低越好；第一名一致、KL 很小，"
             "说明更省的格式在这个提示词上给出同样的回答。",
             f"Prompt: “{prompt}”. top-1 / top-5: agreement with float32's first token / top-5 set, over the prompt's "
             "positions; "
             "KL(p32 ‖ p_d) is of the next-token distribution at the last position. "
             "Lower curves are better; the same top-1 and a small KL mean the cheaper format answers this prompt the "
             "same way."))

ids = row_ids(trace, b)
if asking:                            # asked in place with the switch on; otherwise folded: it decodes twice
    page.section(*GREEDY_SECTION)
if box := st.container() if asking else page.more(*GREEDY_SECTION, "greedy"):
    with box:
        if predict.gate("precision", tuple(ids), lambda: questions.greedy(model, ids), "greedy"):
            if (greedy := questions.greedy_data(model, ids)) is not None:
                questions.show_greedy(greedy)

page.explain(r"\mathrm{err}_i^{(d)} = \frac{\lVert x_i^{(d)} - x_i^{(32)} \rVert}{\lVert x_i^{(32)} \rVert},\qquad "
             r"\mathrm{KL}(p_{32}\,\Vert\,p_d) = \sum_v p_{32}(v)\log\frac{p_{32}(v)}{p_d(v)}",
             precision.precision_report)

page.section("对部署意味着什么", "What it means for serving")
ref = costs.reference_config()
rows = precision_data.serving_rows({c.name or "this model": c, ref.name or "Qwen2.5-32B-Instruct": ref})
st.dataframe([{t("模型", "model"): r["model"], "dtype": r["dtype"],
               t("权重", "weights"): costs.human(r["weights"], "B"),
               t("每步解码下限 (H200)", "decode step bound (H200)"): f"{r['decode_ms']:.2f} ms",
               t("每秒 token 上限", "tokens/s bound"): f"{1000 / r['decode_ms']:.0f}",
               t("剩余显存可存的 KV token 数",
                 "KV-cache tokens that fit in what is left"): f"{r['kv_tokens']:,}" if r["fits"] else
               t("放不下", "does not fit")} for r in rows], hide_index=True, width="stretch")
st.caption(t("解码每步读一遍全部权重，受显存带宽 (H200 约 4.8 TB/s) 限制：字节减半，速度上限翻倍；省下的显存用于 KV "
             "cache "
             "(bf16)，也就是更多并发请求或更长上下文。代价是上面测出的误差。长提示的预填充受算力限制（Qwen2.5-32B 在 "
             "H200 上 B = 1 时约从 "
             f"S = {page.numbers['prefill_cross_32b']} 起），那里量化的收益要看硬件有没有更快的低精度矩阵乘。",
             "Each decode step reads every weight once and is bound by memory bandwidth (H200 about 4.8 TB/s): half "
             "the bytes, "
             "twice the speed limit; the memory saved holds KV cache (bf16), i.e. more concurrent requests or longer "
             "contexts. "
             "The price is the error measured above. A long prefill is compute-bound (Qwen2.5-32B on an H200 at B = 1 "
             "from about "
             f"S = {page.numbers['prefill_cross_32b']}); there the gain depends on faster low-precision matmuls."))

page.checks(checks.precision_embed(rep), "检查", "Checks")
