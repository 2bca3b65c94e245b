"""Figures of the MLP / MoE page: one token's SwiGLU as a diagram (widen -> gate -> narrow, to scale), the silu
curve."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import torch

from .figures import DIVERGING, FONT, as_numpy, base_layout
from .labels import CHOSEN


def silu_curve(gate_values, title: str = "", xlabel: str = "gate z", ylabel: str = "silu(z)",
               max_dots: int = 600) -> go.Figure:
    """The silu curve over the range of the gates, with a dot per gate value of a token. Every dot lies on the
    curve, so at most max_dots are drawn, evenly by rank (the smallest and largest kept): the same picture
    for a fraction of the browser's work (a dot is an SVG node)."""
    g = torch.as_tensor(gate_values).float().flatten()
    lo, hi = min(-6.0, float(g.min()) - 0.5), max(3.0, float(g.max()) + 0.5)   # the curve where the gates are
    z = torch.linspace(lo, hi, 400)
    n = len(g)
    dots = g.sort().values[torch.linspace(0, n - 1, max_dots).round().long().unique()] if n > max_dots else g
    data = [go.Scatter(x=z.numpy(), y=torch.nn.functional.silu(z).numpy(), mode="lines", name="silu(z) = z·σ(z)",
                       line=dict(width=3)),
            go.Scatter(x=dots.numpy(), y=torch.nn.functional.silu(dots).numpy(), mode="markers",
                       name="gate" if len(dots) == n else f"gate ({len(dots)} / {n})",
                       marker=dict(size=9, opacity=0.35, color="#1f77b4"))]
    return go.Figure(data, layout=base_layout(title, xlabel, ylabel, 420, legend=dict(orientation="h", y=1.12)))


def _strip(values, xc: float, y_top: float, height: float, name: str, width: float = 0.55, max_rows: int = 640):
    """One vector as a vertical colour strip (element j at the top + j/n of the height), diverging about 0 on
    its own range (the 99.5% quantile of |v|: a few outliers would wash out the rest). A strip is a few hundred
    pixels tall: a longer vector is drawn as blocks of k elements, each showing its largest |v| (with its
    sign), so an outlier stays visible and the browser gets max_rows cells, not thousands."""
    z = as_numpy(values).ravel()
    n = len(z)
    top = float(np.quantile(np.abs(z), 0.995)) or 1e-6
    k = -(-n // max_rows)                                  # elements per block (1: every element its own row)
    m = -(-n // k)
    blocks = np.pad(z, (0, m * k - n)).reshape(m, k)
    z = blocks[np.arange(m), np.abs(blocks).argmax(1)]
    if k == 1:
        custom, hover = np.arange(n, dtype=np.int32)[:, None], f"{name} #%{{customdata}}: %{{z:.4g}}"
    else:
        custom = [[f"{j}..#{min(j + k, n) - 1}"] for j in range(0, n, k)]
        hover = f"{name} #%{{customdata}}: %{{z:.4g}} (largest |·| of {k})"
    # float32: half the bytes of float64 (plotly sends numpy arrays as typed arrays)
    return go.Heatmap(z=z[:, None].astype(np.float32), x0=xc, dx=width, y0=y_top + height / m / 2, dy=height / m,
                      colorscale=DIVERGING, zmin=-top, zmax=top, showscale=False, customdata=custom,
                      hovertemplate=hover + "<extra></extra>")


CLEAR = 0.75          # y units between the W_down label's centre and a neuron's label (a 2-line label is ~1 unit)
LABEL_GAP = 0.75      # y units between two neurons' labels: one line at 18 px (projector) on a 380 px diagram is ~0.6


def spread(ys: list[float], gap: float) -> list[float]:
    """Label heights near ys (same order), at least `gap` apart: labels too close form a run, centred on their marks'
    mean with `gap` between them; runs that then touch merge. A label with room stays on its mark."""
    order = sorted(range(len(ys)), key=lambda k: ys[k])
    runs = []                                        # [first height, [indices]] in height order
    for k in order:
        runs.append([ys[k], [k]])
        while len(runs) > 1 and runs[-2][0] + gap * len(runs[-2][1]) > runs[-1][0]:
            members = runs[-2][1] + runs.pop()[1]
            runs[-1] = [sum(ys[m] for m in members) / len(members) - gap * (len(members) - 1) / 2, members]
    out = list(ys)
    for first, members in runs:
        for r, m in enumerate(members):
            out[m] = first + r * gap
    return out


def swiglu_diagram(x, gate, up, act, out, title: str = "", names: dict | None = None, k: int = 3,
                   height: int = 470) -> go.Figure:
    """The SwiGLU MLP of one token as a diagram: x [H] -> gate, up [I] (W_gate, W_up: widen) -> act = silu(gate) ⊙ up
    [I] -> out [H] (W_down: narrow). Each vector is a strip as tall as its length (H against I, to scale) in
    its live values; the k neurons with the largest |act| are marked on gate, up and act and spelled out below.
    names: display names for the keys widen, narrow, neuron, off (the share of gates below 0)."""
    names = names or {}
    H, I = len(as_numpy(x)), len(as_numpy(act))
    g, u, a = as_numpy(gate), as_numpy(up), as_numpy(act)
    tall, mid = 8.0, 4.6                                   # an I-long strip spans y in mid ± tall / 2
    short = tall * H / I
    cols = dict(x=(0.6, short), gate=(3.0, tall), up=(4.0, tall), act=(6.2, tall), out=(9.3, short))
    vec = dict(x=x, gate=gate, up=up, act=act, out=out)
    data, shapes, notes = [], [], []
    for key, (xc, h) in cols.items():
        y0 = mid - h / 2
        data.append(_strip(vec[key], xc, y0, h, key))
        shapes.append(dict(type="rect", x0=xc - 0.3, x1=xc + 0.3, y0=y0, y1=y0 + h, line=dict(color="#555", width=1)))
        size = H if key in ("x", "out") else I
        notes.append(dict(x=xc, y=y0 - 0.1, yanchor="bottom", showarrow=False, text=f"<b>{key}</b><br>[{size}]",
                          font=dict(size=16)))

    def arrow(x0, y0, x1, y1, label="", dy=0.0):
        notes.append(dict(x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y", text="", showarrow=True,
                          arrowhead=3, arrowsize=1.2, arrowwidth=2, arrowcolor="#444"))
        if label:
            notes.append(dict(x=(x0 + x1) / 2, y=(y0 + y1) / 2 + dy, text=label, showarrow=False, font=dict(size=15),
                              bgcolor="rgba(255,255,255,0.85)"))

    arrow(0.95, mid, 2.65, mid, f"W_gate, W_up<br>[{I}×{H}] ×2<br>{names.get('widen', 'widen')}", dy=-0.9)
    arrow(4.35, mid, 5.85, mid, "silu(gate)<br>⊙ up", dy=-0.7)
    top = np.argsort(-np.abs(a))[:k]
    rows = [mid - tall / 2 + tall * (j + 0.5) / I for j in top]        # the marked neurons' heights on the strips
    spots = spread(rows, LABEL_GAP)                                    # their labels' heights, never overprinted
    # the W_down label goes above or below its arrow, where no marked neuron's label (right of act) is near
    dy = next((d for d in (-0.7, 0.7, -1.5, 1.5, -2.3, 2.3) if all(abs(mid + d - y) >= CLEAR for y in spots)), -0.7)
    arrow(6.55, mid, 8.95, mid, f"W_down [{H}×{I}]<br>{names.get('narrow', 'narrow')}", dy=dy)
    off = float((g < 0).mean())
    notes.append(dict(x=3.0, y=mid + tall / 2 + 0.15, yanchor="top", showarrow=False, font=dict(size=14, color="#555"),
                      text=f"{names.get('off', 'gate < 0')}: {100 * off:.0f}%"))
    for j, yj, ys in zip(top, rows, spots):
        for key in ("gate", "up", "act"):
            xc = cols[key][0]
            shapes.append(dict(type="line", x0=xc - 0.38, x1=xc + 0.38, y0=yj, y1=yj, line=dict(color=CHOSEN, width=2)))
        if ys != yj:                                   # a label moved off its neuron: a short leader back to it
            shapes.append(dict(type="line", x0=6.58, x1=6.72, y0=yj, y1=ys, line=dict(color=CHOSEN, width=1)))
        notes.append(dict(x=6.75 if ys != yj else 6.6, y=ys, xanchor="left", showarrow=False,
                          font=dict(size=14, color=CHOSEN), text=f"#{j}: silu({g[j]:.2f}) × {u[j]:.2f} = {a[j]:.2f}"))
    layout = dict(title=dict(text=title, font=dict(size=20)), font=FONT, height=height, shapes=shapes,
                  annotations=notes,
                  margin=dict(l=10, r=10, t=60, b=10), showlegend=False,
                  xaxis=dict(visible=False, range=[-0.1, 10.0]),
                  yaxis=dict(visible=False, range=[mid + tall / 2 + 0.7, mid - tall / 2 - 1.0]))
    return go.Figure(data, layout=layout)
