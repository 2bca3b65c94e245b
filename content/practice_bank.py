"""The question bank as the practice page browses it, as pure logic (no streamlit): the stages it covers in the
registry's order, a stage filter and a keyword search, the questions grouped by stage under the registry's
titles, and each question's label (source marks and ★ for its difficulty). Rendered questions
(content.practice.questions) in, view data out."""
from __future__ import annotations

from content import stages

ALL = "all"                                           # the stage filter's "every stage"


def stage_title(key: str, lang: str) -> str:
    """A practice tag ("attention", "moe", "decode") by its registry title; an unknown tag as it is."""
    return stages.BY_KEY[key].title(lang) if key in stages.BY_KEY else key


def stage_order(items: list[dict]) -> list[str]:
    """The stages the questions cover: the registry's order, then tags it does not know, by name."""
    tags = {q["stage"] for q in items}
    return [s.key for s in stages.STAGES if s.key in tags] + sorted(tags - set(stages.BY_KEY))


def search(items: list[dict], query: str) -> list[dict]:
    """The questions whose question, short or long answer (or a variant's) holds the query (any case); all of them
    for a blank one."""
    needle = query.strip().lower()
    def text(q):
        return "".join(x["question"] + x["short"] + x["long"] for x in [q, *q.get("variants", [])]).lower()
    return [q for q in items if needle in text(q)] if needle else items


def marks(q: dict, lang: str) -> str:
    """The question's label prefix: where it comes from (the source documents, computed) and ★ per level."""
    return (MARKS["seed"][lang] + " " if q["seed"] else "") + (MARKS["calc"][lang] + " " if q["computed"] else "") \
        + "★" * q["difficulty"]


def browse(items: list[dict], stage: str, query: str, lang: str) -> dict:
    """The browse view: {stages (every stage covered, for the filter), count (questions shown), groups: [(title,
    [(label, question)])]} for one stage (or ALL) and a search."""
    order = stage_order(items)
    shown = search([q for q in items if stage in (ALL, q["stage"])], query)
    groups = [(stage_title(s, lang), [(marks(q, lang) + " " + q["question"], q) for q in shown if q["stage"] == s])
              for s in order]
    return dict(stages=order, count=len(shown), groups=[g for g in groups if g[1]])


# text, not emoji: projector PCs often lack an emoji font
MARKS = {"seed": dict(zh="［源文档］", en="[documents]"), "calc": dict(zh="［实算］", en="[computed]")}
