"""The scale page's figures: the roofline of prefill vs one decode step, and parameters per operator."""
from __future__ import annotations

import math

import plotly.graph_objects as go

from .figures import FONT, bars

COLORS = {"prefill": "#ff7f0e", "decode": "#1f77b4"}


def roofline(points: dict, gpu: dict, names: dict, title: str, lang: str, height: int = 500) -> go.Figure:
    """points: phase -> ops.arith.costs.roofline dict; gpu: an ops.arith.costs.GPUS entry; names: phase -> label.
    The attainable-compute roof min(peak, bandwidth x intensity) on log-log axes, with each phase on it."""
    T = (lambda zh, en: zh) if lang == "zh" else (lambda zh, en: en)
    peak, bw = gpu["tflops_bf16"] * 1e12, gpu["tb_per_s"] * 1e12
    ridge = peak / bw
    xs = [10 ** (e / 20) for e in range(-40, 101)]           # 0.01 .. 1e5 FLOP/byte
    data = [go.Scatter(x=xs, y=[min(peak, bw * x) / 1e12 for x in xs], mode="lines", line=dict(width=4, color="#444"),
                       name=T("可达性能上限", "attainable peak"),
                       hovertemplate="%{x:.3g} FLOP/B → %{y:.4g} TFLOP/s<extra></extra>")]
    for ph, r in points.items():
        data.append(go.Scatter(x=[r["intensity"]], y=[min(peak, bw * r["intensity"]) / 1e12], mode="markers+text",
                               name=names[ph], marker=dict(size=22, color=COLORS[ph], line=dict(width=2,
                                                                                                color="white")),
                               text=[f"{names[ph]}: {r['intensity']:,.1f} FLOP/B"], textposition="bottom right",
                               textfont=dict(size=18, color=COLORS[ph])))
    notes = [dict(x=math.log10(ridge), y=math.log10(peak / 1e12), showarrow=False, yshift=-40, xshift=10,
                  xanchor="left",
                  text=T(f"拐点 {ridge:,.0f} FLOP/B<br>峰值 {gpu['tflops_bf16']:g} TFLOP/s",
                         f"ridge {ridge:,.0f} FLOP/B<br>peak {gpu['tflops_bf16']:g} TFLOP/s"), font=dict(size=18,
                                                                                                         color="#444")),
             dict(x=-0.6, y=math.log10(bw * 10 ** -0.6 / 1e12), showarrow=False, yshift=20, xanchor="right",
                  text=T(f"带宽 {gpu['tb_per_s']:g} TB/s", f"bandwidth {gpu['tb_per_s']:g} TB/s"), font=dict(size=18,
                                                                                                           color="#444"))]
    fig = go.Figure(data, layout=dict(
        title=dict(text=title, font=dict(size=22)), font=dict(FONT, size=18), height=height,
        margin=dict(l=80, r=30, t=60, b=60), legend=dict(orientation="h", y=-0.22,
                                                         font=dict(size=18)), annotations=notes,
        xaxis=dict(type="log", title_text=T("算术强度（FLOP / 字节，对数）",
                                            "arithmetic intensity (FLOP per byte, log)"),
                   range=[-2, 5], exponentformat="power", dtick=1, tickfont=dict(size=18)),
        yaxis=dict(type="log", title_text=T("可达算力（TFLOP/s，对数）", "attainable compute (TFLOP/s, log)"),
                   exponentformat="power", dtick=1, tickfont=dict(size=18))))
    fig.add_vline(x=ridge, line_dash="dash", line_color="#888")
    return fig


def param_bars(rows: list[dict], title: str, xlabel: str, ylabel: str) -> go.Figure:
    """ops.arith.costs.param_table rows with parameters, in millions, one horizontal bar per operator."""
    shown = [r for r in rows if r["params"] > 0]
    return bars([r["params"] / 1e6 for r in shown], [r["operator"] for r in shown], horizontal=True, title=title,
                xlabel=xlabel, ylabel=ylabel, height=120 + 48 * len(shown), text_fmt=",.1f")
