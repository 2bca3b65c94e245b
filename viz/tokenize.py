"""Figures of the tokenize page: the batch's [B, S] id matrix."""
from __future__ import annotations

import plotly.graph_objects as go

from .figures import base_layout
from .labels import short

MAX_TEXT_CELLS = 240     # beyond this many cells (or columns) the ids are left to the hover text
MAX_TEXT_COLS = 16


def ids_matrix(ids: list[list[int]], lengths: list[int], pieces: list[list[str]], title: str = "",
               xlabel: str = "", ylabel: str = "", row_name: str = "row") -> go.Figure:
    """tokens.ids as a grid: one cell per (row b, position s) with its id written in; padding grey.
    ids (B, S) as lists, lengths the real tokens per row, pieces each row's real token pieces (hover)."""
    B, S = len(ids), len(ids[0]) if ids else 0
    valid = [[1.0 if s < lengths[b] else 0.0 for s in range(S)] for b in range(B)]
    cell = [[f"{ids[b][s]}" if valid[b][s] else f"pad<br>{ids[b][s]}" for s in range(S)] for b in range(B)]
    hover = [[short(pieces[b][s], 12) if s < lengths[b] else "" for s in range(S)] for b in range(B)]
    text = B * S <= MAX_TEXT_CELLS and S <= MAX_TEXT_COLS      # six-digit ids overlap in narrower cells
    hm = go.Heatmap(z=valid, x=[str(s) for s in range(S)], y=[f"{row_name} {b}" for b in range(B)],
                    colorscale=[[0, "#cccccc"], [1, "#bbdefb"]], zmin=0, zmax=1, showscale=False,
                    text=cell, texttemplate="%{text}" if text else None, textfont=dict(size=18 if S <= 10 else 14), customdata=hover,
                    hovertemplate="%{y}, position %{x}<br>id %{text} %{customdata}<extra></extra>")
    layout = base_layout(title, xlabel, ylabel, 130 + 56 * B, dict(type="category", nticks=min(S, 40)),
                         dict(type="category", autorange="reversed"))
    layout["margin"] = dict(l=80, r=20, t=50, b=50)
    return go.Figure([hm], layout=layout)
