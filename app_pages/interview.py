"""The 2026 inference interview, run on the loaded model: chunked prefill, split-KV decode, batch invariance,
prompt-lookup drafts, KV-bound decode and activation outliers, each beside its reference. Compute:
ops/lab/interview.py and ops/engine/speculate.py; rows and sentences: content/interview.py. The runs that take
seconds wait for a button."""
import streamlit as st

from content import interview as words
from content.words import say
from ops.arith import costs
from ops.lab import interview as iv
from ui import experiments_state as lab
from ui.blocks import table
from ui.interview2 import round_two
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
st.markdown(words.split_intro(L, b, i, split[0]["keys"]))
table(words.split_rows(split, L))
page.explain([say("page_interview.formula_split", L),
              say("page_interview.formula_bytes", L, step_bytes=words.label("step_bytes", L),
                  kv_bytes=words.label("kv_bytes", L))],
             iv.split_kv_attention, iv.kv_bound, iv.outliers)
page.checks(iv.split_kv_checks(split, i), "分块 KV 解码与 PyTorch 对照", "Split-KV decode against PyTorch")

round_one = [t("分块预填充", "Chunked prefill"), t("批次不变性", "Batch invariance"),
             t("提示词查找投机解码", "Prompt-lookup drafts"), t("KV 决定的解码", "KV-bound decode"),
             t("离群激活与量化", "Outliers and quantisation")]
st.header(say("interview_demos.round_one", L, n=len(round_one)))       # the checks above are this picture's only
tabs = page.tabs(round_one, "interview")
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
            page.metrics([(words.label("first", L), first["name"] if first else "—"),
                          (words.label("logits", L), f"{inv['logits_max_diff']:.3g}"),
                          (words.label("parts", L), str(inv["parts_at"]) if inv["parts_at"] is not None
                           else words.not_parted(L, words.NEW_TOKENS["batch"]))])
            table(words.invariance_rows(inv, L))
            st.code(words.two_texts(L, inv), language=None)
if tabs[2]:
    with tabs[2]:
        prompts = {words.label("code", L): words.CODE, words.label("quote", L): words.QUOTE}
        gens = run("lookup", lambda: iv.lookup_runs(model, prompts, words.NEW_TOKENS["lookup"]), L)
        if gens:
            table(words.lookup_rows(gens, L))
if tabs[3]:
    with tabs[3]:
        kv = iv.kv_bound(ref)
        page.metrics([(words.label("weights", L), costs.human(kv["weight_bytes"], "B")),
                      (words.label("kv_tok", L), f"{kv['kv_bytes_per_token']:,} B"),
                      (words.label("crossover", L), f"{kv['crossover_tokens']:,.0f}")])
        st.caption(words.kv_caption(L, ref.name))
        table(words.kv_rows(kv, L))
        own = iv.kv_bound(c, batches=(1,), contexts=(c.max_position_embeddings,))
        st.caption(words.own_kv_caption(L, c.name, own))
if tabs[4]:
    with tabs[4]:
        loud, figs = page.memo(("outliers", b), lambda: iv.outlier_figures(trace, b))
        table(words.outlier_rows(figs, L))
        st.caption(words.outlier_caption(L, loud))

round_two(page, model, trace, L, key, b)
