"""RoPE's per-pair frequencies before and after the config's scaling (ops/lab/stage_data.rope_frequencies)."""
from __future__ import annotations

import plotly.graph_objects as go

from .figures import as_numpy, base_layout
from .labels import CHOSEN

# A legend under the x-axis title, at the foot of the figure (not in paper units, which crossed the title on a
# short chart), and the bottom margin that holds both.
LEGEND_UNDER = dict(orientation="h", yref="container", y=0, yanchor="bottom", x=0, font=dict(size=14))
MARGIN_UNDER = dict(l=70, r=30, t=60, b=100)



def frequency_pairs(fq: dict, pick: int | None = None, title: str = "", names=("unscaled", "used", "tokens / turn"),
                    axes=("dimension pair j", "rad per position"), height: int = 420) -> go.Figure:
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
    return go.Figure(data, dict(base_layout(title, axes[0], axes[1], height,
                                            yaxis=dict(type="log", exponentformat="power"), legend=LEGEND_UNDER),
                                margin=MARGIN_UNDER))


def attention_rows(rows: dict, window: int, title: str = "", names=("as configured", "with yarn", "far keys"),
                   axes=("key position", "attention probability"), height: int = 420) -> go.Figure:
    """One query's attention over key positions in two runs (rows: "plain", "yarn" -> (n,)); the keys more than
    `window` positions back shaded, and named in the legend (a note in the plot was crossed by the curves)."""
    plain, yarn = as_numpy(rows["plain"]), as_numpy(rows["yarn"])
    n = len(plain)
    edge = n - 1 - window
    data = [go.Scatter(x=list(range(n)), y=plain, mode="lines", name=names[0], line=dict(color="#888")),
            go.Scatter(x=list(range(n)), y=yarn, mode="lines", name=names[1], line=dict(color="#1f77b4"))]
    shade = "rgba(31,119,180,0.08)"
    shapes = [dict(type="rect", xref="x", yref="paper", x0=-0.5, x1=edge - 0.5, y0=0, y1=1, line=dict(width=0),
                   fillcolor=shade)] if edge > 0 else []
    if edge > 0:                 # the shaded keys' legend entry: a square of the shade, no point drawn
        data.append(go.Scatter(x=[None], y=[None], mode="markers", name=names[2], hoverinfo="skip",
                               marker=dict(symbol="square", size=16, color="rgba(31,119,180,0.25)")))
    # one tick label a decade (dtick 1): the minor 2 and 5 labels of a log axis crowded a short chart
    return go.Figure(data, dict(base_layout(title, axes[0], axes[1], height,
                                            yaxis=dict(type="log", exponentformat="power", dtick=1),
                                            shapes=shapes, legend=LEGEND_UNDER), margin=MARGIN_UNDER))
