"""Figures sized for a projector: large fonts, labelled axes, no overlapping tick text."""
from __future__ import annotations

import re

import numpy as np
import plotly.graph_objects as go
import torch
import torch.nn.functional as F

from .labels import CHOSEN

# the page's own font (Streamlit's "Source Sans", loaded by the page), a CJK fallback, Streamlit's text colour
FAMILY = '"Source Sans", "Source Sans Pro", "Noto Sans CJK SC", "Noto Sans SC", sans-serif'
FONT = dict(size=16, family=FAMILY, color="#31333F")
MAX_TICKS = 40          # beyond this many labels an axis shows every n-th one
TICK_PX = 56            # about one tick label per this many pixels of axis, so labels never overlap

# Colour scales. Sequential (low -> high) for quantities of one sign; diverging, centred on 0, only for signed
# data that straddles 0: blue below, white at 0, orange above. Red is kept for "chosen" (viz.labels.CHOSEN).
SEQUENTIAL = "Viridis"
DIVERGING = [[0.0, "#1c5a99"], [0.25, "#8dbbe0"], [0.5, "#f7f7f7"], [0.75, "#f9b66b"], [1.0, "#b85a00"]]


def as_numpy(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().float().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def base_layout(title: str, xlabel: str, ylabel: str, height: int, xaxis=None, yaxis=None, **extra) -> dict:
    """The layout every figure shares, as one nested dict: a figure built in one go.Figure(data, layout)
    call costs plotly about a third of one patched by update_layout/update_xaxes calls."""
    return dict(title=dict(text=title, font=dict(size=20)), font=FONT, height=height,
                margin=dict(l=70, r=30, t=60, b=60), xaxis=dict(xaxis or {}, title=dict(text=xlabel)),
                yaxis=dict(yaxis or {}, title=dict(text=ylabel)), **extra)


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def tick_text(v: float, plain: bool = True) -> str:
    """A log-axis tick as a reader reads it: 0.002, 0.05, 20 (plain, between 10⁻⁴ and 10⁵); else 2×10⁻⁶, never
    2e-06."""
    e = int(np.floor(np.log10(v) + 1e-9))
    m = round(v / 10.0 ** e)
    if plain and -4 <= e < 5:
        return f"{v:.{max(0, -e)}f}"
    return (f"{m}×" if m != 1 else "") + "10" + str(e).translate(SUPERSCRIPT)


def log_ticks(values) -> dict:
    """tickvals and ticktext for a log axis over the positive `values`: 1, 2 and 5 of each decade when they span at
    most two decades, else the powers of ten alone, every label written out (tick_text), in one style. Plotly's own
    minor labels were a bare "2" and "5" beside one 10⁻², too small to read and easy to misread."""
    v = np.asarray([x for x in values if x is not None and np.isfinite(x) and x > 0], dtype=np.float64)
    if v.size == 0:
        return {}
    lo, hi = int(np.floor(np.log10(v.min()))), int(np.ceil(np.log10(v.max())))
    steps = (1, 2, 5) if hi - lo <= 2 else (1,)
    vals = [m * 10.0 ** e for e in range(lo, hi + 1) for m in steps]
    vals = [x for x in vals if v.min() / 1.5 <= x <= v.max() * 1.5] or [10.0 ** lo]
    plain = 1e-4 <= min(vals) and max(vals) < 1e5          # one style on an axis: all decimals or all powers
    return dict(tickvals=vals, ticktext=[tick_text(x, plain) for x in vals])


def color_range(z, exclude=None) -> dict:
    """colorscale, zmin, zmax for z over its real range: finite values, less the cells where `exclude` is True
    (a cosine map's diagonal of 1s, masked scores). Diverging and symmetric about 0 if the values straddle 0,
    else sequential from their minimum to their maximum."""
    z = np.asarray(z, dtype=np.float64)
    keep = np.isfinite(z) if exclude is None else np.isfinite(z) & ~np.asarray(exclude, dtype=bool)
    v = z[keep]
    if v.size == 0:
        return dict(colorscale=SEQUENTIAL, zmin=0.0, zmax=1.0)
    lo, hi = float(v.min()), float(v.max())
    if lo < 0 < hi:
        m = max(-lo, hi)
        return dict(colorscale=DIVERGING, zmin=-m, zmax=m)
    return dict(colorscale=SEQUENTIAL, zmin=lo, zmax=hi if hi > lo else lo + 1e-9)


WIDE = re.compile(r"[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]")


def text_px(text: str, size: float) -> float:
    """About how wide `text` draws at `size` px: a CJK or full-width character ~1 em, anything else ~0.6 em
    (digits and Latin letters of a sans font; generous, so a text said to fit does)."""
    return sum(size if WIDE.match(ch) else 0.6 * size for ch in str(text))


CJK_CHARS = "\u3000-\u30ff\u3400-\u9fff\uff00-\uffef"
WORD = re.compile(f"[{CJK_CHARS}]|[^\\s{CJK_CHARS}]+\\s*|\\s+")     # one CJK character, or a word and its spaces


def wrap(text: str, width_px: float, size: float) -> str:
    """`text` broken with <br> into lines no wider than width_px at `size` px: at spaces, or between any two
    characters of a CJK run (Chinese has no spaces); a single word wider than the line keeps its own line."""
    words = re.findall(WORD, str(text))
    lines, line = [], ""
    for w in words:
        if line and text_px((line + w).rstrip(), size) > width_px:
            lines.append(line.rstrip())
            line = w.lstrip()
        else:
            line += w
    return "<br>".join(lines + [line.rstrip()])


def cell_text_fits(texts, cell_px: float, size: float) -> bool:
    """True when every text fits its heatmap cell at `size` px, with a few px to spare on each side."""
    return max((text_px(x, size) for row in texts for x in row), default=0) + 6 <= cell_px


def _ticks(labels, n):
    """Tick labels for an axis of n cells: unique (index-prefixed) so repeated tokens stay apart."""
    if labels is None:
        return list(range(n))
    return [f"{i}:{lab}" for i, lab in enumerate(labels)]


CELL_FONT = 14         # numbers written in heatmap cells
PLOT_SIDES = 190       # px of a heatmap's width_px outside its cells: margins (70 + 30) and the colour bar
MAX_CELLS = 128        # per heatmap axis: a browser draws 512 x 512 cells x many figures far too slowly


def block_max(z, max_cells: int = MAX_CELLS):
    """Shrink the last two axes to at most max_cells each by the max over blocks (NaN-aware, so a masked
    block stays blank). z: (..., rows, cols), a numpy array or a tensor; returns (z of the same kind, ky, kx),
    the block sizes; 1 means that axis was not shrunk."""
    rows, cols = z.shape[-2:]
    ky, kx = -(-rows // max_cells), -(-cols // max_cells)
    if ky == kx == 1:
        return z, 1, 1
    t = z if torch.is_tensor(z) else torch.from_numpy(np.ascontiguousarray(z))
    if t.isnan().any():
        t = t.masked_fill(t.isnan(), float("-inf"))                             # blank cells lose every max
    m = F.max_pool2d(t.reshape(-1, 1, rows, cols), (ky, kx), ceil_mode=True)    # (N, 1, rows / ky, cols / kx)
    m = m.masked_fill(m == float("-inf"), float("nan")).reshape(t.shape[:-2] + m.shape[-2:])
    return (m if torch.is_tensor(z) else m.numpy()), ky, kx


def _block_labels(labels, n, k):
    """'i-j' range labels for blocks of k positions (the token pieces of a range do not fit a tick)."""
    return [f"{i}-{min(i + k, n) - 1}" for i in range(0, n, k)]


def heatmap(z, x=None, y=None, title="", xlabel="", ylabel="", colorscale=None, zmid=None,
            zmin=None, zmax=None, height=480, text_fmt=None, exclude=None, width_px: int = 900,
            subtitle: str = "") -> go.Figure:
    """A 2-D tensor as a heatmap; -inf cells (masked) are left blank. z: (rows, cols).
    With no colorscale the scale follows the data (color_range): sequential over the real range, or diverging
    about 0 when the values straddle 0; `exclude` (rows, cols) bool leaves cells out of that range.
    Axes longer than MAX_CELLS are shown as block maxima, and the title says so. An axis without labels is
    numeric (its ticks thinned by plotly); a labelled one shows about one label per TICK_PX of width_px."""
    z = as_numpy(z)
    z = np.where(np.isfinite(z), z, np.nan)
    rows, cols = z.shape
    if colorscale is None:
        auto = color_range(z, exclude)
        colorscale, zmin, zmax = auto["colorscale"], auto["zmin"] if zmin is None else zmin, \
            auto["zmax"] if zmax is None else zmax
    z, ky, kx = block_max(z)
    if kx > 1 or ky > 1:
        title = f"{title}  (max over {ky}×{kx} blocks of {rows}×{cols})"
    xt = (_ticks(x, cols) if kx == 1 else _block_labels(x, cols, kx)) if x is not None or kx > 1 else None
    yt = (_ticks(y, rows) if ky == 1 else _block_labels(y, rows, ky)) if y is not None or ky > 1 else None
    rows, cols = z.shape
    hm = go.Heatmap(z=z, x=xt, y=yt, colorscale=colorscale, zmid=zmid, zmin=zmin, zmax=zmax,
                    hovertemplate="row %{y}<br>col %{x}<br>value %{z:.4g}<extra></extra>")
    if text_fmt and rows * cols <= 400:               # numbers in the cells only where they fit; hover always
        text = [[("" if np.isnan(v) else format(v, text_fmt)) for v in r] for r in z]
        if cell_text_fits(text, (width_px - PLOT_SIDES) / cols, CELL_FONT):
            hm.update(text=text, texttemplate="%{text}", textfont=dict(size=CELL_FONT))
    fit = max(2, width_px // TICK_PX)
    xaxis = dict(type="category", nticks=fit if cols > fit else None, automargin=True) if xt is not None else \
        dict(showgrid=False, zeroline=False, nticks=min(fit, 12))
    yaxis = dict(type="category", autorange="reversed", nticks=MAX_TICKS if rows > MAX_TICKS else None) \
        if yt is not None else dict(autorange="reversed", showgrid=False, zeroline=False)
    title, subtitle = wrap(title, width_px - 40, 20), wrap(subtitle, width_px - 40, 15)   # wrapped, never cut
    layout = base_layout(title, xlabel, ylabel, height, xaxis, yaxis)
    layout["margin"]["t"] = 60 + 24 * title.count("<br>")
    if subtitle:                                  # a smaller title line (plotly's own subtitle), under the title
        layout["title"]["subtitle"] = dict(text=subtitle, font=dict(size=15))
        layout["margin"]["t"] += 24 + 18 * subtitle.count("<br>")
    return go.Figure([hm], layout=layout)


def bars(values, labels, title="", xlabel="", ylabel="", height=420, color=None, horizontal=False,
         text_fmt=".3g", highlight: int | None = None) -> go.Figure:
    """One bar per label; color: one colour or a list; highlight: the index of the selected bar, outlined in
    red (red means "selected" on every page)."""
    values = as_numpy(values)
    labels = [str(lab) for lab in labels]
    text = [format(v, text_fmt) for v in values]
    line = None if highlight is None else dict(color=[CHOSEN if k == highlight else "rgba(0,0,0,0)"
                                                      for k in range(len(labels))], width=4)
    marker = dict(color=color, line=line)
    lo, hi = (min(0.0, float(values.min())), max(0.0, float(values.max()))) if values.size else (0.0, 1.0)
    span = dict(range=[lo * 1.18, hi * 1.18 or 1.0])   # room for the value written past each bar's end
    common = dict(text=text, textposition="outside", cliponaxis=False, textfont=dict(size=15), marker=marker)
    if horizontal:
        bar = go.Bar(x=values, y=labels, orientation="h", **common)
    else:
        bar = go.Bar(x=labels, y=values, **common)
    axis = dict(type="category", autorange="reversed") if horizontal else dict(type="category")
    return go.Figure([bar], layout=base_layout(title, xlabel, ylabel, height, span if horizontal else axis,
                                               axis if horizontal else span, uniformtext=dict(minsize=14, mode="show")))


def histogram(series: dict, title="", xlabel="value", ylabel="count", nbins=80, height=400) -> go.Figure:
    """Overlaid histograms, one per named 1-D tensor, on shared bins. Counted here, so the browser gets nbins
    bars per series rather than every value (an MLP's 4864 per series)."""
    arrays = {name: as_numpy(v).ravel() for name, v in series.items()}
    finite = [a[np.isfinite(a)] for a in arrays.values()]
    lo = min((float(a.min()) for a in finite if a.size), default=0.0)
    hi = max((float(a.max()) for a in finite if a.size), default=1.0)
    edges = np.linspace(lo, hi if hi > lo else lo + 1.0, nbins + 1)
    mids, width = (edges[:-1] + edges[1:]) / 2, edges[1] - edges[0]
    data = [go.Bar(x=mids.astype(np.float32), y=np.histogram(a, edges)[0].astype(np.int32), width=width, name=name,
                   opacity=0.6, customdata=np.stack([edges[:-1], edges[1:]], axis=1).astype(np.float32),
                   hovertemplate="%{customdata[0]:.3g} .. %{customdata[1]:.3g}: %{y}<extra>" + name + "</extra>")
            for name, a in zip(arrays, finite)]
    return go.Figure(data, layout=base_layout(title, xlabel, ylabel, height, barmode="overlay", bargap=0,
                                          legend=dict(orientation="h", y=1.12)))


def lines(series: dict, x=None, title="", xlabel="", ylabel="", height=420, markers=True) -> go.Figure:
    """Several named 1-D series against a shared x."""
    data = []
    for name, v in series.items():
        v = as_numpy(v)
        data.append(go.Scatter(x=list(range(len(v))) if x is None else x, y=v, name=name,
                               mode="lines+markers" if markers else "lines"))
    many = x is not None and len(x) > 16          # e.g. one label per layer: every other one, kept level
    xaxis = dict(nticks=min(len(x), 14), tickangle=0) if many else None
    return go.Figure(data, layout=base_layout(title, xlabel, ylabel, height, xaxis, legend=dict(orientation="h",
                                                                                                y=1.12)))


CJK = re.compile(r"[\u3400-\u9fff]")


def upright_titles(fig: go.Figure) -> go.Figure:
    """Chinese read sideways is hard to read: every y-axis title with Chinese in it becomes a horizontal note
    just above its axis (left-aligned), and the top margin grows to hold it. Other titles are left as they are."""
    layout = fig.layout
    moved = []
    for name in [k for k in layout.to_plotly_json() if k.startswith("yaxis")]:
        ax = layout[name]
        text = ax.title.text if ax.title is not None else None
        if not text or not CJK.search(text):
            continue
        xname = "xaxis" + (ax.anchor[1:] if ax.anchor and ax.anchor not in ("x", "free") else "")
        x0 = (layout[xname].domain or [0, 1])[0] if xname in layout else 0
        y1 = (ax.domain or [0, 1])[1]
        moved.append(dict(text=text, xref="paper", yref="paper", x=x0, y=y1, xanchor="left", yanchor="bottom",
                          xshift=-8, yshift=4, showarrow=False, font=dict(size=(ax.title.font.size or 16))))
        ax.title.text = ""
    if moved:
        top = (layout.margin.t if layout.margin.t is not None else 60) + (26 if len(moved) == 1 else 8)
        sub = bool(layout.title.subtitle.text)         # a subtitle needs its own line above the moved titles
        fig.update_layout(annotations=list(layout.annotations or []) + moved, margin=dict(t=top + 22 * sub))
        if sub:                                         # title and subtitle pinned to the top, clear of the notes
            fig.update_layout(title=dict(yref="container", y=1, yanchor="top", pad=dict(t=12)))
        lg = layout.legend
        if lg.orientation == "h" and lg.y is not None and lg.y >= 1:  # a legend on top moves right, clear of them
            fig.update_layout(legend=dict(x=1, xanchor="right"))
    return fig


PROJECTOR_PX = 18       # the smallest chart text the back row of a classroom reads from a projector


def _grow(font, px: float):
    """Raise a font's size to at least px (a font with no size of its own inherits the layout's, raised too)."""
    if font is not None and isinstance(font.size, (int, float)):
        font.size = max(px, font.size)


def roomy_cell_text(fig: go.Figure, share: float = 0.45, lines: float = 1.4) -> go.Figure:
    """fig without the numbers in its heatmap cells where a row is shorter than `lines` lines of their text (after a
    figure was made shorter, for a projector): the rows get about `share` of the height (titles, rotated tick labels
    and the margins take the rest; measured on the attention map at 410 px: 176 of 410 for 10 rows, 43%). Hover
    still gives every value. Changes fig in place (the caller's copy) and returns it."""
    height = fig.layout.height or 450
    for tr in fig.data:
        if tr.type == "heatmap" and tr.texttemplate and tr.z is not None and len(tr.z):
            size = (tr.textfont.size if tr.textfont and tr.textfont.size else CELL_FONT)
            if height * share / len(tr.z) < lines * size:
                tr.update(texttemplate=None, text=None)
    return fig


def projector_fonts(fig: go.Figure, min_px: int = PROJECTOR_PX) -> go.Figure:
    """A copy of fig with every text at least min_px: the layout's font (which every unsized text inherits) 19 px,
    the title 24, and the subtitle, axis ticks and titles, colour bars, legends, annotations and the traces' own
    text at least min_px. A copy, since a figure may be cached and shown to other sessions too."""
    fig = go.Figure(fig)
    lay = fig.layout
    lay.font.size = max(min_px + 1, lay.font.size or 0)
    grown = max(min_px + 6, lay.title.font.size or 0) / (lay.title.font.size or 20)
    lay.title.font.size = max(min_px + 6, lay.title.font.size or 0)
    if (lay.title.text or lay.title.subtitle.text) and lay.margin.t:   # larger titles keep clear of the plot
        lay.margin.t = round(lay.margin.t * grown)
    _grow(lay.title.subtitle.font, min_px)
    _grow(lay.legend.font, min_px)
    _grow(lay.legend.title.font, min_px)
    for axis in [k for k in lay.to_plotly_json() if k.startswith(("xaxis", "yaxis"))]:
        _grow(lay[axis].tickfont, min_px)
        _grow(lay[axis].title.font, min_px)
    for a in lay.annotations or ():
        _grow(a.font, min_px)
    if lay.uniformtext.minsize:
        lay.uniformtext.minsize = max(min_px, lay.uniformtext.minsize)
    for tr in fig.data:
        for name in ("textfont", "insidetextfont", "outsidetextfont"):
            _grow(getattr(tr, name, None), min_px)
        bar = getattr(tr, "colorbar", None) or getattr(getattr(tr, "marker", None), "colorbar", None)
        if bar is not None:
            _grow(bar.tickfont, min_px)
            _grow(bar.title.font, min_px)
    return fig
