"""Token pieces as labels: whitespace made visible, long pieces cut. The one place labels are made."""
from __future__ import annotations


def visible(piece: str) -> str:
    """Spaces, newlines and tabs drawn as ␣ ↵ ⇥ (a blank label would hide a token); '' as ∅."""
    return str(piece).replace(" ", "␣").replace("\n", "↵").replace("\t", "⇥") or "∅"


def short(piece: str, n: int = 8) -> str:
    """A piece fit for an axis: visible whitespace, cut to n characters."""
    s = visible(piece)
    return s if len(s) <= n else s[: n - 1] + "…"


def pieces(tokenizer, ids) -> list[str]:
    """The text piece of every id (the id itself when the tokenizer cannot say)."""
    ids = [int(i) for i in ids]
    try:
        return tokenizer.pieces(ids)
    except Exception:
        return [str(i) for i in ids]


def row_labels(tokenizer, trace, b: int, n: int | None = 8, with_pad: bool = False) -> list[str]:
    """Labels of row b's real tokens (cut to n characters; None keeps them whole), then 'pad' for padding."""
    length = trace.lengths[b]
    out = pieces(tokenizer, trace.token_ids[b, :length].tolist())
    if n is not None:
        out = [short(p, n) for p in out]
    return out + ["pad"] * (trace.S - length if with_pad else 0)
