"""The 2026 inference interview, run on the loaded model: chunked prefill, split-KV decode, batch invariance,
prompt-lookup drafts, KV-bound decode and activation outliers, each beside its reference. Compute:
ops/lab/interview.py and ops/engine/speculate.py; rows: content/interview.py. The runs that take seconds wait for a button."""
import streamlit as st

from content import interview as words
from ops.arith import costs
from ops.lab import interview as iv
from ui import experiments_state as lab
from ui.blocks import table
from ui.page import StagePage
from ui.session import lang, t

page = StagePage("interview")
model, trace, c = page.model, page.trace, page.config
L, ref = lang(), costs.reference_config()
key = lab.model_key()


def run(name: str, compute, *more):
    """A tab's caption, then a run that takes seconds: on its button only, kept for this model (and `more`), never
    on a page switch."""
    st.caption(words.caption(name, L))
    return lab.sweep(key + (name, *more), lambda progress: compute(), t("在本机上跑一次", "Run it on this machine"),
                     button=f"iv-{name}")

# ---- the main picture: split-KV decode on the traced layer (cheap, from the trace) --------------------------------
i, b = page.layer(), page.row()
split = page.memo(("split", i, b), lambda: iv.split_kv_from_trace(trace, i, b))
st.markdown(t(f"**分块 KV 解码（FlashDecoding）**：第 {b} 行最后一个 token 在第 {i} 层对全部 {split[0]['keys']} 个键的注意力，"
              "把键切成 K 块，每块各自做 softmax（最大值、和、加权 V），再按 log-sum-exp 合并。",
              f"**Split-KV decode (FlashDecoding)**: row {b}'s last token attends to all {split[0]['keys']} keys in "
              f"layer {i}; the keys are cut into K splits, each does its own softmax (max, sum, weighted V), and the "
              "parts merge by log-sum-exp."))
table(words.split_rows(split, L))
page.explain([r"\mathrm{lse}_i = m_i + \ln \ell_i,\quad \mathrm{LSE} = \ln\sum_i e^{\mathrm{lse}_i},\quad"
              r"\mathbf o = \sum_i e^{\mathrm{lse}_i-\mathrm{LSE}}\;\mathbf o_i/\ell_i",
              r"\text{%s} = W + B\cdot T\cdot \text{%s}" % (t("解码一步字节", "decode step bytes"),
                                                          t("每 token KV 字节", "KV bytes per token"))],
             iv.split_kv_attention, iv.kv_bound, iv.outliers)

tabs = page.tabs([t("分块预填充", "Chunked prefill"), t("批次不变性", "Batch invariance"),
                  t("提示词查找投机解码", "Prompt-lookup drafts"), t("KV 决定的解码", "KV-bound decode"),
                  t("离群激活与量化", "Outliers and quantisation")], "interview")
if tabs[0]:
    with tabs[0]:
        trade = run("prefill", lambda: iv.prefill_trade(model, words.CODE, words.CHUNKS,
                                                            new_tokens=words.NEW_TOKENS["prefill"]))
        if trade:
            table(words.prefill_rows(trade, L))
if tabs[1]:
    with tabs[1]:
        inv = run("batch", lambda: iv.batch_invariance(model, words.SHORT, words.QUOTE,
                                                          new_tokens=words.NEW_TOKENS["batch"]))
        if inv:
            first = inv["first"]
            page.metrics([(t("第一个不同的张量", "first tensor that differs"), first["name"] if first else "—"),
                          (t("最后位置 logits 最大差", "last-position logits max |diff|"), f"{inv['logits_max_diff']:.3g}"),
                          (t("文字分叉于第几个 token", "texts part at token"),
                           str(inv["parts_at"]) if inv["parts_at"] is not None
                           else t(f"{words.NEW_TOKENS['batch']} 个内不分叉", f"not within {words.NEW_TOKENS['batch']}"))])
            table(words.invariance_rows(inv, L))
            st.code(f"{t('单独', 'alone')}: {inv['solo_text']}\n{t('成批', 'batched')}: {inv['batched_text']}",
                    language=None)
if tabs[2]:
    with tabs[2]:
        prompts = {t("代码", "code"): words.CODE, t("引文", "quote"): words.QUOTE}
        gens = run("lookup", lambda: iv.lookup_runs(model, prompts, words.NEW_TOKENS["lookup"]), L)
        if gens:
            table(words.lookup_rows(gens, L))
if tabs[3]:
    with tabs[3]:
        kv = iv.kv_bound(ref)
        page.metrics([(t("权重（bf16）", "weights (bf16)"), costs.human(kv["weight_bytes"], "B")),
                      (t("每 token KV", "KV per token"), f"{kv['kv_bytes_per_token']:,} B"),
                      (t("KV 超过权重时缓存的 token 数", "cached tokens where KV passes weights"),
                       f"{kv['crossover_tokens']:,.0f}")])
        st.caption(t(f"{ref.name}：解码一步读一遍权重（整批共享）和每条序列自己的 KV cache。缓存的 token 总数 B·T 超过上面这个数，"
                     "KV 的读取就超过权重，批次再大也省不下它。",
                     f"{ref.name}: a decode step reads the weights once (shared by the batch) and every sequence's own "
                     "KV cache. Once the cached tokens B·T pass the figure above, KV reads outweigh weight reads, and "
                     "a bigger batch no longer amortises them."))
        table(words.kv_rows(kv, L))
        own = iv.kv_bound(c, batches=(1,), contexts=(c.max_position_embeddings,))
        st.caption(t(f"本模型 {c.name}：每 token KV {own['kv_bytes_per_token']:,} B，KV 在 {own['crossover_tokens']:,.0f} 个缓存 token 处超过权重。",
                     f"This model, {c.name}: {own['kv_bytes_per_token']:,} B of KV per token; KV passes the weights at "
                     f"{own['crossover_tokens']:,.0f} cached tokens."))
if tabs[4]:
    with tabs[4]:
        loud, figs = page.memo(("outliers", b), lambda: iv.outlier_figures(trace, b))
        table(words.outlier_rows(figs, L))
        st.caption(t(f"第 {loud} 层的残差流里 |x| 最大。少数通道大出中位数几个数量级：整张量一个 int8 步长，普通值大多被舍成 0。"
                     "W8A8 因此需要 SmoothQuant（把激活的通道尺度挪进权重），AWQ 按激活大小找出少数显著通道并保护它们的权重。",
                     f"Layer {loud}'s residual stream holds the largest |x|. A few channels stand orders of magnitude "
                     "above the median: with one int8 step for the whole tensor most ordinary values round to 0. "
                     "Hence W8A8 needs SmoothQuant (moving the activations' channel scales into the weights), and AWQ "
                     "finds the few salient channels by activation size and protects their weights."))

page.checks(iv.split_kv_checks(split, i))
