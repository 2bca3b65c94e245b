"""Figures of the embedding page: the gather (rows taken from the [V, H] table), the cosine map of the rows."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .figures import DIVERGING, FONT, as_numpy, heatmap
from .labels import token_color

MAX_ROWS = 48           # rows drawn in the gathered block; a longer prompt shows its first MAX_ROWS


def gather_figure(ids: list[int], labels: list[str], rows, V: int, V_tok: int, title: str = "",
                  table_name: str = "W_E", out_name: str = "embed.out", pad_text: str = "padding rows",
                  height: int = 430) -> go.Figure:
    """Left: the whole [V, H] table as a tall strip, row 0 at the top, each picked row a band at its true
    height (id / V) in its token's colour, the never-used padding rows at the bottom in grey. Right: the rows
    taken, stacked in prompt order as the [n, H] block (every dimension, diverging colours about 0). A line
    joins each band to its row of the block. ids, labels: the n tokens; rows: (n, H) values."""
    z = as_numpy(rows)[:MAX_ROWS]
    n, H = z.shape
    ids, labels = ids[:n], labels[:n]
    top = 10.0                                        # both panels share the y range 0 (top) .. top (bottom)
    ty = lambda i: top * (i + 0.5) / V                 # a row's place in the table strip
    row_h = min(1.1, top / max(n, 1))
    y0 = (top - row_h * n) / 2                         # the block centred vertically
    bx0, bx1 = 3.5, 10.0                               # the block's x extent; the table is x in [0, 1]
    m = float(np.abs(z).max()) or 1.0
    block = go.Heatmap(z=z, x0=bx0 + (bx1 - bx0) / H / 2, dx=(bx1 - bx0) / H, y0=y0 + row_h / 2, dy=row_h,
                       colorscale=DIVERGING, zmin=-m, zmax=m, colorbar=dict(len=0.8, thickness=14),
                       customdata=[[f"{s}:{labels[s]} · dim {d}" for d in range(H)] for s in range(n)],
                       hovertemplate="%{customdata}<br>%{z:.4f}<extra></extra>")
    band = max(top / 160, top / V)                     # a picked row drawn at least ~2 px tall
    shapes = [dict(type="rect", x0=0, x1=1, y0=0, y1=top, fillcolor="#eef1f5", line=dict(color="#888", width=1)),
              dict(type="rect", x0=0, x1=1, y0=min(ty(V_tok), top - 0.08), y1=top, fillcolor="#757575",
                   line=dict(width=0))]
    notes = [dict(x=0.5, y=-0.1, text=f"<b>{table_name}</b>  [{V:,} × {H}]", yanchor="bottom", showarrow=False),
             dict(x=(bx0 + bx1) / 2, y=-0.1, text=f"<b>{out_name}</b>  [{n} × {H}]", yanchor="bottom", showarrow=False),
             dict(x=-0.05, y=0, text="0", xanchor="right", yanchor="top", showarrow=False, font=dict(size=14)),
             dict(x=-0.05, y=top, text=f"{V - 1:,}", xanchor="right", yanchor="bottom", showarrow=False,
                  font=dict(size=14)),
             dict(x=0, y=top + 0.1, text=f"{pad_text}: {V - V_tok:,}", xanchor="left", yanchor="top", showarrow=False,
                  font=dict(size=14, color="#666"))]
    for s, (i, lab) in enumerate(zip(ids, labels)):
        c, y_row = token_color(s), y0 + row_h * (s + 0.5)
        shapes.append(dict(type="rect", x0=0, x1=1, y0=ty(i) - band / 2, y1=ty(i) + band / 2, fillcolor=c,
                           line=dict(width=0)))
        shapes.append(dict(type="line", x0=1, y0=ty(i), x1=1.75, y1=y_row, line=dict(color=c, width=2)))
        notes.append(dict(x=bx0 - 0.05, y=y_row, text=f"{i} → {s}:{lab}", xanchor="right", showarrow=False,
                          font=dict(size=15 if n <= 16 else 12, color=c)))
    layout = dict(title=dict(text=title, font=dict(size=20)), font=FONT, height=height, shapes=shapes,
                  annotations=notes,
                  margin=dict(l=60, r=10, t=60, b=10), showlegend=False,
                  xaxis=dict(visible=False, range=[-0.6, bx1 + 0.1]),
                  yaxis=dict(visible=False, range=[top + 0.9, -0.9]))
    return go.Figure([block], layout=layout)


def cosine_map(cos, labels: list[str], title: str = "", xlabel: str = "", ylabel: str = "") -> go.Figure:
    """The (n, n) cosine similarities with the diagonal (always 1) left blank and out of the colour range, so
    the off-diagonal values fill the scale."""
    z = as_numpy(cos).copy()
    np.fill_diagonal(z, np.nan)
    return heatmap(z, x=labels, y=labels, title=title, xlabel=xlabel, ylabel=ylabel, text_fmt=".2f",
                   height=max(330, 34 * len(labels) + 170))
