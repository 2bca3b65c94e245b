"""The classroom tour's script: one large step per click, the prompt through the whole model and back around.

Each step names what it shows (its `key`: ops.analysis.tour_data computes it, viz/tour.py draws it), the
registry stage lit in the pipeline strip, its title and what the presenter says, with live numbers filled
in by `words` (str.format fields: name L H V n nh nkv hd I groups piece p). Never imports streamlit.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from ops.costs import ASSETS


@dataclass(frozen=True)
class TourStep:
    key: str          # what the step shows
    stage: str        # the stage lit in the pipeline strip ("tour": none)
    zh: str           # title
    en: str
    words_zh: str     # what the presenter says, a str.format template
    words_en: str

    def title(self, lang: str, numbers: dict) -> str:
        return (self.zh if lang == "zh" else self.en).format(**numbers)

    def words(self, lang: str, numbers: dict) -> str:
        return (self.words_zh if lang == "zh" else self.words_en).format(**numbers)


# the script itself is data: assets/tour.json, one object per step with the fields above
STEPS = tuple(TourStep(**step) for step in json.loads((ASSETS / "tour.json").read_text("utf-8")))


def numbers(config, n: int, piece: str, p: float) -> dict:
    """The str.format fields of the steps' words for this model, a row of n tokens and the top next token."""
    c = config
    return dict(name=c.name or c.model_type, L=c.num_hidden_layers, Lm1=c.num_hidden_layers - 1, H=c.hidden_size,
                V=c.vocab_size, Vm1=c.vocab_size - 1, n=n, n1=n + 1, nh=c.num_attention_heads,
                nkv=c.num_key_value_heads, groups=c.num_attention_heads // c.num_key_value_heads, hd=c.head_dim,
                I=c.intermediate_size, piece=piece, p=p)
