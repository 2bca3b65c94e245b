"""Figures of the experiment pages (Experiments, Compare): next-token bars before / after an edit, the logit
attribution as a waterfall, layer x head and layer x position heatmaps, per-layer lines."""
from __future__ import annotations

import plotly.graph_objects as go

from .figures import DIVERGING, as_numpy, base_layout, heatmap, lines

RED, BLUE, GREY = "#d62728", "#1f77b4", "#9aa5b1"      # red: the target token only (red means "selected")
UP, DOWN = "#b85a00", "#1c5a99"                         # signed parts: the two ends of the diverging scale


def top_bars(probs, names, ids, target: int | None, title: str = "", xlabel: str = "", height: int = 420,
             xmax: float | None = None) -> go.Figure:
    """Horizontal bars of the top next tokens (probabilities), the target token red; a shared x range when
    xmax is given, so a 'before' and an 'after' chart side by side compare by length."""
    p = as_numpy(probs)
    colors = [RED if int(i) == target else BLUE for i in ids]
    bar = go.Bar(x=p, y=list(names), orientation="h", marker_color=colors, text=[f"{v:.3f}" for v in p],
                 textposition="outside", cliponaxis=False, textfont=dict(size=15))
    fig = go.Figure([bar], layout=base_layout(title, xlabel, "", height, dict(range=[0,
                                                                                     (xmax or float(p.max())) * 1.18]),
                                              dict(type="category", autorange="reversed")))
    fig.update_layout(margin=dict(l=150, r=20, t=60, b=50), title=dict(font=dict(size=18)))
    return fig


def waterfall(labels, values, total: float, title: str = "", ylabel: str = "logit", total_label: str = "logit",
              height: int = 460) -> go.Figure:
    """Contributions in order (embedding, then each layer's attention and MLP) stacked up to the logit."""
    v = [float(x) for x in as_numpy(values)]
    fig = go.Figure([go.Waterfall(x=list(labels) + [total_label], y=v + [float(total)],
                                  measure=["relative"] * len(v) + ["total"],
                                  increasing=dict(marker=dict(color=UP)), decreasing=dict(marker=dict(color=DOWN)),
                                  totals=dict(marker=dict(color=BLUE)), connector=dict(line=dict(width=0.5,
                                                                                                 color=GREY)),
                                  hovertemplate="%{x}<br>%{y:.3f}<extra></extra>")],
                    layout=base_layout(title, "", ylabel, height, dict(type="category", tickangle=-60,
                                                                       tickfont=dict(size=12))))
    return fig


def part_bars(parts: list[tuple[str, float]], title: str = "", xlabel: str = "", height: int = 420) -> go.Figure:
    """The largest attribution parts by |value| as signed horizontal bars."""
    names = [p for p, _ in parts]
    vals = [float(v) for _, v in parts]
    bar = go.Bar(x=vals, y=names, orientation="h", marker_color=[UP if v >= 0 else DOWN for v in vals],
                 text=[f"{v:+.3f}" for v in vals], textposition="auto")
    return go.Figure([bar], layout=base_layout(title, xlabel, "", height, None, dict(type="category",
                                                                                     autorange="reversed")))


def layer_head_map(z, title: str = "", zlabel: str = "", height: int | None = None, highlight=None,
                   xlabel: str = "head h", ylabel: str = "layer i") -> go.Figure:
    """An (L, nh) map (a head sweep): red = the change is negative, blue = positive; highlight (i, h) boxed."""
    z = as_numpy(z)
    L, nh = z.shape
    m = float(abs(z).max()) or 1.0
    fig = heatmap(z, colorscale=DIVERGING, zmid=0.0,
                  zmin=-m, zmax=m, title=title, xlabel=xlabel, ylabel=ylabel, height=height or 120 + 24 * L)
    fig.update_traces(colorbar=dict(title=dict(text=zlabel)), xgap=1, ygap=1,
                      hovertemplate="layer %{y}, head %{x}<br>%{z:.4f}<extra></extra>")
    if highlight is not None:
        i, h = highlight
        fig.add_shape(type="rect", x0=h - 0.5, x1=h + 0.5, y0=i - 0.5, y1=i + 0.5, line=dict(color="black", width=3))
    return fig


def layer_position_map(z, positions, title: str = "", zlabel: str = "", height: int | None = None,
                       xlabel: str = "", ylabel: str = "layer i", zmin=None, zmax=None, colorscale=DIVERGING,
                       zmid=0.0, rows=None) -> go.Figure:
    """An (L, S) map (patching: share restored per layer and position; or cosine per layer and position);
    rows: names of the rows (e.g. embed, L0, L1, ...), else their indices."""
    z = as_numpy(z)
    fig = heatmap(z, x=list(positions), colorscale=colorscale, zmid=zmid,
                  zmin=zmin, zmax=zmax, title=title, xlabel=xlabel, ylabel=ylabel,
                  height=height or 140 + 20 * z.shape[0])
    fig.update_traces(colorbar=dict(title=dict(text=zlabel)), xgap=1, ygap=1,
                      hovertemplate="layer %{y}<br>%{x}<br>%{z:.3f}<extra></extra>")
    if rows is not None:
        fig.update_traces(y=list(rows))
    return fig


def layer_lines(series: dict, layers, title: str = "", ylabel: str = "", height: int = 420, log: bool = False,
                xlabel: str = "") -> go.Figure:
    """One line per named series over the residual stream's L + 1 states (embed, L0 .. L{L-1})."""
    fig = lines(series, x=list(layers), title=title, xlabel=xlabel, ylabel=ylabel, height=height)
    fig.update_xaxes(type="category", nticks=13)
    fig.update_layout(margin=dict(t=95), legend=dict(orientation="h", y=1.02, yanchor="bottom"))
    if log:
        fig.update_yaxes(type="log", exponentformat="power")
    return fig


def pair_bars(labels, a, b, name_a: str, name_b: str, title: str = "", height: int = 440) -> go.Figure:
    """Two next-token distributions over the same candidate tokens, side by side. The figure grows with the rows:
    plotly shrinks outside text to a thin bar's thickness (the values drew at ~8 px); uniformtext keeps 13 px."""
    a, b = as_numpy(a), as_numpy(b)
    height = max(height, 130 + 44 * len(a))
    data = [go.Bar(y=list(labels), x=a, name=name_a, orientation="h", marker_color=BLUE, textposition="outside",
                   text=[f"{v:.3f}" for v in a], textfont=dict(size=13), cliponaxis=False),
            go.Bar(y=list(labels), x=b, name=name_b, orientation="h", marker_color="#ff7f0e", textposition="outside",
                   text=[f"{v:.3f}" for v in b], textfont=dict(size=13), cliponaxis=False)]
    fig = go.Figure(data, layout=base_layout(title, "", "", height, None, dict(type="category", autorange="reversed"),
                                             barmode="group", legend=dict(orientation="h", y=1.1),
                                             uniformtext=dict(minsize=13, mode="show")))
    fig.update_layout(margin=dict(l=130, r=20, t=80, b=40), title=dict(font=dict(size=18)))
    return fig
