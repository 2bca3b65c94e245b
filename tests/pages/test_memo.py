"""Pages keep their checks, views and figures with the shared trace (StagePage.memo, ops.engine.trace.Trace.memo): a
second visit, by any session, draws what the first computed, in its own language and for its own pickers."""
from __future__ import annotations

import json

from apptest_utils import open_page


def titles(at) -> list[str]:
    """Each chart's title, with its subtitle (where a long title's second part goes) after it."""
    out = []
    for c in at.get("plotly_chart"):
        title = json.loads(c.proto.spec)["layout"].get("title", {})
        out.append(" ".join(x for x in (title.get("text", ""), title.get("subtitle", {}).get("text", "")) if x))
    return out


def test_memo_follows_the_language_and_the_pickers(tiny_app_dense):
    zh = open_page("attention", source=tiny_app_dense, lang="zh")
    en = open_page("attention", source=tiny_app_dense, lang="en")     # a second session on the same trace
    assert not zh.exception and not en.exception
    assert titles(zh)[0].startswith("层 0，头 0") and titles(en)[0].startswith("Layer 0, head 0")
    en.slider(key="head").set_value(1).run()
    assert titles(en)[0].startswith("Layer 0, head 1")
    assert "red frame = head 1" in titles(en)[1]                          # the grid of every head frames the new one


def test_memo_is_shared_between_sessions(tiny_app_dense):
    from ops.engine.store import STORE
    first = open_page("lm_head", source=tiny_app_dense, lang="en")
    traces = [STORE.peek(k) for k in STORE.keys(("trace",))]
    traces = [tr for tr in traces if tr is not None and any(k[0] == "lm_head" for k in tr.memos())]
    assert traces, "the LM head page kept nothing with its trace"
    kept = {k: v for k, v in traces[-1].memos().items() if k[0] == "lm_head"}
    second = open_page("lm_head", source=tiny_app_dense, lang="en")
    assert not first.exception and not second.exception
    again = {k: v for k, v in traces[-1].memos().items() if k[0] == "lm_head"}
    assert again.keys() == kept.keys() and all(again[k] is v for k, v in kept.items())   # nothing computed again
    assert [s.value for s in first.success] == [s.value for s in second.success]     # the same checks shown
