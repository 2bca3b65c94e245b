"""Figures sized for a projector: large fonts, labelled axes, no overlapping tick text."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import torch
import torch.nn.functional as F

FONT = dict(size=16)
MAX_TICKS = 40          # beyond this many labels an axis shows every n-th one


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


def _ticks(labels, n):
    """Tick labels for an axis of n cells: unique (index-prefixed) so repeated tokens stay apart."""
    if labels is None:
        return list(range(n))
    return [f"{i}:{lab}" for i, lab in enumerate(labels)]


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


def heatmap(z, x=None, y=None, title="", xlabel="", ylabel="", colorscale="RdBu", zmid=0.0,
            zmin=None, zmax=None, height=480, text_fmt=None) -> go.Figure:
    """A 2-D tensor as a heatmap; -inf cells (masked) are left blank. z: (rows, cols).
    Axes longer than MAX_CELLS are shown as block maxima, and the title says so."""
    z = as_numpy(z)
    z = np.where(np.isfinite(z), z, np.nan)
    rows, cols = z.shape
    z, ky, kx = block_max(z)
    xt = _ticks(x, cols) if kx == 1 else _block_labels(x, cols, kx)
    yt = _ticks(y, rows) if ky == 1 else _block_labels(y, rows, ky)
    if kx > 1 or ky > 1:
        title = f"{title}  (max over {ky}×{kx} blocks of {rows}×{cols})"
    rows, cols = z.shape
    hm = go.Heatmap(z=z, x=xt, y=yt, colorscale=colorscale, zmid=zmid, zmin=zmin, zmax=zmax,
                    hovertemplate="row %{y}<br>col %{x}<br>value %{z:.4g}<extra></extra>")
    if text_fmt and rows * cols <= 400:
        hm.update(text=[[("" if np.isnan(v) else format(v, text_fmt)) for v in r] for r in z],
                  texttemplate="%{text}", textfont=dict(size=13))
    xaxis = dict(type="category", nticks=MAX_TICKS if cols > MAX_TICKS else None)
    yaxis = dict(type="category", autorange="reversed", nticks=MAX_TICKS if rows > MAX_TICKS else None)
    return go.Figure([hm], layout=base_layout(title, xlabel, ylabel, height, xaxis, yaxis))


def bars(values, labels, title="", xlabel="", ylabel="", height=420, color=None, horizontal=False,
         text_fmt=".3g") -> go.Figure:
    values = as_numpy(values)
    labels = [str(lab) for lab in labels]
    text = [format(v, text_fmt) for v in values]
    if horizontal:
        bar = go.Bar(x=values, y=labels, orientation="h", text=text, textposition="auto", marker_color=color)
    else:
        bar = go.Bar(x=labels, y=values, text=text, textposition="auto", marker_color=color)
    axis = dict(type="category", autorange="reversed") if horizontal else dict(type="category")
    return go.Figure([bar], layout=base_layout(title, xlabel, ylabel, height, None if horizontal else axis,
                                           axis if horizontal else None))


def histogram(series: dict, title="", xlabel="value", ylabel="count", nbins=80, height=400) -> go.Figure:
    """Overlaid histograms, one per named 1-D tensor."""
    data = [go.Histogram(x=as_numpy(v).ravel(), name=name, nbinsx=nbins, opacity=0.6) for name, v in series.items()]
    return go.Figure(data, layout=base_layout(title, xlabel, ylabel, height, barmode="overlay",
                                          legend=dict(orientation="h", y=1.12)))


def lines(series: dict, x=None, title="", xlabel="", ylabel="", height=420, markers=True) -> go.Figure:
    """Several named 1-D series against a shared x."""
    data = []
    for name, v in series.items():
        v = as_numpy(v)
        data.append(go.Scatter(x=list(range(len(v))) if x is None else x, y=v, name=name,
                               mode="lines+markers" if markers else "lines"))
    return go.Figure(data, layout=base_layout(title, xlabel, ylabel, height, legend=dict(orientation="h", y=1.12)))
