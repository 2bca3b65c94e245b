"""The serving page's short words in both languages: pickers, tabs, figure titles and axes, metrics, the formula
tab, all in assets/words/serving_page.<lang>.json. The page picks them with labels(lang); its long texts are
content/serving_text.py's and serving_topics.py's. Never imports streamlit."""
from __future__ import annotations

from content.words import catalogue, say, template

TOPIC = "serving_page"
TABS = ("flash", "kv", "quant", "spec", "long", "variants", "tp", "phases")     # tab_<name> in the catalogue


def _word_names() -> list[str]:
    return [k for k in catalogue(TOPIC, "en") if not k.startswith(("tab_", "latex_"))]


# name -> (中文, English), for the calls that take both languages (page.more, page.checks)
WORDS = {k: (template(f"{TOPIC}.{k}", "zh"), template(f"{TOPIC}.{k}", "en")) for k in _word_names()}


def labels(lang: str) -> dict:
    """Every word in `lang` (unfilled: `online` keeps its {n}), and the tabs' labels under "tabs"."""
    return {**{k: template(f"{TOPIC}.{k}", lang) for k in _word_names()},
            "tabs": [template(f"{TOPIC}.tab_{t}", lang) for t in TABS]}


def latex(lang: str) -> list[str]:
    """The formula tab: online softmax's update and the speculative-decoding speed-up."""
    speedup = template(f"{TOPIC}.speedup", lang)
    return [say(f"{TOPIC}.latex_{i}", lang, speedup=speedup) for i in range(3)]
