"""Curated prompt pairs for the Compare page (assets/experiments/pairs.json), in both languages.

Each pair: {key, label{zh,en}, note{zh,en}, zh{a,b}, en{a,b}}: two prompts that differ in one word, each
word a single token, so the two runs have equal token lengths and can be patched position by position.
"""
from __future__ import annotations

import json
from functools import lru_cache

from ops.arith import costs

PAIRS_PATH = costs.ASSETS / "experiments" / "pairs.json"


@lru_cache(maxsize=1)
def _load() -> tuple:
    return tuple(json.loads(PAIRS_PATH.read_text("utf-8")))


def pairs() -> dict[str, dict]:
    """key -> pair, in the file's order."""
    return {p["key"]: p for p in _load()}


def prompts(key: str, lang: str) -> tuple[str, str]:
    """The pair's (clean, corrupted) prompts in a language ('zh' or 'en')."""
    p = pairs()[key]
    return p[lang]["a"], p[lang]["b"]
