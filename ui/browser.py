"""What every page sends the browser besides its elements: the house CSS (projector mode's too), and a script that
loads Streamlit's JavaScript chunks ahead of the first page that needs them."""
from __future__ import annotations

import functools
import json
from pathlib import Path

import streamlit as st

from .session import projector

# One heading scale: page title (h1) > section (h2, st.header) > sub-section (h3, st.subheader, ###) > a lead
# sentence (h4, ####). A projector shows the top 900 px: the title just under Streamlit's header bar (3.75rem),
# and no banner. Metric values wrap rather than end in "…"; tables wrap their cells.
CSS = """<style>
.block-container {padding-top: 3.7rem !important;}
h1 {font-size: 2.1rem !important; padding-top: 0.3rem !important; line-height: 1.35 !important;}
h2 {font-size: 1.6rem !important; padding-top: 1.2rem !important; line-height: 1.35 !important;}
h3 {font-size: 1.3rem !important; padding-top: 0.8rem !important; line-height: 1.4 !important;}
h4 {font-size: 1.12rem !important; padding-top: 0.5rem !important; line-height: 1.45 !important;}
h5, h6 {font-size: 1rem !important;}
[data-testid="stMetricValue"] {font-size: 1.7rem;}
[data-testid="stMetricValue"] > div {white-space: normal !important; overflow: visible !important;
                                      text-overflow: clip !important; overflow-wrap: anywhere;}
.ol-metrics {display: flex; flex-wrap: wrap; gap: 1rem; margin-bottom: 0.5rem;}
.ol-metric {min-width: 8rem;}
.ol-metric-label {font-size: 0.875rem; opacity: 0.75;}
.ol-metric-value {font-size: 1.7rem; line-height: 1.3; overflow-wrap: anywhere;}
[data-testid="stTable"] td, [data-testid="stTable"] th {white-space: normal !important; overflow-wrap: anywhere;}
.ol-table {width: 100%; border-collapse: collapse; margin-bottom: 1rem; font-size: 0.875rem;}
.ol-table th, .ol-table td {border: 1px solid rgba(49, 51, 63, 0.1); padding: 0.25rem 0.375rem; text-align: left;
                            vertical-align: top; white-space: normal; overflow-wrap: break-word;}
.ol-table th {font-weight: 600; background: rgba(49, 51, 63, 0.03);}
.st-key-next_stage a {background: #d62728; border-radius: 0.5rem; padding: 0.55rem 1.5rem;}
.st-key-next_stage a:hover {background: #b71c1c;}
.st-key-next_stage a p, .st-key-next_stage a span {color: white !important; font-size: 1.25rem; font-weight: 600;}
</style>"""
# Projector mode: every size in rem grows with the root font (17 -> 20 px), and the page uses the full width.
PROJECTOR_CSS = """<style>
html {font-size: 20px !important;}
.block-container {max-width: none !important; padding-left: 2.5rem !important; padding-right: 2.5rem !important;}
</style>"""


def style():
    """The app's CSS, once per run for every page (app.py); the projector's on top in projector mode."""
    st.html(CSS + (PROJECTOR_CSS if projector() else ""))


# Streamlit loads a component's script the first time a page of the session draws one: Plotly's is 4.7 MB, and the
# session's first chart page waited for it (bench/browser.py --dwell 5; bench/RESULTS.md, "Figures once in code
# comments"). These are the chunks our pages use beyond the overview's, in the order a first lap meets them
# (tokenize, embedding, rmsnorm, ...).
WARM_CHUNKS = ("DataFrame", "TextInput", "DownloadButton", "PlotlyChart", "Slider", "NumberInput", "Button",
               "Spinner", "Progress", "Selectbox")
WARM_FIRST = WARM_CHUNKS[:3]             # the page after the overview (tokenize) needs these
# As soon as the first run's sidebar reaches the browser, import those chunks, all at once, by the same URLs
# Streamlit's own lazy imports use (resolved against its index script), so a later page finds them evaluated (a
# page that needs one still in flight waits on the same import). Importing them only once the first page had drawn
# and the browser was idle left a reader who clicks at once waiting for all of them on the next page; the first
# page, drawn alongside them, pays part of it instead. The first page's next one (tokenize: DataFrame, TextInput,
# DownloadButton) goes first: the browser evaluates one script at a time, and a click at once found its table
# behind Plotly's evaluation. The measurements (bench/browser.py): bench/RESULTS.md, "Figures once in code comments".
# Best effort: a chunk that fails is skipped, and the page works as before. window.__olWarm: once per browser tab.
WARM_JS = """<script>
(() => {
  if (window.__olWarm) return;
  window.__olWarm = true;
  const index = document.querySelector('script[type="module"][src*="/static/js/index."]');
  if (!index) return;
  const load = (fs) => Promise.all(fs.map((f) => import(new URL(f, index.src).href).catch(() => null)));
  const [first, rest] = %s;
  load(first).then(() => load(rest));
})();
</script>"""


@functools.cache
def warm_files() -> tuple[str, ...]:
    """The script files of WARM_CHUNKS in the installed Streamlit ("PlotlyChart.D9Z0_fxz.js"); a name it has no file
    for is left out."""
    js = Path(st.__file__).parent / "static" / "static" / "js"
    return tuple(f.name for name in WARM_CHUNKS for f in sorted(js.glob(f"{name}.*.js"))[:1])


def warm_scripts():
    """The browser loads the scripts of the components later pages draw while the reader is on the first one
    (WARM_JS, which acts once per tab), from the sidebar, where the element takes no room. Drawn on every run, not
    only the first: a sidebar element that comes and goes moves every later one, and Streamlit then rebuilds them
    (the Teacher fold snapped shut on a session's first submit and hid its message)."""
    files = warm_files()
    if not files:
        return
    first = [f for f in files if f.split(".")[0] in WARM_FIRST]
    st.sidebar.html(WARM_JS % json.dumps([first, [f for f in files if f not in first]]), unsafe_allow_javascript=True)
