"""Browser smoke test: `streamlit run app.py` in headless Debian Chromium, every page opened, no
exception box anywhere, a screenshot per page in artifacts/screenshots/ (look at them)."""
from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
PAGES = ["overview", "tokenize", "embedding", "rmsnorm", "attention", "residual", "mlp", "lm_head",
         "sampling", "generate", "tour", "scale", "practice"]
pytestmark = [pytest.mark.real, pytest.mark.browser]


@pytest.fixture(scope="module")
def server():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("Debian chromium is missing: scripts/test.sh installs it (apt-get install chromium)")
        pytest.skip("Debian chromium is not installed")
    sys.path.insert(0, str(ROOT / "bench"))
    from load_test import free_port, start_server, stop_server   # the load test starts servers the same way

    port = free_port()
    proc = start_server(port, {})
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_server(proc)


def wait_rendered(page, timeout_s: float = 180):
    """Streamlit streams elements over a websocket: wait for a title and for the run to finish."""
    page.wait_for_selector("h1", timeout=timeout_s * 1000)
    deadline = time.time() + timeout_s
    quiet_since = None
    while time.time() < deadline:
        running = page.locator('[data-testid="stStatusWidget"]').count() > 0 and \
            page.locator('[data-testid="stStatusWidget"]').is_visible()
        spinner = page.locator('[data-testid="stSpinner"]').count() > 0
        if running or spinner:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.time()
        elif time.time() - quiet_since > 2.0:
            return
        time.sleep(0.3)
    raise TimeoutError("the page kept running")


def test_every_page_renders_without_an_exception(server):
    sync_api = pytest.importorskip("playwright.sync_api")
    if SHOTS.exists():
        shutil.rmtree(SHOTS)
    SHOTS.mkdir(parents=True)
    failures = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--no-first-run", "--disable-sync"])
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        for name in PAGES:
            path = "" if name == "overview" else name          # the default page lives at /
            page.goto(f"{server}/{path}?prompt=I%20like%20shanghai")
            try:
                wait_rendered(page)
            except Exception as e:          # a hung page is a failure, with a screenshot of it
                failures.append(f"{name}: {e}")
            page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
            boxes = page.locator('[data-testid="stException"]')
            if boxes.count():
                failures.append(f"{name}: exception box: {boxes.first.inner_text()[:300]}")
        browser.close()
    assert not failures, "\n".join(failures)
    assert len(list(SHOTS.glob("*.png"))) == len(PAGES)
