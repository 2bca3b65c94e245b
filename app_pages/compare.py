"""Compare two prompts: a curated minimal pair (assets/experiments/pairs.json) or your own two; both
next-token distributions, the residual streams' cosine and difference layer by layer, and activation
patching (clean A into corrupted B) over layer × position. Every setting is in the URL."""
import streamlit as st

from content import compare_pairs
from content.words import say
from ops.lab import checks, compare_data, experiments_sweeps
from ops.lab.experiments_data import row_ids
from ui import experiments_state
from ui.page import StagePage
from ui.session import lang, t
from ui.widgets import merged_note, show_chips, url_choice
from viz.experiments import layer_lines, layer_position_map, pair_bars
from viz.labels import pieces, short

page = StagePage("compare")
model, c = page.model, page.config
L, tok = c.num_hidden_layers, model.tokenizer
PAIRS = compare_pairs.pairs()

choice = url_choice(t("提示词对", "Pair"), "cmp_pair", list(PAIRS) + ["own"],
                    format_func=lambda k: t("自己写两句", "Your own two") if k == "own" else PAIRS[k]["label"][lang()])
if choice == "own":
    c1, c2 = st.columns(2)
    with c1:
        a = experiments_state.url_text(say("page_compare.prompt_a_clean_gives", lang()), "cmp_a",
                         compare_pairs.prompts("capital", lang())[0])
    with c2:
        b = experiments_state.url_text(t("提示词 B（被破坏：只改一个词）", "prompt B (corrupted: one word changed)"),
                                       "cmp_b",
                         compare_pairs.prompts("capital", lang())[1])
else:
    a, b = compare_pairs.prompts(choice, lang())
    st.caption(PAIRS[choice]["note"][lang()])
ta, tb = experiments_state.prompt_trace(model, a), experiments_state.prompt_trace(model, b)
if ta is None or tb is None:
    st.stop()
na, nb = ta.lengths[0], tb.lengths[0]
equal = na == nb
c1, c2 = st.columns(2)
for col, name, tr, n in ((c1, "A", ta, na), (c2, "B", tb, nb)):
    with col:
        st.markdown(f"**{name}** · " + t(f"{n} 个 token", f"{n} tokens"))
        show_chips(tok.piece_info(row_ids(tr, 0)), size=17)
        merged_note(tok, row_ids(tr, 0))
if not equal:
    st.error(say("page_compare.the_two_prompts_have", lang(), na=na, nb=nb))

# ---- the main picture: both next-token distributions, and where the two streams part ---------------------
top = compare_data.pair_top(ta, tb, 5)
ans_a, ans_b = (repr(pieces(tok, [x])[0]) for x in (top["top_a"], top["top_b"]))
streams = compare_data.compare_streams(ta, tb)
states = [t("嵌入", "embed")] + [t(str(k), f"L{k}") for k in range(L)]   # zh: the axis title says 层
c1, c2 = st.columns(2)
with c1:
    page.chart(pair_bars([f"{short(p, 10)} ({x})" for p, x in zip(pieces(tok, top["ids"]), top["ids"])], top["pa"],
                         top["pb"],
                         f"A → {ans_a}", f"B → {ans_b}", height=430,
                         title=say("page_compare.both_next_token_distributions", lang())),
               "cmp-next")
with c2:
    page.chart(layer_lines({t("余弦相似度", "cosine"): streams["cos"], "‖a − b‖ / ‖a‖": streams["rel"]}, states,
                           height=430, xlabel=t("层", ""),
                           title=say("page_compare.last_position_a_s", lang())),
               "cmp-layers")

page.explain(say("page_compare.formula_restored", lang()),
             numbers=dict(page.numbers, S=str(na)))

if equal:
    labels = [short(x, 8) + (f"→{short(y, 8)}" if x != y else "")
              for x, y in zip(pieces(tok, row_ids(ta, 0)), pieces(tok, row_ids(tb, 0)))]
    diff = compare_data.differing_positions(ta, tb)
    if box := page.more(say("page_compare.more_cosmap", "zh"), say("page_compare.more_cosmap", "en"), "cosmap"):
        with box:
            page.chart(layer_position_map(streams["cos_map"], labels, zlabel="cos", colorscale="Viridis", zmid=None,
                                          rows=states,
                                          xlabel=t("位置:A 的 token→B 的 token", "position:A token→B token"),
                                          ylabel=t("层 i", "layer i"),
                                          title=say("page_compare.cos_a_b_tokens", lang(), diff=diff)),
                       "cmp-cosmap")

    st.subheader(say("page_compare.activation_patching_a_s", lang()))
    st.markdown(say("page_compare.clean_a_answers_corrupted", lang(), ans_a=ans_a, ans_b=ans_b))
    res = experiments_state.sweep(experiments_state.model_key() + ("patch", a, b, st.session_state.get("chat", False),
                                                                   top["top_a"]),
                    lambda progress: experiments_sweeps.patch_sweep(model, ta, tb, top["top_a"], progress=progress),
                    t(f"运行修补扫描（{L} × {na} 个变体）", f"Run the patching sweep ({L} × {na} variants)"),
                    say("page_compare.takes_tens_of_seconds", lang()), "run-patch")
    if res is not None:
        page.chart(layer_position_map(res["restored"], labels, zlabel=t("找回比例", "restored"), zmin=-1, zmax=1,
                                      rows=states[1:],
                                      xlabel=t("位置:A 的 token→B 的 token", "position:A token→B token"),
                                      ylabel=t("层 i", "layer i"),
                                      title=t(f"修补后 {ans_a} 找回的比例（层 × 位置）",
                                              f"Share of {ans_a} restored by patching (layer × position)")),
                   "cmp-patch")
        st.caption(say("page_compare.typically_the_information_sits", lang()))

page.checks(checks.causal_prefix(ta, tb), "检查", "Checks")
