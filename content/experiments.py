"""The Experiments page's words: the edits it offers, their settings, and its longer titles and notes, all in
assets/words/experiments.<lang>.json. The numbers are formatted here (FORMATS) and passed as placeholders."""
from __future__ import annotations

from content.words import say, template

EDITS = ("head", "attn", "mlp", "patch", "steer", "norope", "name")


def _both(name: str) -> tuple[str, str]:
    """(中文, English) of a catalogue text, unfilled (the page fills `what_*` with str.format: no format specs)."""
    return template(f"experiments.{name}", "zh"), template(f"experiments.{name}", "en")


# key: (zh, en, what the "after" chart says was edited in English, the same in Chinese)
KINDS = {k: (*_both(f"kind_{k}"), _both(f"what_{k}")[1], _both(f"what_{k}")[0]) for k in EDITS}
ATTR_RUNS = {k: _both(f"run_{k}") for k in ("before", "after")}   # which run is attributed
MODES = {k: _both(f"mode_{k}") for k in ("zero", "mean")}        # how an ablated head is replaced

FIELDS = {  # the edit's prompts / names: (setting, URL key, default, zh, en)
    "patch": [("src", "x_src", "I hate shanghai", *_both("field_patch_src"))],
    "steer": [("a", "x_sa", "I love", *_both("field_steer_a")), ("b", "x_sb", "I hate", *_both("field_steer_b"))],
    "name": [("name", "x_name", "", *_both("field_name_name"))]}

FORMATS = {"p": ".3f", "logit": ".2f", "base": ".2f"}   # how a placeholder's number is written


def text(key: str, lang: str, **numbers) -> str:
    """The text `key` in lang, its numbers formatted by FORMATS."""
    return say(f"experiments.{key}", lang, **{k: format(v, FORMATS.get(k, "")) for k, v in numbers.items()})


def formulas(lang: str) -> list[str]:
    """The explanation's two formulas: an edit, and the direct logit attribution."""
    edit, after, frozen = (say(f"experiments.formula_{k}", lang) for k in ("edit", "after", "frozen"))
    return [say("experiments.latex_edit", lang, edit=edit, after=after),
            say("experiments.latex_attribution", lang, frozen=frozen)]


def pair(key: str, **numbers) -> tuple[str, str]:
    """The text `key` in both languages, filled with numbers (for page.section / page.more, which take both)."""
    return text(key, "zh", **numbers), text(key, "en", **numbers)
