"""RoPE's per-pair frequencies before and after the config's scaling (ops/lab/stage_data.rope_frequencies)."""
from __future__ import annotations

import plotly.graph_objects as go

from .figures import as_numpy, base_layout
from .labels import CHOSEN


def frequency_pairs(fq: dict, pick: int | None = None, title: str = "", names=("unscaled", "used", "tokens / turn"),
                    axes=("dimension pair j", "rad per position"), height: int = 380) -> go.Figure:
    """θ_j per pair j on a log scale: the unscaled θ^(-2j/hd) (hollow) and the frequency the pass used (filled);
    the picked pair ringed. Hover: the wavelength in tokens and the ratio used / unscaled."""
    j, base, used = as_numpy(fq["pairs"]), as_numpy(fq["base"]), as_numpy(fq["used"])
    wave_b, wave_u, ratio = as_numpy(fq["wave_base"]), as_numpy(fq["wave_used"]), as_numpy(fq["ratio"])
    tip = ("j = %{x}<br>θ_j = %{y:.4g}<br>%{customdata[0]:,.1f} " + names[2]
           + "<br>× %{customdata[1]:.4g}<extra></extra>")
    data = [go.Scatter(x=j, y=base, mode="lines+markers", name=names[0], customdata=list(zip(wave_b, [1.0] * len(j))),
                       line=dict(color="#888", dash="dot"), marker=dict(size=9, color="white", line=dict(width=2)),
                       hovertemplate=tip),
            go.Scatter(x=j, y=used, mode="lines+markers", name=names[1], customdata=list(zip(wave_u, ratio)),
                       line=dict(color="#1f77b4"), marker=dict(size=8), hovertemplate=tip)]
    if pick is not None and 0 <= pick < len(j):
        data.append(go.Scatter(x=[j[pick]], y=[used[pick]], mode="markers", showlegend=False, hoverinfo="skip",
                               marker=dict(size=18, color="rgba(0,0,0,0)", line=dict(color=CHOSEN, width=3))))
    return go.Figure(data, base_layout(title, axes[0], axes[1], height, yaxis=dict(type="log", exponentformat="power"),
                                       legend=dict(orientation="h", y=-0.2, font=dict(size=14))))



def attention_rows(rows: dict, window: int, title: str = "", names=("as configured", "with yarn", "far keys"),
                   axes=("key position", "attention probability"), height: int = 360) -> go.Figure:
    """One query's attention over key positions in two runs (rows: "plain", "yarn" -> (n,)); the keys more than
    `window` positions back shaded."""
    plain, yarn = as_numpy(rows["plain"]), as_numpy(rows["yarn"])
    n = len(plain)
    edge = n - 1 - window
    data = [go.Scatter(x=list(range(n)), y=plain, mode="lines", name=names[0], line=dict(color="#888")),
            go.Scatter(x=list(range(n)), y=yarn, mode="lines", name=names[1], line=dict(color="#1f77b4"))]
    shapes = [dict(type="rect", xref="x", yref="paper", x0=-0.5, x1=edge - 0.5, y0=0, y1=1, line=dict(width=0),
                   fillcolor="rgba(31,119,180,0.08)")] if edge > 0 else []
    notes = [dict(x=max(edge, 1) / 2, y=1, yref="paper", text=names[2], showarrow=False, yanchor="bottom",
                  font=dict(size=14))] if edge > 0 else []
    return go.Figure(data, base_layout(title, axes[0], axes[1], height, yaxis=dict(type="log", exponentformat="power"),
                                       shapes=shapes, annotations=notes,
                                       legend=dict(orientation="h", y=-0.2, font=dict(size=14))))
