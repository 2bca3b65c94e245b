"""The tokenize page's id matrix: tokens.ids [B, S] as a grid of ids, each cell in its token's colour.

HTML, not a Plotly heatmap: a one-row heatmap of ids reads as a flat band, while a table of numbers tinted
like the chips above it says "row b, position s holds id ...". A very long batch scrolls sideways."""
from __future__ import annotations

import html

from .labels import short, token_color

CELL = "padding:3px 8px;text-align:center;font-family:monospace;font-size:18px;border:1px solid #fff"
HEAD = "padding:2px 8px;text-align:center;font-size:15px;color:#555;font-weight:400"
PAD = "background:#d5d5d5;color:#555;text-decoration:line-through"


def ids_table(ids: list[list[int]], lengths: list[int], pieces: list[list[str]], row_name: str = "row",
              pos_name: str = "s", pad_name: str = "padding") -> str:
    """HTML of tokens.ids: one row per batch row b, one column per position s, the id written in the cell on
    the pale colour of that position's token chip (viz.labels.token_color); padding grey and struck out.
    ids (B, S) as lists, lengths the real tokens per row, pieces each row's real pieces (the cells' tooltips)."""
    S = len(ids[0]) if ids else 0
    head = f'<th style="{HEAD}"></th>' + "".join(f'<th style="{HEAD}">{pos_name} = {s}</th>' for s in range(S))
    rows = []
    for b, row in enumerate(ids):
        cells = [f'<th style="{HEAD};text-align:right">{html.escape(row_name)} {b}</th>']
        for s, i in enumerate(row):
            real = s < lengths[b]
            style = f"background:{token_color(s, light=True)};color:#111" if real else PAD
            tip = html.escape(short(pieces[b][s], 24) if real else pad_name, quote=True)
            cells.append(f'<td title="{tip}" style="{CELL};{style}">{i}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<div style="overflow-x:auto;margin:4px 0 10px 0"><table style="border-collapse:collapse;border:none">'
            f"<tr>{head}</tr>{''.join(rows)}</table></div>")


def bpe_steps_html(steps: list[dict], chips, step_name, merge_name: str = "merge", rank_name: str = "rank") -> str:
    """HTML of BPE merge steps, one line each: the step's label (step_name(k)), its pieces as chips
    (chips(parts) -> HTML) and, after step 0, which pair was merged and its rank in the merge table."""
    def code(p):
        return f"<code>{html.escape(p)}</code>"
    lines = []
    for k, step in enumerate(steps):
        merged = step["merged"]
        what = (f"<span style='font-size:17px;color:#555'>{merge_name} {code(merged[0])} + {code(merged[1])} "
                f"({rank_name} {merged[2]:,})</span>" if merged else "")
        lines.append(f"<div style='display:flex;align-items:center;gap:14px;margin:2px 0'>"
                     f"<b style='font-size:18px;width:70px'>{step_name(k)}</b>{chips(step['parts'])}{what}</div>")
    return "".join(lines)
