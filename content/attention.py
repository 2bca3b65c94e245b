"""The attention page's words: its titles, captions, notes and formulas, all in assets/words/attention.<lang>.json.
The numbers are formatted here (FORMATS) and passed as placeholders."""
from __future__ import annotations

from content.words import say

# the shapes table: tensor -> its shape in symbols
MEANING = dict(q="[B, nh, S, hd]", k="[B, nkv, S, hd]", v="[B, nkv, S, hd]", q_rope="[B, nh, S, hd]",
               k_rope="[B, nkv, S, hd]", scores="[B, nh, S, S]", probs="[B, nh, S, S]", context="[B, S, nh·hd]",
               out="[B, S, H]")
FORMATS = {"inv": ".4g"}   # how a placeholder's number is written


def text(key: str, lang: str, **numbers) -> str:
    """The text `key` in lang, its numbers formatted by FORMATS."""
    return say(f"attention.{key}", lang, **{k: format(v, FORMATS.get(k, "")) for k, v in numbers.items()})


def pair(key: str, **numbers) -> tuple[str, str]:
    """The text `key` in both languages (for page.more and t(), which take both)."""
    return text(key, "zh", **numbers), text(key, "en", **numbers)


def formulas(c, lang: str) -> list[str]:
    """The explanation's formulas for config c: projections, RoPE, masked softmax, GQA and o_proj."""
    nh, nkv, hd = c.num_attention_heads, c.num_key_value_heads, c.head_dim
    words = {k: say(f"attention.word_{k.rstrip('_')}", lang) for k in ("and_", "real", "otherwise")}
    fields = dict(nh=nh, nkv=nkv, hd=hd, theta=f"{c.rope_theta:g}", n_rep=c.n_rep, **words)
    return [say(f"attention.latex_{i}", lang, **fields) for i in range(4)]
