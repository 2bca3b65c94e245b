"""Interview practice page: the question bank to browse, and a quiz on the live trace's numbers."""
from __future__ import annotations

import re

import apptest_utils as au
import pytest
from apptest_utils import check_page, no_exception, open_tab, page_ok, tab_groups

from content import practice, practice_mock, stages, texts
from ops.arith import costs

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
def test_practice_english_batch():
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


# ---- the mock interview ------------------------------------------------------------------------------------------
def interview(at):
    """Open the mock-interview tab."""
    label = next(x for x in tab_groups(at)["tabs-practice-views"] if "模拟" in x or "Mock" in x)
    return open_tab(at, "practice-views", label)


def drawn(at) -> list[str]:
    return list(at.session_state["mock"]["ids"])


def bank() -> dict:
    """The bank as written in assets/practice (templates: the page fills their {placeholders} for its model)."""
    return {q["id"]: q for q in practice.load_questions()}


def shown(template: str, text: str) -> bool:
    """Whether text holds the template, any text standing for each {placeholder}."""
    parts = re.split(r"\{\{|\}\}|\{[A-Za-z0-9_]+\}", template)
    return re.search("[^\n]*?".join(re.escape(p) for p in parts), text) is not None


def assert_value(at, q: dict):
    """The revealed computed question shows its value (in bold in the info box), as its formula gives it."""
    box = next(x.value for x in at.info if q["compute"]["config"] in x.value)
    got = practice.parse_number(re.search(r"\*\*([^*(]+)", box).group(1))
    assert got == pytest.approx(practice.compute(q), rel=0.01), (q["id"], box)


def click(at, key: str):
    at.button(key=key).click()
    at.run()
    no_exception(at)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_mock_interview(tiny_app_dense, lang):
    at = interview(page_ok(PAGE, source=tiny_app_dense, lang=lang))
    qs, ids = bank(), drawn(at)
    assert len(ids) == 5 == len(set(ids)), ids                          # N = 5 by default, each asked once
    assert len({qs[i]["stage"] for i in ids}) > 1, [qs[i]["stage"] for i in ids]
    at.run()
    assert drawn(at) == ids                                             # a rerun keeps the draw
    grades = ["right", "partly", "wrong", "right", "partly"]           # 1 + 0.5 + 0 + 1 + 0.5 = 3 points
    label = "**简答：** " if lang == "zh" else "**Short answer:** "
    for k, (qid, grade) in enumerate(zip(ids, grades)):
        q, before = qs[qid], au.texts(at)
        assert shown(q["question"][lang], before) and f"{k + 1} / 5" in before, qid
        assert label not in before                                      # no answer before the reveal
        click(at, "mock_reveal")                                        # nothing written yet: a message, no answer
        assert at.warning and label not in au.texts(at)
        next(w for w in at.text_area if w.key.startswith("mock_answer_")).set_value("my answer " + qid)
        click(at, "mock_reveal")
        marks = [m.value for m in at.markdown]
        short = next(m for m in marks if m.startswith(label))[len(label):]
        long = marks[marks.index(label + short) + 1]
        assert shown(q["short"][lang], short) and shown(q["long"][lang], long), qid   # this question's answers
        assert short not in before and long not in before, qid
        if "compute" in q:                                              # its value, computed from its config
            assert_value(at, q)
        click(at, f"mock_{grade}")
    page = au.texts(at)
    assert "3 / 5" in page and "60%" in page, page[-2000:]
    table = next(au.html_text(m.value) for m in at.markdown if m.value.startswith(au.HTML_TABLE))
    cells = [row.split(" | ") for row in table.splitlines()[1:]]
    assert sum(int(c[1]) for c in cells) == 5                           # the per-stage rows count every question
    assert sum(float(c[2].split(" / ")[0]) for c in cells) == 3         # ... and add up to the shown score
    review = [e.label for e in at.expander if e.label.startswith(tuple(stages.get(qs[i]["stage"]).title(lang)
                                                                       for i in ids if qs[i]["stage"] in stages.BY_KEY))]
    assert len(review) == 3, review                                     # partly, wrong, partly
    click(at, "mock_new")
    again = drawn(at)
    assert again != ids and len(set(again)) == 5 and "1 / 5" in au.texts(at)
    assert shown(qs[again[0]]["question"][lang], au.texts(at))


def test_mock_interview_size_and_levels(tiny_app_dense):
    at = interview(page_ok(PAGE, source=tiny_app_dense, lang="en"))
    at.selectbox(key="mock_n").set_value(10)
    at.multiselect(key="mock_levels").set_value([1, 3])
    at.run()
    no_exception(at)
    qs, ids = bank(), drawn(at)
    assert len(set(ids)) == len(ids) == 10
    assert {qs[i]["difficulty"] for i in ids} == {1, 3}                # both chosen levels, no other
    assert "1 / 10" in au.texts(at)


def test_mock_interview_computed_value(tiny_app_dense):
    """A question whose answer is computed shows the computed value beside the model answer."""
    items = practice.questions(texts.numbers(costs.reference_config("Qwen2.5-0.5B-Instruct")), "en")
    seed = next(s for s in range(1000) if "compute" in bank()[practice_mock.draw(items, 5, s)[0]])
    at = interview(page_ok(PAGE, source=tiny_app_dense, lang="en"))
    at.session_state["mock"] = dict(seed=seed, choice=None)         # the interview this seed draws
    at.run()
    q = bank()[drawn(at)[0]]
    next(w for w in at.text_area if w.key.startswith("mock_answer_")).set_value("about a gigabyte")
    click(at, "mock_reveal")
    assert_value(at, q)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_mock_interview_typed_answer_stays_beside_the_reference(tiny_app_dense, lang):
    """Typing and clicking "Reveal" at once (one run carries both): the typed answer is shown, as typed, beside the
    model answer, and it is the one the final review shows."""
    at = interview(page_ok(PAGE, source=tiny_app_dense, lang=lang))
    typed = "KV 缓存按 2·L·n_kv·d 增长 / grows as 2·L·n_kv·d"
    next(w for w in at.text_area if w.key.startswith("mock_answer_")).input(typed)
    at.button(key="mock_reveal").click()
    at.run()
    no_exception(at)
    label = "**简答：** " if lang == "zh" else "**Short answer:** "
    assert any(m.value.startswith(label) for m in at.markdown)            # the reference is shown ...
    mine = [w for w in at.text_area if (w.key or "").startswith("mock_answer_")]
    assert [w.value for w in mine] == [typed]                              # ... and the typed answer beside it
    assert at.session_state["mock"]["answers"][drawn(at)[0]] == typed
