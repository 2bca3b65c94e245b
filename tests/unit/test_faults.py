"""Faults while running: a model file truncated under the app, and the cache folder deleted between runs."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _app():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["lang"] = "en"
    at.run()
    return at


@pytest.mark.real
def test_model_file_truncated_while_running(tiny_hf_folder, tmp_path, english):
    import ui.state

    folder = tmp_path / "copy"
    shutil.copytree(tiny_hf_folder("qwen2"), folder)
    f = folder / "model.safetensors"
    good = f.read_bytes()
    at = _app()
    at.session_state["source"] = str(folder)
    at.run()
    assert not at.error, [e.value for e in at.error]
    assert at.session_state.source == str(folder)
    f.write_bytes(good[: len(good) // 3])                 # truncated under the running app
    ui.state.load_model.clear()
    at.run()
    errors = " ".join(e.value for e in at.error)
    assert "model.safetensors" in errors and "truncated" in errors
    assert not at.exception
    f.write_bytes(good)                                   # restored: the next load recovers
    at.session_state["source"] = str(folder)
    at.run()
    assert not at.error and not at.exception and at.session_state.source == str(folder)


@pytest.mark.real
def test_cache_folder_deleted_between_runs(bundled, monkeypatch, tmp_path):
    """OPERATOR_LAB_CACHE on a copy of the prepared cache; deleted; the next load rebuilds it (~30-60 s)."""
    from ops import loading

    cache = tmp_path / "cache"
    monkeypatch.setenv("OPERATOR_LAB_CACHE", str(cache))
    (cache / loading.BUNDLED_DIRNAME).mkdir(parents=True)
    (cache / loading.BUNDLED_DIRNAME / "meta.json").write_text("{}")   # a cache that was there ...
    shutil.rmtree(cache)                                                 # ... and is deleted between runs
    config, weights, tok = loading.load_source(None)
    assert config.hidden_size == 896 and (cache / loading.BUNDLED_DIRNAME / "meta.json").exists()
    assert tok.encode("I like shanghai") == [40, 1075, 557, 30070]
