"""Figures of the RMSNorm page: one token's vector before and after the norm, each on its own axis."""
from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .figures import FONT, as_numpy
from .labels import tint


def before_after(x, y, title: str = "", x_name: str = "x", y_name: str = "y", xlabel: str = "",
                 height: int = 410, color: str = "#1f77b4") -> go.Figure:
    """x (H,) above y (H,), sharing the dimension axis: RMSNorm changes the scale (own y axes) while most
    dimensions keep their shape, and γ lifts a few. Both in the token's colour (before paler)."""
    x, y = as_numpy(x), as_numpy(y)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.1, subplot_titles=(x_name, y_name))
    fig.add_trace(go.Scatter(y=x, mode="lines", name=x_name, line=dict(color=tint(color, 0.35))), row=1, col=1)
    fig.add_trace(go.Scatter(y=y, mode="lines", name=y_name, line=dict(color=color)), row=2, col=1)
    fig.update_layout(title=dict(text=title, font=dict(size=20)), font=FONT, height=height, showlegend=False,
                      margin=dict(l=70, r=30, t=70, b=50))
    fig.update_annotations(font=dict(size=17), x=0, xanchor="left")
    fig.update_xaxes(title_text=xlabel, row=2, col=1)
    return fig


def histograms(series: dict, title: str = "", xlabel: str = "", ylabel: str = "", height: int = 380,
               color: str = "#1f77b4", nbins: int = 60) -> go.Figure:
    """One histogram per named 1-D tensor, side by side, each on its own value axis: x before the norm spans
    a far smaller range than x·rsqrt or y, and overlaid it would hide under them."""
    k = len(series)
    fig = make_subplots(rows=1, cols=k, subplot_titles=list(series), horizontal_spacing=0.07)
    for j, v in enumerate(series.values()):
        shade = tint(color, 0.35 * (k - 1 - j) / max(k - 1, 1))
        fig.add_trace(go.Histogram(x=as_numpy(v).ravel(), nbinsx=nbins, marker_color=shade),
                      row=1, col=j + 1)
    fig.update_layout(title=dict(text=title, font=dict(size=20)), font=FONT, height=height, showlegend=False,
                      margin=dict(l=60, r=20, t=80, b=60), bargap=0.05)
    fig.update_annotations(font=dict(size=16))
    fig.update_xaxes(title_text=xlabel, nticks=5)
    fig.update_yaxes(title_text=ylabel, row=1, col=1)
    return fig
