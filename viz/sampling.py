"""Figures of the sampling page: one stage's values at the candidates (-inf shown as such), probability vs
frequency."""
from __future__ import annotations

import plotly.graph_objects as go

from .figures import as_numpy, base_layout


def stage_bars(values, names, chosen: int | None, ids, title="", ylabel="logit", height=440,
               probability: bool = False) -> go.Figure:
    """values at the candidate ids (names their labels); -inf bars drawn empty and labelled −∞; the chosen id red."""
    v = as_numpy(values)
    finite = [bool(x == x and abs(x) != float("inf")) for x in v]
    shown = [float(x) if f else 0.0 for x, f in zip(v, finite)]
    text = [f"{x:.3f}" if probability else (f"{x:.2f}" if f else "−∞") for x, f in zip(v, finite)]
    colors = ["#d62728" if int(i) == chosen else "#1f77b4" for i in ids]
    bar = go.Bar(x=list(names), y=shown, text=text, textposition="outside", marker_color=colors,
                 textfont=dict(size=16), cliponaxis=False)
    return go.Figure([bar], layout=base_layout(title, "", ylabel, height, dict(type="category", tickangle=-45),
                                               uniformtext=dict(minsize=13, mode="show")))


def bar_pair(labels, a, b, name_a, name_b, title="", xlabel="", ylabel="", height=440) -> go.Figure:
    """Two values per label side by side (probability and frequency)."""
    a, b = as_numpy(a), as_numpy(b)
    fig = go.Figure([go.Bar(x=labels, y=a, name=name_a, text=[f"{v:.3f}" for v in a], textposition="auto"),
                     go.Bar(x=labels, y=b, name=name_b, text=[f"{v:.3f}" for v in b], textposition="auto")],
                    layout=base_layout(title, xlabel, ylabel, height, dict(type="category", tickangle=-45),
                                       barmode="group", legend=dict(orientation="h", y=1.12)))
    return fig
