"""Figures of the head atlas: the L x nh grid coloured by label (hue) and score (shade), label counts."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .figures import as_numpy, base_layout

# Scores written in the cells only up to this many heads: each number is an SVG text the browser lays out on every
# page switch, and a grid of a few hundred numbers made a switch to a bare page drawing it markedly slower
# (bench/RESULTS.md, "Figures once in code comments"). Beyond it the shade and the hover say the score.
TEXT_CELLS = 120

# no red: red means "selected" (the picked head's frame)
HUES = {"previous": "#1f77b4", "induction": "#9467bd", "sink": "#7f7f7f", "self": "#2ca02c", "broad": "#ff7f0e"}
HOVER = {"zh": "第 %{y} 层，第 %{x} 头<br>%{customdata}<br>得分 %{text}<extra></extra>",
         "en": "layer %{y}, head %{x}<br>%{customdata}<br>score %{text}<extra></extra>"}
OTHER = ["#8c564b", "#e377c2", "#17becf", "#bcbd22"]


def _mix(hex_color: str, white: float) -> str:
    """hex_color moved `white` of the way to white."""
    r, g, b = (int(hex_color[k:k + 2], 16) for k in (1, 3, 5))
    return "#%02x%02x%02x" % tuple(int(c + (255 - c) * white) for c in (r, g, b))


def hue(name: str, order: list[str]) -> str:
    return HUES.get(name) or OTHER[order.index(name) % len(OTHER)]


def atlas_grid(labels: list[list[str]], best, order: list[str], names: dict, title: str = "", highlight=None,
               height: int | None = None, xlabel: str = "head h", ylabel: str = "layer i", hover=None,
               lang: str = "en") -> go.Figure:
    """labels (L x nh) label names, best (L, nh) the winning score in [0, 1]; order: the label names (legend
    order), names: their display names. Each label has its own hue, pale for a weak score, full for a strong one.
    hover: optional (L x nh) extra hover text; lang: the hover's language. Grids of at most TEXT_CELLS heads carry
    each score as a number too."""
    s = np.clip(as_numpy(best), 0, 1)
    L, nh = s.shape
    K = max(1, len(order))
    idx = np.array([[order.index(lab) for lab in row] for row in labels], dtype=float)
    z = idx + 0.05 + 0.9 * s
    scale = []
    for k, name in enumerate(order):
        scale += [[k / K, _mix(hue(name, order), 0.85)], [(k + 1) / K - 1e-4, hue(name, order)]]
    scale[-1][0] = 1.0
    text = [[f"{s[i, h]:.2f}" for h in range(nh)] for i in range(L)]
    custom = [[f"{names.get(labels[i][h], labels[i][h])}" + (f"<br>{hover[i][h]}" if hover else "") for h in range(nh)]
              for i in range(L)]
    written = dict(texttemplate="%{text}", textfont=dict(size=11)) if L * nh <= TEXT_CELLS else {}
    hm = go.Heatmap(z=z, x=list(range(nh)), y=list(range(L)), zmin=0, zmax=K, colorscale=scale, xgap=2, ygap=2,
                    text=text, customdata=custom, **written,
                    hovertemplate=HOVER.get(lang, HOVER["en"]),
                    colorbar=dict(tickvals=[k + 0.5 for k in range(K)], ticktext=[names.get(n, n) for n in order],
                                  tickfont=dict(size=15), len=0.9))
    layout = base_layout(title, xlabel, ylabel, height or 110 + 23 * L, dict(dtick=1), dict(autorange="reversed",
                                                                                            dtick=2))
    fig = go.Figure([hm], layout=layout)
    fig.update_layout(margin=dict(l=60, r=10, t=50, b=50), title=dict(font=dict(size=18)))
    if highlight is not None:
        i, h = highlight
        fig.add_shape(type="rect", x0=h - 0.5, x1=h + 0.5, y0=i - 0.5, y1=i + 0.5, line=dict(color="black", width=3))
    return fig


def label_counts(counts: dict, order: list[str], names: dict, title: str = "", height: int = 320) -> go.Figure:
    """How many heads carry each label, bars in the labels' hues."""
    keys = [k for k in order if k in counts]
    bar = go.Bar(x=[names.get(k, k) for k in keys], y=[counts[k] for k in keys], text=[counts[k] for k in keys],
                 textposition="auto", marker_color=[hue(k, order) for k in keys])
    return go.Figure([bar], layout=base_layout(title, "", "", height, dict(type="category")))
