"""Every sentence the app shows outside the stage explanations, as data: assets/words/<topic>.<lang>.json.

One file per topic and language maps a name to a text with `{placeholders}` (content/template.py's syntax:
`{name}` is filled, `{{` and `}}` are literal braces). `say("topic.name", lang, **fields)` is the one way in.
A teacher fixes a sentence, or a translator adds a language (copy every `<topic>.en.json` to `<topic>.<xx>.json`),
without touching Python; tests/unit/test_words.py checks that every name exists in every language with the same
placeholders, and that every name the code asks for exists.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from content.template import fill, placeholders

WORDS_DIR = Path(__file__).resolve().parents[1] / "assets" / "words"
LANGS = ("zh", "en")


@lru_cache(maxsize=None)
def catalogue(topic: str, lang: str) -> dict[str, str]:
    """One topic's texts in one language (name -> template)."""
    path = WORDS_DIR / f"{topic}.{lang}.json"
    return json.loads(path.read_text("utf-8"))


def topics() -> list[str]:
    return sorted({p.name.split(".")[0] for p in WORDS_DIR.glob("*.json")})


def template(key: str, lang: str) -> str:
    """The unfilled text of `topic.name` in `lang` (KeyError naming the key when it is missing)."""
    topic, _, name = key.partition(".")
    texts = catalogue(topic, lang if lang in LANGS else "en")
    if name not in texts:
        raise KeyError(f"no text {key!r} in assets/words/{topic}.{lang}.json")
    return texts[name]


def say(key: str, lang: str, **fields) -> str:
    """The text `topic.name` in `lang`, its placeholders filled from fields."""
    return fill(template(key, lang), fields)


def fields(key: str) -> set[str]:
    """The placeholders a text uses (the same in every language: tested)."""
    return placeholders(template(key, "en"))
