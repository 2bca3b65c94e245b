"""Overview page: the whole pipeline on one screen (real model, tiny random models, a batch, English)."""
from __future__ import annotations

import html

import pytest
from apptest_utils import BATCH, page_ok, svg_pictures
from page_table import expect

from content import stages

PAGE = "overview"
EXPECT = expect(PAGE)


def check_registry(at, lang="zh"):
    """The diagram's boxes and the doors below are the registry's stages; the shape check names the contract.
    The overview draws no Plotly chart: its first page needs none of Plotly's script (bench/browser.py)."""
    diagram = html.unescape(svg_pictures(at)[0])
    missing = [s.title(lang) for s in stages.pipeline() if s.title(lang) not in diagram]
    assert not missing, f"stages missing from the pipeline diagram: {missing}"
    assert not at.get("plotly_chart")
    doors = {e.proto.page for e in at.main.get("page_link")}
    assert doors == {s.page for s in stages.pages() if s.key != PAGE}, doors
    assert any(("trace 契约" if lang == "zh" else "trace contract") in s.value for s in at.success)


def test_overview_tiny(tiny_app_dense):
    at = page_ok(PAGE, source=tiny_app_dense, **EXPECT)
    assert any("H = 32" in c.value for c in at.caption), [c.value for c in at.caption]   # the tiny model is loaded
    check_registry(at)


def test_overview_tiny_batch_english(tiny_app_dense):
    check_registry(page_ok(PAGE, source=tiny_app_dense, prompt=BATCH, lang="en", **EXPECT), "en")


def test_every_run_sends_the_same_script_warm_up(tiny_app_dense):
    """Every run puts one script element in the sidebar (ui.browser.warm_scripts) naming the installed Streamlit's
    chunk files, the same element at the same place on the next run (a sidebar element drawn on the first run only
    moved every later one, and the Teacher fold snapped shut; the script itself acts once per tab)."""
    from apptest_utils import new_app

    from ui.browser import warm_files

    def sent(at):
        return [e.proto for e in at.sidebar.get("html") if "__olWarm" in e.proto.body]

    at = new_app(lang="en")
    at.session_state["source"] = tiny_app_dense
    at.run()
    first = sent(at)
    assert len(first) == 1 and first[0].unsafe_allow_javascript, [e.type for e in at.sidebar.get("html")]
    assert all(f in first[0].body for f in warm_files())
    before = [e.type for e in at.sidebar]
    at.run()
    assert [e.body for e in sent(at)] == [first[0].body] and not at.exception
    assert [e.type for e in at.sidebar] == before


def _opening(at) -> str:
    """The overview's first sentence (the markdown element of class ol-opening), as the reader sees it."""
    found = [html.unescape(m.value) for m in at.main.get("markdown") if 'class="ol-opening"' in m.value]
    assert len(found) == 1, [m.value[:80] for m in at.main.get("markdown")]
    return found[0]


@pytest.mark.parametrize("lang,prompt", [("zh", "我明天要去北京参加面试，我觉得"), ("en", "My cat keeps stealing socks, so")])
def test_first_sentence_is_about_the_readers_prompt(tiny_app_dense, monkeypatch, lang, prompt):
    """The page opens on one plain sentence naming the reader's prompt, its token count, the layers and the
    vocabulary; the count is the Hugging Face tokenizers library's own count for the same tokenizer.json (an
    independent reference), and the symbols come after it, each glossed."""
    import json
    from pathlib import Path

    import tokenizers


    at = page_ok(PAGE, source=tiny_app_dense, prompt=prompt, lang=lang, **EXPECT)
    n = len(tokenizers.Tokenizer.from_file(str(Path(tiny_app_dense) / "tokenizer.json")).encode(prompt).ids)
    cfg = json.loads((Path(tiny_app_dense) / "config.json").read_text())
    first = _opening(at)
    assert prompt in first, first
    count = f"{n} 个 token" if lang == "zh" else f"{n} tokens"
    assert count in first, (count, first)
    layers = f"{cfg['num_hidden_layers']} 层" if lang == "zh" else f"{cfg['num_hidden_layers']} layers"
    assert layers in first and f"{cfg['vocab_size']:,}" in first, first
    later = [m.value for m in at.main.get("markdown") if "B = " in m.value]
    assert later and all(s in later[0] for s in ("B = 1", f"S = {n}", "tokens.ids", "logits", "H = ", "L = ", "V = "))
    marks = [m.value for m in at.main.get("markdown")]
    assert marks.index(next(m for m in marks if 'class="ol-opening"' in m)) < marks.index(later[0])


def test_first_sentence_with_a_batch_speaks_of_the_first_row(tiny_app_dense):
    at = page_ok(PAGE, source=tiny_app_dense, prompt=BATCH, **EXPECT)
    first = _opening(at)
    assert BATCH.splitlines()[0] in first and "2 行" in first, first


def test_a_new_prompts_trace_reports_every_layer(tiny_app_dense, monkeypatch):
    """The wait for a new prompt's trace is a bar that counts the layers as the forward pass records them, not a
    spinner: one report as it begins, then the layers done, in order, ending at every layer. Through the trace batcher
    (classroom/tracer.py) the session polls a pass shared with other sessions, so a fast pass may skip layers."""
    import json
    from pathlib import Path

    from ui import state

    seen, real = [], state.progress_bar

    def recorded():
        box, report = real()

        def both(done, total, step, fields):
            seen.append((done, total, step))
            report(done, total, step, fields)
        return box, both
    monkeypatch.setattr(state, "progress_bar", recorded)
    page_ok(PAGE, source=tiny_app_dense, prompt="a prompt only this test traces", **EXPECT)
    L = json.loads((Path(tiny_app_dense) / "config.json").read_text())["num_hidden_layers"]
    tiny = [r for r in seen if r[1] == L]        # the app's first run traced the default prompt on the bundled model
    assert tiny[0] == (0, L, "trace") and tiny[-1] == (L, L, "trace"), seen
    assert all(a[0] < b[0] for a, b in zip(tiny, tiny[1:])) and all(r[2] == "trace" for r in tiny), seen
