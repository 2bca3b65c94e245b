"""Figures sized for a projector: large fonts, labelled axes, no overlapping tick text."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import torch
import torch.nn.functional as F

FONT = dict(size=16)
MAX_TICKS = 40          # beyond this many labels an axis shows every n-th one


def _np(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().float().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def _layout(fig: go.Figure, title: str, xlabel: str, ylabel: str, height: int) -> go.Figure:
    fig.update_layout(title=dict(text=title, font=dict(size=20)), font=FONT, height=height,   # one call: each
                      margin=dict(l=70, r=30, t=60, b=60),                                  # update validates
                      xaxis_title_text=xlabel, yaxis_title_text=ylabel)
    return fig


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
    t = t.masked_fill(t.isnan(), float("-inf"))                                 # blank cells lose every max
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
    z = _np(z)
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
    fig = go.Figure(hm)
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category")
    if cols > MAX_TICKS:
        fig.update_xaxes(nticks=MAX_TICKS)
    if rows > MAX_TICKS:
        fig.update_yaxes(nticks=MAX_TICKS)
    return _layout(fig, title, xlabel, ylabel, height)


def bars(values, labels, title="", xlabel="", ylabel="", height=420, color=None, horizontal=False,
         text_fmt=".3g") -> go.Figure:
    values = _np(values)
    labels = [str(lab) for lab in labels]
    text = [format(v, text_fmt) for v in values]
    if horizontal:
        bar = go.Bar(x=values, y=labels, orientation="h", text=text, textposition="auto", marker_color=color)
    else:
        bar = go.Bar(x=labels, y=values, text=text, textposition="auto", marker_color=color)
    fig = go.Figure(bar)
    if horizontal:
        fig.update_yaxes(autorange="reversed", type="category")
    else:
        fig.update_xaxes(type="category")
    return _layout(fig, title, xlabel, ylabel, height)


def histogram(series: dict, title="", xlabel="value", ylabel="count", nbins=80, height=400) -> go.Figure:
    """Overlaid histograms, one per named 1-D tensor."""
    fig = go.Figure()
    for name, v in series.items():
        fig.add_trace(go.Histogram(x=_np(v).ravel(), name=name, nbinsx=nbins, opacity=0.6))
    fig.update_layout(barmode="overlay", legend=dict(orientation="h", y=1.12))
    return _layout(fig, title, xlabel, ylabel, height)


def lines(series: dict, x=None, title="", xlabel="", ylabel="", height=420, markers=True) -> go.Figure:
    """Several named 1-D series against a shared x."""
    fig = go.Figure()
    for name, v in series.items():
        v = _np(v)
        fig.add_trace(go.Scatter(x=list(range(len(v))) if x is None else x, y=v, name=name,
                                 mode="lines+markers" if markers else "lines"))
    fig.update_layout(legend=dict(orientation="h", y=1.12))
    return _layout(fig, title, xlabel, ylabel, height)
