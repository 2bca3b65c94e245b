"""The Serving page's live panel: this server process's own continuous batching (classroom/batcher.py), redrawn every
few seconds: sequences in the current step, step time against a batch of one, tokens per second for the class."""
from __future__ import annotations

import time

import streamlit as st

from classroom import jobs
from content.words import say
from ops.lab.serving_batching import SPAN_S, batching_view

from .blocks import metrics, table

REFRESH = 3              # seconds between redraws while the tab is open


@st.fragment(run_every=REFRESH)
def show(lang: str):
    b = jobs.batcher()                   # looked up at each draw (a test turns it off)
    st.markdown(say("batching.title", lang))
    if b is None:
        st.info(say("batching.off", lang))
        return
    v = batching_view(b.records(), time.monotonic(), b.running)
    if not v["by_rows"]:
        st.caption(say("batching.none_yet", lang, cap=b.cap))
        return
    one = f"{v['one_ms']:.0f} ms" if v["one_ms"] is not None else "—"
    metrics([(say("batching.rows_now", lang), f"{v['rows_now']} / {b.cap}"),
             (say("batching.last_ms", lang), f"{v['last_ms']:.0f} ms"), (say("batching.one_ms", lang), one),
             (say("batching.tokens_per_s", lang, span=f"{SPAN_S:.0f}"), f"{v['tokens_per_s']:.1f}")])
    cols = [say(f"batching.col_{k}", lang) for k in ("rows", "steps", "ms", "per_token", "vs_one")]
    table([dict(zip(cols, (r["rows"], r["steps"], f"{r['ms']:.0f}", f"{r['ms_per_token']:.0f}",
                           "—" if r["vs_one"] is None else f"{r['vs_one']:.2f}×"))) for r in v["by_rows"]])
    st.caption(say("batching.note", lang, steps=len(b.records()), cap=b.cap))
