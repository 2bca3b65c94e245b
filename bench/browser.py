"""The browser's time: click to last chart drawn, in Debian's Chromium, against `streamlit run app.py`.

    python bench/browser.py [--laps 2] [--lang en] [--pages attention,mlp] [--floor-only] [--dwell 5]

Beside every figure, the same action on a bare Streamlit app served and drawn in the same run (the floor):
two pages (st.navigation, its own sidebar) with one Plotly chart and one slider each, written to a temp folder.
Its first page is the default one and answers at / only (/alpha would open a "Page not found" dialog that
makes the whole app inert to clicks), so the floor is opened at / and its link to alpha found by its label.
1. fresh session: a new browser context opens the overview (the server has already loaded the model and
   traced the default prompt once, so this is a session's first visit after the model is loaded), measured twice:
   right after that first visit, while the jobs the load starts in the background (ui.state: the bf16 / int8
   weight sets, the pages' shared first-visit work) still run, and again once the server has settled (under 5%
   of a core for 2 s; the target is read there); floor: a new context opens the floor app.
2. page switch: click every page's sidebar link in turn, `--laps` laps; floor: click between its two pages
   (at least 8 times). A switch counts once the old page's title has gone and the new page is done. `--dwell`:
   seconds on the first page before the first click (default 0), a reader's pause, in which the first page has
   the browser load later pages' component scripts (ui.browser.warm_scripts).
3. picker change: the layer slider (st.slider, ui.pickers.picker) on the attention and MLP pages moved one
   step with the keyboard (focus, ArrowRight); floor: its st.slider moved the same way.
"Done" = the action was seen to take effect (a page switch: the old page's h1 is gone; a picker change: a
MutationObserver armed before the action saw a chart redrawn), the script is not running (the app root's
data-test-script-state), nothing stale is left, no spinner, no skeleton (an element whose JavaScript chunk is still
loading), and every Plotly chart has drawn its SVG.
"run ended" beside each switch: when the script-state attribute was seen going back to notRunning (the
browser applies that message after every element before it, so it includes their drawing; "-" when a
fast run started and ended inside one render). Targets (issue 14): page-switch median <= 2x the floor's, worst page <= 3x the floor's
median, fresh session's first page <= 3 s.
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
        return st.Page(run, title=name, url_path=name, default=name == "alpha")

    st.navigation([page("alpha"), page("beta")]).run()
''')

# "Done": the script has run (the app root's data-test-script-state is back to notRunning), nothing from the
# previous run is left stale, no spinner, no skeleton, a title is drawn, and every Plotly chart has drawn its SVG.
# A skeleton is an element whose JavaScript chunk is still loading: a Plotly chart is a skeleton, not yet a
# stPlotlyChart, until the 4.7 MB Plotly chunk has loaded (before 2026-12-02 this check was missing, and a fresh
# session's first page counted as done 2.4 s before its chart and its sidebar links were drawn, at 4.8 s).
DONE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stSpinner"]')) return false;
  if (document.querySelector('[data-testid="stSkeleton"]')) return false;   // an element still waiting for its JS chunk
  if (document.querySelector('[data-testid="stMain"] [data-stale="true"]')) return false;
  if (!document.querySelector('[data-testid="stMain"] h1')) return false;
  for (const c of document.querySelectorAll('[data-testid="stPlotlyChart"]'))
    if (!c.querySelector('.main-svg')) return false;
  return true;
}"""
# Armed before an action: notes a change of the script state, and any change inside a Plotly chart. A fast
# run (the floor's) can start and end inside one React render, so its state attribute never changes: a page
# switch is then known by its new title, and a picker change by its charts redrawn.
ARM_JS = """() => {
  window.__olRan = false; window.__olChart = false; window.__olEnd = null; window.__olT0 = performance.now();
  for (const o of window.__olObs || []) o.disconnect();
  const ran = new MutationObserver(ms => {
    window.__olRan = true;
    for (const m of ms) if (m.target.getAttribute('data-test-script-state') === 'notRunning') window.__olEnd = performance.now();
  });
  ran.observe(document.body, {subtree: true, attributes: true, attributeFilter: ['data-test-script-state']});
  const chart = new MutationObserver(ms => {
    if (ms.some(m => (m.target.nodeType === 1 ? m.target : m.target.parentElement)?.closest('[data-testid="stPlotlyChart"]')))
      window.__olChart = true;
  });
  chart.observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
  window.__olObs = [ran, chart];
}"""
STATE_JS = """() => ({ran: window.__olRan,
  state: document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state'),
  stale: document.querySelectorAll('[data-testid="stMain"] [data-stale="true"]').length,
  spinners: document.querySelectorAll('[data-testid="stSpinner"]').length,
  undrawn: [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].filter(c => !c.querySelector('.main-svg')).length,
  chart: window.__olChart, dialog: !!document.querySelector('[role="dialog"]')})"""
H1_JS = """() => { const h = document.querySelector('[data-testid="stMain"] h1'); return h ? h.innerText.trim() : ''; }"""
# Done after an action: a page switch once the title is no longer the old page's, a picker change once a
# chart has been redrawn; and then the page is done.
AFTER_JS = "(old) => (old === null ? window.__olChart : (" + H1_JS + ")() !== old) && (" + DONE_JS + ")()"


def start_floor(port: int):
    folder = Path(tempfile.mkdtemp(prefix="operator_lab_floor_"))
    (folder / "floor.py").write_text(FLOOR_APP)
    return start_server(port, {}, script=folder / "floor.py")


def wait_after(page, t0: float, old_title: str | None = None, timeout_s: float = 60) -> float:
    """Seconds from t0 until the action armed with ARM_JS has run and drawn (and left old_title, if given)."""
    try:
        page.wait_for_function(AFTER_JS, arg=old_title, timeout=timeout_s * 1000, polling="raf")
    except Exception as e:                      # say what was still missing
        raise RuntimeError(f"not done after {timeout_s:.0f} s at {page.url}: {page.evaluate(STATE_JS)}, "
                           f"title {page.evaluate(H1_JS)!r} (was {old_title!r})") from e
    dt = time.perf_counter() - t0
    end = page.evaluate("() => window.__olEnd === null ? null : (window.__olEnd - window.__olT0) / 1000")
    SCRIPT_END.append(end)
    return dt


SCRIPT_END: list = []    # per action: seconds from the action to the script's run seen ending (None: not seen)


def wait_loaded(page, timeout_s: float = 180):
    page.wait_for_function(DONE_JS, timeout=timeout_s * 1000, polling="raf")


def open_session(browser, url: str):
    """(context, page): one browser session on url, its first page drawn."""
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.goto(url)
    wait_loaded(page)
    return ctx, page


def fresh_sessions(browser, url: str, label: str, n: int = 3) -> list[float]:
    """Seconds of n new sessions' first page at url (open_fresh), printed under `label`."""
    times = [open_fresh(browser, url) for _ in range(n)]
    print(f"{label}: " + ", ".join(f"{x:.2f}" for x in times) + " s", flush=True)
    return times


def open_fresh(browser, url: str) -> float:
    """A new browser context (a new session) opens url: seconds from the request to the page drawn."""
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    t0 = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=180_000)
    wait_loaded(page)
    dt = time.perf_counter() - t0
    ctx.close()
    return dt


def sidebar_link(page, path: str, title: str):
    """The sidebar link to a page: by URL path (/<path>), else by its label (a default page's link is /)."""
    links = page.locator('[data-testid="stSidebar"] a')
    links.first.wait_for(state="attached", timeout=30_000)
    hrefs = [urllib.parse.urlparse(h or "").path for h in links.evaluate_all("els => els.map(e => e.href)")]
    if f"/{path}" in hrefs:
        return links.nth(hrefs.index(f"/{path}"))
    texts = [x.strip() for x in links.all_inner_texts()]
    hits = [k for k, x in enumerate(texts) if x.endswith(title)]
    if len(hits) != 1:
        raise RuntimeError(f"no single sidebar link to /{path} ({title!r}): hrefs {hrefs}, labels {texts}")
    return links.nth(hits[0])


def click_link(page, path: str, title: str) -> float:
    """Click the sidebar link to a page; done when the old page's title is gone and the new page has drawn."""
    link = sidebar_link(page, path, title)
    old = page.evaluate(H1_JS)
    page.evaluate(ARM_JS)
    t0 = time.perf_counter()
    link.click()
    return wait_after(page, t0, old)


def slider_input(page, index: int = 0):
    """A main-area st.slider's thumb: Streamlit >= 1.5x draws it as a visually hidden <input type=range>
    (role slider by default, so no role attribute); older ones as a div[role=slider]."""
    return page.locator('[data-testid="stMain"] [data-testid="stSlider"]').nth(index) \
        .locator('input[type="range"], [role="slider"]').first


def nudge_slider(page, index: int = 0) -> float:
    """Move a slider one step with the keyboard, as a user tabbing to it would."""
    thumb = slider_input(page, index)
    thumb.wait_for(state="attached", timeout=30_000)
    thumb.focus()
    page.evaluate(ARM_JS)
    t0 = time.perf_counter()
    page.keyboard.press("ArrowRight")
    return wait_after(page, t0)


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a process has used, from /proc/<pid>/stat (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_idle(pid: int, below: float = 0.05, span: float = 2.0, give_up: float = 180) -> float:
    """Seconds until the process used under `below` of a core over `span` seconds: the server's load-time
    background jobs (ui.state: weight sets, first-visit work) are done."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < give_up:
        c0 = cpu_seconds(pid)
        time.sleep(span)
        if cpu_seconds(pid) - c0 < below * span:
            break
    return time.perf_counter() - t0


def stats(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} / {max(xs):.2f}"


def errors_on(page) -> int:
    return page.locator('[data-testid="stMain"] [data-testid="stException"]').count()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--laps", type=int, default=2)
    p.add_argument("--lang", default="en", choices=["en", "zh"])
    p.add_argument("--pages", default="", help="comma-separated page keys (default: every page)")
    p.add_argument("--floor-only", action="store_true", help="the floor app alone (a check of the harness)")
    p.add_argument("--dwell", type=float, default=0.0,
                   help="seconds on the first page before the first switch (a reader; default 0: click at once)")
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    from content import stages
    titles = {s.page: s.title(args.lang) for s in stages.pages()}
    headings = {s.page: s.heading(args.lang) for s in stages.pages()}     # the h1 each page must show
    wrong: list[str] = []
    pages = [k for k in titles if not args.pages or k in args.pages.split(",")]
    print(f"machine: nproc {os.cpu_count()}, load avg at start {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"date {time.strftime('%Y-%m-%d %H:%M')}, {len(pages)} pages, {args.laps} laps, lang {args.lang}, "
          f"dwell {args.dwell:g} s on the first page")
    app_port, floor_port = free_port(), free_port()
    app = None if args.floor_only else start_server(app_port, {})
    floor = start_floor(floor_port)
    base, fbase = f"http://127.0.0.1:{app_port}", f"http://127.0.0.1:{floor_port}"
    q = f"?lang={args.lang}"
    switch: dict[str, list[float]] = {name: [] for name in pages}
    picker: dict[str, list[float]] = {}
    fresh: list[float] = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            if app:
                warm = open_fresh(browser, f"{base}/overview{q}")      # loads the model, traces the default prompt
                print(f"server's first visit (model load + first trace): {warm:.2f} s", flush=True)
                busy = fresh_sessions(browser, f"{base}/overview{q}",
                                      "fresh session, first page, right after the load (load-time jobs running)")
                waited = wait_idle(app.pid)
                print(f"server settled (under 5% of a core for 2 s) {waited:.1f} s later", flush=True)
                fresh = fresh_sessions(browser, f"{base}/overview{q}", "fresh session, first page, server settled")
                ctx, page = open_session(browser, f"{base}/overview{q}")
                time.sleep(args.dwell)
                order = [k for k in pages if k != "overview"]       # the session opened on the overview:
                order += ["overview"] if "overview" in pages else []   # it comes last, when it is timed at all
                for lap in range(args.laps):
                    for name in order:
                        switch[name].append(click_link(page, name, titles[name]))
                        bad = errors_on(page)
                        end = SCRIPT_END[-1]
                        h1 = page.evaluate(H1_JS)
                        print(f"  lap {lap + 1} {name:12s} {switch[name][-1]:.2f} s (run ended "
                              f"{'-' if end is None else f'{end:.2f} s'})  "
                              f"[{h1[:40]}]" + (f"  {bad} EXCEPTION(S)" if bad else ""), flush=True)
                        if headings[name] not in h1:     # another page, or the other language
                            shot = Path(tempfile.gettempdir()) / f"browser_wrong_{lap + 1}_{name}.png"
                            page.screenshot(path=str(shot))
                            wrong.append(f"lap {lap + 1} {name}")
                            print(f"    WRONG PAGE: expected {headings[name]!r} at {page.url} (screenshot {shot})",
                                  flush=True)
                for name in ("attention", "mlp"):
                    if name not in titles:
                        continue
                    click_link(page, name, titles[name])
                    picker[name] = [nudge_slider(page) for _ in range(3)]
                    print(f"  picker {name}: " + ", ".join(f"{x:.2f}" for x in picker[name]) + " s  value now "
                          f"{slider_input(page).get_attribute('aria-valuetext') or slider_input(page).input_value()}",
                          flush=True)
                ctx.close()

            fresh_floor = fresh_sessions(browser, f"{fbase}/", "floor fresh session")
            ctx, fpage = open_session(browser, f"{fbase}/")
            time.sleep(args.dwell)
            n_floor = max(args.laps * len(pages), 8)
            floor_switch = []
            for k in range(n_floor):
                floor_switch.append(click_link(fpage, *[("beta", "beta"), ("alpha", "alpha")][k % 2]))
            print("floor page switch: " + ", ".join(f"{x:.2f}" for x in floor_switch) + " s", flush=True)
            floor_picker = [nudge_slider(fpage) for _ in range(5)]
            print("floor picker: " + ", ".join(f"{x:.2f}" for x in floor_picker) + " s", flush=True)
            ctx.close()
            browser.close()
    finally:
        if app:
            stop_server(app)
        stop_server(floor)
    if not app:
        return

    if wrong:
        print(f"\nNOT VALID: {len(wrong)} switch(es) showed the wrong page or language ({', '.join(wrong)}); "
              "the figures below include them")
    fs_med = statistics.median(floor_switch)
    fp_med = statistics.median(floor_picker)
    all_switch = [x for xs in switch.values() for x in xs]
    worst_name = max(switch, key=lambda k: max(switch[k]))
    print("\n| action | ours median / worst (s) | floor median / worst (s) | ratio | target | met? |")
    print("|---|---|---|---|---|---|")
    print(f"| fresh session, first page (overview), server settled | {stats(fresh)} | {stats(fresh_floor)} | "
          f"{statistics.median(fresh) / statistics.median(fresh_floor):.1f}x | <= 3 s | "
          f"{'yes' if max(fresh) <= 3 else 'no'} |")
    print(f"| the same right after the load, its background jobs running | {stats(busy)} | {stats(fresh_floor)} | "
          f"{statistics.median(busy) / statistics.median(fresh_floor):.1f}x | - | - |")
    r_med, r_worst = statistics.median(all_switch) / fs_med, max(all_switch) / fs_med
    print(f"| page switch, all pages (median) | {stats(all_switch)} | {stats(floor_switch)} | "
          f"{r_med:.1f}x | <= 2x | {'yes' if r_med <= 2 else 'no'} |")
    print(f"| page switch, worst page ({worst_name}) | {max(all_switch):.2f} | {fs_med:.2f} (median) | "
          f"{r_worst:.1f}x | <= 3x | {'yes' if r_worst <= 3 else 'no'} |")
    for name in picker:
        print(f"| picker change (layer slider, one step), {name} | {stats(picker[name])} | {stats(floor_picker)} | "
              f"{statistics.median(picker[name]) / fp_med:.1f}x | - | - |")
    print("\n| page | switch median (s) | worst (s) | worst / floor median | <= 3x? |")
    print("|---|---|---|---|---|")
    for name, xs in sorted(switch.items(), key=lambda kv: -max(kv[1])):
        r = max(xs) / fs_med
        print(f"| {name} | {statistics.median(xs):.2f} | {max(xs):.2f} | {r:.1f}x | {'yes' if r <= 3 else 'no'} |")


if __name__ == "__main__":
    main()
