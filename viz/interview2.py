"""Figures of the interview's second round: a token tree's attention mask, and 4-bit output error layer by layer."""
from __future__ import annotations

import plotly.graph_objects as go

from .figures import heatmap, lines

MASK_COLORS = [[0.0, "#f2f2f2"], [1.0, "#1f77b4"]]


def tree_mask(tree: dict, pieces: list[str], title: str = "", axis: str = "") -> go.Figure:
    """The tree attention mask: cell [j, i] filled when key node i is query node j or one of its ancestors; each
    node labelled `number:token (depth)`."""
    labels = [f"{j}:{p!r}"[:18] + f" ({d})" for j, (p, d) in enumerate(zip(pieces, tree["depth"]))]
    n = len(labels)
    return heatmap(tree["ancestors"].float(), x=labels, y=labels, title=title, xlabel=axis, ylabel=axis,
                   colorscale=MASK_COLORS, zmin=0, zmax=1, height=max(380, 28 * n + 160)
                   ).update_traces(showscale=False)          # two values, seen or not: the title names the colour


def quant_layers(rows: list[dict], group: int, title: str = "", xlabel: str = "layer", ylabel: str = "",
                 layers: list[int] | None = None) -> go.Figure:
    """Each method's per-layer output error at one group size, on the quantized `layers` (default every layer)."""
    n = len(rows[0]["per_layer"]) if rows else 0
    layers = list(range(n)) if layers is None else list(layers)
    series = {f"{r['method'].upper()} g={r['group']}": [r["per_layer"][i] for i in layers]
              for r in rows if r["group"] == group}
    return lines(series, x=layers, title=title, xlabel=xlabel, ylabel=ylabel)
