"""The classroom tour's script: one large step per click, the prompt through the whole model and back around.

Each step names what it shows (its `key`: ops.lab.overview_data.tour_data computes it, viz/tour.py draws it), the
registry stage lit in the pipeline strip, its title and what the presenter says, and the result the picture
shows (said only once it is revealed, so a class can guess first), with live numbers filled in by `words` and
`result` (str.format fields: name L H V Vtok n nh nkv hd I groups piece p; a field ending in _zh / _en is one
language's text, used without the suffix). Never imports streamlit.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from content import facts
from content.texts import in_lang
from content.words import say
from ops.arith.costs import ASSETS


@dataclass(frozen=True)
class TourStep:
    key: str          # what the step shows
    stage: str        # the stage lit in the pipeline strip ("tour": none)
    zh: str           # title
    en: str
    words_zh: str     # what the presenter says, a str.format template
    words_en: str
    result_zh: str = ""   # what the picture shows, said only after it (the presenter reveals it): "" for none
    result_en: str = ""

    def title(self, lang: str, numbers: dict) -> str:
        return (self.zh if lang == "zh" else self.en).format(**in_lang(numbers, lang))

    def words(self, lang: str, numbers: dict) -> str:
        return (self.words_zh if lang == "zh" else self.words_en).format(**in_lang(numbers, lang))

    def result(self, lang: str, numbers: dict) -> str:
        return (self.result_zh if lang == "zh" else self.result_en).format(**in_lang(numbers, lang))


# the script itself is data: assets/tour.json, one object per step with the fields above
STEPS = tuple(TourStep(**step) for step in json.loads((ASSETS / "tour.json").read_text("utf-8")))


def numbers(config, n: int, piece: str, p: float, tokenizer_vocab: int | None = None) -> dict:
    """The str.format fields of the steps' words for this model, a row of n tokens and the top next token.
    tokenizer_vocab: the loaded tokenizer's size (ids stop below it; the embedding's padding rows are never
    produced); None: the Qwen2.5 tokenizer's for a Qwen2.5 config, else the embedding's row count."""
    c = config
    if tokenizer_vocab is None:
        qwen25 = c.model_type == "qwen2" and c.vocab_size >= facts.QWEN25_TOKENIZER["size"]
        tokenizer_vocab = facts.QWEN25_TOKENIZER["size"] if qwen25 else c.vocab_size
    kind = "moe" if c.is_moe else "dense"
    fields = dict(E=c.num_experts, k=c.num_experts_per_tok, H=c.hidden_size, Im=c.moe_intermediate_size,
                  I=c.intermediate_size)
    mlp = {f"mlp_{part}_{lang}": say(f"tour.mlp_{part}_{kind}", lang, **fields)
           for part in ("title", "words") for lang in ("en", "zh")}
    return dict(name=c.name or c.model_type, L=c.num_hidden_layers, Lm1=c.num_hidden_layers - 1, H=c.hidden_size,
                V=c.vocab_size, Vm1=c.vocab_size - 1, Vtok=tokenizer_vocab, Vtok1=tokenizer_vocab - 1, n=n, n1=n + 1,
                nh=c.num_attention_heads, nkv=c.num_key_value_heads,
                groups=c.num_attention_heads // c.num_key_value_heads,
                hd=c.head_dim, I=c.intermediate_size, piece=piece, p=p, **mlp)


def replay_text(key: str, lang: str, **fields) -> str:
    """One of the lesson replay's sentences in `lang` (assets/words/tour's replay_<key>), its fields filled in."""
    return say(f"tour.replay_{key}", lang, **fields)

