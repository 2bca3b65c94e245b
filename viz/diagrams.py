"""Diagrams for the overview and attention pages: the pipeline with live shapes, RoPE rotations,
GQA head sharing, and all heads' attention as small multiples. Tensors in, go.Figure out."""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import torch

from .figures import block_max, FONT, as_numpy
from .labels import CHOSEN, TOKEN_COLORS, token_color


def _base(title: str, height: int, data=None) -> go.Figure:
    """An empty canvas (no axes) for the drawn diagrams."""
    return go.Figure(data, layout=dict(title=dict(text=title, font=dict(size=20)), font=FONT, height=height,
                                       margin=dict(l=10, r=10, t=60, b=10), showlegend=False,
                                       xaxis=dict(visible=False), yaxis=dict(visible=False)))


def _box(shapes, notes, x, y, w, h, text, fill, size=17, color="#111"):
    """A labelled box: appended to the figure's shape and annotation lists (set once, at the end)."""
    shapes.append(dict(type="rect", x0=x - w / 2, x1=x + w / 2, y0=y - h / 2, y1=y + h / 2,
                       line=dict(color="#555", width=1.5), fillcolor=fill, layer="below"))
    notes.append(dict(x=x, y=y, text=text, showarrow=False, font=dict(size=size, color=color)))


def _arrow(notes, x0, y0, x1, y1, label="", label_side="right", color="#333"):
    notes.append(dict(x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y", text="",
                      showarrow=True, arrowhead=3, arrowsize=1.3, arrowwidth=2.2, arrowcolor=color))
    if label:
        mx, my = (x0 + x1) / 2, (y0 + y1) / 2
        notes.append(dict(x=mx + (0.06 if label_side == "right" else -0.05), y=my, text=label, showarrow=False,
                          xanchor="left" if label_side == "right" else "right",
                          font=dict(size=16, color="#b71c1c", family="monospace")))


def pipeline_diagram(steps: list[tuple[str, str]], layer_steps: list[tuple[str, str]], layer_index: int,
                     title: str = "", height: int = 760) -> go.Figure:
    """Main column: steps[k] = (box text, shape on the arrow leaving it). The box at layer_index is
    the stack of L layers; layer_steps (same form) draws its inside in a second column.
    Shapes and annotations are collected first and set in one call: plotly re-validates the whole list
    on every add_annotation."""
    shapes, notes = [], []
    n = len(steps)
    ys = np.linspace(n - 1, 0, n)
    x_main = 0.0
    for k, (text, shape) in enumerate(steps):
        fill = "#ffe0b2" if k == layer_index else "#e3f2fd"
        _box(shapes, notes, x_main, ys[k], 2.0, 0.62, text, fill)
        if k + 1 < n:
            _arrow(notes, x_main, ys[k] - 0.31, x_main, ys[k + 1] + 0.31, shape)
    # inside one layer, to the right
    m = len(layer_steps)
    x_in = 4.1
    lys = np.linspace(n - 1, 0, m)
    box_h = 0.55 * (n - 1) / max(m - 1, 1) * 0.75 + 0.05
    for k, (text, shape) in enumerate(layer_steps):
        fill = "#fff3e0" if not text.startswith("+") else "#f1f8e9"
        _box(shapes, notes, x_in, lys[k], 2.7, box_h, text, fill, size=15)
        if k + 1 < m:
            _arrow(notes, x_in, lys[k] - box_h / 2, x_in, lys[k + 1] + box_h / 2, shape)
    # the layer box opens into the right column
    yl = ys[layer_index]
    shapes.append(dict(type="path", path=f"M 1.0 {yl + 0.31} L {x_in - 1.35} {lys[0] + 0.3} "
                                         f"L {x_in - 1.35} {lys[-1] - 0.3} L 1.0 {yl - 0.31} Z",
                       fillcolor="rgba(255,183,77,0.12)", line=dict(color="rgba(255,152,0,0.5)", dash="dot"),
                       layer="below"))
    fig = _base(title, height)
    fig.update_layout(shapes=shapes, annotations=notes, xaxis_range=[-1.1, 8.4], yaxis_range=[-0.6, n - 0.4])
    return fig


def rope_pairs(before, after, angles, labels, title="", height=560,
               names=("rotation", "before RoPE", "after RoPE"), axes=("dim j", "dim j + hd/2")) -> go.Figure:
    """One dimension pair per position: before RoPE (hollow) -> after (filled), the arc it turns along.

    before, after: (S, 2); angles: (S,) radians of each position's rotation. Three traces in all
    (arcs, before, after), whatever S is: plotly builds a trace per position far too slowly."""
    before, after = as_numpy(before), as_numpy(after)
    pos_colors = [token_color(s) for s in range(before.shape[0])]          # position s in token s's colour
    r = float(np.abs(np.concatenate([before, after])).max()) * 1.15 or 1.0
    arc_x, arc_y = [], []
    for s in range(before.shape[0]):                 # the arc travelled: `before` turned gradually to its angle
        a = np.linspace(0, float(angles[s]), 24)
        x0, y0 = before[s]
        arc_x += list(x0 * np.cos(a) - y0 * np.sin(a)) + [None]
        arc_y += list(x0 * np.sin(a) + y0 * np.cos(a)) + [None]
    tips = [f"{s}:{labels[s]}" for s in range(before.shape[0])]
    return go.Figure([
        go.Scatter(x=arc_x, y=arc_y, mode="lines", line=dict(color="#888", width=1.5, dash="dot"),
                   hoverinfo="skip", name=names[0]),
        go.Scatter(x=before[:, 0], y=before[:, 1], mode="markers", name=names[1], customdata=tips,
                   marker=dict(size=12, color="white", line=dict(color=pos_colors, width=2.5)),
                   hovertemplate="%{customdata} before<br>(%{x:.3f}, %{y:.3f})<extra></extra>"),
        go.Scatter(x=after[:, 0], y=after[:, 1], mode="markers+text", name=names[2], customdata=tips,
                   marker=dict(size=13, color=pos_colors), text=[str(s) for s in range(before.shape[0])],
                   textposition="top center", textfont=dict(size=16, color=pos_colors),
                   hovertemplate="%{customdata} after<br>(%{x:.3f}, %{y:.3f})<extra></extra>"),
    ], layout=dict(title=dict(text=title, font=dict(size=20)), font=FONT, height=height,
                   margin=dict(l=70, r=30, t=60, b=60), legend=dict(orientation="h", y=-0.15, font=dict(size=14)),
                   xaxis=dict(range=[-r, r], zeroline=True, title=dict(text=axes[0])),
                   yaxis=dict(range=[-r, r], zeroline=True, scaleanchor="x", scaleratio=1, title=dict(text=axes[1]))))


def gqa_diagram(nh: int, nkv: int, highlight: int | None = None, title: str = "", height: int = 330,
                q_label: str = "Q head", kv_label: str = "KV head") -> go.Figure:
    """Query heads (top) joined to the KV head they read (bottom): head h uses KV head h // (nh / nkv)."""
    n_rep = max(nh // max(nkv, 1), 1)
    colors = TOKEN_COLORS             # categorical, without red (red means "selected")
    qx = np.arange(nh, dtype=float)
    kx = np.array([(g * n_rep + (n_rep - 1) / 2) for g in range(nkv)], dtype=float)
    data = []
    for g in range(nkv):                             # one trace per KV group: its query heads' lines
        xs, ys = [], []
        for h in range(g * n_rep, min((g + 1) * n_rep, nh)):
            xs += [qx[h], kx[g], None]
            ys += [1, 0, None]
        data.append(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=colors[g % len(colors)], width=2),
                               hoverinfo="skip"))
    if highlight is not None and 0 <= highlight < nh:
        g = highlight // n_rep
        data.append(go.Scatter(x=[qx[highlight], kx[g]], y=[1, 0], mode="lines",
                               line=dict(color=colors[g % len(colors)], width=5), hoverinfo="skip"))
    data.append(go.Scatter(x=qx, y=[1] * nh, mode="markers+text", text=[str(h) for h in range(nh)],
                           textposition="top center", textfont=dict(size=15),
                           marker=dict(size=[26 if h == highlight else 18 for h in range(nh)],
                                       color=[colors[(h // n_rep) % len(colors)] for h in range(nh)], symbol="square"),
                           hovertemplate="Q head %{text}<extra></extra>"))
    data.append(go.Scatter(x=kx, y=[0] * nkv, mode="markers+text", text=[str(g) for g in range(nkv)],
                           textposition="bottom center", textfont=dict(size=16),
                           marker=dict(size=30, color=[colors[g % len(colors)] for g in range(nkv)], symbol="diamond"),
                           hovertemplate="KV head %{text}<extra></extra>"))
    return go.Figure(data, layout=dict(
        title=dict(text=title, font=dict(size=20)), font=FONT, height=height, margin=dict(l=10, r=10, t=60, b=10),
        showlegend=False, xaxis=dict(visible=False, range=[-0.5 - max(2.5, nh * 0.18), nh - 0.3]),
        yaxis=dict(visible=False, range=[-0.45, 1.45]),
        annotations=[dict(x=-0.5, y=1, text=q_label, showarrow=False, xanchor="right", font=dict(size=16)),
                     dict(x=-0.5, y=0, text=kv_label, showarrow=False, xanchor="right", font=dict(size=16))]))


def heads_grid(probs, allowed=None, title: str = "", cols: int = 7, subtitle=lambda h: f"head {h}",
               height_per_row: int = 210, max_cells: int = 48, highlight: int | None = None) -> go.Figure:
    """All heads' (S, S) attention maps as small multiples on one colour scale 0..1. probs: (nh, S, S);
    allowed: (S, S) bool, False cells (masked) are left blank. Long prompts are shown as block maxima,
    at most max_cells per side (a tile is ~150 px wide on a projector). highlight: a head framed in red.

    Drawn as ONE heatmap of tiles with blank gaps: plotly builds subplots slowly."""
    p = probs.detach().float().cpu() if torch.is_tensor(probs) else torch.from_numpy(np.asarray(probs, np.float32))
    p, ky, kx = block_max(p, max_cells)             # pooled first: the masking below is on the small tiles
    if allowed is not None:
        seen = block_max(torch.as_tensor(allowed).float(), max_cells)[0] > 0   # a block with any visible cell
        p = p.masked_fill(~seen, float("nan"))
    p = as_numpy(p)
    nh, n, m = p.shape
    cols = max(1, min(cols, nh))
    rows = math.ceil(nh / cols)
    gap = max(1, n // 8)
    tiles = np.full((rows * (n + gap), cols * (m + gap)), np.nan)
    for h in range(nh):
        r, c = divmod(h, cols)
        tiles[r * (n + gap):r * (n + gap) + n, c * (m + gap):c * (m + gap) + m] = p[h]
    notes = [dict(x=(h % cols) * (m + gap) + (m - 1) / 2, y=(h // cols) * (n + gap) - 0.5, yshift=12,
                  text=subtitle(h), showarrow=False, font=dict(size=15)) for h in range(nh)]
    if ky > 1 or kx > 1:
        title = f"{title}  (max over {ky}×{kx} blocks)"
    axis = dict(showticklabels=False, showgrid=False, zeroline=False)
    frame = []
    if highlight is not None and 0 <= highlight < nh:
        r, c = divmod(highlight, cols)
        frame = [dict(type="rect", x0=c * (m + gap) - 0.5, x1=c * (m + gap) + m - 0.5, y0=r * (n + gap) - 0.5,
                      y1=r * (n + gap) + n - 0.5, line=dict(color=CHOSEN, width=3))]
    return go.Figure([go.Heatmap(z=tiles, zmin=0, zmax=1, colorscale="Viridis", colorbar=dict(title="p", len=0.8),
                                 hovertemplate="p %{z:.3f}<extra></extra>")],
                     layout=dict(annotations=notes, title=dict(text=title, font=dict(size=20)), font=FONT, shapes=frame,
                                 height=80 + rows * height_per_row, margin=dict(l=20, r=20, t=80, b=20),
                                 xaxis=axis, yaxis=dict(axis, autorange="reversed")))


def roomy(fig: go.Figure) -> go.Figure:
    """Move a horizontal legend just above the plot area, below the title, so the two never overlap."""
    fig.update_layout(margin=dict(t=110), title=dict(y=0.97, yanchor="top"),
                      legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0, xanchor="left"))
    return fig
