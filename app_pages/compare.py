"""Compare two prompts: a curated minimal pair (assets/experiments/pairs.json) or your own two; both
next-token distributions, the residual streams' cosine and difference layer by layer, and activation
patching (clean A into corrupted B) over layer × position. Every setting is in the URL."""
import streamlit as st

from content import pairs
from ops.lab import checks, compare_data, sweeps
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
PAIRS = pairs.pairs()

choice = url_choice(t("提示词对", "Pair"), "cmp_pair", list(PAIRS) + ["own"],
                    format_func=lambda k: t("自己写两句", "Your own two") if k == "own" else PAIRS[k]["label"][lang()])
if choice == "own":
    c1, c2 = st.columns(2)
    with c1:
        a = experiments_state.url_text(t("提示词 A（干净：给出要研究的答案）",
                                         "prompt A (clean: gives the answer studied)"), "cmp_a",
                         pairs.prompts("capital", lang())[0])
    with c2:
        b = experiments_state.url_text(t("提示词 B（被破坏：只改一个词）", "prompt B (corrupted: one word changed)"),
                                       "cmp_b",
                         pairs.prompts("capital", lang())[1])
else:
    a, b = pairs.prompts(choice, lang())
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
    st.error(t(f"两个提示词的 token 数不同（A 有 {na} 个，B 有 {nb} 个）：激活修补和逐位置对比要求位置一一对应，请换一"
               "对等长的提示词。"
               "下面只比较各自最后一个位置。",
               f"The two prompts have different token counts (A has {na}, B has {nb}): patching and the "
               "position-by-position "
               "comparison need the positions to correspond one to one; use a pair of equal length. Below, only each "
               "prompt's last position is compared."))

# ---- the main picture: both next-token distributions, and where the two streams part ---------------------
top = compare_data.pair_top(ta, tb, 5)
ans_a, ans_b = (repr(pieces(tok, [x])[0]) for x in (top["top_a"], top["top_b"]))
streams = compare_data.compare_streams(ta, tb)
states = ["embed"] + [f"L{k}" for k in range(L)]
c1, c2 = st.columns(2)
with c1:
    page.chart(pair_bars([f"{short(p, 10)} ({x})" for p, x in zip(pieces(tok, top["ids"]), top["ids"])], top["pa"],
                         top["pb"],
                         f"A → {ans_a}", f"B → {ans_b}", height=430,
                         title=t("两个下一个 token 分布（各自前 5 名的并集）",
                                 "Both next-token distributions (union of each one's top 5)")),
               "cmp-next")
with c2:
    page.chart(layer_lines({t("余弦相似度", "cosine"): streams["cos"], "‖a − b‖ / ‖a‖": streams["rel"]}, states,
                           height=430,
                           title=t("最后一个位置：A 与 B 的残差流逐层对比",
                                   "Last position: A's and B's residual streams")),
               "cmp-layers")

page.explain(r"r_{i,p} = \frac{\Delta(\text{%s}_{i,p}) - \Delta(B)}{\Delta(A) - \Delta(B)}"
             % t(r"B，换入 A 的 resid\_out", r"B with A's resid\_out"),
             numbers=dict(page.numbers, S=str(na)))

if equal:
    labels = [short(x, 8) + (f"→{short(y, 8)}" if x != y else "")
              for x, y in zip(pieces(tok, row_ids(ta, 0)), pieces(tok, row_ids(tb, 0)))]
    diff = compare_data.differing_positions(ta, tb)
    if box := page.more("每一层、每个位置的余弦相似度", "Cosine at every layer and position", "cosmap"):
        with box:
            page.chart(layer_position_map(streams["cos_map"], labels, zlabel="cos", colorscale="Viridis", zmid=None,
                                          rows=states,
                                          xlabel=t("位置:A 的 token→B 的 token", "position:A token→B token"),
                                          ylabel=t("层 i", "layer i"),
                                          title=t(f"A 与 B 的余弦：位置 {diff} 不同，之前的位置全为 1（因果掩码）",
                                                  f"cos(A, B): tokens differ at {diff}; every earlier position is 1 "
                                                  "(causal mask)")),
                       "cmp-cosmap")

    page.section("激活修补：把 A 的残差向量放进 B", "Activation patching: A's residual vector put into B's run")
    st.markdown(t(f"干净 A 的答案 {ans_a}，被破坏 B 的答案 {ans_b}。每一格：在第 i 层、第 p 个位置把 B 的 `resid_out` "
                  "换成 A 的，"
                  f"{ans_a} 的 logit 找回了多少（1 = 全部，0 = 没有）。",
                  f"Clean A answers {ans_a}, corrupted B answers {ans_b}. Each cell: B's `resid_out` at layer i, "
                  "position p "
                  f"replaced by A's; how much of {ans_a}'s logit comes back (1 = all of it, 0 = none)."))
    res = experiments_state.sweep(experiments_state.model_key() + ("patch", a, b, st.session_state.get("chat", False),
                                                                   top["top_a"]),
                    lambda progress: sweeps.patch_sweep(model, ta, tb, top["top_a"], progress=progress),
                    t(f"运行修补扫描（{L} × {na} 个变体）", f"Run the patching sweep ({L} × {na} variants)"),
                    t("需要几十秒；结果保存在本会话中。",
                      "Takes tens of seconds; the result is kept for this session."), "run-patch")
    if res is not None:
        page.chart(layer_position_map(res["restored"], labels, zlabel=t("找回比例", "restored"), zmin=-1, zmax=1,
                                      rows=states[1:],
                                      xlabel=t("位置:A 的 token→B 的 token", "position:A token→B token"),
                                      ylabel=t("层 i", "layer i"),
                                      title=t(f"修补后 {ans_a} 找回的比例（层 × 位置）",
                                              f"Share of {ans_a} restored by patching (layer × position)")),
                   "cmp-patch")
        st.caption(t("通常：浅层时信息在被改动的位置，深层时移到最后一个位置——注意力在中间某几层把它搬了过去。",
                     "Typically the information sits at the changed position in early layers and at the last position "
                     "in deep "
                     "ones: attention moved it across somewhere in between."))

page.checks(checks.causal_prefix(ta, tb), "检查", "Checks")
