"""The browser's time: click to last chart drawn, in Debian's Chromium, against `streamlit run app.py`.

    python bench/browser.py [--laps 2] [--lang en]

Beside every figure, the same action on a bare Streamlit app served and drawn in the same run (the floor):
two pages with one Plotly chart and one slider each (bench/_floor_app.py, written to a temp folder).
1. fresh session: a new browser context opens the overview (the server has already loaded the model and
   traced the default prompt once, so this is a session's first visit after the model is loaded);
   floor: a new context opens the floor app.
2. page switch: click every page's sidebar link in turn, `--laps` laps; floor: click between its two pages
   as many times.
3. picker change: the layer slider on the attention and MLP pages moved one step (ArrowRight); floor: its
   slider moved one step.
"Done" = the script has run (the app root's data-test-script-state went back to notRunning), no spinner,
and every Plotly chart on the page has drawn its SVG. Targets (issue 14): page-switch median <= 2x the
floor's, worst page <= 3x, fresh session's first page <= 3 s.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import textwrap
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))
from load_test import free_port, start_server, stop_server  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
VIEWPORT = {"width": 1500, "height": 900}

FLOOR_APP = textwrap.dedent('''
    import numpy as np
    import plotly.graph_objects as go
    import streamlit as st

    def page(name):
        def run():
            st.title(name)
            k = st.slider("k", 1, 20, 5, key="k_" + name)
            x = np.arange(200)
            st.plotly_chart(go.Figure(go.Scatter(x=x, y=np.sin(x / k))), key="chart")
        return st.Page(run, title=name, url_path=name)

    st.navigation([page("alpha"), page("beta")]).run()
''')

DONE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stSpinner"]')) return false;
  if (!document.querySelector('[data-testid="stMain"] h1')) return false;
  for (const c of document.querySelectorAll('[data-testid="stPlotlyChart"]'))
    if (!c.querySelector('.main-svg')) return false;
  return true;
}"""
RUNNING_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return app && app.getAttribute('data-test-script-state') !== 'notRunning';
}"""


def start_floor(port: int):
    folder = Path(tempfile.mkdtemp(prefix="operator_lab_floor_"))
    (folder / "floor.py").write_text(FLOOR_APP)
    return start_server(port, {}, script=folder / "floor.py")


def wait_done(page, t0: float, timeout_s: float = 120) -> float:
    """Seconds from t0 to done. A run must be seen to start (or the URL/page to change) first."""
    try:
        page.wait_for_function(RUNNING_JS, timeout=3000, polling="raf")
    except Exception:       # the run may have started and ended between two frames
        pass
    page.wait_for_function(DONE_JS, timeout=timeout_s * 1000, polling="raf")
    return time.perf_counter() - t0


def open_fresh(browser, url: str) -> float:
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    t0 = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=180_000)
    dt = wait_done(page, t0)
    ctx.close()
    return dt


def click_link(page, path: str) -> float:
    """Click the sidebar link whose URL path is /<path> (with or without a query string)."""
    links = page.locator('[data-testid="stSidebar"] a')
    hrefs = [urllib.parse.urlparse(h or "").path for h in links.evaluate_all("els => els.map(e => e.href)")]
    if f"/{path}" not in hrefs:
        raise RuntimeError(f"no sidebar link to /{path}: {hrefs}")
    link = links.nth(hrefs.index(f"/{path}"))
    t0 = time.perf_counter()
    link.click()
    page.wait_for_url(f"**/{path}*", timeout=30_000)
    return wait_done(page, t0)


def nudge_slider(page, index: int = 0) -> float:
    thumb = page.locator('[data-testid="stMain"] [role="slider"]').nth(index)
    thumb.wait_for(state="attached", timeout=30_000)
    thumb.focus()
    t0 = time.perf_counter()
    thumb.press("ArrowRight")
    return wait_done(page, t0)


def stats(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} / {max(xs):.2f}"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--laps", type=int, default=2)
    p.add_argument("--lang", default="en", choices=["en", "zh"])
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    from content import stages
    pages = [s.page for s in stages.pages()]
    print(f"machine: nproc {os.cpu_count()}, load avg at start {os.getloadavg()[0]:.2f}, "
          f"date {time.strftime('%Y-%m-%d %H:%M')}, {len(pages)} pages, {args.laps} laps, lang {args.lang}")
    app_port, floor_port = free_port(), free_port()
    app = start_server(app_port, {})
    floor = start_floor(floor_port)
    base, fbase = f"http://127.0.0.1:{app_port}", f"http://127.0.0.1:{floor_port}"
    q = f"?lang={args.lang}"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            warm = open_fresh(browser, f"{base}/overview{q}")      # loads the model, traces the default prompt
            print(f"server's first visit (model load + first trace): {warm:.2f} s")
            fresh = [open_fresh(browser, f"{base}/overview{q}") for _ in range(3)]
            fresh_floor = [open_fresh(browser, f"{fbase}/alpha") for _ in range(3)]

            ctx = browser.new_context(viewport=VIEWPORT)
            page = ctx.new_page()
            page.goto(f"{base}/overview{q}")
            wait_done(page, time.perf_counter())
            switch: dict[str, list[float]] = {name: [] for name in pages}
            for lap in range(args.laps):
                for name in pages[1:] + pages[:1]:
                    switch[name].append(click_link(page, name))
                    print(f"  lap {lap + 1} {name:12s} {switch[name][-1]:.2f} s", flush=True)
            picker = {}
            for name in ("attention", "mlp"):
                click_link(page, name)
                try:
                    picker[name] = [nudge_slider(page) for _ in range(3)]
                except Exception as e:          # noqa: BLE001  (reported: the switch figures still stand)
                    print(f"picker change on {name} not measured: {type(e).__name__}")
            ctx.close()

            ctx = browser.new_context(viewport=VIEWPORT)
            fpage = ctx.new_page()
            fpage.goto(f"{fbase}/alpha")
            wait_done(fpage, time.perf_counter())
            floor_switch = [click_link(fpage, ("beta", "alpha")[k % 2]) for k in range(args.laps * len(pages))]
            floor_picker = [nudge_slider(fpage) for _ in range(3)]
            ctx.close()
            browser.close()
    finally:
        stop_server(app)
        stop_server(floor)

    fs_med = statistics.median(floor_switch)
    all_switch = [x for xs in switch.values() for x in xs]
    print("\n| action | ours median / worst (s) | floor median / worst (s) | ratio (median) | target |")
    print("|---|---|---|---|---|")
    print(f"| fresh session, first page (overview) | {stats(fresh)} | {stats(fresh_floor)} | "
          f"{statistics.median(fresh) / statistics.median(fresh_floor):.1f}x | <= 3 s |")
    print(f"| page switch, all pages | {stats(all_switch)} | {stats(floor_switch)} | "
          f"{statistics.median(all_switch) / fs_med:.1f}x | <= 2x median |")
    for name in picker:
        print(f"| picker change, {name} | {stats(picker[name])} | {stats(floor_picker)} | "
              f"{statistics.median(picker[name]) / statistics.median(floor_picker):.1f}x | - |")
    print("\n| page | switch median (s) | worst (s) | worst / floor median | <= 3x? |")
    print("|---|---|---|---|---|")
    for name, xs in sorted(switch.items(), key=lambda kv: -max(kv[1])):
        r = max(xs) / fs_med
        print(f"| {name} | {statistics.median(xs):.2f} | {max(xs):.2f} | {r:.1f}x | {'yes' if r <= 3 else 'no'} |")


if __name__ == "__main__":
    main()
