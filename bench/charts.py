"""What each page's Plotly charts cost the browser by themselves: a page switch to a bare page that draws them.

    python bench/charts.py [--pages atlas,attention] [--switches 12] [--lang en]

Each page of the app is run once by Streamlit's test runner (the bundled model, the default prompt), and the Plotly
figures it drew (as the browser receives them: the chart elements' JSON) are kept. Then, for each page, a bare
Streamlit app of two pages (st.navigation, a title, one slider, like bench/browser.py's floor) draws that page's
charts, and Chromium at 1500x900 clicks between its two pages: seconds from click to the last chart drawn (the first
two switches left out, median of the rest). The floor, the same bare app with one line chart (the sine of
bench/browser.py's floor, drawn as our charts are: theme=None, full width), runs in the same process, before and after
the pages. The difference between a page's row and the floor is what its charts cost on a
switch; what the rest of a real page costs is bench/browser.py's figure less this one.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import browser as B
from load_test import free_port, start_server, stop_server

sys.path.insert(2, str(B.ROOT / "tests"))

BARE_APP = textwrap.dedent('''
    import json, os
    import numpy as np
    import plotly.graph_objects as go
    import streamlit as st

    FILES = [f for f in os.environ["OPERATOR_LAB_CHARTS"].split(os.pathsep) if f]

    def figure(path):
        if path == "floor":                                   # the sine line of bench/browser.py's floor
            x = np.arange(200)
            return go.Figure(go.Scatter(x=x, y=np.sin(x / 5)))
        return go.Figure(json.loads(open(path).read()))

    def page(name):
        def run():
            st.title(name)
            st.slider("k", 1, 20, 5, key="k_" + name)
            for k, path in enumerate(FILES):
                st.plotly_chart(figure(path), key=f"chart-{k}", theme=None, width="stretch")
        return st.Page(run, title=name, url_path=name, default=name == "alpha")

    st.navigation([page("alpha"), page("beta")]).run()
''')


def capture(pages: list[str], lang: str, folder: Path) -> dict[str, list[Path]]:
    """page -> the JSON files of the Plotly charts it drew (in order), by Streamlit's test runner."""
    from apptest_utils import open_page
    out = {}
    for name in pages:
        at = open_page(name, lang=lang)
        out[name] = []
        for k, chart in enumerate(at.get("plotly_chart")):
            path = folder / f"{name}-{k}.json"
            path.write_text(chart.proto.spec)
            out[name].append(path)
    return out


def bare_app(folder: Path) -> Path:
    """BARE_APP written into folder, the script switches() serves."""
    script = folder / "bare.py"
    script.write_text(BARE_APP)
    return script


def switches(browser, script: Path, files: list, n: int) -> list[float]:
    """Seconds of n switches between the bare app's two pages, each drawing `files` (the first two dropped)."""
    port = free_port()
    server = start_server(port, {"OPERATOR_LAB_CHARTS": os.pathsep.join(map(str, files))}, script=script)
    try:
        ctx, page = B.open_session(browser, f"http://127.0.0.1:{port}/")
        times = [B.click_link(page, *[("beta", "beta"), ("alpha", "alpha")][k % 2]) for k in range(n + 2)]
        ctx.close()
        return times[2:]
    finally:
        stop_server(server)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pages", default="", help="comma-separated page keys (default: every page that draws a chart)")
    p.add_argument("--switches", type=int, default=12)
    p.add_argument("--lang", default="en", choices=["en", "zh"])
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    from content import stages
    pages = [s.page for s in stages.pages() if not args.pages or s.page in args.pages.split(",")]
    print(f"machine: nproc {os.cpu_count()}, load avg at start {os.getloadavg()[0]:.2f}, "
          f"date {time.strftime('%Y-%m-%d %H:%M')}, lang {args.lang}, {args.switches} switches each", flush=True)
    folder = Path(tempfile.mkdtemp(prefix="operator_lab_charts_"))
    script = bare_app(folder)
    charts = {k: v for k, v in capture(pages, args.lang, folder).items() if v}
    rows, floor = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=B.CHROMIUM, args=B.ARGS)
        floor += switches(browser, script, ["floor"], args.switches)
        for name, files in charts.items():
            ts = switches(browser, script, files, args.switches)
            rows.append((name, len(files), sum(f.stat().st_size for f in files), ts))
            print(f"  {name:12s} {len(files)} chart(s): median {statistics.median(ts):.3f} s", flush=True)
        floor += switches(browser, script, ["floor"], args.switches)
        browser.close()
    f_med = statistics.median(floor)
    print(f"\nfloor (one line chart), before and after: median {f_med:.3f} s, "
          f"{min(floor):.2f}-{max(floor):.2f} s over {len(floor)} switches")
    print("\n| page | charts | JSON KB | switch median (s) | min-max (s) | charts' cost over the floor (s) | x floor |")
    print("|---|---|---|---|---|---|---|")
    for name, n, size, ts in sorted(rows, key=lambda r: -statistics.median(r[3])):
        med = statistics.median(ts)
        print(f"| {name} | {n} | {size / 1e3:.0f} | {med:.3f} | {min(ts):.2f}-{max(ts):.2f} | {med - f_med:+.3f} | "
              f"{med / f_med:.1f}x |")


if __name__ == "__main__":
    main()
