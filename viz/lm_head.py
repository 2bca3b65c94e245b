"""Figures of the LM head page: the logit lens as a heatmap with a token piece in every cell."""
from __future__ import annotations

import plotly.graph_objects as go

from .figures import base_layout


def text_heatmap(z, text, x, y, title="", xlabel="", ylabel="", height=600, colorscale="Viridis") -> go.Figure:
    """Heatmap with a string per cell (the logit lens: colour = probability, text = token piece)."""
    z = z.float().tolist() if hasattr(z, "tolist") else z
    show = len(x) * len(y) <= 600
    hm = go.Heatmap(z=z, x=x, y=y, colorscale=colorscale, zmin=0, zmax=1, text=text,
                    texttemplate="%{text}" if show else None, textfont=dict(size=13),
                    hovertemplate="%{y}<br>%{x}<br>%{text}: p = %{z:.3f}<extra></extra>")
    return go.Figure([hm], layout=base_layout(title, xlabel, ylabel, height, dict(type="category", tickangle=-45),
                                              dict(type="category", autorange="reversed")))
