"""Interview practice page: the question bank to browse, and a quiz on the live trace's numbers."""
from __future__ import annotations

import pytest
from apptest_utils import check_page, no_exception, open_tab, page_ok, tab_groups

from content import stages

PAGE = "practice"


def quiz(at):
    """Open the quiz tab (the page opens on browsing the bank)."""
    if not any(w.key and w.key.startswith("quiz_answer_") for w in at.text_input):
        label = next(x for x in tab_groups(at)["tabs-practice-views"] if "测验" in x or "Quiz" in x)
        open_tab(at, "practice-views", label)
    return at


def score(at) -> str:
    quiz(at)
    return next(m.value for m in at.metric if m.label in ("得分（对 / 答）", "score (correct / attempted)"))


def answer(at, text: str):
    box = next(w for w in quiz(at).text_input if w.key.startswith("quiz_answer_"))
    box.set_value(text)
    at.button(key="quiz_reveal").click()
    at.run()
    no_exception(at)


def next_question(at):
    at.button(key="quiz_next").click()
    at.run()


@pytest.mark.real
def test_practice_browse_real():
    at = page_ok(PAGE)
    assert len(at.expander) >= 40
    at.selectbox(key="practice_stage").set_value("attention")
    at.run()
    assert 1 <= len(at.expander) < 40
    toggle = at.toggle[0]
    toggle.set_value(True)
    at.run()
    check_page(at, PAGE)
    at.selectbox(key="practice_stage").set_value("all")
    at.run()
    assert "［实算］" in "".join(e.label for e in at.expander)


@pytest.mark.real
def test_practice_quiz_real():
    at = page_ok(PAGE, prompt="I like shanghai")               # the Chinese UI's own default prompt is Chinese
    assert score(at) == "0 / 0"
    answer(at, "")                                             # empty: a message, not a count
    assert any("预测" in w.value for w in at.warning) and score(at) == "0 / 0"
    answer(at, "[1, 4]")                                       # tokens.ids of "I like shanghai"
    assert score(at) == "1 / 1", score(at)
    assert any("[1, 4]" in s.value for s in at.success)
    answer(at, "[1, 4]")                                       # revealing again does not count twice
    assert score(at) == "1 / 1"
    next_question(at)
    answer(at, "1x4x999")                                      # embed.out is [1, 4, 896]
    assert score(at) == "1 / 2", score(at)
    assert any("[1, 4, 896]" in e.value for e in at.error)
    next_question(at)
    answer(at, "banana")                                       # garbage: a message, never a traceback
    assert any("banana" in w.value for w in at.warning) and score(at) == "1 / 2"
    for _ in range(6):                                         # on to the number questions
        next_question(at)
    answer(at, "three hundred")
    assert any("three hundred" in w.value for w in at.warning)
    at.button(key="quiz_reset").click()
    at.run()
    assert score(at) == "0 / 0"


@pytest.mark.real
def test_practice_english_batch(english):
    at = page_ok(PAGE, prompt="I like shanghai\nA second, longer prompt line here", lang="en")
    assert any("B = 2" in m.value for m in at.markdown)       # the quiz is built on the two-row trace
    assert len(at.expander) >= 40
    answer(at, "[2, 99]")
    assert score(at) == "0 / 1"


def test_practice_tiny(tiny_app_dense):
    at = page_ok(PAGE, source=tiny_app_dense, prompt="I like shanghai")
    heads = [h.value for h in at.subheader]                      # stage names are the registry's titles
    assert stages.get("attention").title("zh") in heads and stages.get("moe").title("zh") in heads, heads
    answer(at, "[1, 4]")                                       # the real tokenizer: "I like shanghai" = 4 tokens
    assert score(at) == "1 / 1", score(at)
    next_question(at)
    answer(at, "1 x 4 x 32")                                   # tiny hidden size 32
    assert score(at) == "2 / 2", [e.value for e in at.error]
