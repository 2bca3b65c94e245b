"""The classroom tour's pictures, sized for the back row of a classroom: one per step (content/tour.py).

`view(key, data, ctx, lang)` gives a Plotly figure or an HTML string (the token chips, the prompt); `data`
is ops.lab.overview_data.tour_data for that step, ctx the row's labels, prompt and top next tokens."""
from __future__ import annotations

import html
import math

import plotly.graph_objects as go

from content.words import say

from .figures import bars, base_layout, heatmap
from .labels import CHOSEN, NEUTRAL, token_color
from .markup import style_tag

STYLESHEET = "tour.css"       # assets/web/: the tour's big type; css() wraps it in a <style> tag
HEIGHT = 440          # leaves the picture above the fold of a 1500 x 900 projector under the step's words
PIPELINE_HEIGHT = 350  # the pipeline under the first step's words and its sentence


def pipeline_size(projector: bool) -> dict:
    """How the first step draws the pipeline: under its words and sentence, no label under 12 px (drawn 350 px
    tall they were ~9 px); for a projector taller (the sidebar is folded, the page wider) with no label under
    18 px. A box's second line is left out where it no longer fits (viz.diagrams.pipeline_svg)."""
    if projector:
        return dict(height=440, max_height=420, min_px=18)
    return dict(height=560, max_height=PIPELINE_HEIGHT, min_px=12)


def css() -> str:
    """The tour's stylesheet as a <style> tag (assets/web/tour.css)."""
    return style_tag(STYLESHEET)


def words(lang: str):
    """The pictures' titles and axes in `lang`: assets/words/tour_pictures.<lang>.json."""
    return lambda key, **fields: say(f"tour_pictures.{key}", lang, **fields)


def esc(text) -> str:
    return html.escape(str(text)).replace("\n", "<br>")


def chips(items) -> str:
    return '<div class="tour-tokens">' + "".join(f"<span>{esc(x)}</span>" for x in items) + "</div>"


def big(fig: go.Figure, height: int = HEIGHT) -> go.Figure:
    fig.update_layout(font=dict(size=22), title=dict(font=dict(size=26)), height=height)
    return fig


BARS_HEIGHT = 360      # px: steps 16-17's bars with their token names under them above a 1500x900 projector's fold
                       # (at HEIGHT the names were below it)


def view(key: str, d: dict, ctx: dict, lang: str):
    """Step `key`'s picture: go.Figure, an HTML string, or None."""
    W = words(lang)
    tl, top = ctx["short"], ctx["top"]
    dim, tok = W("dimension"), "token"
    first = lambda k: W("first_dims", k=k)

    def hm(title, x=None, y=None, xl=dim, yl=tok, height=HEIGHT, **kw):
        return big(heatmap(d["z"], x=x, y=tl if y is None else y, title=title, xlabel=xl, ylabel=yl, **kw), height)

    def att(title, **kw):
        return hm(title, x=tl, xl=W("key_token"), yl=W("query_token"), **kw)

    html_views = {
        "prompt": lambda: f'<div class="tour-hero">“{esc(ctx["prompt"])}”</div>',
        "tokens": lambda: chips(ctx["pieces"]),
        "ids": lambda: chips(d["ids"]),
        "pick": lambda: chips([f"{ctx['piece']}  →  id {ctx['chosen']}"]),
        "decode": lambda: f'<div class="tour-big">{esc(ctx["prompt"])}<b '
                          f'style="color:#d62728">{esc(ctx["new_text"])}</b></div>',
        "loop": lambda: chips(tl + [ctx["piece_short"]]),
    }
    figures = {
        "embedding": lambda: hm(W("embedding") + first(64)),
        "rmsnorm": lambda: big(bars(d["rms"], tl, title=W("rmsnorm"),
                                    xlabel=tok, ylabel="RMS")),
        "qkv": lambda: hm(W("qkv") + first(32)),
        "rope": lambda: hm(W("rope")),
        "scores": lambda: att(W("scores"), text_fmt=".1f"),
        "probs": lambda: att(W("probs"), colorscale="Blues", zmid=None, zmin=0, zmax=1, text_fmt=".2f"),
        "attn_out": lambda: hm(W("attn_out") + first(64)),
        "residual": lambda: big(bars(d["ratio"], tl, title=W("residual"), xlabel=tok,
                                     ylabel=W("ratio"))),
        "mlp": lambda: big(bars(d["values"], [f"#{j}" for j in d["neurons"]], text_fmt=".1f", ylabel="|act|",
                                title=W("mlp", token=tl[-1], n=len(d["neurons"])), xlabel=W("neuron"))),
        "resid_out": lambda: hm(W("resid_out") + first(64)),
        "repeat": lambda: hm(W("repeat"), x=tl, y=d["layers"], xl=tok, yl=W("layer"), colorscale="Viridis", zmid=None,
                             height=max(HEIGHT, 24 * len(d["layers"]) + 150)),
        "final_norm": lambda: hm(W("final_norm") + first(64)),
        "logits": lambda: big(bars(top["logits"], ctx["top_labels"], xlabel=tok, ylabel="logit", text_fmt=".2f",
                                   title=W("logits", n=len(top["logits"]))), BARS_HEIGHT),
        "softmax": lambda: big(bars(top["probs"], ctx["top_labels"], xlabel=tok, ylabel=W("probability"),
                                    text_fmt=".3f", title=W("softmax", n=len(top["probs"]))), BARS_HEIGHT),
    }
    make = html_views.get(key) or figures.get(key)
    return make() if make else None


def strip(labels, title: str, new: int | None = None, height: int = 260) -> go.Figure:
    """Tokens as a row of boxes in their colours, position under each; box `new` (the token just picked) red."""
    n = len(labels)
    colors = [CHOSEN if k == new else token_color(k) for k in range(n)]
    bar = go.Bar(x=list(range(n)), y=[1] * n, marker_color=colors, text=[str(x) for x in labels],
                 textposition="inside", insidetextanchor="middle", textfont=dict(size=28, color="white"),
                 hoverinfo="skip", width=0.92)
    layout = base_layout(title, "", "", height, dict(tickmode="array", tickvals=list(range(n)),
                                                     ticktext=[f"s = {k}" for k in range(n)]),
                         dict(visible=False, range=[0, 1.05]), showlegend=False, bargap=0.08)
    return big(go.Figure([bar], layout=layout), height)


def companion(key: str, d: dict, ctx: dict, lang: str):
    """The figure under a step whose main view is HTML (the prompt, the chips, the pick): every step of the
    tour has a picture. None for the other steps (their main view is already a figure)."""
    W = words(lang)
    tl, top = ctx["short"], ctx["top"]
    n = len(tl)
    if key == "prompt":
        return ctx["pipeline"]()                     # an SVG string, drawn to the tour's height
    if key == "tokens":
        sizes = [len(p.encode("utf-8")) for p in ctx["raw"]]
        return big(bars(sizes, tl, title=W("tokens"), xlabel="token", ylabel=W("bytes"),
                        color=[token_color(k) for k in range(n)], text_fmt=",.0f"))
    if key == "ids":
        fig = bars(d["ids"], tl, title=W("ids", vocab=f"{ctx['vocab']:,}"),
                   xlabel="token", ylabel="id", color=[token_color(k) for k in range(n)], text_fmt=",.0f")
        return big(fig.update_yaxes(type="log", range=[0, math.log10(ctx["vocab"])]))   # ids span orders of magnitude
    if key == "pick":
        labels = ctx["top_labels"]
        return big(bars(top["probs"], labels, title=W("pick", token=ctx["piece_short"]),
                        xlabel="token", ylabel=W("probability"), text_fmt=".3f",
                        color=[CHOSEN if k == 0 else NEUTRAL for k in range(len(labels))]))
    if key == "decode":
        return strip(tl + [ctx["piece_short"]], W("decode"), new=n)
    if key == "loop":
        return strip(tl + [ctx["piece_short"]], W("loop", n=n + 1), new=n)
    return None
