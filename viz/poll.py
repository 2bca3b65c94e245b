"""The class poll's histogram: the room's answers, the model's own answer marked beside them."""
from __future__ import annotations

import plotly.graph_objects as go

from .labels import NEUTRAL

MODEL = "#d62728"     # the model's answer: the one red bar, so the back of the room finds it


def poll_bars(options, counts, model_answer: str | None, title: str, xlabel: str, model_label: str) -> go.Figure:
    """One bar per option (counts in the poll's order); model_answer's bar red and named in its label (None: not
    shown, a student before the reveal never gets this figure anyway)."""
    options = [str(o) for o in options]
    colors = [MODEL if o == model_answer else NEUTRAL for o in options]
    names = [f"{o}  ← {model_label}" if o == model_answer else o for o in options]
    fig = go.Figure(go.Bar(x=list(counts), y=names, orientation="h", marker_color=colors, text=list(counts),
                           textposition="outside", cliponaxis=False,
                           textfont=dict(size=22)))
    top = max([1, *counts])
    fig.update_layout(title=title, height=max(260, 60 * len(options) + 110), margin=dict(l=10, r=30, t=60, b=40),
                      xaxis=dict(title=xlabel, range=[0, top * 1.15], dtick=max(1, round(top / 5)),
                                 tickfont=dict(size=18)),
                      yaxis=dict(autorange="reversed", tickfont=dict(size=22)),   # big: the back row reads it
                      showlegend=False)
    return fig
