"""Background work that fails is reported, not swallowed: a log line, and a note in the sidebar."""
from __future__ import annotations

import threading

from apptest_utils import open_page, texts


def test_a_failing_job_is_logged_and_listed(monkeypatch, tiny_hf_folder, capfd):
    from ui import state

    def boom():
        raise RuntimeError("planted failure")

    monkeypatch.setattr(state, "BACKGROUND_FAILURES", [])
    monkeypatch.setattr(state, "FIRST_VISITS", lambda *a, **k: [boom])
    monkeypatch.setattr(state, "ahead_sets", lambda model: [])
    state.load_model.clear()
    try:
        state.load_model(str(tiny_hf_folder("qwen2")), "cpu", "float32")
        for th in threading.enumerate():
            if th.name == "weight-sets":
                th.join(timeout=60)
    finally:
        state.load_model.clear()
    assert any("planted failure" in note for note in state.BACKGROUND_FAILURES), state.BACKGROUND_FAILURES
    assert "operator-lab: a background job failed" in capfd.readouterr().err


def test_the_sidebar_shows_the_failures(monkeypatch, tiny_app_dense):
    from ui import state

    monkeypatch.setattr(state, "BACKGROUND_FAILURES", ["boom for the test: RuntimeError: planted"])
    at = open_page("embedding", source=tiny_app_dense, lang="en", folds=False)
    assert "prepared in the background failed" in texts(at) and "planted" in texts(at)
