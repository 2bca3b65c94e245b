"""Serving and optimisation: online softmax on this trace, then what a server does (docs/architecture.md)."""
import streamlit as st

from content import serving_numbers, serving_page, serving_text as words, serving_topics as topics
from ops.arith import costs, formats, scheduling, serving_math as sv
from ops.errors import InputError, LoadError
from ops.lab import online_softmax, serving_phases as phases
from ui import batching_panel, experiments_state, serving_long_context as long_context
from ui.blocks import metrics, table as html_table
from ui.page import StagePage
from ui.pickers import picker
from ui.session import lang
from viz import bars, serving as fig

page = StagePage("serving")
model, trace, c = page.model, page.trace, page.config
ref, L, nums = costs.reference_config(), lang(), page.numbers
lab = serving_page.labels(L)


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
    h = picker(lab["head"], "head", 0, c.num_attention_heads - 1)
with cols[2]:
    b = page.row()
with cols[3]:
    s = page.token(b, default_last=True)
with cols[4]:
    block = picker(lab["block"], "block", 1, trace.S, default=max(1, -(-trace.lengths[b] // 3)))
view = online_softmax.online_softmax_view(trace, i, b, h, s, block)
left, right = st.columns([5, 4])
with left:
    online = page.memo(("online", i, h, b, s, block), lambda: fig.online_softmax(
        view, page.labels(b, with_pad=True), title=lab["online"].format(n=block), score_label=lab["score"],
        max_label=lab["run_max"], sum_label=lab["run_sum"], block_labels=(lab["score_even"], lab["score_odd"])))
    page.view(f"layers.{i}.attn.scores", trace.attention_scores(i), online, key="online", projector_height=400)
with right:
    table(words.online_table(view, L))
    note("online", i=i, h=h, s=s, max_diff=f"{view['max_diff']:.2g}")

page.explain(serving_page.latex(L), online_softmax.online_softmax, sv.spec_expected_tokens, sv.spec_speedup)

st.subheader(lab["by_hand"])
c1, c2 = st.columns([4, 1])
scores_text = c1.text_input(lab["scores"], words.caption_example(), key="sv-scores")
per_block = c2.number_input(lab["per_block"], 1, 16, serving_numbers.EXAMPLE["block"], key="sv-block")
try:
    table(words.small_table(online_softmax.small_example(online_softmax.parse_scores(scores_text), int(per_block)), L))
except InputError as e:
    st.warning(str(e))

try:                                                  # read before the tabs: the checks at the end use it too
    with st.spinner(lab["reading"]):
        report, missing = formats.bundled_gguf_report(), ""
except LoadError as e:
    report, missing = None, str(e)
tabs = page.tabs(lab["tabs"], "topics")
if tabs[0]:
    with tabs[0]:
        table(words.traffic_table(ref, L), "traffic")
if tabs[1]:
    with tabs[1]:
        batching_panel.show(L)                        # first: the room's own traffic, live, above the fold
        table(words.kv_table(ref, L), "kv")
        table(words.paged_table(ref, L), "paged")
        table(words.batching_table(L), "batching")
        sys_tokens = sv.system_prompt_tokens(model.tokenizer)
        table(words.prefix_table(ref, L, sys_tokens), "prefix", sys=sys_tokens)
if tabs[2]:
    with tabs[2]:
        if missing:
            st.info(lab["no_gguf"] + missing)
        if report:
            table(words.gguf_table(report, L), "gguf", tensors=report["tensors"],
                  file=costs.human(report["file_bytes"], "B"))
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
        a = c1.slider(lab["a"], 0.0, 1.0, serving_numbers.SPEC_EXAMPLE["a"], 0.05, key="sv-a")
        k = c2.slider(lab["k"], 1, 12, serving_numbers.SPEC_EXAMPLE["k"], key="sv-k")
        cost = words.draft_cost(ref)
        metrics([(lab["E"], f"{sv.spec_expected_tokens(a, k):.2f}"),
                 (lab["speedup"], f"{sv.spec_speedup(a, k, cost):.2f}×"), (lab["c"], f"{cost:.4f}")])
        page.chart(fig.spec_speedup((0.6, 0.7, 0.8, 0.9), 12, cost, sv.spec_speedup, (a, k), chosen_label=lab["yours"],
                                    title=lab["spec_title"], xlabel=lab["k"], ylabel=lab["speedup"]), "spec")
        table(words.spec_rows(ref, L), "spec")
if tabs[4]:
    with tabs[4]:
        page.chart(fig.wavelengths(sv.long_context(ref), title=lab["rope_title"], xlabel=lab["pair"],
                                   ylabel=lab["per_turn"]), "rope")
        note("rope")
        long_context.live(page, model, L)
        table(words.swa_table(ref, L), "swa")
if tabs[5]:
    with tabs[5]:
        variants = sv.attention_variants(ref)
        page.chart(bars([r["bytes_per_token"] for r in variants], [r["variant"] for r in variants], text_fmt=",.0f",
                        title=lab["variants_title"], ylabel=lab["bytes"], height=360), "variants")
        table(words.variants_table(ref, L), "variants")
if tabs[6]:
    with tabs[6]:
        table(words.tp_table(ref, L), "tp")
if tabs[7]:
    with tabs[7]:
        page.chart(fig.roofline(words.roofline_points(ref), title=lab["roof_title"], xlabel=lab["intensity"],
                                roof_label=lab["roof"]), "roofline")
        table(words.h200_table(ref, L), "h200")
        m = words.MEASURE
        measured = experiments_state.sweep(
            experiments_state.model_key() + ("serving-phases",),
            lambda progress: phases.measure_phases(model, m["prefill"], m["context"], m["steps"], progress=progress),
            lab["measure"], words.caption("measure", L, nums, **words.measure_live()), button="sv-measure")
        if measured:
            table(words.measured_table(measured, L), "measured", **words.measured_live(measured))

# ---- the 2026 interview's topics, computed from the reference config, in a fold (one tab each) ----
if box := page.more(*serving_page.WORDS["more"], "topics26"):
    with box:
        masks = lambda: page.memo(("grammar",), lambda: scheduling.grammar_masks(
            scheduling.vocab_bytes(model.tokenizer)))
        for tab, (key, _, _) in zip(page.tabs(topics.labels(L), "topics26"), topics.TOPICS):
            if tab:
                with tab:
                    for rows, text in topics.tables(key, ref, L, nums, masks):
                        html_table(rows)
                        st.caption(text)

online_checks = page.memo(("checks", i, block), lambda: online_softmax.online_softmax_checks(trace, i, block))
page.checks(online_checks + (formats.gguf_checks(report) if report else []), *serving_page.WORDS["checks"])
page.at_scale()
