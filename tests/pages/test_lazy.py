"""Lazy views (ui/page.py, LAZY): the explanation draws only its open tab, and the by-hand examples only when
unfolded; opening one reruns the page and draws it. The other page tests run with OPERATOR_LAB_LAZY=0
(tests/conftest.py) so that they see every tab's text at once."""
from __future__ import annotations

from apptest_utils import open_page, texts


def test_explanation_draws_only_the_open_tab(tiny_app_dense, english, monkeypatch):
    import ui.page
    monkeypatch.setattr(ui.page, "LAZY", True)
    at = open_page("rmsnorm", source=tiny_app_dense, lang="en")
    assert not at.exception
    first = texts(at)
    assert "Do it by hand" not in first and not at.code            # plain tab and formula tab not drawn
    assert at.session_state["explain-rmsnorm"] == "Academic"
    at.session_state["explain-rmsnorm"] = "Plain language"          # what a click on the tab does
    at.run()
    assert not at.exception
    second = texts(at)
    assert "Do it by hand" in second and second != first
    assert not any(x.key and x.key.startswith("hand_") for x in at.number_input)  # folded: examples not run
    at.session_state["by-hand-rmsnorm"] = True                      # unfold the examples
    at.run()
    assert not at.exception
    assert any(x.key and x.key.startswith("hand_") for x in at.number_input)
    at.session_state["explain-rmsnorm"] = "Formula and code"
    at.run()
    assert not at.exception and at.code and at.latex
