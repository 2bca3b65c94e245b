"""The names of the logit attribution's parts as a reader sees them: ops.lab.experiments_attribution names them as code
("L20.attn.h1", "L20.mlp"; the waterfall's steps "L20 attn"), a Chinese page says 第20层 注意力 头1. The words are
in assets/words/parts.*.json; a name this does not know is shown as it is."""
from __future__ import annotations

import re

from content.words import say

PARTS = (                                                   # (pattern, text name in assets/words/parts)
    (re.compile(r"embed"), "embed"),
    (re.compile(r"L(?P<i>[0-9]+)\.attn\.h(?P<h>[0-9]+)"), "head"),
    (re.compile(r"L(?P<i>\d+)\.attn\.bias"), "bias"),
    (re.compile(r"L(?P<i>\d+) attn"), "attn"),
    (re.compile(r"L(?P<i>\d+)\.mlp"), "mlp"),
    (re.compile(r"L(?P<i>\d+)\.moe"), "moe"),
    (re.compile(r"L(?P<i>\d+) mlp"), "step_mlp"),
)


def part_label(part: str, lang: str) -> str:
    """'L20.attn.h1' -> '第20层 注意力 头1' (zh) or 'L20.attn.h1' (en)."""
    for pattern, name in PARTS:
        m = pattern.fullmatch(part)
        if m:
            return say(f"parts.{name}", lang, **m.groupdict())
    return part
