"""Figures of the Models page: two next-token distributions over one union of tokens, both models' attention at the
same relative depth, their head-atlas counts, and the two tokenizers' cuts of one text."""
from __future__ import annotations

import html

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .figures import FONT, as_numpy, base_layout
from .labels import pieces, short, visible

A_COLOR, B_COLOR = "#1f77b4", "#ff7f0e"


def next_token_bars(rows: list[dict], name_a: str, name_b: str, title: str = "", xlabel: str = "",
                    missing: str = "—", height: int = 520) -> go.Figure:
    """rows: ops.lab.models_data.next_token; a bar per model per token text; a text that is not one token of a
    model's vocabulary gets no bar there, and `missing` at 0 instead. The figure grows with the rows (two bars a row):
    plotly shrinks a bar's outside text to the bar's thickness, and at 520 px the union of two top 8s wrote it at
    a few pixels; uniformtext keeps it at its size."""
    height = max(height, 150 + 40 * len(rows))
    labels = [short(r["text"], 12) for r in rows]
    data = []
    for tag, name, color in (("a", name_a, A_COLOR), ("b", name_b, B_COLOR)):
        p = [r[f"p_{tag}"] for r in rows]
        data.append(go.Bar(y=labels, x=[0 if v is None else v for v in p], name=f"{tag.upper()} · {name}",
                           orientation="h", marker_color=color, textposition="outside", cliponaxis=False,
                           text=[missing if v is None else f"{v:.3f}" for v in p], textfont=dict(size=13)))
    fig = go.Figure(data, layout=base_layout(title, xlabel, "", height, dict(rangemode="tozero"),
                                             dict(type="category", autorange="reversed"), barmode="group",
                                             uniformtext=dict(minsize=13, mode="show"),
                                             legend=dict(orientation="h", y=-0.12, yanchor="top", x=0)))
    fig.update_layout(margin=dict(l=90, r=40, t=50, b=90), title=dict(font=dict(size=17)))
    return fig


X_LABELS = 14         # key labels under one map at most (a map is ~380 px wide on a 1500 px page: 27 px each)
ROW_PX = 22           # px a token's row needs for its axis label (the 16 px house font) in the attention pair


def attention_pair(map_a, map_b, labels_a: list[str], labels_b: list[str], title_a: str, title_b: str,
                   height: int = 460) -> go.Figure:
    """Two (n, n) head-averaged attention maps side by side, one colour scale 0..1 (rows queries, columns keys)."""
    rows = max(len(labels_a), len(labels_b))
    height = max(height, 150 + ROW_PX * rows)          # every token's label on its own row, none over another
    fig = make_subplots(rows=1, cols=2, subplot_titles=(title_a, title_b), horizontal_spacing=0.16)
    for col, (z, lab) in enumerate(((map_a, labels_a), (map_b, labels_b)), start=1):
        fig.add_trace(go.Heatmap(z=as_numpy(z), x=list(range(len(lab))), y=list(range(len(lab))), zmin=0, zmax=1,
                                 colorscale="Viridis", showscale=col == 2, customdata=[[f"{q} → {k}" for k in lab]
                                                                                      for q in lab],
                                 hovertemplate="%{customdata}: %{z:.3f}<extra></extra>"), 1, col)
        ticks = dict(tickmode="array", tickvals=list(range(len(lab))), ticktext=lab)
        k = -(-len(lab) // X_LABELS)                    # the keys' labels, upright, every k-th: they never overprint
        fig.update_xaxes(dict(ticks, tickvals=list(range(0, len(lab), k)), ticktext=lab[::k], tickangle=-90),
                         row=1, col=col)
        fig.update_yaxes(dict(ticks, tickangle=0, autorange="reversed"), row=1, col=col)
    fig.update_layout(font=FONT, height=height, margin=dict(l=110, r=30, t=60, b=110))
    return fig


def atlas_pair(rows: list[dict], names: dict, name_a: str, name_b: str, title: str = "", ylabel: str = "",
               height: int = 380) -> go.Figure:
    """rows: ops.lab.models_data.atlas_rows; each label's share of each model's heads, with the head counts."""
    labels = [names.get(r["kind"], r["kind"]) for r in rows]
    data = [go.Bar(x=labels, y=[r[f"share_{tag}"] for r in rows], name=f"{tag.upper()} · {name}", marker_color=color,
                   text=[str(r[tag]) for r in rows], textposition="outside", cliponaxis=False)
            for tag, name, color in (("a", name_a, A_COLOR), ("b", name_b, B_COLOR))]
    return go.Figure(data, layout=base_layout(title, "", ylabel, height, None, dict(tickformat=".0%"), barmode="group",
                                              legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0)))


def pieces_html(pieces: list[dict]) -> str:
    """One tokenizer's cut of a text as HTML: each piece boxed; a piece the other tokenizer cut differently
    (shared False) is shaded, a shared one left plain."""
    out = []
    for p in pieces:
        style = "background:#ffe2c4;" if not p["shared"] else "background:#eef3f8;"
        out.append(f'<span class="tok" style="{style}border:1px solid #bbb;border-radius:3px;padding:0 3px;margin:1px;'
                   f'font-family:monospace;display:inline-block">{html.escape(visible(p["piece"]))}</span>')
    return "".join(out)


def token_labels(tokenizer, ids, n: int = 12) -> list[str]:
    """Axis labels of a row's tokens: each piece, whitespace visible, cut to n characters (12: a byte pair such as
    "<0xE6␣0xAD>", SmolLM2's pieces of a Chinese character, stays whole)."""
    return [short(p, n) for p in pieces(tokenizer, ids)]


def chips_html(names: list[str]) -> str:
    """Token texts (special tokens' names) as small boxes, '—' when there are none."""
    style = "font-family:monospace;background:#eef3f8;border-radius:3px;padding:0 3px"
    return " ".join(f'<span class="tok" style="{style}">'
                    f'{html.escape(n)}</span>' for n in names) or "—"


def labelled_chips(heading: str, lines: list[tuple[str, list[str]]]) -> str:
    """A heading, then one line of token chips per (label, names)."""
    return heading + "".join(f"<br>{label}: {chips_html(names)}" for label, names in lines)
