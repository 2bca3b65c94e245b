"""Overview page: the whole pipeline on one screen (real model, tiny random models, a batch, English)."""
from __future__ import annotations

import html

import pytest
from apptest_utils import BATCH, page_ok, svg_pictures

from content import stages

PAGE = "overview"
EXPECT = dict(pictures=1, checks=1)        # the pipeline diagram (SVG) and the live shape check


@pytest.mark.real
def test_overview_real():
    page_ok(PAGE, **EXPECT)


@pytest.mark.real
def test_overview_real_batch_english(english):
    page_ok(PAGE, prompt=BATCH, lang="en", **EXPECT)


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


def test_overview_tiny_batch_english(tiny_app_dense, english):
    check_registry(page_ok(PAGE, source=tiny_app_dense, prompt=BATCH, lang="en", **EXPECT), "en")


def test_overview_tiny_one_token(tiny_app_dense):
    page_ok(PAGE, source=tiny_app_dense, prompt="a", **EXPECT)        # S = 1


def test_overview_tiny_moe(tiny_app_moe):
    page_ok(PAGE, source=tiny_app_moe, prompt=BATCH, **EXPECT)


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
