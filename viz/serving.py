"""Figures of the serving page: online softmax block by block, RoPE wavelengths with YaRN, speculative
decoding's speed-up, and the H200 roofline with prefill and decode on it."""
from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .figures import FONT, as_numpy, base_layout

BLOCK_COLORS = ("#1f77b4", "#ff7f0e")
# legends below the plot: a Chinese y-axis title is drawn upright above the axis, where a top legend would sit
BELOW = dict(legend=dict(orientation="h", yanchor="top", y=-0.22, x=0), margin=dict(l=70, r=30, t=60, b=120))


def online_softmax(view: dict, labels: list[str], title: str = "", score_label: str = "score",
                   max_label: str = "running max m", sum_label: str = "running sum l", height: int = 520,
                   block_labels: tuple[str, str] = ("score · blocks 0, 2, 4, …", "score · blocks 1, 3, 5, …")
                   ) -> go.Figure:
    """Top: one query's scores, keys coloured by block (even blocks BLOCK_COLORS[0], odd ones BLOCK_COLORS[1], one
    trace and legend entry per colour, named by block_labels), with the running max m as it stands after each block.
    Bottom: the running sum l after each block (it shrinks by α = e^(m_old − m_new) whenever the max rises)."""
    s = as_numpy(view["scores"])
    blocks = view["blocks"]
    parity = [k % 2 for k, (a, b) in enumerate(blocks) for _ in range(a, b)]
    x = [f"{j}:{labels[j]}" if j < len(labels) else str(j) for j in range(len(s))]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.62, 0.38], vertical_spacing=0.08)
    for p in (0, 1):                 # every key on both traces (None off its colour): the x categories stay in order
        y = [float(v) if j < len(parity) and parity[j] == p and math.isfinite(v) else None for j, v in enumerate(s)]
        if any(v is not None for v in y):        # a colour with nothing drawn (one block, masked keys) gets no entry
            fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name=block_labels[p],
                                     marker=dict(color=BLOCK_COLORS[p], size=16, symbol="square"),
                                     hovertemplate="%{x}<br>%{y:.4f}<extra></extra>"), 1, 1)
    for k, ((a, b), r) in enumerate(zip(blocks, view["rows"])):
        seg = x[a:b] if b - a > 1 else [x[a], x[a]]
        fig.add_trace(go.Scatter(x=seg, y=[r["m"]] * len(seg), mode="lines+markers", line=dict(color="#d62728",
                                                                                               width=4),
                                 marker=dict(symbol="line-ew-open", size=24, color="#d62728", line=dict(width=4)),
                                 name=max_label, showlegend=k == 0, hovertemplate=f"m = {r['m']:.4f}<extra></extra>"),
                                 1,
                                 1)
        fig.add_trace(go.Scatter(x=[x[b - 1]], y=[r["l"]], mode="markers+text", text=[f"{r['l']:.3f}"],
                                 textposition="top center", marker=dict(size=13, color="#2ca02c"), name=sum_label,
                                 showlegend=k == 0, hovertemplate=f"l = {r['l']:.4f}<extra></extra>"), 2, 1)
    fig.update_layout(dict(base_layout(title, "", "", height), **BELOW))
    fig.update_xaxes(type="category", tickfont=dict(size=13))
    fig.update_yaxes(title_text=score_label, row=1, col=1)
    top = max(r["l"] for r in view["rows"])
    # room over the top dot for its number, and few ticks: the panel is short (a projector makes it shorter still)
    fig.update_yaxes(title_text="l", row=2, col=1, range=[0, 1.6 * top], nticks=3)
    return fig


def wavelengths(lc: dict, title: str = "", rope_label: str = "RoPE", yarn_label: str = "YaRN",
                xlabel: str = "pair j", ylabel: str = "tokens per turn", height: int = 470) -> go.Figure:
    """Tokens each RoPE pair needs to turn once (log axis), before and after YaRN, with both context lengths."""
    j = list(range(lc["pairs"]))
    data = [go.Scatter(x=j, y=as_numpy(lc["wavelengths"]), name=rope_label, mode="lines+markers", line=dict(width=3)),
            go.Scatter(x=j, y=as_numpy(lc["yarn_wavelengths"]), name=yarn_label, mode="lines", line=dict(width=3,
                                                                                                         dash="dot"))]
    for n, dash in ((lc["original"], "dash"), (lc["extended"], "longdash")):
        # the length named at the left end, above its line: the curves rise to the right and crossed it there
        data.append(go.Scatter(x=[j[0], j[-1]], y=[n, n], mode="lines+text", text=[f"{n:,}", ""],
                               textposition="top right",
                               line=dict(color="#555", dash=dash, width=1.5), showlegend=False, hoverinfo="skip"))
    layout = base_layout(title, xlabel, ylabel, height, None, dict(type="log", exponentformat="power"))
    return go.Figure(data, layout=dict(layout, **BELOW))


def spec_speedup(a_values, k_max: int, c: float, speedup, chosen: tuple | None = None, title: str = "",
                 xlabel: str = "k", ylabel: str = "speed-up", chosen_label: str = "", height: int = 440) -> go.Figure:
    """speed-up(a, k, c) against the draft length k, one line per acceptance rate a (speedup is the formula);
    chosen = (a, k): the reader's own curve, dashed, with its point marked."""
    ks = list(range(1, k_max + 1))
    data = [go.Scatter(x=ks, y=[speedup(a, k, c) for k in ks], name=f"a = {a:g}",
                       mode="lines+markers") for a in a_values]
    if chosen:
        a, k = chosen
        data.append(go.Scatter(x=ks, y=[speedup(a, j, c) for j in ks], name=f"{chosen_label} a = {a:g}", mode="lines",
                               line=dict(color="#333", dash="dash", width=3)))
        data.append(go.Scatter(x=[k], y=[speedup(a, k, c)], mode="markers", marker=dict(size=16, color="#d62728"),
                               showlegend=False, hovertemplate="k = %{x}<br>%{y:.2f}×<extra></extra>"))
    return go.Figure(data, layout=dict(base_layout(title, xlabel, ylabel, height), **BELOW))


def roofline(points: list[dict], title: str = "", xlabel: str = "FLOP / byte", ylabel: str = "TFLOP/s",
             roof_label: str = "roof", height: int = 430) -> go.Figure:
    """The H200's roof (min(peak, intensity × bandwidth)) on log axes, each point a phase at its intensity.
    points: costs.roofline rows with a 'label' added."""
    peak = points[0]["flops"] / points[0]["t_compute_s"] / 1e12
    ridge = points[0]["ridge"]
    xs = [10 ** (k / 10) for k in range(-10, 41)]
    roof = go.Scatter(x=xs, y=[min(peak, x * peak / ridge) for x in xs], mode="lines", line=dict(color="#333", width=3),
                      name=roof_label, hoverinfo="skip")
    dots = go.Scatter(x=[p["intensity"] for p in points], y=[min(peak, p["intensity"] * peak / ridge) for p in points],
                      mode="markers+text", text=[p["label"] for p in points], textposition="bottom right",
                      marker=dict(size=15, color="#d62728"), textfont=dict(size=FONT["size"]), showlegend=False)
    return go.Figure([roof, dots], layout=base_layout(title, xlabel, ylabel, height,
                                                     dict(type="log", exponentformat="power"),
                                                     dict(type="log", exponentformat="power")))
