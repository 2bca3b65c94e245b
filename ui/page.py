"""The page scaffold: a stage page declares its stage and hands over its views; this draws the rest.

    page = StagePage("embedding")          # title, pipeline strip, live input -> output shapes
    b = page.row()                         # pickers kept in the URL
    page.view("embed.out", tensor, fig)    # the main picture first: it must sit above the fold
    page.explain(latex, fn.embedding)      # 学术版 / 白话版 / formula and code, live numbers filled in
    page.section("...", "...")             # more views
    page.checks(checks.embedding(...))     # ops/lab/checks.py against PyTorch
    page.at_scale()                        # the same operator for Qwen2.5-32B (ops/arith/costs.py)
"""
from __future__ import annotations

import functools
import html
import inspect
import io
import json
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from content import costs_text, facts, stages, texts
from ops.arith import costs
from ops.engine.trace import CONTRACT, dims, eval_dim
from viz import labels as lbl
from viz.figures import upright_titles

from . import state as _state
from .state import layer_picker, projector, require_trace, row_picker, set_query, t, token_picker
from .widgets import merged_note


def lang() -> str:
    return _state.lang()          # looked up at each call, so a test that pins the language reaches this module too


def shape_str(shape) -> str:
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


def live_shape(name: str, config, B: int, S: int) -> str:
    """'attn.out [1, 4, 896]' for a contract name; other names ('text', 'next id') in the page's language."""
    pattern = name if name in CONTRACT else None
    if pattern is None:
        return t(*IO_WORDS[name]) if name in IO_WORDS else name
    d = dims(config, B, S)
    short = name.replace("layers.{i}.", "")
    return f"{short} {shape_str(eval_dim(p, d) for p in CONTRACT[pattern][0].split())}"


# a stage's input or output that is not a traced tensor
IO_WORDS = {"text": ("文本", "text"), "next id": ("下一个 id", "next id"), "prompt ids": ("提示词 ids", "prompt ids")}


def pipeline_strip(key: str, io_text: str = ""):
    """The numbered stages as one row of chips, this one lit, then input -> output shapes."""
    chips = []
    for s in stages.pipeline():
        lit = s.key == key or s.page == key
        style = "background:#d62728;color:white;font-weight:700" if lit else "background:#eef1f5;color:#333"
        chips.append(f'<span style="{style};padding:2px 9px;border-radius:12px;margin:1px;display:inline-block;'
                     f'font-size:0.88rem">{s.number} {html.escape(s.zh if lang() == "zh" else s.en)}</span>')
    shapes = (f'<span style="margin-left:12px;font-family:monospace;font-size:1rem;white-space:nowrap">'
              f'{html.escape(io_text)}</span>') if io_text else ""
    st.markdown('<div style="line-height:1.9">' + " ".join(chips) + shapes + "</div>", unsafe_allow_html=True)


def npy_bytes(tensor) -> bytes:
    buf = io.BytesIO()
    np.save(buf, tensor.detach().float().cpu().numpy())
    return buf.getvalue()


def projector_fonts(fig):
    """A copy of fig with chart text for the back row: 19 px text, 24 px titles, nothing under 17 px.
    A copy, since a figure may be cached and shown to other sessions too."""
    fig = go.Figure(fig)
    lay = fig.layout
    lay.font.size = max(19, lay.font.size or 0)
    lay.title.font.size = max(24, lay.title.font.size or 0)
    for axis in [k for k in lay.to_plotly_json() if k.startswith(("xaxis", "yaxis"))]:
        for f in (lay[axis].tickfont, lay[axis].title.font):
            if f.size:
                f.size = max(17, f.size)
    for a in lay.annotations or ():
        if a.font.size:
            a.font.size = max(17, a.font.size)
    for tr in fig.data:
        f = getattr(tr, "textfont", None)
        if f is not None and isinstance(f.size, (int, float)):
            f.size = max(16, f.size)
    return fig


def chart(fig, key: str):
    """A Plotly figure at full width, with its own projector-sized fonts (Streamlit's theme shrinks them);
    Chinese y-axis titles set upright (viz.figures.upright_titles); larger still in projector mode."""
    fig = upright_titles(fig)
    st.plotly_chart(projector_fonts(fig) if projector() else fig, width="stretch", key=f"fig-{key}", theme=None)


def picture(svg: str):
    """A drawn picture (an SVG string from viz/, such as the overview's pipeline): no chart script to load.
    Through markdown, not st.html: st.html's sanitizer drops SVG (an empty element was drawn)."""
    st.markdown(svg, unsafe_allow_html=True)


def tensor_view(name: str, tensor, fig=None, key: str | None = None, caption: str = ""):
    """One live tensor: a figure, then one light line under it with the tensor's name, exact shape and dtype,
    which is also the .npy download of the whole tensor (one element, not a row of columns: every element costs
    the browser on each page switch). A projector shows the figure alone."""
    if caption:
        st.caption(caption)
    if fig is not None:
        chart(fig, key or name)
    if projector():
        return
    # deferred: the .npy bytes are made only when someone clicks, not on every rerun of the page
    st.download_button(tensor_line(name, tensor), data=lambda: npy_bytes(tensor), icon=":material/download:",
                       help=t("下载这个张量的全部数值 (.npy)", "Download the whole tensor (.npy)"),
                       file_name=f"{name}.npy", mime="application/octet-stream", key=f"dl-{key or name}",
                       on_click="ignore", type="tertiary")


def tensor_line(name: str, tensor) -> str:
    """`embed.out` · shape `[1, 4, 896]` · `float32` · .npy"""
    return (f"`{name}` · {t('形状', 'shape')} `{shape_str(tensor.shape)}` · "
            f"`{str(tensor.dtype).replace('torch.', '')}` · .npy")


def metrics(pairs: list[tuple[str, str]], weights: list[float] | None = None):
    """Label / value pairs side by side, like a row of st.metric, drawn as one element (st.columns of st.metric
    are two per pair plus the row: the browser pays for each on every page switch). Values wrap, never cut."""
    weights = weights or [1] * len(pairs)
    cells = "".join(f'<div class="ol-metric" style="flex:{w} 1 0"><div class="ol-metric-label">{html.escape(label)}'
                    f'</div><div class="ol-metric-value">{html.escape(value)}</div></div>'
                    for (label, value), w in zip(pairs, weights))
    st.markdown(f'<div class="ol-metrics">{cells}</div>', unsafe_allow_html=True)


# Hidden tabs and closed expanders cost the browser as much as open ones (Streamlit draws them all), so the
# explanation draws only the tab that is open, the by-hand examples and the secondary views (more()) only when
# unfolded: a click reruns the page (bench/RESULTS.md, browser). A test that reads every tab at once sets it False.
LAZY = True


def lazy(key: str) -> dict:
    """What makes an st.tabs / st.expander lazy: its state kept under key, and a click reruns the page."""
    return dict(key=key, on_change="rerun") if LAZY else {}


def drawn(box):
    """A tab or expander when its body is to be drawn, None when it is lazy and closed (open is None where
    Streamlit does not track it: everything is drawn)."""
    return None if box.open is False else box


def more(label: str, key: str):
    """Secondary views below the fold, in an expander whose body is drawn only when unfolded:
        if box := more(t("...", "..."), "rope"):
            with box:
                ...
    """
    return drawn(st.expander(label, **lazy(f"more-{key}")))


def tabs(labels: list[str], key: str) -> list:
    """st.tabs that draw only the open one: each tab, or None when closed. Keep labels stable (no live numbers):
    the open tab is remembered by its label."""
    return [drawn(x) for x in st.tabs(labels, **lazy(f"tabs-{key}"))]


LEVELS = ("academic", "plain", "code")      # the explanation's tabs, in their order; "code": formula and code


def explain_level() -> str:
    """The explanation tab this session reads ("plain" on a first visit, else ?level= from a link): kept in
    session_state under "explain_level" (no widget's key, so a page switch does not drop it) and in the URL."""
    ss = st.session_state
    if ss.get("explain_level") not in LEVELS:
        ss["explain_level"] = st.query_params.get("level") if st.query_params.get("level") in LEVELS else "plain"
    return ss["explain_level"]


def explanation(key: str, numbers: dict, extra_tab=None, by_hand=None):
    """学术版 / 白话版 tabs (and an optional third tab drawn by extra_tab()) with the stage's text, opened on the tab
    the reader chose last, on any page (explain_level); by_hand() draws small worked examples (ui/by_hand.py) in an
    expander under the plain text."""
    names = [t("学术版", "Academic"), t("白话版", "Plain language")] + ([extra_tab[0]] if extra_tab else [])
    level = explain_level()
    want = names[min(LEVELS.index(level), len(names) - 1)]       # no formula tab here: the plain text
    tab_key = f"explain-{key}"
    if not LAZY:                                                 # tabs without state: opened on the level, all drawn
        boxes = [drawn(x) for x in st.tabs(names, default=want)]
    else:
        # the tab state Streamlit keeps lasts while this page is shown; on arrival (or in a new language) it is
        # set from the session's level, and a click here becomes the level every page opens on
        if st.session_state.get(tab_key) not in names:
            st.session_state[tab_key] = want
        boxes = [drawn(x) for x in st.tabs(names, **lazy(tab_key))]
        opened = next((lv for lv, box in zip(LEVELS, boxes) if box is not None), level)
        if names[LEVELS.index(opened)] != want:                  # a click here (not a page without a formula tab)
            st.session_state["explain_level"] = opened
    set_query("level", st.session_state["explain_level"])
    for tab, level in zip(boxes, ("academic", "plain")):
        if tab is None:
            continue
        with tab:
            try:
                st.markdown(texts.explain(key, lang(), level, numbers))
            except Exception as e:              # a missing text must not take the page down
                st.info(t("这一段讲解暂缺：", "This explanation is missing: ") + f"{key}/{level} ({e})")
            if level == "plain" and by_hand is not None:
                box = drawn(st.expander(t("动手算一遍", "Do it by hand"), icon=":material/calculate:", **lazy(f"by-hand-{key}")))
                if box:
                    with box:
                        by_hand()
    if extra_tab and boxes[2]:
        with boxes[2]:
            extra_tab[1]()


def formula_and_code(latex, *functions):
    """The formula, then the source of the functions that computed it (the code that actually ran)."""
    for line in [latex] if isinstance(latex, str) else latex:
        st.latex(line)
    for f in functions:
        st.caption(f"{f.__module__}.{f.__qualname__}")
        st.code(inspect.getsource(f), language="python")


def show_checks(results):
    """ops/lab/checks.py results: one green or red line each."""
    for c in results:
        (st.success if c.ok else st.error)(c.text(lang()))


def table(rows: list[dict], height: int | None = None):
    """A small table that shows every row and wraps long cells (a projector cannot scroll a grid); with a height
    in pixels, a long one as a scrolling grid (st.dataframe) of that height.

    One HTML <table> in one Markdown element, its cells escaped text (formulas show as written, * and ~ included).
    st.table draws every cell as its own Markdown element: the scale page's five tables made a switch to it cost
    0.19 s against 0.12 s for the same cells in one element (bench floor variants, 2026-12-04, floor 0.11 s)."""
    if height:
        st.dataframe(rows, hide_index=True, width="stretch", height=height)
        return
    if not rows:
        return
    cols = list(dict.fromkeys(k for r in rows for k in r))
    cell = lambda tag, v: f"<{tag}>{html.escape(str(v), quote=False)}</{tag}>"
    head = "".join(cell("th", c) for c in cols)
    body = "".join("<tr>" + "".join(cell("td", r.get(c, "")) for c in cols) + "</tr>" for r in rows)
    st.markdown(f'<table class="ol-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>',
                unsafe_allow_html=True)           # one line: a blank line would end Markdown's HTML block


def at_scale(stage: str, B: int, S: int):
    """The same operator's shapes, parameters, FLOPs and bytes for Qwen2.5-32B at the user's B and S."""
    st.header(t("放大到 Qwen2.5-32B", "At scale: Qwen2.5-32B"))
    ref = costs.reference_config()
    try:
        c = costs.operator_costs(ref, stage, B, S)
    except Exception as e:
        st.info(t("规模数据暂不可用：", "Scale figures unavailable: ") + str(e))
        return
    layers = c.get("layers", 1)
    st.caption(t(f"B = {B}, S = {S}（当前提示词），由 ops/arith/costs.py 依据 Qwen2.5-32B 的 config 计算；"
                 f"这个算子每次前向要跑 {layers} 次，下面是全部次数的合计。",
                 f"B = {B}, S = {S} (your prompts), computed by ops/arith/costs.py from Qwen2.5-32B's config; this operator "
                 f"runs {layers} time(s) per forward pass, and the figures below add them all up."))
    metrics([(t("输入 → 输出", "input → output"), f"{shape_str(c['input_shape'])} → {shape_str(c['output_shape'])}"),
             (t("参数量", "parameters"), costs.human(c.get("params", 0))),
             ("FLOPs", costs.human(c.get("flops", 0), "FLOP")),
             (t("读写字节 (bf16)", "bytes moved (bf16)"), costs.human(c.get("bytes", 0), "B"))],
            [2, 1, 1, 1])                    # the shapes get the room they need: numbers are never cut
    if c.get("tensors"):
        table([{t("权重", "weight"): n, t("形状", "shape"): shape_str(sh)} for n, sh in c["tensors"]])
    note = "lm_head_tied" if stage == "lm_head" and ref.tie_word_embeddings else stage
    if note in costs_text.AT_SCALE:
        st.caption(costs_text.at_scale_note(note, lang(), layers=layers,
                                            scores=shape_str([B, ref.num_attention_heads, S, S])))


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
# session's first chart page waited for it (bench/browser.py --dwell 5, embedding's first visit: 2.16 s, 0.82 s with
# these loaded ahead). These are the chunks our pages use beyond the overview's, in the order a first lap meets them
# (tokenize, embedding, rmsnorm, ...).
WARM_CHUNKS = ("DataFrame", "TextInput", "DownloadButton", "PlotlyChart", "Slider", "NumberInput", "Button",
               "Spinner", "Progress", "Selectbox")
WARM_FIRST = WARM_CHUNKS[:3]             # the page after the overview (tokenize) needs these

# As soon as the first run's sidebar reaches the browser, import those chunks, all at once, by the same URLs
# Streamlit's own lazy imports use (resolved against its index script), so a later page finds them evaluated (a
# page that needs one still in flight waits on the same import). Importing them only once the first page had drawn
# and the browser was idle left a reader who clicks at once waiting for all of them on the next page: 2026-12-04,
# bench/browser.py, Intel machine, embedding's first visit 0.99 -> 0.34 s, tokenize's 0.45 -> 0.32 s, while the
# first page, now drawn alongside them, takes 1.37 -> 2.24 s (the floor app, which loads Plotly there, 1.82 s).
# The first page's next one (tokenize: DataFrame, TextInput, DownloadButton) goes first: the browser evaluates one
# script at a time, and a click at once found its table behind Plotly's 0.7 s evaluation (tokenize's first visit
# 1.41 s in one bench run, 0.39-0.46 s in two others).
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
    """On a session's first run: the browser loads the scripts of the components later pages draw while the reader
    is on the first one (WARM_JS), from the sidebar, where the element takes no room."""
    files = () if st.session_state.get("_warm_sent") else warm_files()
    if not files:
        return
    st.session_state["_warm_sent"] = True
    first = [f for f in files if f.split(".")[0] in WARM_FIRST]
    st.sidebar.html(WARM_JS % json.dumps([first, [f for f in files if f not in first]]), unsafe_allow_javascript=True)


def next_page(current: str):
    """The registry's page after `current`; None after the last, and on the tour (its own Next button steps
    through it)."""
    keys = [s.page for s in stages.pages()]
    if current not in keys or current in (keys[-1], "tour"):
        return None
    return stages.get(keys[keys.index(current) + 1])


def next_stage(current: str):
    """A large "next" link at the end of a page, to the next page in the registry's order."""
    nxt = next_page(current)
    if nxt is None:
        return
    st.divider()
    with st.container(key="next_stage"):          # a link, not a button + switch_page: the sidebar's settings stay
        st.page_link(f"app_pages/{nxt.page}.py", label=t(f"下一步：{nxt.title('zh')}", f"Next: {nxt.title('en')}") + "  ▶",
                     icon=nxt.icon)


class StagePage:
    """One stage page, top to bottom: where am I -> the main view -> explanation, formula and code ->
    more views -> check against PyTorch -> at scale. The page calls these in that order."""

    def __init__(self, key: str, trace: bool = True, io_text: str | None = None):
        self.stage = stages.get(key)
        st.title(self.stage.heading(lang()))
        self.model, self.trace = require_trace() if trace else (None, None)
        self.config = self.model.config if self.model is not None else None
        if io_text is None and self.trace is not None and self.stage.io:
            io_text = " → ".join(live_shape(n, self.config, self.trace.B, self.trace.S) for n in self.stage.io)
        pipeline_strip(self.stage.key, io_text or "")

    def attach(self, model, trace):
        """A page made with trace=False that has a trace after all (Practice, Scale: they also work without one)
        hands it over here, so its numbers and memos are kept with the trace (Trace.memo)."""
        self.model, self.trace = model, trace
        self.config = model.config if model is not None else None

    # ---- pickers (values kept in the URL, shared by every page) -----------------------------------
    def layer(self) -> int:
        return layer_picker(self.config.num_hidden_layers)

    def row(self) -> int:
        return row_picker(self.trace.B)

    def token(self, b: int, default_last: bool = False) -> int:
        n = self.trace.lengths[b]
        return token_picker(n, default=n - 1 if default_last else 0)

    def layer_row_token(self, default_last: bool = False) -> tuple[int, int, int]:
        """Layer i, batch row b and token s side by side (the per-token pages' usual three)."""
        cols = st.columns(3)
        with cols[0]:
            i = self.layer()
        with cols[1]:
            b = self.row()
        with cols[2]:
            s = self.token(b, default_last)
        return i, b, s

    def labels(self, b: int, n: int | None = 8, with_pad: bool = False) -> list[str]:
        return lbl.row_labels(self.model.tokenizer, self.trace, b, n, with_pad)

    def merged_note(self, b: int):
        """Under the tokens of row b: which of them hold several characters of a CJK word (ui.widgets.merged_note)."""
        merged_note(self.model.tokenizer, self.trace.token_ids[b, :self.trace.lengths[b]].tolist())

    @property
    def numbers(self) -> dict:
        """The texts' placeholders for the loaded model and this run (content/texts.py), made once per trace."""
        tr = self.trace
        make = lambda: texts.numbers(self.config, B=tr.B if tr else 1, S=tr.S if tr else 1, **facts.loaded(self.model))
        return tr.memo(("numbers",), make) if tr is not None else make()

    def sentence(self, name: str) -> str:
        """One sentence about the loaded model (content/facts.py: tie_sentence, vocab_sentence, ...) in the reader's language."""
        make = lambda: texts.in_lang(self.numbers, lang())
        return (self.trace.memo(("numbers", lang()), make) if self.trace is not None else make())[name]

    def memo(self, key: tuple, compute):
        """compute() once per (page, language, key) for this trace, for every session (Trace.memo): checks, views
        and figures that are pure functions of the trace and the page's settings. The key holds every setting the
        result depends on (layer, head, row, ...). A figure kept here is shared, so nothing may change it later: its
        Chinese axis titles are set upright before it is stored, and chart() then finds nothing left to move."""
        def make():
            value = compute()
            return upright_titles(value) if isinstance(value, go.Figure) else value
        if self.trace is None:
            return make()
        return self.trace.memo((self.stage.key, lang()) + tuple(key), make)

    # ---- the parts -------------------------------------------------------------------------------
    def view(self, name: str, tensor, fig=None, key: str | None = None, caption: str = ""):
        tensor_view(name, tensor, fig, key, caption)

    def chart(self, fig, key: str):
        chart(fig, key)

    def picture(self, svg: str):
        picture(svg)

    def metrics(self, pairs: list[tuple[str, str]], weights: list[float] | None = None):
        metrics(pairs, weights)

    def explain(self, latex=None, *functions, key: str | None = None, numbers: dict | None = None, by_hand=None):
        """The explanation (学术版 / 白话版) with a third tab for the formula and the code that ran; by_hand():
        worked examples to do by hand, in an expander under the plain text (ui/by_hand.py)."""
        extra = (t("公式与代码", "Formula and code"), lambda: formula_and_code(latex, *functions)) if latex else None
        explanation(key or self.stage.key, numbers if numbers is not None else self.numbers, extra, by_hand)

    def section(self, zh: str, en: str):
        st.subheader(t(zh, en))

    def more(self, zh: str, en: str, key: str):
        """A secondary view below the fold, drawn only when unfolded (more()): `if box := page.more(...): with box: ...`
        Its state is kept as "more-<page>-<key>"."""
        return more(t(zh, en), f"{self.stage.key}-{key}")

    def tabs(self, labels: list[str], key: str) -> list:
        """Tabs that draw only the open one (tabs()): `for tab in page.tabs(...): if tab: with tab: ...`
        Its state is kept as "tabs-<page>-<key>"."""
        return tabs(labels, f"{self.stage.key}-{key}")

    def checks(self, results, zh: str = "与 PyTorch 对照", en: str = "Check against PyTorch"):
        st.header(t(zh, en))
        show_checks(results)

    def at_scale(self, stage: str | None = None):
        tr = self.trace
        at_scale(stage or self.stage.costs, tr.B, tr.S)
