"""The pieces a page draws with: shapes, the pipeline strip, charts and pictures, tensor views with their download,
metrics, HTML tables, and folds and tabs that draw only when opened."""
from __future__ import annotations

import html
import io

import numpy as np
import streamlit as st

from content import stages
from ops.engine.trace import shape_of
from viz import MODEBAR
from viz.figures import projector_fonts, roomy_cell_text, upright_titles
from viz.markup import css, tag

from .session import projector, t


def shape_str(shape) -> str:
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


def live_shape(name: str, config, B: int, S: int, keep_layer: bool = False) -> str:
    """'attn.out [1, 4, 896]' for a contract name (a pattern "layers.{i}.attn.out", or a live one "layers.3.attn.out",
    shown whole with keep_layer); other names ('text', 'next id') in the page's language."""
    try:
        shape = shape_of(name, config, B, S)
    except KeyError:
        return t(*IO_WORDS[name]) if name in IO_WORDS else name
    return f"{name if keep_layer else name.replace('layers.{i}.', '')} {shape_str(shape)}"


# a stage's input or output that is not a traced tensor
IO_WORDS = {"text": ("文本", "text"), "next id": ("下一个 id", "next id"), "prompt ids": ("提示词 ids", "prompt ids")}


def pipeline_strip(key: str, io_text: str = ""):
    """The numbered stages as one row of chips, this one lit, then input -> output shapes."""
    chips = []
    for s in stages.pipeline():
        lit = s.key == key or s.page == key
        style = css(background="#d62728", color="white", font_weight="700") if lit else css(background="#eef1f5",
                                                                                             color="#333")
        chips.append(tag("span", f"{s.number} {html.escape(t(s.zh, s.en))}",
                         style=f"{style};" + css(padding="2px 9px", border_radius="12px", margin="1px",
                                                 display="inline-block", font_size="0.88rem")))
    shapes = tag("span", html.escape(io_text), style=css(margin_left="12px", font_family="monospace", font_size="1rem",
                                                         white_space="nowrap")) if io_text else ""
    st.markdown('<div style="line-height:1.9">' + " ".join(chips) + shapes + "</div>", unsafe_allow_html=True)


def npy_bytes(tensor) -> bytes:
    buf = io.BytesIO()
    np.save(buf, tensor.detach().float().cpu().numpy())
    return buf.getvalue()


def chart(fig, key: str, projector_height: int | None = None):
    """A Plotly figure at full width, with its own projector-sized fonts (Streamlit's theme shrinks them);
    Chinese y-axis titles set upright (viz.figures.upright_titles); larger still in projector mode, and there at most
    projector_height px tall: a page's main picture stays whole above the fold of a 1500x900 projector under the
    lesson bar (the heights: bench/lesson_fold.py, bench/RESULTS.md)."""
    fig = upright_titles(fig)
    if projector():
        fig = projector_fonts(fig)                        # a copy: the figure may be kept for other sessions
        if projector_height and (fig.layout.height or 450) > projector_height:
            fig.layout.height = projector_height
            roomy_cell_text(fig)                          # numbers in cells only where a row still holds them
    st.plotly_chart(fig, width="stretch", key=f"fig-{key}", theme=None, config=MODEBAR)


def picture(svg: str):
    """A drawn picture (an SVG string from viz/, such as the overview's pipeline): no chart script to load.
    Through markdown, not st.html: st.html's sanitizer drops SVG (an empty element was drawn)."""
    st.markdown(svg, unsafe_allow_html=True)


def tensor_view(name: str, tensor, fig=None, key: str | None = None, caption: str = "",
                projector_height: int | None = None):
    """One live tensor: a figure, then one light line under it with the tensor's name, exact shape and dtype,
    which is also the .npy download of the whole tensor (one element, not a row of columns: every element costs
    the browser on each page switch). A projector shows the figure first, its caption under it, and no line."""
    if caption and not projector():
        st.caption(caption)
    if fig is not None:
        chart(fig, key or name, projector_height)
    if projector():
        if caption:
            st.caption(caption)
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
    cells = "".join(tag("div", tag("div", html.escape(label), cls="ol-metric-label")
                        + tag("div", html.escape(value), cls="ol-metric-value"), cls="ol-metric", style=f"flex:{w} 1 0")
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


def table(rows: list[dict], height: int | None = None):
    """A small table that shows every row and wraps long cells (a projector cannot scroll a grid); with a height
    in pixels, a long one as a scrolling grid (st.dataframe) of that height.

    One HTML <table> in one Markdown element, its cells escaped text (formulas show as written, * and ~ included).
    st.table draws every cell as its own Markdown element, and a page of several tables switched to markedly slower
    than with the same cells in one element (bench/RESULTS.md, "Figures once in code comments")."""
    if height:
        st.dataframe(rows, hide_index=True, width="stretch", height=height)
        return
    if not rows:
        return
    cols = list(dict.fromkeys(k for r in rows for k in r))
    cell = lambda tag, v: f"<{tag}>{html.escape(str(v), quote=False)}</{tag}>"
    head = "".join(cell("th", c) for c in cols)
    body = "".join("<tr>" + "".join(cell("td", r.get(c, "")) for c in cols) + "</tr>" for r in rows)
    st.markdown(tag("table", tag("thead", tag("tr", head)) + tag("tbody", body), cls="ol-table"),
                unsafe_allow_html=True)           # one line: a blank line would end Markdown's HTML block
