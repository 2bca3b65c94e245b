"""What every page sends the browser besides its elements: the house CSS (projector mode's too), and a script that
loads Streamlit's JavaScript chunks ahead of the first page that needs them."""
from __future__ import annotations

import functools
import json
from pathlib import Path

import streamlit as st

from viz.markup import script_tag, style_tag

from .session import projector

# The house CSS (assets/web/house.css): one heading scale: page title (h1) > section (h2, st.header) > sub-section
# (h3, st.subheader, ###) > a lead sentence (h4, ####). A projector shows the top 900 px: the title just under
# Streamlit's header bar (3.75rem), and no banner. Metric values wrap rather than end in "…"; tables wrap their cells.
# Projector mode's (assets/web/projector.css): every size in rem grows with the root font (17 -> 20 px), and the page
# uses the full width.


def style():
    """The app's CSS, once per run for every page (app.py); the projector's on top in projector mode."""
    st.html(style_tag("house.css") + (style_tag("projector.css") if projector() else ""))


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
# The script: assets/web/warm.js, its %s the two lists of files.


@functools.cache
def warm_files() -> tuple[str, ...]:
    """The script files of WARM_CHUNKS in the installed Streamlit ("PlotlyChart.D9Z0_fxz.js"); a name it has no file
    for is left out."""
    js = Path(st.__file__).parent / "static" / "static" / "js"
    return tuple(f.name for name in WARM_CHUNKS for f in sorted(js.glob(f"{name}.*.js"))[:1])


def warm_scripts():
    """The browser loads the scripts of the components later pages draw while the reader is on the first one
    (assets/web/warm.js, which acts once per tab), from the sidebar, where the element takes no room. Drawn on every
    run, not only the first: a sidebar element that comes and goes moves every later one, and Streamlit then
    rebuilds them (the Teacher fold snapped shut on a session's first submit and hid its message)."""
    files = warm_files()
    if not files:
        return
    first = [f for f in files if f.split(".")[0] in WARM_FIRST]
    st.sidebar.html(script_tag("warm.js", json.dumps([first, [f for f in files if f not in first]])),
                    unsafe_allow_javascript=True)
