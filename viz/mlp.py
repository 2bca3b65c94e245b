"""Figures of the MLP / MoE page: one token's SwiGLU vectors as strips (widen -> gate -> narrow), the silu curve."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import torch

from .figures import as_numpy, base_layout


def vector_strips(rows, title: str = "", height: int = 380, xlabel: str = "") -> go.Figure:
    """rows: [(label, 1-D tensor)], drawn top to bottom as colour strips on one width scale, each centred, so a
    vector of 896 looks as much narrower than one of 4864 as it is. Each strip is coloured on its own range
    (blue > 0 > red); thin lines join the ends of strips of different widths (the widen / narrow steps)."""
    width = max(len(v) for _, v in rows)
    data, shapes, ticks = [], [], []
    prev = None
    for k, (label, v) in enumerate(rows):
        z = as_numpy(v).ravel()
        n, y = len(z), 1.6 * k
        lo = (width - n) / 2
        top = float(np.quantile(np.abs(z), 0.995)) or 1e-6                 # a few outliers would wash out the rest
        data.append(go.Heatmap(z=[z], x=lo + np.arange(n), y=[y], colorscale="RdBu", zmin=-top, zmax=top,
                               showscale=False, text=[[str(j) for j in range(n)]],
                               hovertemplate=f"{label}<br>#%{{text}}: %{{z:.4g}}<extra></extra>"))
        if prev is not None and prev[0] != lo:
            for a, b in ((prev[0], lo), (prev[1], lo + n)):
                shapes.append(dict(type="line", x0=a - 0.5, x1=b - 0.5, y0=prev[2] + 0.5, y1=y - 0.5,
                                   line=dict(color="#888", width=1.5, dash="dot")))
        prev = (lo, lo + n, y)
        ticks.append(y)
    layout = base_layout(title, xlabel, "", height, dict(range=[-0.5, width - 0.5], showgrid=False, zeroline=False, showticklabels=False),
                         dict(tickvals=ticks, ticktext=[lab for lab, _ in rows], autorange="reversed", showgrid=False,
                              zeroline=False), shapes=shapes)
    layout["margin"] = dict(l=10, r=20, t=60, b=40)
    layout["yaxis"]["automargin"] = True
    return go.Figure(data, layout=layout)


def silu_curve(gate_values, title: str = "", xlabel: str = "gate z", ylabel: str = "silu(z)") -> go.Figure:
    """The silu curve over the range of the gates, with one dot per gate value of a token."""
    g = torch.as_tensor(gate_values).float()
    lo, hi = min(-6.0, float(g.min()) - 0.5), max(3.0, float(g.max()) + 0.5)   # the curve where the gates are
    z = torch.linspace(lo, hi, 400)
    data = [go.Scatter(x=z.numpy(), y=torch.nn.functional.silu(z).numpy(), mode="lines", name="silu(z) = z·σ(z)",
                       line=dict(width=3)),
            go.Scatter(x=g.numpy(), y=torch.nn.functional.silu(g).numpy(), mode="markers", name="gate",
                       marker=dict(size=9, opacity=0.35, color="#d62728"))]
    return go.Figure(data, layout=base_layout(title, xlabel, ylabel, 420, legend=dict(orientation="h", y=1.12)))
