"""Lazy views (ui/blocks.py, LAZY): the explanation draws only its open tab, the by-hand examples and the secondary
views (page.more) only when unfolded, lazy tabs (page.tabs) only the open one; opening one reruns the page and
draws it. Lazy views are the default every page test runs with; these tests pin it on all the same."""
from __future__ import annotations

from apptest_utils import open_page, texts

import ui.blocks


def test_explanation_draws_only_the_open_tab(tiny_app_dense, monkeypatch):
    monkeypatch.setattr(ui.blocks, "LAZY", True)
    at = open_page("rmsnorm", source=tiny_app_dense, lang="en", folds=False)
    assert not at.exception
    first = texts(at)
    assert "Do it by hand" in first and not at.code                 # a first visit: the plain tab, no formula tab
    assert at.session_state["explain-rmsnorm"] == "Plain language"
    assert not any(x.key and x.key.startswith("hand_") for x in at.number_input)  # folded: examples not run
    at.session_state["explain-rmsnorm"] = "Academic"                # what a click on the tab does
    at.run()
    assert not at.exception
    second = texts(at)
    assert "Do it by hand" not in second and second != first and not at.code
    at.session_state["explain-rmsnorm"] = "Plain language"
    at.run()
    at.session_state["by-hand-rmsnorm"] = True                      # unfold the examples
    at.run()
    assert not at.exception
    assert any(x.key and x.key.startswith("hand_") for x in at.number_input)
    at.session_state["explain-rmsnorm"] = "Formula and code"
    at.run()
    assert not at.exception and at.code and at.latex


def charts(at) -> list[str]:
    """The keys of the Plotly charts drawn (ui.blocks.chart keys them "fig-<key>")."""
    return [c.proto.id.split("fig-", 1)[1] for c in at.get("plotly_chart")]


def test_secondary_views_draw_only_when_unfolded(tiny_app_dense, monkeypatch):
    monkeypatch.setattr(ui.blocks, "LAZY", True)
    at = open_page("attention", source=tiny_app_dense, lang="en", folds=False)
    assert not at.exception
    assert charts(at) == ["probs", "grid"]                          # the main picture only
    assert "RoPE: each dimension pair rotated by position" in texts(at)   # a folded view keeps its label
    assert at.session_state["more-attention-rope"] is False
    at.session_state["more-attention-rope"] = True                  # what a click on the label does
    at.run()
    assert not at.exception
    assert charts(at) == ["probs", "grid", "rope", "rope_freq"] and at.slider(key="pair")   # + the frequencies used
    at.slider(key="head").set_value(1).run()                        # a picker above: the view stays open
    assert not at.exception and "rope" in charts(at)


def test_lazy_tabs_draw_only_the_open_one(tiny_app_dense, monkeypatch):
    monkeypatch.setattr(ui.blocks, "LAZY", True)
    at = open_page("serving", source=tiny_app_dense, lang="en", folds=False)
    assert not at.exception
    assert charts(at) == ["online"]                                 # the first tab holds tables only
    at.session_state["tabs-serving-topics"] = "Speculative"
    at.run()
    assert not at.exception and charts(at) == ["online", "spec"]
    at.slider(key="sv-k").set_value(3).run()                        # a widget in the tab: it stays open
    assert not at.exception and charts(at) == ["online", "spec"]


def test_sidebar_model_settings_draw_only_when_unfolded(tiny_app_dense, monkeypatch):
    """The sidebar's model settings and model card are drawn only when unfolded; a dtype chosen there stays chosen
    after the fold closes again (the setting lives under its own key, the widget under w_dtype: ui.sidebar.bound)."""
    monkeypatch.setattr(ui.blocks, "LAZY", True)
    at = open_page("overview", source=tiny_app_dense, lang="en", folds=False)
    assert not at.exception
    model_boxes = lambda: [w for w in at.sidebar.selectbox if w.key in ("w_dtype", "w_device", "w_source")]
    assert not model_boxes() and "tokenizer tokens" not in texts(at)
    at.session_state["sidebar-model"] = True                        # what a click on "Model" does
    at.run()
    assert not at.exception and "tokenizer tokens" in texts(at)
    at.sidebar.selectbox(key="w_dtype").set_value("bfloat16").run()
    at.session_state["sidebar-model"] = False
    at.run()
    at.run()                                                        # a run after the one that did not draw it
    assert not at.exception and not model_boxes()
    assert at.session_state["dtype"] == "bfloat16" and "bfloat16" in at.sidebar.markdown[-1].value


def test_scale_flop_tabs_draw_only_the_open_one(tiny_app_dense, monkeypatch):
    """The scale page's prefill / decode FLOP tables: the open tab's table and total only; the other on a click."""
    monkeypatch.setattr(ui.blocks, "LAZY", True)
    at = open_page("scale", source=tiny_app_dense, lang="en", folds=False)
    assert not at.exception
    totals = lambda: [m.value for m in at.markdown if m.value.startswith("**Total:")]
    prefill = totals()
    assert len(prefill) == 1 and "FLOPs" in prefill[0]
    at.session_state["tabs-scale-flops"] = "One decode step (per operator)"
    at.run()
    assert not at.exception
    decode = totals()
    assert len(decode) == 1 and decode != prefill                   # the decode step's own table and total


def test_the_explanation_level_is_kept_across_pages(tiny_app_dense, monkeypatch):
    """A first visit opens on the plain text; the level chosen on one page opens the next, and rides in the URL."""
    monkeypatch.setattr(ui.blocks, "LAZY", True)
    at = open_page("rmsnorm", source=tiny_app_dense, lang="en")
    assert at.session_state["explain-rmsnorm"] == "Plain language" and at.query_params["level"] == "plain"
    at.session_state["explain-rmsnorm"] = "Academic"                # a click on the tab
    at.run()
    at.switch_page("app_pages/attention.py").run()
    assert not at.exception
    assert at.session_state["explain-attention"] == "Academic" and at.query_params["level"] == "academic"
    assert "Do it by hand" not in texts(at)                         # the plain tab's examples are not drawn
    at.session_state["explain-attention"] = "Formula and code"
    at.run()
    at.switch_page("app_pages/mlp.py").run()
    assert not at.exception and at.session_state["explain-mlp"] == "Formula and code" and at.code
    fresh = open_page("mlp", source=tiny_app_dense, lang="en", level="academic")   # a shared link's level
    assert fresh.session_state["explain-mlp"] == "Academic"
