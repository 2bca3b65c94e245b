"""Figures of the residual page: the stream's size through the layers."""
from __future__ import annotations

import math

import numpy as np

from .diagrams import roomy
from .figures import as_numpy, heatmap, lines


def stream_norms(series: dict, layers: list[str], title: str = "", xlabel: str = "", ylabel: str = "",
                 height: int = 480, log: bool = True, colors: list[str] | None = None, first: str | None = None,
                 mark: tuple[int, str] | None = None):
    """One line per token (or per summary) of ‖x‖₂ after each layer; a log axis by default, so the first
    token's outsized norm and the others' slow growth both read. colors: one per series (the tokens' own);
    first: the name of token 0's series, drawn thick and labelled at its right end; mark: (k, label), a band
    over the chosen layer's step (from point k - 1, its input, to point k, its output) labelled at its foot."""
    fig = roomy(lines(series, x=layers, title=title, xlabel=xlabel, ylabel=ylabel, height=height))
    if mark is not None:
        k, label = mark
        fig.add_vrect(x0=max(k - 1, 0), x1=k, fillcolor="#f2c94c", opacity=0.35, line_width=0, layer="below")
        fig.add_annotation(x=k - 0.5, y=0.01, yref="paper", yanchor="bottom", text=f"<b>{label}</b>", showarrow=False,
                           font=dict(size=16, color="#8a6d00"))
    for k, tr in enumerate(fig.data):
        if colors is not None:
            tr.line.color = colors[k]
            tr.marker.color = colors[k]
        if tr.name == first:
            tr.line.width = 5
            fig.add_annotation(x=layers[-1], y=math.log10(float(tr.y[-1])) if log else float(tr.y[-1]),
                               text=f"<b>{first}</b>", xanchor="left", xshift=8, showarrow=False,
                               font=dict(size=17, color=tr.line.color))
    if log:
        fig.update_yaxes(type="log", dtick=1)     # powers of 10 only: 2 and 5 between them overprinted when short
    fig.update_layout(margin=dict(r=110))
    return fig


def first_token_lead(norms) -> tuple[int, float] | None:
    """(layer index k, ratio): where token 0's ‖x‖ most exceeds the median of the other tokens' (norms is
    (L + 1, n), row 0 the embedding), and by how much; None for a single token."""
    z = as_numpy(norms)
    if z.shape[1] < 2:
        return None
    ratio = z[:, 0] / np.maximum(np.median(z[:, 1:], axis=1), 1e-12)
    k = int(ratio.argmax())
    return k, float(ratio[k])


def log_ratio_map(ratio, labels, title: str = "", xlabel: str = "", ylabel: str = "", layers=None):
    """(L, n) ratios drawn as log₁₀, token by layer (rows = tokens): a ratio of 0.01 and one of 1 both read."""
    z = np.log10(np.maximum(as_numpy(ratio).T, 1e-6))
    return heatmap(z, x=layers, y=labels, colorscale="Viridis", zmid=None, title=title, xlabel=xlabel, ylabel=ylabel,
                   height=160 + 32 * len(labels))
