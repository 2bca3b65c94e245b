"""Figures of the RMSNorm page: one token's vector before and after the norm, each on its own axis."""
from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .figures import FONT, as_numpy


def before_after(x, y, title: str = "", x_name: str = "x", y_name: str = "y", xlabel: str = "",
                 height: int = 430) -> go.Figure:
    """x (H,) above y (H,), sharing the dimension axis: RMSNorm changes the scale (own y axes) while most
    dimensions keep their shape, and γ lifts a few."""
    x, y = as_numpy(x), as_numpy(y)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.1, subplot_titles=(x_name, y_name))
    fig.add_trace(go.Scatter(y=x, mode="lines", name=x_name, line=dict(color="#1f77b4")), row=1, col=1)
    fig.add_trace(go.Scatter(y=y, mode="lines", name=y_name, line=dict(color="#d62728")), row=2, col=1)
    fig.update_layout(title=dict(text=title, font=dict(size=20)), font=FONT, height=height, showlegend=False,
                      margin=dict(l=70, r=30, t=70, b=50))
    fig.update_annotations(font=dict(size=17), x=0, xanchor="left")
    fig.update_xaxes(title_text=xlabel, row=2, col=1)
    return fig
