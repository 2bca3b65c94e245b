"""Curated prompts, a few per language, where the word a lesson asks about is a token of its own in the bundled
Qwen2.5 tokenizer (tests/unit/test_prompts.py checks each with the real tokenizer): a pronoun to resolve, a
repeated name for induction, a fact to recall. Their words are in assets/words/prompts.<lang>.json. The sidebar
offers them; the plain texts point at them."""
from __future__ import annotations

from dataclasses import dataclass

from content.words import say


@dataclass(frozen=True)
class Curated:
    key: str                    # its label, prompt and focus word are assets/words/prompts.<lang>.json's <key>_*

    def prompt(self, lang: str) -> str:
        return say(f"prompts.{self.key}_prompt", lang)

    def title(self, lang: str) -> str:
        """The label the sidebar lists it by."""
        return say(f"prompts.{self.key}_label", lang)

    def focus(self, lang: str) -> str:
        """The word the lesson asks about, as its token decodes (a token of its own)."""
        return say(f"prompts.{self.key}_focus", lang)


CURATED = tuple(Curated(k) for k in ("pronoun", "induction", "fact"))


def get(key: str) -> Curated:
    return next(c for c in CURATED if c.key == key)
