"""Browser tests: `streamlit run app.py` in headless Debian Chromium.

- every page's own URL (/overview, /tokenize, ...) works as a link, in both languages (?lang=zh, ?lang=en):
  no "Page not found", the page's title, no exception box; and / opens the overview;
- each page leaves an above-the-fold screenshot (1500 x 900, what a projector shows first) in
  artifacts/screenshots/<page>.<lang>.png: look at them.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1500, "height": 900}
pytestmark = [pytest.mark.real, pytest.mark.browser]

from apptest_utils import TITLE_WORDS, title_word  # noqa: E402  (tests/ is on the path: its conftest)


def page_urls() -> list[tuple[str, str]]:
    """(page, url path) for every page, from the stage registry when it is there."""
    try:
        from content import stages
        return [(s.page, s.page) for s in stages.pages()]
    except ImportError:
        return [(p, p) for p in TITLE_WORDS]


PAGES = page_urls()


@pytest.fixture(scope="module")
def server():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("Debian chromium is missing: scripts/test.sh installs it (apt-get install chromium)")
        pytest.skip("Debian chromium is not installed")
    sys.path.insert(0, str(ROOT / "bench"))
    from load_test import free_port, start_server, stop_server  # the load test starts servers the same way

    port = free_port()
    # a failure should say what broke: the app's config.toml redacts exception details for users
    proc = start_server(port, {"STREAMLIT_CLIENT_SHOW_ERROR_DETAILS": "full"})
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_server(proc)


@pytest.fixture(scope="module")
def browser(server):
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--no-first-run", "--disable-sync"])
        try:
            yield b
        finally:
            b.close()


def busy(page) -> bool:
    """The script is running (the app root's data-test-script-state) or a spinner is up. Not the status
    widget: it also shows "File change. Rerun" when a source file is saved, which is not a run."""
    state = page.get_attribute('[data-testid="stApp"]', "data-test-script-state")
    if state is None:                   # an older / newer frontend without the attribute
        widget = page.locator('[data-testid="stStatusWidget"]')
        running = widget.count() > 0 and "Running" in widget.inner_text()
    else:
        running = state != "notRunning"
    return running or page.locator('[data-testid="stSpinner"]').count() > 0


def wait_rendered(page, timeout_s: float = 180, quiet_s: float = 1.5):
    """Streamlit streams elements over a websocket: wait for a title (or an exception box, when a page breaks
    before its title), then for the run to finish and stay finished for quiet_s (charts draw after it)."""
    page.wait_for_selector('h1, [data-testid="stException"]', timeout=timeout_s * 1000)
    deadline = time.time() + timeout_s
    quiet_since = None
    while time.time() < deadline:
        if busy(page):
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.time()
        elif time.time() - quiet_since > quiet_s:
            return
        time.sleep(0.3)
    raise TimeoutError("the page kept running")


def problems_on(page, name: str, lang: str) -> list[str]:
    """What is wrong with the page as drawn: a "Page not found" dialog, no title, an exception box."""
    out = []
    if page.get_by_text("Page not found").count():
        out.append(f"{name}: 'Page not found' at {page.url}")
    titles = page.locator('[data-testid="stMain"] h1').all_inner_texts() or page.locator("h1").all_inner_texts()
    want = title_word(name, lang)
    if not any(want.lower() in t.lower() for t in titles):
        out.append(f"{name} ({lang}): no title with {want!r} at {page.url}: {titles}")
    boxes = page.locator('[data-testid="stException"]')
    if boxes.count():
        out.append(f"{name} ({lang}): exception box: {boxes.first.inner_text()[:500]}")
    return out


def wait_charts_drawn(page, seconds: float = 15.0):
    """Plotly draws after the script has finished, and an element whose JavaScript chunk is still loading is a
    grey skeleton (a chart is one until Plotly's script has loaded, so it is not yet counted as a chart): wait
    (bounded) until no skeleton is left and every chart has its SVG, so the screenshot shows the picture and
    not its placeholder. A slow chart only costs the wait, never a failure."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        charts = page.locator('[data-testid="stPlotlyChart"]').count()
        skeletons = page.locator('[data-testid="stSkeleton"]').count()
        if not skeletons and page.locator('[data-testid="stPlotlyChart"] .main-svg').count() >= charts:
            return
        page.wait_for_timeout(250)


def open_and_check(page, url: str, name: str, lang: str) -> list[str]:
    page.goto(url)
    try:
        wait_rendered(page)
    except Exception as e:              # a hung page is a failure (the caller still takes its screenshot)
        return [f"{name} ({lang}) at {url}: {e}"]
    return problems_on(page, name, lang)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_page_opens_at_its_own_url(server, browser, lang):
    """A copied link opens its page: http://host:port/<url_path>?lang=.. for every page, /overview too.
    No "Page not found", the page's title in that language, no exception box; then a screenshot of what
    a projector shows first (1500 x 900, the default prompt "I like shanghai")."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("*.png"):
        if old.name.endswith(f".{lang}.png") or old.name.count(".") == 1:      # this language's, or stale <page>.png
            old.unlink()
    page = browser.new_page(viewport=VIEWPORT)
    failures = []
    for name, path in PAGES:
        failures += open_and_check(page, f"{server}/{path}?lang={lang}", name, lang)
        wait_charts_drawn(page)
        page.screenshot(path=str(SHOTS / f"{name}.{lang}.png"), full_page=False)   # above the fold
    page.close()
    assert not failures, "\n".join(failures)
    shots = sorted(SHOTS.glob(f"*.{lang}.png"))
    assert len(shots) == len(PAGES), [s.name for s in shots]


def test_root_opens_the_overview(server, browser):
    """http://host:port/ (no path, no query) is the overview, in Chinese."""
    page = browser.new_page(viewport=VIEWPORT)
    failures = open_and_check(page, f"{server}/", "overview", "zh")
    page.close()
    assert not failures, "\n".join(failures)


def test_first_page_loads_later_pages_component_scripts(server, browser):
    """A fresh session's overview (no chart, no table) has the browser fetch the component scripts later pages use
    (ui.browser.WARM_CHUNKS: Plotly's, the table's, ...) while it is drawn, so the first chart page does not wait for
    them; and the overview itself still draws no Plotly chart."""
    from ui.browser import warm_files  # the repo root is on the path (tests/conftest.py)

    files = warm_files()
    assert any(f.startswith("PlotlyChart.") for f in files), files      # the installed Streamlit has the chunk
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.goto(f"{server}/overview?lang=en")
    wait_rendered(page)
    fetched = []
    for _ in range(60):                                    # the imports start with the first run: allow 30 s
        fetched = page.evaluate("() => performance.getEntriesByType('resource').map(e => e.name.split('/').pop())")
        if all(f in fetched for f in files):
            break
        time.sleep(0.5)
    assert [f for f in files if f not in fetched] == [], "not fetched by the first page"
    assert page.locator('[data-testid="stPlotlyChart"]').count() == 0
    assert page.locator('[data-testid="stException"]').count() == 0
    ctx.close()


def test_charts_bench_draws_a_pages_charts_alone_on_a_bare_app(browser, tmp_path):
    """bench/charts.py: a page's Plotly charts, captured by the test runner, are drawn on its bare two-page app and
    a switch between its pages completes (click to the last chart drawn), the floor's chart too."""
    import json

    import charts  # bench/ is on the path (the server fixture put it there)

    files = charts.capture(["atlas"], "en", tmp_path)["atlas"]        # every view: the tests draw lazy ones too
    assert len(files) >= 2 and all(json.loads(f.read_text())["data"] for f in files)
    script = charts.bare_app(tmp_path)
    for drawn in (files[:2], ["floor"]):
        times = charts.switches(browser, script, drawn, 2)
        assert len(times) == 2 and all(0 < t < 60 for t in times), times
