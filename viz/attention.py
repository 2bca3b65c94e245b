"""Figures of the attention page: one head's scores coloured over the range the softmax really sees, and the
concatenated context as one norm per (token, head)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .figures import MAX_CELLS, SEQUENTIAL, as_numpy, heatmap
from .labels import CHOSEN

MASKED = "#e3e3e3"


def scores_map(raw, allowed, labels, title: str = "", xlabel: str = "", ylabel: str = "", text_fmt=None,
               height: int = 480, width_px: int = 560, subtitle: str = "") -> go.Figure:
    """Raw scores q·kᵀ/√hd (S, S). The colour scale spans only the cells the mask lets through (sequential
    over their real range, diverging about 0 only if they straddle 0); masked cells are grey, their raw
    value still written in them (the softmax never sees it)."""
    z, ok = as_numpy(raw), as_numpy(allowed).astype(bool)
    seen = np.where(ok, z, np.nan)
    fig = heatmap(seen, x=labels, y=labels, title=title, xlabel=xlabel, ylabel=ylabel, text_fmt=text_fmt,
                  height=height, width_px=width_px, subtitle=subtitle)
    text_fmt = text_fmt if fig.data[0].texttemplate else None      # the masked cells' numbers only where they fit
    if z.shape[0] <= MAX_CELLS and z.shape[1] <= MAX_CELLS and (~ok).any():
        x, y = fig.data[0].x, fig.data[0].y
        hidden = np.where(ok, np.nan, 1.0)
        text = [[("" if ok[r, c] or not text_fmt else format(z[r, c], text_fmt)) for c in range(z.shape[1])]
                for r in range(z.shape[0])]
        fig.add_trace(go.Heatmap(z=hidden, x=x, y=y, colorscale=[[0, MASKED], [1, MASKED]], showscale=False,
                                 text=text, texttemplate="%{text}" if text_fmt else None,
                                 textfont=dict(size=13, color="#999"), customdata=z,
                                 hovertemplate="masked (−∞)<br>raw %{customdata:.4g}<extra></extra>"))
    return fig


def context_heads(ctx, nh: int, labels, highlight: int | None = None, title: str = "", xlabel: str = "",
                  ylabel: str = "", height: int = 350, subtitle: str = "") -> go.Figure:
    """ctx (n, nh·hd), the heads' outputs side by side: ‖each head's hd-dim slice‖ per token, an (n, nh) map on
    a sequential scale; the picked head's column outlined in red. What concatenation means, without a barcode
    of nh·hd thin columns."""
    c = as_numpy(ctx)
    n = c.shape[0]
    norms = np.linalg.norm(c.reshape(n, nh, -1), axis=-1)
    fig = heatmap(norms, y=labels, colorscale=SEQUENTIAL, zmin=0,
                  zmax=float(norms.max()) or 1.0, title=title, xlabel=xlabel, ylabel=ylabel, height=height,
                  subtitle=subtitle,
                  text_fmt=".2f" if nh <= 8 and n <= 16 else None)
    if highlight is not None:
        fig.add_shape(type="rect", x0=highlight - 0.5, x1=highlight + 0.5, y0=-0.5, y1=n - 0.5,
                      line=dict(color=CHOSEN, width=3))
    return fig
