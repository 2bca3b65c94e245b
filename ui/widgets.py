"""Small Streamlit-drawing helpers the stage pages share: token chips, special tokens highlighted, and
radio choices kept in the URL."""
from __future__ import annotations

import html
import re

import streamlit as st

from content.words import say
from ui.session import lang, set_query, t
from viz.labels import merged_cjk, pieces, token_color, visible
from viz.markup import css, tag

SPECIAL_STYLE = "background:#6a1b9a;color:white"
PAD_STYLE = "background:#bbbbbb;color:#444;text-decoration:line-through"


def chips(infos: list[dict], pad_from: int | None = None, show_ids: bool = True, size: int = 22) -> str:
    """HTML: one coloured chip per token (Tokenizer.piece_info dicts), its id under it.

    Special tokens are purple, partial UTF-8 pieces have a dashed border, padding is grey; the others are
    tinted in their position's token colour (viz.labels.token_color)."""
    out = []
    for k, p in enumerate(infos):
        padded = pad_from is not None and k >= pad_from
        if padded:
            style = PAD_STYLE
        elif p.get("special"):
            style = SPECIAL_STYLE
        else:
            style = f"background:{token_color(k, light=True)};color:#111"
        border = "border:2px dashed #333;" if p.get("partial") and not padded else "border:1px solid #999;"
        title = html.escape(f"id {p['id']} · raw {p.get('raw', '')!r} · bytes {p.get('bytes', b'')!r}")
        idline = (tag("div", p["id"], style=css(font_size=f"{int(size * 0.62)}px", color="#333",
                                                font_family="monospace")) if show_ids else "")
        piece = tag("span", html.escape(visible(p["piece"])), cls="tok",
                    style=f"{style};{border}" + css(padding="2px 6px", border_radius="6px", font_size=f"{size}px",
                                                    white_space="pre", display="inline-block"))
        out.append(tag("span", piece + idline, title=title,
                       style=css(display="inline-block", text_align="center", margin="3px 2px", vertical_align="top")))
    return '<div style="line-height:1.2">' + "".join(out) + "</div>"


def show_chips(infos: list[dict], pad_from: int | None = None, size: int = 22):
    st.markdown(chips(infos, pad_from, size=size), unsafe_allow_html=True)


def merged_note(tokenizer, ids, most: int = 8):
    """Under a token strip: the tokens of these ids that hold several characters of a CJK word, said out loud
    ("因为她" is one token: "她" has no row of its own), from the live tokenization; nothing when there are none."""
    merged = merged_cjk(pieces(tokenizer, [int(i) for i in ids]))
    if not merged:
        return
    more = len(merged) > most
    quoted = t("", ", ").join(f"“{m}”" for m in merged[:most]) + (t("……", ", ...") if more else "")
    one = merged[min(len(merged), most) - 1]           # the example: the last one named, and its last character
    if len(merged) == 1:
        st.caption(say("widgets.merged_one", lang(), quoted=quoted, ch=one[-1], one=one))
    else:
        st.caption(say("widgets.merged_each", lang(), quoted=quoted, ch=one[-1], one=one))


def highlight_specials(text: str, specials) -> str:
    """HTML of text with every special token (e.g. <|im_start|>) in a purple box; newlines kept."""
    escaped = html.escape(text)
    names = sorted((html.escape(s) for s in specials), key=len, reverse=True)
    if names:
        pat = re.compile("|".join(re.escape(s) for s in names))
        span = f'<span style="{SPECIAL_STYLE};padding:0 4px;border-radius:4px">'
        escaped = pat.sub(lambda m: f"{span}{m.group(0)}</span>", escaped)
    escaped = escaped.replace("\n", '<span style="color:#999">↵</span><br>')
    return tag("div", escaped, cls="tok", style=css(font_family="monospace", font_size="20px", line_height="1.6",
                                                    background="#f7f7f9", padding="10px", border_radius="8px"))


def show_specials(text: str, specials):
    st.markdown(highlight_specials(text, specials), unsafe_allow_html=True)


def url_choice(label: str, key: str, options: list[str], format_func=str, horizontal: bool = True) -> str:
    """A radio whose value lives in the URL (like ui.pickers.picker, for named choices)."""
    if key not in st.session_state or st.session_state[key] not in options:
        v = st.query_params.get(key)
        if v is not None and v not in options:
            st.warning(say("widgets.not_an_option", lang(), name=key, value=repr(v), options=", ".join(options),
                           first=options[0]))
        st.session_state[key] = v if v in options else options[0]
    value = st.radio(label, options, key=key, format_func=format_func, horizontal=horizontal)
    set_query(key, value)
    return value
