"""Figures of the precision page: per-layer relative error per dtype (log axis), bytes per dtype."""
from __future__ import annotations

import plotly.graph_objects as go

from .figures import as_numpy, base_layout, log_ticks

COLORS = {"float32": "#1f77b4", "bfloat16": "#ff7f0e", "int8": "#9467bd", "float16": "#2ca02c"}


def error_lines(errors: dict, layers, title: str = "", ylabel: str = "", xlabel: str = "",
                height: int = 480) -> go.Figure:
    """dtype -> (L + 1,) relative error of the residual stream against float32, on a log axis.
    Exact zeros (float32 against itself) cannot sit on a log axis and are left out."""
    data, shown = [], []
    for name, v in errors.items():
        v = as_numpy(v)
        if not (v > 0).any():
            continue
        ys = [float(x) if x > 0 else None for x in v]
        shown += ys
        data.append(go.Scatter(x=list(layers), y=ys, name=name,
                               mode="lines+markers", line=dict(color=COLORS.get(name), width=3)))
    layout = base_layout(title, xlabel, ylabel, height, dict(type="category", nticks=13),
                         dict(type="log", **log_ticks(shown)),      # every tick written out: 0.002, 0.005, 0.01
                         legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0))
    layout["margin"] = dict(layout["margin"], t=95)      # the legend under the title, not touching it
    return go.Figure(data, layout=layout)


def byte_bars(sizes: dict, title: str = "", ylabel: str = "GB", height: int = 320, scale: float = 1e9) -> go.Figure:
    """dtype -> bytes, drawn in GB with the ratio to the first (float32) written on each bar."""
    names = list(sizes)
    vals = [sizes[n] / scale for n in names]
    first = vals[0] or 1.0
    text = [f"{v:.2f} ({v / first:.2f}×)" for v in vals]
    bar = go.Bar(x=names, y=vals, text=text, textposition="outside", textangle=0, cliponaxis=False,
                 marker_color=[COLORS.get(n, "#888") for n in names])
    return go.Figure([bar], layout=base_layout(title, "", ylabel, height, dict(type="category")))
