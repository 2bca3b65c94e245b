"""Token pieces as labels: whitespace made visible, long pieces cut, and each token's colour. The one place
labels (and token colours) are made."""
from __future__ import annotations

import re

# One colour per token position, the same on every page (chips, lines, bars, axis labels). No red here:
# red means one thing, the chosen / selected item (CHOSEN).
TOKEN_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f"]
CHOSEN = "#d62728"
NEUTRAL = "#6d8bb3"      # bars and marks that are not a prompt token (candidates, neurons)


def tint(hex_color: str, white: float) -> str:
    """hex_color moved `white` of the way to white (0 = itself, 1 = white)."""
    r, g, b = (int(hex_color[k:k + 2], 16) for k in (1, 3, 5))
    return "#%02x%02x%02x" % tuple(round(c + (255 - c) * white) for c in (r, g, b))


def token_color(i: int, light: bool = False) -> str:
    """The colour of the token at position i; light: a pale tint of it, for backgrounds under dark text."""
    c = TOKEN_COLORS[int(i) % len(TOKEN_COLORS)]
    return tint(c, 0.78) if light else c


def visible(piece: str) -> str:
    """Spaces drawn as ␣, newlines and tabs written as \\n and \\t (a blank label or a blank table row would
    hide a token); '' as ∅. The space between the bytes of a partial character ('<0xE4 0xBD>') is no space of
    the text, and stays a plain space."""
    s = str(piece).replace(" ", "␣").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return BYTES.sub(lambda m: m.group(0).replace("␣", " "), s) or "∅"


BYTES = re.compile(r"<0x[0-9A-F]{2}(?:␣0x[0-9A-F]{2})*>")      # readable()'s bytes, after the spaces were drawn


def short(piece: str, n: int = 12) -> str:
    """A piece fit for an axis: visible whitespace, cut to n characters (12 keeps an English word and its ␣ whole,
    e.g. "␣lighthouse", which 8 cut to "ighthou…" on the attention map)."""
    s = visible(piece)
    return s if len(s) <= n else s[: n - 1] + "…"


def pieces(tokenizer, ids) -> list[str]:
    """The text piece of every id (the id itself when the tokenizer cannot say)."""
    ids = [int(i) for i in ids]
    try:
        return tokenizer.pieces(ids)
    except Exception:
        return [str(i) for i in ids]


def row_labels(tokenizer, trace, b: int, n: int | None = 12, with_pad: bool = False) -> list[str]:
    """Labels of row b's real tokens (cut to n characters; None keeps them whole), then 'pad' for padding."""
    length = trace.lengths[b]
    out = pieces(tokenizer, trace.token_ids[b, :length].tolist())
    if n is not None:
        out = [short(p, n) for p in out]
    return out + ["pad"] * (trace.S - length if with_pad else 0)


def is_cjk(ch: str) -> bool:
    """A Chinese character (or Japanese kana, Korean syllable): a script whose words are not split by spaces."""
    o = ord(ch)
    return (0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0xF900 <= o <= 0xFAFF or 0x3040 <= o <= 0x30FF
            or 0xAC00 <= o <= 0xD7AF or 0x20000 <= o <= 0x2FA1F)


def merged_cjk(texts: list[str]) -> list[str]:
    """The tokens (their text pieces, each once, in order) that hold a CJK character and at least one more
    character: "因为她" is one token, so "她" has no row, column or position of its own. Whitespace is not counted;
    a piece with half a UTF-8 character (�) is skipped."""
    out = []
    for p in texts:
        core = "".join(str(p).split())
        if len(core) > 1 and "\ufffd" not in core and any(is_cjk(c) for c in core) and core not in out:
            out.append(core)
    return out
