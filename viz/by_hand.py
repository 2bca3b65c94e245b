"""Figures for the "do it by hand" blocks (ops/arith/worked_math.py): RoPE's pair as clock hands. Numbers in, go.Figure
out."""
from __future__ import annotations

import math

import plotly.graph_objects as go

from .figures import FONT
from .labels import CHOSEN

K_COLOR = "#1f77b4"


def rope_clock(hands: list[dict], q_at: dict, k_at: dict, title: str = "", names=("q at every position", "q", "k"),
               height: int = 480) -> go.Figure:
    """A dial: q's hand at every position m (grey, numbered: the clock ticking), q at position m (red) and
    k at position n (blue) drawn as arrows from the centre. hands, q_at, k_at: ops.arith.worked_math.rope_clock rows."""
    r = max([math.hypot(h["x0"], h["x1"]) for h in hands] + [math.hypot(k_at["x0"], k_at["x1"]), 1e-9]) * 1.25
    circle = [i * 2 * math.pi / 96 for i in range(97)]
    rq = math.hypot(q_at["x0"], q_at["x1"])
    xs, ys = [], []
    for h in hands:                                  # one spoke per position, all in a single trace
        xs += [0, h["x0"], None]
        ys += [0, h["x1"], None]
    data = [go.Scatter(x=[rq * math.cos(a) for a in circle], y=[rq * math.sin(a) for a in circle], mode="lines",
                       line=dict(color="#cccccc", width=1), hoverinfo="skip", showlegend=False),
            go.Scatter(x=xs, y=ys, mode="lines", line=dict(color="#bbbbbb", width=1.5), hoverinfo="skip",
                       name=names[0]),
            go.Scatter(x=[h["x0"] for h in hands], y=[h["x1"] for h in hands], mode="markers+text",
                       text=[str(h["m"]) for h in hands], textposition="top center", textfont=dict(size=14,
                                                                                                   color="#666"),
                       marker=dict(size=7, color="#999999"), showlegend=False,
                       hovertemplate="m = %{text}<br>(%{x:.3f}, %{y:.3f})<extra></extra>")]
    for at, color, name in ((q_at, CHOSEN, names[1]), (k_at, K_COLOR, names[2])):
        data.append(go.Scatter(x=[0, at["x0"]], y=[0, at["x1"]], mode="lines+markers", name=name,
                               line=dict(color=color, width=4), marker=dict(size=[0, 12], color=color),
                               hovertemplate=f"{name}<br>(%{{x:.3f}}, %{{y:.3f}})<extra></extra>"))
    return go.Figure(data, layout=dict(
        title=dict(text=title, font=dict(size=18)), font=FONT, height=height, margin=dict(l=50, r=20, t=60, b=50),
        legend=dict(orientation="h", y=-0.12, font=dict(size=14)),
        xaxis=dict(range=[-r, r], zeroline=True, title=dict(text="x0")),
        yaxis=dict(range=[-r, r], zeroline=True, scaleanchor="x", scaleratio=1, title=dict(text="x1"))))
