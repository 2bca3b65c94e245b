"""Figures of the LM head page: the logit lens as a heatmap with a token piece in every cell."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .figures import SEQUENTIAL, as_numpy, base_layout
from .labels import short

LIGHT_FROM = 0.62       # Viridis is light (green-yellow) from here up: dark text there, white below


def text_heatmap(z, pieces, x, y, title="", xlabel="", ylabel="", height=600, width_px: int = 900) -> go.Figure:
    """Heatmap with a token piece per cell (the logit lens: colour = probability 0..1, text = the piece).
    pieces: (rows, cols) whole pieces, cut here to what a cell of width_px / cols pixels holds; x: the
    columns' labels (cut the same way). The text is a separate layer, dark on light cells and white on dark
    ones, so it never sits white on yellow."""
    z = as_numpy(z)
    rows, cols = z.shape
    fit = int(min(16, max(6, width_px / max(cols, 1) / 9)))          # ~9 px per character at 15 px
    hm = go.Heatmap(z=z, x=list(range(cols)), y=list(range(rows)), colorscale=SEQUENTIAL, zmin=0, zmax=1,
                    customdata=[[short(p, 40) for p in r] for r in pieces],
                    hovertemplate="%{customdata}: p = %{z:.3f}<extra></extra>")
    data = [hm]
    if rows * cols <= 900:
        rr, cc = np.divmod(np.arange(rows * cols), cols)
        data.append(go.Scatter(x=cc, y=rr, mode="text", hoverinfo="skip", showlegend=False,
                               text=[short(pieces[r][c], fit) for r, c in zip(rr, cc)],
                               textfont=dict(size=15,
                                             color=["#111" if v >= LIGHT_FROM else "#fff" for v in z.ravel()])))
    xaxis = dict(tickvals=list(range(cols)), ticktext=[short(lab, fit + 3) for lab in x], showgrid=False,
                 zeroline=False)
    yaxis = dict(tickvals=list(range(rows)), ticktext=list(y), autorange="reversed", showgrid=False, zeroline=False)
    return go.Figure(data, layout=base_layout(title, xlabel, ylabel, height, xaxis, yaxis))
