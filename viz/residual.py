"""Figures of the residual page: the stream's size through the layers."""
from __future__ import annotations

import numpy as np

from .diagrams import roomy
from .figures import as_numpy, heatmap, lines


def stream_norms(series: dict, layers: list[str], title: str = "", xlabel: str = "", ylabel: str = "",
                 height: int = 480, log: bool = True):
    """One line per token (or per summary) of ‖x‖₂ after each layer; a log axis by default, so the first
    token's outsized norm and the others' slow growth both read."""
    fig = roomy(lines(series, x=layers, title=title, xlabel=xlabel, ylabel=ylabel, height=height))
    if log:
        fig.update_yaxes(type="log")
    return fig


def log_ratio_map(ratio, labels, title: str = "", xlabel: str = "", ylabel: str = "", layers=None):
    """(L, n) ratios drawn as log₁₀, token by layer (rows = tokens): a ratio of 0.01 and one of 1 both read."""
    z = np.log10(np.maximum(as_numpy(ratio).T, 1e-6))
    return heatmap(z, x=layers, y=labels, colorscale="Viridis", zmid=None, title=title, xlabel=xlabel, ylabel=ylabel,
                   height=160 + 32 * len(labels))
