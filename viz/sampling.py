"""Figures of the sampling page: the candidates' probabilities raw and under the current settings in one chart,
one stage's values at the candidates (-inf shown as such), probability vs frequency."""
from __future__ import annotations

import plotly.graph_objects as go
import torch

from .figures import as_numpy, base_layout
from .labels import CHOSEN, NEUTRAL

# The probability axis, the same under every setting: an axis that followed the largest bar shrank with it as T
# moved, so a bar kept its length while its probability changed. No probability exceeds 1, and at T = 0 (greedy)
# the chosen token's is exactly 1, so the axis stops at 1; the value written after a bar goes in the right margin.
P_RANGE = [0, 1]
RAW = "#c9ced6"          # the raw softmax's bars: a solid light grey, the same in the legend as on the bars


def stage_bars(values, names, chosen: int | None, ids, title="", xlabel="logit", height=None) -> go.Figure:
    """values at the candidate ids (names their labels), as horizontal bars in the order given (the value
    labels never collide); -inf bars drawn empty and labelled −∞; the chosen id red."""
    v = as_numpy(values)
    finite = [bool(x == x and abs(x) != float("inf")) for x in v]
    shown = [float(x) if f else 0.0 for x, f in zip(v, finite)]
    text = [f"{x:.2f}" if f else "−∞" for x, f in zip(v, finite)]
    colors = [CHOSEN if int(i) == chosen else NEUTRAL for i in ids]
    bar = go.Bar(x=shown, y=list(names), orientation="h", text=text, textposition="outside", marker_color=colors,
                 textfont=dict(size=15), cliponaxis=False)
    layout = base_layout(title, xlabel, "", height or 110 + 30 * len(v), None, dict(type="category",
                                                                                    autorange="reversed"),
                         uniformtext=dict(minsize=15, mode="show"))
    layout["margin"] = dict(l=110, r=60, t=60, b=50)
    return go.Figure([bar], layout=layout)


def candidates_chart(stages: dict, cand: list[int], names: list[str], title: str = "", words: dict | None = None,
                     height: int | None = None, at: list[int] | None = None) -> go.Figure:
    """The sampling page's one chart. Horizontal bars of the candidates (cand: ids, in the order shown):
    light grey, the raw softmax of the logits (T = 1, nothing cut); blue, the probabilities under the current
    settings (stages: ops.engine.sampling.sample_stages); the chosen id red; rows cut by top-k or top-p shaded grey
    and labelled so. words: display names for raw, now, chosen, cut_k, cut_p. at: where the candidates sit in the
    stage tensors when these hold the candidates' values only (a generated step's, ops.lab.generate_data.
    step_candidates), with the model's own softmax under "raw_probs"; by default they are the whole vocabulary."""
    w = dict(raw="softmax(logits), T = 1", now="now", chosen="chosen", cut_k="cut by top-k",
             cut_p="cut by top-p") | (words or {})
    idx = torch.as_tensor(cand if at is None else at)
    raw = as_numpy(torch.softmax(stages["logits"].float(), -1)[idx] if at is None   # lists: plain numbers in the JSON
                   else stages["raw_probs"][idx]).tolist()
    now = as_numpy(stages["probs"][idx]).tolist()
    kept_k = torch.isfinite(stages["top_k"][idx]).tolist()
    kept_p = torch.isfinite(stages["top_p"][idx]).tolist()
    cut = [None if a and b else (w["cut_k"] if not a else w["cut_p"]) for a, b in zip(kept_k, kept_p)]
    chosen = int(stages["chosen"])
    text = [c if c else f"{p:.3f}" for p, c in zip(now, cut)]
    data = [go.Bar(x=raw, y=names, orientation="h", name=w["raw"], marker=dict(color=RAW), width=0.86,
                   showlegend=False, hovertemplate="%{y}: %{x:.4f}<extra>" + w["raw"] + "</extra>"),
            go.Bar(x=now, y=names, orientation="h", name=w["now"], width=0.5, text=text, textposition="outside",
                   textfont=dict(size=16, color=["#777" if c else "#111" for c in cut]), cliponaxis=False,
                   marker=dict(color=[CHOSEN if i == chosen else NEUTRAL for i in cand]), showlegend=False,
                   hovertemplate="%{y}: %{x:.4f}<extra>" + w["now"] + "</extra>")]
    # the legend from marks of exactly the bars' colours (a bar trace with a colour per bar shows only one of them)
    data += [go.Bar(x=[None], y=[None], orientation="h", name=name, marker=dict(color=color), showlegend=True,
                    hoverinfo="skip") for name, color in ((w["raw"], RAW), (w["now"], NEUTRAL),
                                                          (w["chosen"], CHOSEN))]
    shapes = [dict(type="rect", xref="paper", x0=0, x1=1, y0=r - 0.5, y1=r + 0.5, fillcolor="#e9e9e9", layer="below",
                   line=dict(width=0)) for r, c in enumerate(cut) if c]
    height = height or 130 + 36 * len(cand)
    below = -32 / max(height - 200, 60)               # the legend's top 32 px under the plot: clear of the tick labels
    layout = base_layout(title, "", "", height, dict(range=P_RANGE, title=dict(text="p")),
                         dict(type="category", autorange="reversed"), barmode="overlay", shapes=shapes,
                         uniformtext=dict(minsize=15, mode="show"),
                         legend=dict(orientation="h", y=below, yanchor="top", x=0, xanchor="left"))
    # the legend under the axis (its second entry spells out every setting and wraps): the title keeps the top; on
    # the right, room for the value written after a bar that reaches 1
    layout["margin"] = dict(l=110, r=70, t=70, b=130)
    return go.Figure(data, layout=layout)


def bar_pair(labels, a, b, name_a, name_b, title="", xlabel="", ylabel="", height=None) -> go.Figure:
    """Two values per label side by side (probability and frequency), as horizontal bars in the order given,
    each value written past its bar. ylabel names the values (drawn on the horizontal axis here)."""
    a, b = as_numpy(a).tolist(), as_numpy(b).tolist()
    bar = lambda v, name, color: go.Bar(x=v, y=list(labels), name=name, orientation="h", marker_color=color,
                                        text=[f"{x:.3f}" for x in v], textposition="outside", cliponaxis=False)
    layout = base_layout(title, ylabel, xlabel, height or 130 + 44 * len(a), dict(range=P_RANGE),
                         dict(type="category", autorange="reversed"), barmode="group",
                         uniformtext=dict(minsize=14, mode="show"),
                         legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0, xanchor="left"))
    layout["margin"] = dict(l=110, r=70, t=100, b=50)
    return go.Figure([bar(a, name_a, NEUTRAL), bar(b, name_b, "#555555")], layout=layout)
