"""Figures sized for a projector: large fonts, labelled axes, no overlapping tick text."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

FONT = dict(size=16)
MAX_TICKS = 40          # beyond this many labels an axis shows every n-th one


def _np(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().float().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def _layout(fig: go.Figure, title: str, xlabel: str, ylabel: str, height: int) -> go.Figure:
    fig.update_layout(title=dict(text=title, font=dict(size=20)), font=FONT, height=height,
                      margin=dict(l=70, r=30, t=60, b=60), template="plotly_white")
    fig.update_xaxes(title_text=xlabel)
    fig.update_yaxes(title_text=ylabel)
    return fig


def _ticks(labels, n):
    """Tick labels for an axis of n cells: unique (index-prefixed) so repeated tokens stay apart."""
    if labels is None:
        return list(range(n))
    return [f"{i}:{lab}" for i, lab in enumerate(labels)]


def heatmap(z, x=None, y=None, title="", xlabel="", ylabel="", colorscale="RdBu", zmid=0.0,
            zmin=None, zmax=None, height=480, text_fmt=None) -> go.Figure:
    """A 2-D tensor as a heatmap; -inf cells (masked) are left blank. z: (rows, cols)."""
    z = _np(z)
    z = np.where(np.isfinite(z), z, np.nan)
    rows, cols = z.shape
    xt, yt = _ticks(x, cols), _ticks(y, rows)
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
