"""The plain-install lane's browser walk (scripts/plain_install_walk.py) on a planted app: it opens folds and tabs that
appear only inside other folds and tabs, and it reports what it must: an exception raised deep inside (with the
exception's own line from the server's log), an st.error box, "Page not found". A walk that reached less, or saw a
crash as fine, fails here; the lane itself (scripts/plain_install.sh) is too slow for the suite.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.browser

# Lazy folds and tabs as the app makes them (ui/page.py lazy(): a key and on_change="rerun", drawn only when open).
APP = '''
import streamlit as st


def fold(label, key):
    box = st.expander(label, key=key, on_change="rerun")
    return box if box.open else None


def tabs(labels, key):
    return [x if x.open else None for x in st.tabs(labels, key=key, on_change="rerun")]


def clean():
    st.title("Clean page")
    if box := fold("Fold one", "f1"):
        with box:
            st.write("one")
    _, second = tabs(["First", "Second"], "t1")
    if second:
        with second:
            if box := fold("Fold in second", "f2"):
                with box:
                    _, inner_b = tabs(["Inner A", "Inner B"], "t2")
                    if inner_b:
                        with inner_b:
                            st.write("deep")


def broken():
    st.title("Broken page")
    if box := fold("Says error", "b1"):
        with box:
            st.error("Could not compute the planted thing")
    _, crashes = tabs(["Fine", "Crashes"], "b2")
    if crashes:
        with crashes:
            if box := fold("Deeper", "b3"):
                with box:
                    raise RuntimeError("planted in a fold in a tab")


def home():
    st.title("Home")


# the default page is served at / whatever its url_path, so the pages walked are the others
st.navigation([st.Page(home, default=True), st.Page(clean, url_path="clean"), st.Page(broken, url_path="broken")]).run()
'''


@pytest.fixture(scope="module")
def walk():
    sys.path.insert(0, str(ROOT / "scripts"))
    import plain_install_walk
    return plain_install_walk


@pytest.fixture(scope="module")
def planted(tmp_path_factory, walk):
    if not Path(walk.CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    sys.path.insert(0, str(ROOT / "bench"))
    from load_test import free_port, start_server, stop_server

    folder = tmp_path_factory.mktemp("planted")
    (folder / "app.py").write_text(APP, encoding="utf-8")
    # as the app's own .streamlit/config.toml: the box says only "an error"; the walk reads what from the server's log
    (folder / ".streamlit").mkdir()
    (folder / ".streamlit" / "config.toml").write_text('[client]\nshowErrorDetails = "none"\n', encoding="utf-8")
    port = int(os.environ.get("PLAIN_INSTALL_PORT") or free_port())     # the lane's port, when one is given
    mp = pytest.MonkeyPatch()
    mp.setenv("TMPDIR", str(folder))          # start_server writes its log under TMPDIR
    proc = start_server(port, {}, folder / "app.py")
    mp.undo()
    log = walk.ServerLog(str(folder / f"operator_lab_load_{port}.log"))
    try:
        with sync_api.sync_playwright() as p:
            browser = walk.launch(p)
            try:
                yield f"http://127.0.0.1:{port}", walk.new_page(browser), log
            finally:
                browser.close()
    finally:
        stop_server(proc)


def test_a_clean_page_has_every_nested_fold_and_tab_opened(walk, planted):
    base, page, log = planted
    failures = []
    v = walk.walk_page(page, base, "clean", "Clean page", "en", log, time.time() + 300, failures)
    assert failures == []
    assert v.opened == ["fold 'Fold one'", "tab 'Second'", "fold 'Fold in second' (in tab Second)",
                        "tab 'Inner B' (in tab Second > fold Fold in second)"]
    assert (v.folds, v.tabs, v.shown, v.unreached) == (2, 2, 2, [])     # shown: First, Inner A


def test_a_crash_deep_inside_and_an_error_box_are_reported(walk, planted):
    base, page, log = planted
    failures = []
    walk.walk_page(page, base, "broken", "Broken page", "zh", log, time.time() + 300, failures)
    assert failures == [
        "broken [zh] fold 'Says error': st.error: Could not compute the planted thing",
        "broken [zh] fold 'Deeper' (in tab Crashes): exception box: RuntimeError: planted in a fold in a tab"]


def test_an_unknown_page_is_reported(walk, planted):
    base, page, log = planted
    failures = []
    walk.walk_page(page, base, "nowhere", "Clean page", "en", log, time.time() + 300, failures)
    assert any("Page not found" in f for f in failures), failures
