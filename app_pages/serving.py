"""Serving and optimisation: online softmax on this trace, then what a server does with a model (docs/architecture.md)."""
import streamlit as st

from content import serving_numbers, serving_text as words
from ops.arith import costs, formats, serving_math as sv
from ops.errors import InputError, LoadError
from ops.lab import online_softmax, phases
from ui import experiments_state
from ui.blocks import metrics, table as html_table
from ui.page import StagePage
from ui.pickers import picker
from ui.session import lang, t
from viz import bars, serving as fig

page = StagePage("serving")
model, trace, c = page.model, page.trace, page.config
ref, L, nums = costs.reference_config(), lang(), page.numbers


def table(rows, key=None, height=None, **live):
    """A table (every row shown; a scrolling grid with a height), then (with key) its caption with the live numbers."""
    html_table(rows, height)
    if key:
        note(key, **live)


def note(key, **live):
    st.caption(words.caption(key, L, nums, **live))


# ---- the main picture: one query's softmax·V folded in a block of keys at a time, on this trace's real scores ----
cols = st.columns(5)
with cols[0]:
    i = page.layer()
with cols[1]:
    h = picker(t("查询头 h", "query head h"), "head", 0, c.num_attention_heads - 1)
with cols[2]:
    b = page.row()
with cols[3]:
    s = page.token(b, default_last=True)
with cols[4]:
    block = picker(t("每块的键数", "keys per block"), "block", 1, trace.S, default=max(1, -(-trace.lengths[b] // 3)))
view = online_softmax.online_softmax_view(trace, i, b, h, s, block)
left, right = st.columns([5, 4])
with left:
    online = page.memo(("online", i, h, b, s, block), lambda: fig.online_softmax(
        view, page.labels(b, with_pad=True),
        title=t(f"在线 softmax：每次并入 {block} 个键", f"Online softmax, {block} key(s) at a time"),
        score_label=t("分数", "score"), max_label=t("累计最大 m", "running max m"), sum_label=t("累计和 l", "running sum l")))
    page.view(f"layers.{i}.attn.scores", trace.attention_scores(i), online, key="online")
with right:
    table(words.online_table(view, L))
    note("online", i=i, h=h, s=s, max_diff=f"{view['max_diff']:.2g}")

page.explain([r"m' = \max\big(m, \max_j s_j\big),\quad \alpha = e^{m-m'},\quad \ell' = \alpha\,\ell + \sum_j e^{s_j-m'}",
              r"\mathbf a' = \alpha\,\mathbf a + \sum_j e^{s_j-m'}\,\mathbf v_j,\qquad \mathrm{out} = \mathbf a/\ell",
              r"E = \frac{1-a^{k+1}}{1-a},\qquad \text{%s} = \frac{E}{k\,c+1}" % t("加速比", "speed-up")],
             online_softmax.online_softmax, sv.spec_expected_tokens, sv.spec_speedup)

page.section("自己算一遍：几个分数，分块做 softmax", "By hand: a few scores, softmax a block at a time")
c1, c2 = st.columns([4, 1])
scores_text = c1.text_input(t("分数（用逗号隔开，最多 16 个）", "scores (comma-separated, up to 16)"),
                            words.caption_example(), key="sv-scores")
per_block = c2.number_input(t("每块几个", "per block"), 1, 16, serving_numbers.EXAMPLE["block"], key="sv-block")
try:
    table(words.small_table(online_softmax.small_example(online_softmax.parse_scores(scores_text), int(per_block)), L))
except InputError as e:
    st.warning(str(e))

try:                                                  # read before the tabs: the checks at the end use it too
    with st.spinner(t("正在读取内置的 GGUF 文件……", "Reading the bundled GGUF file...")):
        report, missing = formats.bundled_gguf_report(), ""
except LoadError as e:
    report, missing = None, str(e)
tabs = page.tabs(["FlashAttention", t("KV cache 与调度", "KV cache"), t("量化", "Quantisation"), t("投机解码", "Speculative"),
                  t("长上下文", "Long context"), "MHA/GQA/MQA/MLA", t("张量并行", "Tensor parallel"), t("预填充 vs 解码", "Prefill vs decode")],
                 "topics")
if tabs[0]:
    with tabs[0]:
        table(words.traffic_table(ref, L), "traffic")
if tabs[1]:
    with tabs[1]:
        table(words.kv_table(ref, L), "kv")
        table(words.paged_table(ref, L), "paged")
        table(words.batching_table(L), "batching")
        sys_tokens = sv.system_prompt_tokens(model.tokenizer)
        table(words.prefix_table(ref, L, sys_tokens), "prefix", sys=sys_tokens)
if tabs[2]:
    with tabs[2]:
        if missing:
            st.info(t("内置 GGUF 文件不可用：", "The bundled GGUF file is not available: ") + missing)
        if report:
            table(words.gguf_table(report, L), "gguf", tensors=report["tensors"], file=costs.human(report["file_bytes"], "B"))
            for ex in report["examples"].values():
                note("block", tensor=ex["tensor"], type=ex["type"], d=f"{ex['d']:.6g}", nbytes=ex["nbytes"])
                table(words.block_table(ex, L), height=220)
        group = formats.group_quant_rows(model)
        table(words.group_table(group, L), "group", weight=group[0]["weight"], shape=group[0]["shape"])
        table(words.kv_quant_table(ref, L))
        table(words.float_table(L), "fp8")
if tabs[3]:
    with tabs[3]:
        c1, c2 = st.columns(2)
        a = c1.slider(t("接受率 a", "acceptance rate a"), 0.0, 1.0, serving_numbers.SPEC_EXAMPLE["a"], 0.05, key="sv-a")
        k = c2.slider(t("草稿长度 k", "draft length k"), 1, 12, serving_numbers.SPEC_EXAMPLE["k"], key="sv-k")
        cost = words.draft_cost(ref)
        metrics([(t("每次核对得到的 token E", "tokens per verification E"), f"{sv.spec_expected_tokens(a, k):.2f}"),
                 (t("加速比", "speed-up"), f"{sv.spec_speedup(a, k, cost):.2f}×"),
                 (t("草稿代价 c", "draft cost c"), f"{cost:.4f}")])
        page.chart(fig.spec_speedup((0.6, 0.7, 0.8, 0.9), 12, cost, sv.spec_speedup, (a, k), chosen_label=t("你选的", "yours:"),
                                    title=t("加速比与草稿长度 k", "Speed-up against draft length k"),
                                    xlabel=t("草稿长度 k", "draft length k"), ylabel=t("加速比", "speed-up")), "spec")
        table(words.spec_rows(ref, L), "spec")
if tabs[4]:
    with tabs[4]:
        page.chart(fig.wavelengths(sv.long_context(ref), title=t("RoPE 每一对转一圈要多少个 token（对数轴）",
                                                                 "Tokens for each RoPE pair to turn once (log axis)"),
                                   xlabel=t("维度对 j", "pair j"), ylabel=t("每圈 token 数", "tokens per turn")), "rope")
        note("rope")
        table(words.swa_table(ref, L), "swa")
if tabs[5]:
    with tabs[5]:
        variants = sv.attention_variants(ref)
        page.chart(bars([r["bytes_per_token"] for r in variants], [r["variant"] for r in variants], text_fmt=",.0f",
                        title=t("Qwen2.5-32B 形状下每 token 的 KV 字节", "KV bytes per token at Qwen2.5-32B's shape"),
                        ylabel=t("字节", "bytes"), height=360), "variants")
        table(words.variants_table(ref, L), "variants")
if tabs[6]:
    with tabs[6]:
        table(words.tp_table(ref, L), "tp")
if tabs[7]:
    with tabs[7]:
        page.chart(fig.roofline(words.roofline_points(ref), title=t("H200 上的屋顶线：Qwen2.5-32B，B = 1",
                                                                    "The H200 roofline: Qwen2.5-32B, B = 1"),
                                xlabel=t("算术强度 (FLOP/字节)", "arithmetic intensity (FLOP/byte)"),
                                roof_label=t("屋顶", "roof")), "roofline")
        table(words.h200_table(ref, L), "h200")
        m = words.MEASURE
        measured = experiments_state.sweep(experiments_state.model_key() + ("serving-phases",),
                             lambda progress: phases.measure_phases(model, m["prefill"], m["context"], m["steps"], progress=progress),
                             t("在本机上实测一次", "Measure on this machine"), words.caption("measure", L, nums, **words.measure_live()),
                             button="sv-measure")
        if measured:
            table(words.measured_table(measured, L), "measured", **words.measured_live(measured))

online_checks = page.memo(("checks", i, block), lambda: online_softmax.online_softmax_checks(trace, i, block))
page.checks(online_checks + (formats.gguf_checks(report) if report else []), "检查", "Checks")
page.at_scale()
