"""The placement plan as a picture: one stacked bar per device (weights, KV cache, trace capture) under its size."""
from __future__ import annotations

import plotly.graph_objects as go

from .figures import base_layout

PARTS = (("weights", "#4c78a8"), ("kv", "#f58518"), ("capture", "#54a24b"))


def device_bars(devices: list[dict], gpu_gb: float, names: dict, title: str, ylabel: str) -> go.Figure:
    """devices: ops.arith.placement.plan(...)["devices"]; names: part -> legend label (weights / kv / capture)."""
    x = [f"GPU {d['device']}" if d["device"] != "cpu" else "CPU" for d in devices]
    data = [go.Bar(name=names[part], x=x, y=[d[part] / 1e9 for d in devices], marker_color=color,
                   text=[f"{d[part] / 1e9:.1f}" if d[part] else "" for d in devices], textposition="inside")
            for part, color in PARTS if any(d[part] for d in devices)]
    layout = base_layout(title, "", ylabel, 360, barmode="stack", legend=dict(orientation="h", y=1.12),
                         shapes=[dict(type="line", xref="paper", x0=0, x1=1, y0=gpu_gb, y1=gpu_gb,
                                      line=dict(color="#333", dash="dash"))])
    return go.Figure(data, layout)
