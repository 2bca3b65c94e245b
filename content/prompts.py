"""Curated prompts, a few per language, where the word a lesson asks about is a token of its own in the bundled
Qwen2.5 tokenizer (tests/unit/test_prompts.py checks each with the real tokenizer): a pronoun to resolve, a
repeated name for induction, a fact to recall. The sidebar offers them; the plain texts point at them."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Curated:
    key: str
    label: tuple[str, str]      # (中文, English) as the sidebar lists it
    zh: str                     # the prompt in each language
    en: str
    focus: tuple[str, str]      # the word the lesson asks about, as its token decodes (zh, en), a token of its own

    def prompt(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en

    def title(self, lang: str) -> str:
        return self.label[0] if lang == "zh" else self.label[1]


CURATED = (
    Curated("pronoun", ("代词：“她”指谁？", "Pronoun: who is “she”?"),
            "哥哥把苹果给了妹妹，她", "Alice gave the book to Bob because she", ("她", " she")),
    Curated("induction", ("重复的名字：接下来给谁？", "A repeated name: who comes next?"),
            "妈妈给哥哥讲了一个故事。第二天，妈妈又给", "Yesterday Harry Potter met Ron Weasley. Later, Harry",
            ("妈妈", " Harry")),
    Curated("fact", ("事实：法国的首都", "A fact: the capital of France"),
            "法国的首都是", "The capital of France is", ("法国", " France")),
)


def get(key: str) -> Curated:
    return next(c for c in CURATED if c.key == key)
