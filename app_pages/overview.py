"""Overview: the whole pipeline with live shapes, the cheat sheet, and a door into every stage (all from the
stage registry, content/stages.py)."""

import pandas as pd
import streamlit as st

from content import stages, texts
from content.words import say
from ops.lab import overview_data
from ui.blocks import shape_str
from ui.page import StagePage
from ui.session import lang, t
from viz.overview import opening_html, pipeline_picture

page = StagePage("overview", io_text="")      # no shapes in the strip: the symbols are glossed first, below
model, trace, c = page.model, page.trace, page.config
B, S, H, L, V = trace.B, trace.S, c.hidden_size, c.num_hidden_layers, c.vocab_size
nh, nkv, hd, I = c.num_attention_heads, c.num_key_value_heads, c.head_dim, c.intermediate_size

# ---- first, in plain words: what happens to the reader's own prompt; then what each symbol below stands for ----
o, lg = overview_data.opening(trace), lang()
n = say("first_screen.tokens_one", lg, n=o["tokens"]) if o["tokens"] == 1 else \
    say("first_screen.tokens_many", lg, n=f"{o['tokens']:,}")
prompt = o["prompt"] if len(o["prompt"]) <= 60 else o["prompt"][:59] + "…"
first = (say("first_screen.opening_chat", lg, prompt=prompt, tokens=n, L=o["L"], V=f"{o['V']:,}") if o["chat"] else
         say("first_screen.opening", lg, prompt=prompt, tokens=n, L=o["L"], V=f"{o['V']:,}"))
if o["rows"] > 1:
    first += " " + say("first_screen.batch", lg, B=o["rows"])
st.markdown(opening_html(first), unsafe_allow_html=True)
st.markdown(say("first_screen.symbols", lg, B=B, S=S, H=H, L=L, V=f"{V:,}",
                ids=shape_str(trace.shapes()["tokens.ids"]), logits=shape_str(trace.shapes()["logits"])))

# ---- the main picture: the pipeline, with the shapes this run recorded -------------------------------------
page.picture(pipeline_picture(c, trace.shapes(), B, S, lang(), height=540))   # the whole of it above the fold
st.caption(say("page_overview.the_right_column_is", lang()))
st.markdown(say("page_overview.operator_lab_takes_a", lang()))

page.explain()

# ---- the live shapes against the trace contract (ops/engine/trace.py) ---------------------------------------------
st.header(say("page_overview.shape_check_this_trace", lang()))
chk = overview_data.contract_check(trace)
if chk["wrong"]:
    st.error(t("形状与 trace 契约不符：", "Shapes differ from the trace contract: ")
             + ", ".join(f"{n} {shape_str(got)} ≠ {shape_str(want)}" for n, got, want in chk["wrong"][:8]))
else:
    st.success(say("page_overview.contract_ok", lang(), checked=chk["checked"], recorded=chk["recorded"]))

# ---- the cheat sheet -------------------------------------------------------------------------------------
st.header(t("速查表", "Cheat sheet"))
try:
    tr_ = lambda r, key: r.get(f"{key}_{lang()}", r[key])           # a row's field in the page's language
    table = [{"#": r.get("step", k + 1), t("算子", "operator"): tr_(r, "operator"),
              t("输入形状", "input shape"): tr_(r, "input_shape"),
              t("输出形状", "output shape"): tr_(r, "output_shape"),
              t("作用", "purpose"): r.get(f"purpose_{lang()}", "")}
             for k, r in enumerate(texts.cheatsheet(page.numbers))]
except Exception:   # no cheat sheet file: build the table from the trace itself
    table = [{t("张量", "tensor"): n, t("形状", "shape"): shape_str(s)} for n, s in trace.shapes().items()
             if not n.startswith("layers.") or n.startswith("layers.0.")]
st.table(pd.DataFrame(table).set_index(list(table[0])[0]) if table else [])
st.caption(say("first_screen.sheet_symbols", lg, B=B, S=S, H=H, V=f"{V:,}", nh=nh, nkv=nkv, group=nh // max(nkv, 1),
                hd=hd, I=I))

# ---- into each stage (the registry's pages): the sidebar lists them too, so the grid is drawn when unfolded ------
if box := page.more("进入每一步", "Step into each stage", "doors"):
    with box:
        doors = [s for s in stages.pages() if s.key != page.stage.key]
        cols = st.columns(5)
        for k, s in enumerate(doors):
            with cols[k % 5]:
                st.page_link(f"app_pages/{s.page}.py", label=s.title(lang()), icon=s.icon)
