"""The Tour's lesson chooser opens on the first lesson, and no replayed step's page writes its question's answer
(issue 47, points 3 and 9), in both languages, on the tiny model with the real tokenizer."""
from __future__ import annotations

import re

import pytest
from apptest_utils import no_exception, open_page

from classroom import lessons


def button(at, key):
    return [b for b in at.button if b.key == key][0]


def _page_texts(at, answer: str) -> str:
    """Every text the page draws outside the lesson bar (the bar's own blocks, and its folded Answer, which is the
    answer alone): markdown, captions, notes, metrics, titles."""
    import html

    out = []
    for kind in ("markdown", "caption", "info", "success", "warning", "title", "header", "subheader"):
        for el in getattr(at, kind, []):
            v = str(el.value)
            if 'class="lesson-' not in v and v != html.escape(answer):
                out.append(v)
    out += [f"{m.label} {m.value}" for m in at.metric]
    return "\n".join(out)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_chooser_opens_on_the_first_lesson(tiny_app_dense, lang):
    """Issue 47: the picker opened on "Attention deep-dive" (files in name order); it opens on first-lesson, whose
    Start begins at its Tokenize step."""
    at = open_page("tour", source=tiny_app_dense, lang=lang, folds=False)
    no_exception(at)
    box = at.selectbox(key="lesson_choice")
    assert box.value == "first-lesson" and box.options[0] == lessons.load(lessons.shipped()["first-lesson"]).title[lang]
    button(at, "lesson_start").click().run()
    no_exception(at)
    assert at.session_state["_page"] == "tokenize" and at.session_state["lesson_replay"]["step"] == 0


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("name", ["first-lesson", "attention-deep-dive", "serving-interview"])
def test_no_step_page_writes_its_answer(tiny_app_dense, name, lang):
    """Replay a lesson step by step: on every step with a question, the page's own texts (not the bar) hold the
    answer nowhere as a phrase of its own (answers of one or two letters, such as "no", are left to
    tests/unit/test_lesson_steps.py: they occur in any sentence)."""
    lesson = lessons.load(lessons.shipped()[name])
    at = open_page("tour", source=tiny_app_dense, lang=lang, folds=False)
    at.selectbox(key="lesson_choice").set_value(name).run()
    button(at, "lesson_start").click().run()
    no_exception(at)
    for k, step in enumerate(lesson.steps):
        assert at.session_state["_page"] == step.page, (k, at.session_state["_page"])
        if step.question and len(answer := step.question.answer_in(lang)) > 2:
            shown = _page_texts(at, answer)
            assert not re.search(r"(?<![\w⁻,])" + re.escape(answer) + r"(?![\w⁻])", shown), (name, k, answer)
        if k + 1 < len(lesson.steps):
            button(at, "lesson_next").click().run()
            no_exception(at)
