"""The explanation under each stage page: academic / plain / formula-and-code tabs with live numbers, the checks
against PyTorch, and the same operator at Qwen2.5-32B's scale."""
from __future__ import annotations

import inspect

import streamlit as st

from content import costs_text, texts
from content.words import say
from ops.arith import costs

from . import blocks
from .blocks import drawn, lazy, metrics, shape_str, table
from .session import lang, set_query, t

LEVELS = ("academic", "plain", "code")      # the explanation's tabs, in their order; "code": formula and code


def explain_level() -> str:
    """The explanation tab this session reads ("plain" on a first visit, else ?level= from a link): kept in
    session_state under "explain_level" (no widget's key, so a page switch does not drop it) and in the URL."""
    ss = st.session_state
    if ss.get("explain_level") not in LEVELS:
        ss["explain_level"] = st.query_params.get("level") if st.query_params.get("level") in LEVELS else "plain"
    return ss["explain_level"]


def explanation(key: str, numbers: dict, extra_tab=None, by_hand=None):
    """学术版 / 白话版 tabs (and an optional third tab drawn by extra_tab()) with the stage's text, opened on the tab
    the reader chose last, on any page (explain_level); by_hand() draws small worked examples (ui/by_hand.py) in an
    expander under the plain text."""
    names = [t("学术版", "Academic"), t("白话版", "Plain language")] + ([extra_tab[0]] if extra_tab else [])
    level = explain_level()
    want = names[min(LEVELS.index(level), len(names) - 1)]       # no formula tab here: the plain text
    tab_key = f"explain-{key}"
    # tabs without state: opened on the level, all drawn
    if not blocks.LAZY:
        boxes = [drawn(x) for x in st.tabs(names, default=want)]
    else:
        # the tab state Streamlit keeps lasts while this page is shown; on arrival (or in a new language) it is
        # set from the session's level, and a click here becomes the level every page opens on
        if st.session_state.get(tab_key) not in names:
            st.session_state[tab_key] = want
        boxes = [drawn(x) for x in st.tabs(names, **lazy(tab_key))]
        opened = next((lv for lv, box in zip(LEVELS, boxes) if box is not None), level)
        if names[LEVELS.index(opened)] != want:                  # a click here (not a page without a formula tab)
            st.session_state["explain_level"] = opened
    set_query("level", st.session_state["explain_level"])
    for tab, level in zip(boxes, ("academic", "plain")):
        if tab is None:
            continue
        with tab:
            try:
                st.markdown(texts.explain(key, lang(), level, numbers))
            except Exception as e:              # a missing text must not take the page down
                st.info(t("这一段讲解暂缺：", "This explanation is missing: ") + f"{key}/{level} ({e})")
            if level == "plain" and by_hand is not None:
                box = drawn(st.expander(t("动手算一遍", "Do it by hand"), icon=":material/calculate:",
                                        **lazy(f"by-hand-{key}")))
                if box:
                    with box:
                        by_hand()
    if extra_tab and boxes[2]:
        with boxes[2]:
            extra_tab[1]()


def formula_and_code(latex, *functions):
    """The formula, then the source of the functions that computed it (the code that actually ran)."""
    for line in [latex] if isinstance(latex, str) else latex:
        st.latex(line)
    for f in functions:
        st.caption(f"{f.__module__}.{f.__qualname__}")
        st.code(inspect.getsource(f), language="python")


def show_checks(results):
    """ops/lab/checks.py results: one green or red line each."""
    for c in results:
        (st.success if c.ok else st.error)(c.text(lang()))


def at_scale(stage: str, B: int, S: int):
    """The same operator's shapes, parameters, FLOPs and bytes for Qwen2.5-32B at the user's B and S."""
    st.header(t("放大到 Qwen2.5-32B", "At scale: Qwen2.5-32B"))
    ref = costs.reference_config()
    try:
        c = costs.operator_costs(ref, stage, B, S)
    except Exception as e:
        st.info(t("规模数据暂不可用：", "Scale figures unavailable: ") + str(e))
        return
    layers = c.get("layers", 1)
    st.caption(say("explain_ui.scale_caption", lang(), B=B, S=S, layers=layers))
    metrics([(t("输入 → 输出", "input → output"), f"{shape_str(c['input_shape'])} → {shape_str(c['output_shape'])}"),
             (t("参数量", "parameters"), costs.human(c.get("params", 0))),
             ("FLOPs", costs.human(c.get("flops", 0), "FLOP")),
             (t("读写字节 (bf16)", "bytes moved (bf16)"), costs.human(c.get("bytes", 0), "B"))],
            [2, 1, 1, 1])                    # the shapes get the room they need: numbers are never cut
    if c.get("tensors"):
        table([{t("权重", "weight"): n, t("形状", "shape"): shape_str(sh)} for n, sh in c["tensors"]])
    note = "lm_head_tied" if stage == "lm_head" and ref.tie_word_embeddings else stage
    if note in costs_text.AT_SCALE:
        st.caption(costs_text.at_scale_note(note, lang(), layers=layers,
                                            scores=shape_str([B, ref.num_attention_heads, S, S])))
