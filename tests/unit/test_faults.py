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
def test_model_file_truncated_while_running(tiny_hf_folder, tmp_path):
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
    """The cache folder (a copy of the prepared one, by hard links) is used as it is; deleted between runs, the
    next load rebuilds it (~30-60 s)."""
    import os

    from ops.models import bundled as bundled_mod, loading

    real = bundled_mod.bundled_dir()
    cache = tmp_path / "cache"
    shutil.copytree(real, cache / bundled_mod.BUNDLED_DIRNAME, copy_function=os.link)     # the prepared cache, copied
    monkeypatch.setattr(bundled_mod, "CACHE", cache)
    meta = cache / bundled_mod.BUNDLED_DIRNAME / "meta.json"
    stamp = meta.stat().st_mtime_ns
    config, weights, tok = loading.load_source(None)
    assert meta.stat().st_mtime_ns == stamp                      # the copy was used, not rebuilt
    assert config.hidden_size == 896 and tok.encode("I like shanghai") == [40, 1075, 557, 30070]
    del weights
    shutil.rmtree(cache)                                         # ... and deleted between runs
    config, weights, tok = loading.load_source(None)
    assert config.hidden_size == 896 and meta.exists() and meta.stat().st_mtime_ns != stamp
    assert tok.encode("I like shanghai") == [40, 1075, 557, 30070]
    assert (real / "meta.json").exists()                         # the real cache was never touched
