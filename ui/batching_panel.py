"""The Serving page's live panel: this server process's own batching, redrawn every few seconds. Left, the decode
batcher (classroom/batcher.py): sequences in the current step (idle: the last step's), step time against a step of
one, tokens per second for the class averaged over the last 30 s. Right, the trace batcher (classroom/tracer.py): new
prompts traced together, prompts per pass, a pass of N against the N one by one. The figures come first, side by side
(one look on a projector); the tables under them."""
from __future__ import annotations

import time

import streamlit as st

import settings
from classroom import jobs
from content.words import say
from ops.lab.serving_batching import SPAN_S, batching_view, trace_view

from .blocks import metrics, table

REFRESH = 3              # seconds between redraws while the tab is open


@st.fragment(run_every=REFRESH)
def show(lang: str):
    b, tr = jobs.batcher(), jobs.tracer()            # looked up at each draw (a test turns them off)
    st.markdown(say("batching.title", lang))
    if not settings.current().classroom:
        st.caption(say("serving_live.not_classroom", lang))
    left, right = st.columns(2, gap="large")
    with left:
        st.markdown(say("serving_live.decode_head", lang))
        _decode(b, lang)
    with right:
        st.markdown(say("serving_live.trace_head", lang))
        _trace(tr, lang)


def _decode(b, lang: str):
    if b is None:
        st.info(say("batching.off", lang))
        return
    running = b.running                              # read once: the batcher's thread may change it
    v = batching_view(b.records(), time.monotonic(), running)
    if not v["by_rows"]:
        st.caption(say("batching.none_yet", lang, cap=b.cap))
        return
    one = f"{v['one_ms']:.0f} ms" if v["one_ms"] is not None else "—"
    if running:                                      # a step is running: its rows; else the last step's, marked idle
        now = (say("batching.rows_now", lang), f"{v['rows_now']} / {b.cap}")
    else:
        now = (say("batching.step_now", lang), say("batching.idle", lang, n=v["rows_now"], cap=b.cap))
    metrics([now,
             (say("batching.last_ms", lang), f"{v['last_ms']:.0f} ms"), (say("batching.one_ms", lang), one),
             (say("batching.tokens_per_s", lang, span=f"{SPAN_S:.0f}"), f"{v['tokens_per_s']:.1f}")])
    cols = [say(f"batching.col_{k}", lang) for k in ("rows", "steps", "ms", "per_token", "vs_one")]
    table([dict(zip(cols, (r["rows"], r["steps"], f"{r['ms']:.0f}", f"{r['ms_per_token']:.0f}",
                           "—" if r["vs_one"] is None else f"{r['vs_one']:.2f}×"))) for r in v["by_rows"]])
    st.caption(say("batching.note", lang, steps=len(b.records()), cap=b.cap))


def _trace(tr, lang: str):
    if tr is None:
        st.info(say("serving_live.trace_off", lang))
        return
    v = trace_view(tr.records())
    if not v["passes"]:
        st.caption(say("serving_live.trace_none_yet", lang, window=f"{tr.window:g}", cap=tr.cap))
        return
    one = _time(v["one_ms"]) if v["one_ms"] is not None else "—"
    pairs = [(say("serving_live.passes", lang), f"{v['passes']}"),
             (say("serving_live.per_pass", lang), f"{v['mean']:.1f} · {v['max']} · {v['last']}"),
             (say("serving_live.one_ms", lang), one)]
    best = [r for r in v["by_rows"] if r["rows"] > 1 and r["alone_ms"] is not None]
    if best:                                         # the largest pass seen, against its prompts one by one
        r = best[-1]
        pairs.append((say("serving_live.best", lang, n=r["rows"]),
                      say("serving_live.best_value", lang, together=_time(r["ms"]), alone=_time(r["alone_ms"]))))
    metrics(pairs)
    cols = [say(f"serving_live.col_{k}", lang) for k in ("rows", "passes", "ms", "alone", "vs")]
    table([dict(zip(cols, (r["rows"], r["passes"], f"{r['ms']:.0f}",
                           "—" if r["alone_ms"] is None else f"{r['alone_ms']:.0f}",
                           "—" if r["vs_alone"] is None else f"{r['vs_alone']:.2f}×"))) for r in v["by_rows"]])
    st.caption(say("serving_live.trace_note", lang, passes=v["passes"], sessions=f"{v['sessions_mean']:.1f}",
                   cap=tr.cap))


def _time(ms: float) -> str:
    """A pass's time as a projector reads it: 650 ms, 6.5 s."""
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"
