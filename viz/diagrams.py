"""Diagrams for the overview and attention pages: the pipeline with live shapes, RoPE rotations,
GQA head sharing, and all heads' attention as small multiples. Tensors in, go.Figure out."""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .figures import block_max, FONT, _np


def _base(title: str, height: int) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(title=dict(text=title, font=dict(size=20)), font=FONT, height=height,
                      margin=dict(l=10, r=10, t=60, b=10), template="plotly_white", showlegend=False)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


def _box(fig, x, y, w, h, text, fill, size=17, color="#111"):
    fig.add_shape(type="rect", x0=x - w / 2, x1=x + w / 2, y0=y - h / 2, y1=y + h / 2,
                  line=dict(color="#555", width=1.5), fillcolor=fill, layer="below")
    fig.add_annotation(x=x, y=y, text=text, showarrow=False, font=dict(size=size, color=color))


def _arrow(fig, x0, y0, x1, y1, label="", label_side="right", color="#333"):
    fig.add_annotation(x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y", text="",
                       showarrow=True, arrowhead=3, arrowsize=1.3, arrowwidth=2.2, arrowcolor=color)
    if label:
        mx, my = (x0 + x1) / 2, (y0 + y1) / 2
        fig.add_annotation(x=mx + (0.06 if label_side == "right" else -0.05), y=my, text=label, showarrow=False,
                           xanchor="left" if label_side == "right" else "right",
                           font=dict(size=16, color="#b71c1c", family="monospace"))


def pipeline_diagram(steps: list[tuple[str, str]], layer_steps: list[tuple[str, str]], layer_index: int,
                     title: str = "", height: int = 760) -> go.Figure:
    """Main column: steps[k] = (box text, shape on the arrow leaving it). The box at layer_index is
    the stack of L layers; layer_steps (same form) draws its inside in a second column."""
    fig = _base(title, height)
    n = len(steps)
    ys = np.linspace(n - 1, 0, n)
    x_main = 0.0
    for k, (text, shape) in enumerate(steps):
        fill = "#ffe0b2" if k == layer_index else "#e3f2fd"
        _box(fig, x_main, ys[k], 2.0, 0.62, text, fill)
        if k + 1 < n:
            _arrow(fig, x_main, ys[k] - 0.31, x_main, ys[k + 1] + 0.31, shape)
    # inside one layer, to the right
    m = len(layer_steps)
    x_in = 4.1
    lys = np.linspace(n - 1, 0, m)
    for k, (text, shape) in enumerate(layer_steps):
        fill = "#fff3e0" if not text.startswith("+") else "#f1f8e9"
        _box(fig, x_in, lys[k], 2.7, 0.55 * (n - 1) / max(m - 1, 1) * 0.75 + 0.05, text, fill, size=15)
        if k + 1 < m:
            top = lys[k] - (0.55 * (n - 1) / max(m - 1, 1) * 0.75 + 0.05) / 2
            bot = lys[k + 1] + (0.55 * (n - 1) / max(m - 1, 1) * 0.75 + 0.05) / 2
            _arrow(fig, x_in, top, x_in, bot, shape)
    # the layer box opens into the right column
    yl = ys[layer_index]
    fig.add_shape(type="path", path=f"M 1.0 {yl + 0.31} L {x_in - 1.35} {lys[0] + 0.3} L {x_in - 1.35} {lys[-1] - 0.3} "
                                    f"L 1.0 {yl - 0.31} Z",
                  fillcolor="rgba(255,183,77,0.12)", line=dict(color="rgba(255,152,0,0.5)", dash="dot"), layer="below")
    fig.update_xaxes(range=[-1.1, 8.4])
    fig.update_yaxes(range=[-0.6, n - 0.4])
    return fig


def rope_pairs(before, after, angles, labels, title="", height=560) -> go.Figure:
    """One dimension pair per position: before RoPE (hollow) -> after (filled), arrows along the turn.

    before, after: (S, 2); angles: (S,) radians of each position's rotation."""
    before, after = _np(before), _np(after)
    fig = go.Figure()
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
    r = float(np.abs(np.concatenate([before, after])).max()) * 1.15 or 1.0
    for s in range(before.shape[0]):
        c = colors[s % len(colors)]
        # the arc travelled: rotate `before` gradually up to the angle
        a = np.linspace(0, float(angles[s]), 24)
        x0, y0 = before[s]
        arc_x = x0 * np.cos(a) - y0 * np.sin(a)
        arc_y = x0 * np.sin(a) + y0 * np.cos(a)
        fig.add_trace(go.Scatter(x=arc_x, y=arc_y, mode="lines", line=dict(color=c, width=1.5, dash="dot"),
                                 hoverinfo="skip", showlegend=False))
        fig.add_trace(go.Scatter(x=[x0], y=[y0], mode="markers", marker=dict(size=12, color="white", line=dict(color=c, width=2.5)),
                                 name=f"{s}:{labels[s]}", legendgroup=str(s), showlegend=False,
                                 hovertemplate=f"pos {s} before<br>(%{{x:.3f}}, %{{y:.3f}})<extra></extra>"))
        fig.add_trace(go.Scatter(x=[after[s, 0]], y=[after[s, 1]], mode="markers+text", marker=dict(size=13, color=c),
                                 text=[f"{s}"], textposition="top center", textfont=dict(size=16, color=c),
                                 name=f"{s}:{labels[s]}", legendgroup=str(s),
                                 hovertemplate=f"pos {s} after<br>(%{{x:.3f}}, %{{y:.3f}})<extra></extra>"))
        fig.add_annotation(x=after[s, 0], y=after[s, 1], ax=0, ay=0, axref="x", ayref="y", showarrow=True,
                           arrowhead=3, arrowwidth=2, arrowcolor=c, opacity=0.8, text="")
    fig.update_layout(title=dict(text=title, font=dict(size=20)), font=FONT, height=height, template="plotly_white",
                      margin=dict(l=70, r=30, t=60, b=60), legend=dict(orientation="v", font=dict(size=14)))
    fig.update_xaxes(range=[-r, r], zeroline=True, title_text="dim j")
    fig.update_yaxes(range=[-r, r], zeroline=True, scaleanchor="x", scaleratio=1, title_text="dim j + hd/2")
    return fig


def gqa_diagram(nh: int, nkv: int, highlight: int | None = None, title: str = "", height: int = 330,
                q_label: str = "Q head", kv_label: str = "KV head") -> go.Figure:
    """Query heads (top) joined to the KV head they read (bottom): head h uses KV head h // (nh / nkv)."""
    n_rep = max(nh // max(nkv, 1), 1)
    fig = _base(title, height)
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
    qx = np.arange(nh, dtype=float)
    kx = np.array([(g * n_rep + (n_rep - 1) / 2) for g in range(nkv)], dtype=float)
    for h in range(nh):
        g = h // n_rep
        c = colors[g % len(colors)]
        hl = highlight is not None and h == highlight
        fig.add_trace(go.Scatter(x=[qx[h], kx[g]], y=[1, 0], mode="lines",
                                 line=dict(color=c, width=5 if hl else 2), hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=qx, y=[1] * nh, mode="markers+text", text=[str(h) for h in range(nh)],
                             textposition="top center", textfont=dict(size=15),
                             marker=dict(size=[26 if h == highlight else 18 for h in range(nh)],
                                         color=[colors[(h // n_rep) % len(colors)] for h in range(nh)],
                                         symbol="square"),
                             hovertemplate="Q head %{text}<extra></extra>"))
    fig.add_trace(go.Scatter(x=kx, y=[0] * nkv, mode="markers+text", text=[str(g) for g in range(nkv)],
                             textposition="bottom center", textfont=dict(size=16),
                             marker=dict(size=30, color=[colors[g % len(colors)] for g in range(nkv)], symbol="diamond"),
                             hovertemplate="KV head %{text}<extra></extra>"))
    fig.add_annotation(x=-0.5, y=1, text=q_label, showarrow=False, xanchor="right", font=dict(size=16))
    fig.add_annotation(x=-0.5, y=0, text=kv_label, showarrow=False, xanchor="right", font=dict(size=16))
    fig.update_xaxes(range=[-0.5 - max(2.5, nh * 0.18), nh - 0.3])
    fig.update_yaxes(range=[-0.45, 1.45])
    return fig


def heads_grid(probs, title: str = "", cols: int = 7, subtitle=lambda h: f"head {h}", height_per_row: int = 210):
    """All heads' (S, S) attention maps as small multiples on one colour scale 0..1. probs: (nh, S, S)."""
    p = _np(probs)
    p = np.where(np.isfinite(p), p, np.nan)
    p, _ = block_max(p, 1, 64)                      # small multiples: 64 x 64 cells each at most
    p, _ = block_max(p, 2, 64)
    nh = p.shape[0]
    cols = max(1, min(cols, nh))
    rows = math.ceil(nh / cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[subtitle(h) for h in range(nh)],
                        horizontal_spacing=0.02, vertical_spacing=0.3 / rows if rows > 1 else 0.05)
    for h in range(nh):
        fig.add_trace(go.Heatmap(z=p[h], zmin=0, zmax=1, colorscale="Viridis", showscale=(h == 0),
                                 colorbar=dict(title="p", len=0.8) if h == 0 else None,
                                 hovertemplate=f"head {h}<br>query %{{y}}<br>key %{{x}}<br>p %{{z:.3f}}<extra></extra>"),
                      row=h // cols + 1, col=h % cols + 1)
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False, autorange="reversed")
    fig.update_annotations(font=dict(size=15))
    fig.update_layout(title=dict(text=title, font=dict(size=20)), font=FONT, height=80 + rows * height_per_row,
                      margin=dict(l=20, r=20, t=80, b=20), template="plotly_white")
    return fig


def roomy(fig: go.Figure) -> go.Figure:
    """Move a horizontal legend just above the plot area, below the title, so the two never overlap."""
    fig.update_layout(margin=dict(t=110), title=dict(y=0.97, yanchor="top"),
                      legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0, xanchor="left"))
    return fig
