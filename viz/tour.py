"""The classroom tour's pictures, sized for the back row of a classroom: one per step (content/tour.py).

`view(key, data, ctx, lang)` gives a Plotly figure or an HTML string (the token chips, the prompt); `data`
is ops.lab.overview_data.tour_data for that step, ctx the row's labels, prompt and top next tokens."""
from __future__ import annotations

import html
import math

import plotly.graph_objects as go

from .figures import bars, base_layout, heatmap
from .labels import CHOSEN, NEUTRAL, token_color

CSS = """<style>
.tour-hero {font-size: 52px; font-weight: 700; margin: 10px 0;}
.tour-big {font-size: 32px; line-height: 1.4; margin: 4px 0 10px 0;}
.tour-step {font-size: 22px; color: #666; font-weight: 600;}
.tour-title {font-size: 40px; font-weight: 800; margin: 0;}
.tour-tokens span {display: inline-block; font-size: 34px; padding: 4px 12px; margin: 4px; border-radius: 8px;
                   background: #e8f0fe; border: 2px solid #9ab; font-family: monospace;}
div[data-testid="stButton"] button p {font-size: 26px; font-weight: 700;}
div[data-testid="stButton"] button {min-height: 64px;}
</style>"""
HEIGHT = 440          # leaves the picture above the fold of a 1500 x 900 projector under the step's words
PIPELINE_HEIGHT = 350  # the pipeline under the first step's words and its sentence


def pipeline_size(projector: bool) -> dict:
    """How the first step draws the pipeline: under its words and sentence, no label under 12 px (drawn 350 px
    tall they were ~9 px); for a projector taller (the sidebar is folded, the page wider) with no label under
    18 px. A box's second line is left out where it no longer fits (viz.diagrams.pipeline_svg)."""
    if projector:
        return dict(height=440, max_height=420, min_px=18)
    return dict(height=560, max_height=PIPELINE_HEIGHT, min_px=12)


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
    T = (lambda zh, en: zh) if lang == "zh" else (lambda zh, en: en)
    tl, top = ctx["short"], ctx["top"]
    dim, tok = T("维度", "dimension"), "token"
    first = lambda k: T(f"（前 {k} 维）", f" (first {k} dims)")

    def hm(title, x=None, y=None, xl=dim, yl=tok, height=HEIGHT, **kw):
        return big(heatmap(d["z"], x=x, y=tl if y is None else y, title=title, xlabel=xl, ylabel=yl, **kw), height)

    def att(title, **kw):
        return hm(title, x=tl, xl=T("被看的 token", "key token"), yl=T("提问的 token", "query token"), **kw)

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
        "embedding": lambda: hm(T("每个 token 的向量", "Each token's vector") + first(64)),
        "rmsnorm": lambda: big(bars(d["rms"], tl, title=T("归一化后每个 token 的 RMS",
                                                          "RMS of each token after the norm"),
                                    xlabel=tok, ylabel="RMS")),
        "qkv": lambda: hm(T("第 0 层第 0 个头的 Q", "Layer 0, head 0: Q") + first(32)),
        "rope": lambda: hm(T("旋转带来的变化 q_rope − q（第 0 头）", "What the rotation changed: q_rope − q (head 0)")),
        "scores": lambda: att(T("QKᵀ/√d，空白 = 被遮住 (−∞)", "QKᵀ/√d, blank = masked (−inf)"), text_fmt=".1f"),
        "probs": lambda: att(T("注意力概率（每行和为 1）", "Attention probabilities (rows sum to 1)"),
                             colorscale="Blues",
                             zmid=None, zmin=0, zmax=1, text_fmt=".2f"),
        "attn_out": lambda: hm(T("注意力输出", "Attention output") + first(64)),
        "residual": lambda: big(bars(d["ratio"], tl, title=T("‖注意力输出‖ / ‖输入‖", "‖attention output‖ / ‖input‖"),
                                     xlabel=tok, ylabel=T("比值", "ratio"))),
        "mlp": lambda: big(bars(d["values"], [f"#{j}" for j in d["neurons"]], text_fmt=".1f", ylabel="|act|",
                                title=T(f"“{tl[-1]}” 最活跃的 {len(d['neurons'])} 个神经元 |act|",
                                        f"“{tl[-1]}”: the {len(d['neurons'])} most active neurons |act|"),
                                xlabel=T("神经元", "neuron"))),
        "resid_out": lambda: hm(T("第 0 层的输出", "Layer 0's output") + first(64)),
        "repeat": lambda: hm(T("残差流的长度 ‖x‖（行 = 层）", "Residual stream size ‖x‖ (rows = layers)"), x=tl,
                             y=d["layers"], xl=tok, yl=T("层", "layer"), colorscale="Viridis", zmid=None,
                             height=max(HEIGHT, 24 * len(d["layers"]) + 150)),
        "final_norm": lambda: hm(T("最终归一化后", "After the final norm") + first(64)),
        "logits": lambda: big(bars(top["logits"], ctx["top_labels"], xlabel=tok, ylabel="logit", text_fmt=".2f",
                                   title=T("最后一个位置的 logits（前 10 名）",
                                           "Logits at the last position (top 10)")), BARS_HEIGHT),
        "softmax": lambda: big(bars(top["probs"], ctx["top_labels"], xlabel=tok, ylabel=T("概率", "probability"),
                                    text_fmt=".3f", title=T("下一个 token 的概率（前 10 名）",
                                                            "Next-token probabilities (top 10)")), BARS_HEIGHT),
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
    T = (lambda zh, en: zh) if lang == "zh" else (lambda zh, en: en)
    tl, top = ctx["short"], ctx["top"]
    n = len(tl)
    if key == "prompt":
        return ctx["pipeline"]()                     # an SVG string, drawn to the tour's height
    if key == "tokens":
        sizes = [len(p.encode("utf-8")) for p in ctx["raw"]]
        return big(bars(sizes, tl, title=T("每个 token 占几个字节（UTF-8）", "How many bytes each token holds (UTF-8)"),
                        xlabel="token", ylabel=T("字节",
                                                 "bytes"), color=[token_color(k) for k in range(n)], text_fmt=",.0f"))
    if key == "ids":
        fig = bars(d["ids"], tl, title=T(f"每个 token 的编号：词表 {ctx['vocab']:,} 行中的一行",
                                          f"Each token's id: one row of the {ctx['vocab']:,}-row table"),
                   xlabel="token", ylabel="id", color=[token_color(k) for k in range(n)], text_fmt=",.0f")
        return big(fig.update_yaxes(type="log", range=[0, math.log10(ctx["vocab"])]))   # ids span orders of magnitude
    if key == "pick":
        labels = ctx["top_labels"]
        return big(bars(top["probs"], labels, title=T(f"选中第一名：“{ctx['piece_short']}”（红色）",
                                                       f"The top one is picked: “{ctx['piece_short']}” (red)"),
                        xlabel="token", ylabel=T("概率", "probability"), text_fmt=".3f",
                        color=[CHOSEN if k == 0 else NEUTRAL for k in range(len(labels))]))
    if key == "decode":
        return strip(tl + [ctx["piece_short"]], T("新 token 接在提示词后面（红色）",
                                                  "The new token joins the prompt (red)"), new=n)
    if key == "loop":
        return strip(tl + [ctx["piece_short"]], T(f"下一轮的输入：{n + 1} 个 token，从第 1 步再走一遍",
                                                  f"The next run's input: {n + 1} tokens, from step 1 again"), new=n)
    return None
