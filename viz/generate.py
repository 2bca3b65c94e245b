"""The generate page's pictures: the running text (prompt + what the model wrote) and, before the first click,
the next-token preview."""
from __future__ import annotations

import html

import plotly.graph_objects as go

from .figures import bars, wrap
from .labels import CHOSEN, NEUTRAL, short

WRITTEN = "#1c5a99"      # the model's tokens: bold blue after the prompt's ordinary dark text


def text_box(prompt: str, written: str, live: bool = False) -> str:
    """HTML of the text so far: the prompt in the page's own dark text on a pale band (a real value, not
    placeholder grey), then the generated text in bold blue, a cursor while tokens are still coming."""
    esc = lambda s: html.escape(s).replace("\n", "<br>")
    return (f'<div style="font-size:26px;line-height:1.5;padding:12px;border:2px solid #ccc;border-radius:8px;'
            f'min-height:64px"><span style="color:#31333F;background:#eef1f5;border-radius:4px;padding:0 4px">'
            f'{esc(prompt)}</span> <b style="color:{WRITTEN}">{esc(written)}</b>{"▌" if live else ""}</div>')


def next_token_preview(top: dict, pieces: list[str], greedy: bool, xlabel: str = "", title: str = "",
                       height: int = 330) -> go.Figure:
    """The first step's top candidates (ops.lab.stage_data.next_token_top: ids, probs) as horizontal bars with their
    pieces and ids; greedy: the first, the one "Next token" will take, in red."""
    ids = top["ids"].tolist()
    names = [f"{short(p, 14)} ({i})" for p, i in zip(pieces, ids)]
    colors = [CHOSEN if greedy and k == 0 else NEUTRAL for k in range(len(names))]
    title = wrap(title, 860, 20)          # the English title ran past a 1500 px window's column and was cut
    fig = bars(top["probs"], names, title=title, xlabel=xlabel, height=height, color=colors, horizontal=True,
               text_fmt=".3f").update_yaxes(dtick=1)     # every candidate named: plotly skipped every other one
                                                         # in projector type (18 px on a 24 px row)
    return fig.update_layout(margin=dict(t=90)) if "<br>" in title else fig      # room for the title's second line
