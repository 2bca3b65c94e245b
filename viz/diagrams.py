"""Diagrams for the overview and attention pages: the pipeline with live shapes, RoPE rotations,
GQA head sharing, and all heads' attention as small multiples. Tensors in, go.Figure out; the pipeline,
which has nothing to hover, is an SVG string (ui.blocks.picture draws it)."""
from __future__ import annotations

import html
import math

import numpy as np
import plotly.graph_objects as go
import torch

from .figures import FONT, as_numpy, block_max, wrap
from .labels import CHOSEN, TOKEN_COLORS, token_color


def pipeline_svg(steps: list[tuple[str, str]], layer_steps: list[tuple[str, str]], layer_index: int,
                 title: str = "", height: int = 640, max_height: int | None = None, min_px: float = 0) -> str:
    """The pipeline as one SVG picture (no Plotly: a first page that draws no chart needs none of its 4.7 MB
    script, and a fresh session's first page is drawn sooner; bench/RESULTS.md, "Figures once in code comments").
    Main column: steps[k] = (box text, shape on the arrow leaving it); a box's text is its title, then any
    smaller lines after a newline. The box at layer_index is the stack of L layers; layer_steps (same form)
    draw its inside in a second column. Drawn 1000 units wide and `height` tall; it scales with the page, up to
    1100 px wide, or to `max_height` px tall (a tour step's picture under its words, above the fold).
    min_px: no text draws smaller than this many px at that widest size (a projector's back row); a box's
    smaller lines that no longer fit in it are left out."""
    W, top, bottom = 1000, 62, 10
    n, m = len(steps), len(layer_steps)
    unit = (height - top - bottom) / n                     # one main-column step, in units of the drawing
    ys = [top + unit * (k + 0.5) for k in range(n)]          # box centres, top to bottom
    x_main, w_main, h_main = 120, 200, 0.62 * unit        # labels of the main column fit in 228..550
    x_in, w_in = 695, 270
    span = ys[-1] - ys[0] + h_main                          # the layer column spans the main column's height
    h_in = min(0.75 * span / m, 1.1 * h_main)
    lys = [ys[0] - h_main / 2 + h_in / 2 + k * (span - h_in) / max(m - 1, 1) for k in range(m)]
    widest = 1100 if max_height is None else round(W * max_height / height)
    least = min_px * W / widest                              # min_px, in units of the drawing
    fs = lambda size: max(size, math.ceil(least * 10) / 10)     # rounded up: never under min_px
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {height}" role="img" '
           f'style="width:100%;max-width:{widest}px;height:auto;font-family:{FONT["family"].replace(chr(34), "")}">',
           f'<text x="20" y="{30 + fs(20) // 5}" font-size="{fs(20)}" fill="#31333F">{_esc(title)}</text>']
    yl = ys[layer_index]                                     # the layer box opens into the right column
    fan = [(x_main + w_main / 2, yl - h_main / 2), (x_in - w_in / 2, lys[0] - h_in / 2),
           (x_in - w_in / 2, lys[-1] + h_in / 2), (x_main + w_main / 2, yl + h_main / 2)]
    out.append('<polygon points="' + " ".join(f"{x:.1f},{y:.1f}" for x, y in fan) + '" fill="rgba(255,183,77,0.12)" '
               'stroke="rgba(255,152,0,0.5)" stroke-dasharray="4 4"/>')
    labels = []                                              # drawn last: over the fan and the boxes
    for k, (text, shape) in enumerate(steps):
        fill = "#ffe0b2" if k == layer_index else "#e3f2fd"
        out += _svg_box(x_main, ys[k], w_main, h_main, text, fill, fs(17), fs(13), least > 13)
        if k + 1 < n:
            out += _svg_arrow(x_main, ys[k] + h_main / 2, ys[k + 1] - h_main / 2, shape, labels, fs(16))
    for k, (text, shape) in enumerate(layer_steps):
        out += _svg_box(x_in, lys[k], w_in, h_in, text, "#fff3e0", fs(15), fs(13), least > 13)
        if k + 1 < m:
            out += _svg_arrow(x_in, lys[k] + h_in / 2, lys[k + 1] - h_in / 2, shape, labels, fs(16))
    out += labels
    return "\n".join(out + ["</svg>"])     # one element a line, no blank line: markdown keeps it as raw HTML


def _esc(text) -> str:
    return html.escape(str(text), quote=True)


def _svg_box(x, y, w, h, text, fill, size, small=13, fit=False) -> list[str]:
    """A box centred on (x, y): its first line of text at `size`, further lines at `small` beneath it; with
    `fit`, only as many as the box's height holds."""
    lines = str(text).split("\n")
    if fit:
        lines = lines[:max(1, 1 + int((h - size) // (size * 1.05)))]
    parts = [f'<rect x="{x - w / 2:.1f}" y="{y - h / 2:.1f}" width="{w}" height="{h:.1f}" fill="{fill}" '
             f'stroke="#555" stroke-width="1.5"/>']
    step = size * 1.05
    y0 = y - step * (len(lines) - 1) / 2 + size * 0.35        # the block of lines centred on y
    for k, line in enumerate(lines):
        parts.append(f'<text x="{x}" y="{y0 + k * step:.1f}" font-size="{size if k == 0 else small}" '
                     f'text-anchor="middle" fill="#111">{_esc(line)}</text>')
    return parts


def _svg_arrow(x, y0, y1, label: str, labels: list, size=16) -> list[str]:
    """A downward arrow from y0 to y1 at x; its label (a live shape) in red monospace to the right, into `labels`."""
    parts = [f'<line x1="{x}" y1="{y0:.1f}" x2="{x}" y2="{y1 - 7:.1f}" stroke="#333" stroke-width="2.2"/>',
             f'<polygon points="{x - 6},{y1 - 9:.1f} {x + 6},{y1 - 9:.1f} {x},{y1:.1f}" fill="#333"/>']
    if label:
        labels.append(f'<text x="{x + 8}" y="{(y0 + y1) / 2 + 5:.1f}" font-size="{size}" font-family="monospace" '
                      f'fill="#b71c1c">{_esc(label)}</text>')
    return parts


def rope_pairs(before, after, angles, labels, title="", height=560,
               names=("rotation", "before RoPE", "after RoPE"), axes=("dim j", "dim j + hd/2")) -> go.Figure:
    """One dimension pair per position: before RoPE (hollow) -> after (filled), the arc it turns along.

    before, after: (S, 2); angles: (S,) radians of each position's rotation. Three traces in all
    (arcs, before, after), whatever S is: plotly builds a trace per position far too slowly."""
    before, after = as_numpy(before), as_numpy(after)
    pos_colors = [token_color(s) for s in range(before.shape[0])]          # position s in token s's colour
    r = float(np.abs(np.concatenate([before, after])).max()) * 1.15 or 1.0
    arc_x, arc_y = [], []
    for s in range(before.shape[0]):                 # the arc travelled: `before` turned gradually to its angle
        a = np.linspace(0, float(angles[s]), 24)
        x0, y0 = before[s]
        arc_x += list(x0 * np.cos(a) - y0 * np.sin(a)) + [None]
        arc_y += list(x0 * np.sin(a) + y0 * np.cos(a)) + [None]
    tips = [f"{s}:{labels[s]}" for s in range(before.shape[0])]
    return go.Figure([
        go.Scatter(x=arc_x, y=arc_y, mode="lines", line=dict(color="#888", width=1.5, dash="dot"),
                   hoverinfo="skip", name=names[0]),
        go.Scatter(x=before[:, 0], y=before[:, 1], mode="markers", name=names[1], customdata=tips,
                   marker=dict(size=12, color="white", line=dict(color=pos_colors, width=2.5)),
                   hovertemplate="%{customdata} before<br>(%{x:.3f}, %{y:.3f})<extra></extra>"),
        go.Scatter(x=after[:, 0], y=after[:, 1], mode="markers+text", name=names[2], customdata=tips,
                   marker=dict(size=13, color=pos_colors), text=[str(s) for s in range(before.shape[0])],
                   textposition="top center", textfont=dict(size=16, color=pos_colors),
                   hovertemplate="%{customdata} after<br>(%{x:.3f}, %{y:.3f})<extra></extra>"),
    ], layout=dict(title=dict(text=title, font=dict(size=20)), font=FONT, height=height,
                   margin=dict(l=70, r=30, t=60, b=60), legend=dict(orientation="h", y=-0.15, font=dict(size=14)),
                   xaxis=dict(range=[-r, r], zeroline=True, title=dict(text=axes[0])),
                   yaxis=dict(range=[-r, r], zeroline=True, scaleanchor="x", scaleratio=1, title=dict(text=axes[1]))))


def gqa_diagram(nh: int, nkv: int, highlight: int | None = None, title: str = "", height: int = 330,
                q_label: str = "Q head", kv_label: str = "KV head") -> go.Figure:
    """Query heads (top) joined to the KV head they read (bottom): head h uses KV head h // (nh / nkv)."""
    n_rep = max(nh // max(nkv, 1), 1)
    colors = TOKEN_COLORS             # categorical, without red (red means "selected")
    qx = np.arange(nh, dtype=float)
    kx = np.array([(g * n_rep + (n_rep - 1) / 2) for g in range(nkv)], dtype=float)
    data = []
    for g in range(nkv):                             # one trace per KV group: its query heads' lines
        xs, ys = [], []
        for h in range(g * n_rep, min((g + 1) * n_rep, nh)):
            xs += [qx[h], kx[g], None]
            ys += [1, 0, None]
        data.append(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=colors[g % len(colors)], width=2),
                               hoverinfo="skip"))
    if highlight is not None and 0 <= highlight < nh:
        g = highlight // n_rep
        data.append(go.Scatter(x=[qx[highlight], kx[g]], y=[1, 0], mode="lines",
                               line=dict(color=colors[g % len(colors)], width=5), hoverinfo="skip"))
    data.append(go.Scatter(x=qx, y=[1] * nh, mode="markers+text", text=[str(h) for h in range(nh)],
                           textposition="top center", textfont=dict(size=15),
                           marker=dict(size=[26 if h == highlight else 18 for h in range(nh)],
                                       color=[colors[(h // n_rep) % len(colors)] for h in range(nh)], symbol="square"),
                           hovertemplate="Q head %{text}<extra></extra>"))
    data.append(go.Scatter(x=kx, y=[0] * nkv, mode="markers+text", text=[str(g) for g in range(nkv)],
                           textposition="bottom center", textfont=dict(size=16),
                           marker=dict(size=30, color=[colors[g % len(colors)] for g in range(nkv)], symbol="diamond"),
                           hovertemplate="KV head %{text}<extra></extra>"))
    return go.Figure(data, layout=dict(
        title=dict(text=title, font=dict(size=20)), font=FONT, height=height, margin=dict(l=10, r=10, t=60, b=10),
        showlegend=False, xaxis=dict(visible=False, range=[-0.5 - max(2.5, nh * 0.18), nh - 0.3]),
        yaxis=dict(visible=False, range=[-0.45, 1.45]),
        annotations=[dict(x=-0.5, y=1, text=q_label, showarrow=False, xanchor="right", font=dict(size=16)),
                     dict(x=-0.5, y=0, text=kv_label, showarrow=False, xanchor="right", font=dict(size=16))]))


LABEL_PX = 30          # the band over each tile that holds its label ("h5 · kv0"), at up to 19 px (projector)


def tile_px(n: int) -> int:
    """A tile's height in px for n tokens (or blocks) a side: grows with n, from a readable 3-token tile to a
    cap that keeps three rows of tiles on one screen."""
    return int(min(160, max(84, 8 * n + 60)))


def heads_grid(probs, allowed=None, title: str = "", cols: int = 7, subtitle=lambda h: f"head {h}",
               max_cells: int = 48, highlight: int | None = None, note: str = "", width_px: int = 480) -> go.Figure:
    """All heads' (S, S) attention maps as small multiples on one colour scale 0..1. probs: (nh, S, S);
    allowed: (S, S) bool, False cells (masked) are left blank. Long prompts are shown as block maxima,
    at most max_cells per side (a tile is ~150 px wide on a projector). highlight: a head framed in red.
    Each tile has a band of LABEL_PX above it for its label, whatever S is (the band is counted in cells of
    the tile's own size); title and note (a smaller line under it) wrap at width_px.

    Drawn as ONE heatmap of tiles with blank gaps: plotly builds subplots slowly."""
    p = probs.detach().float().cpu() if torch.is_tensor(probs) else torch.from_numpy(np.asarray(probs, np.float32))
    p, ky, kx = block_max(p, max_cells)             # pooled first: the masking below is on the small tiles
    if allowed is not None:
        seen = block_max(torch.as_tensor(allowed).float(), max_cells)[0] > 0   # a block with any visible cell
        p = p.masked_fill(~seen, float("nan"))
    p = as_numpy(p)
    nh, n, m = p.shape
    cols = max(1, min(cols, nh))
    rows = math.ceil(nh / cols)
    cell = tile_px(n) / n                           # px per cell, down the page
    gap = math.ceil(LABEL_PX / cell)                # the label band, in cells, above every row of tiles
    xgap = max(1, m // 8)
    band = n + gap
    tiles = np.full((rows * band, cols * (m + xgap)), np.nan)
    for h in range(nh):
        r, c = divmod(h, cols)
        tiles[r * band + gap:r * band + gap + n, c * (m + xgap):c * (m + xgap) + m] = p[h]
    notes = [dict(x=(h % cols) * (m + xgap) + (m - 1) / 2, y=(h // cols) * band + gap - 0.5, yanchor="bottom",
                  yshift=2, text=subtitle(h), showarrow=False, font=dict(size=15)) for h in range(nh)]
    if ky > 1 or kx > 1:
        title = f"{title}  (max over {ky}×{kx} blocks)"
    title, note = wrap(title, width_px - 40, 20), wrap(note, width_px - 40, 15)
    top = 40 + 24 * (title.count("<br>") + 1) + (20 + 18 * note.count("<br>") if note else 0)
    axis = dict(showticklabels=False, showgrid=False, zeroline=False)
    frame = []
    if highlight is not None and 0 <= highlight < nh:
        r, c = divmod(highlight, cols)
        frame = [dict(type="rect", x0=c * (m + xgap) - 0.5, x1=c * (m + xgap) + m - 0.5, y0=r * band + gap - 0.5,
                      y1=r * band + gap + n - 0.5, line=dict(color=CHOSEN, width=3))]
    head = dict(text=title, font=dict(size=20), **({"subtitle": dict(text=note, font=dict(size=15))} if note else {}))
    return go.Figure([go.Heatmap(z=tiles, zmin=0, zmax=1, colorscale="Viridis", colorbar=dict(title="p", len=0.8),
                                 hovertemplate="p %{z:.3f}<extra></extra>")],
                     layout=dict(annotations=notes, title=head, font=FONT, shapes=frame,
                                 height=round(top + 20 + rows * band * cell), margin=dict(l=20, r=20, t=top, b=20),
                                 xaxis=axis, yaxis=dict(axis, autorange="reversed")))


def roomy(fig: go.Figure) -> go.Figure:
    """Move a horizontal legend just above the plot area, below the title, so the two never overlap."""
    fig.update_layout(margin=dict(t=110), title=dict(y=0.97, yanchor="top"),
                      legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0, xanchor="left"))
    return fig
