"""Classroom tour: one sentence through the whole model, step by step; a shared link opens a step."""
from __future__ import annotations

import re

import pytest
from apptest_utils import error_boxes, new_app, no_exception, open_page, page_ok, svg_pictures
from page_table import RANDOM

PAGE = "tour"


def button(at, key):
    return [b for b in at.button if b.key == key][0]


def check_tour(at):
    assert at.session_state["tour_step"] == 0
    assert svg_pictures(at), "tour step 0 has no pipeline picture"
    button(at, "tour_next").click()
    at.run()
    no_exception(at)
    assert at.session_state["tour_step"] == 1
    button(at, "tour_next").click()
    at.run()
    assert at.session_state["tour_step"] == 2
    button(at, "tour_back").click()
    at.run()
    no_exception(at)
    assert at.session_state["tour_step"] == 1
    for _ in range(40):                                       # walk to the end: every step renders, with a figure
        nxt = button(at, "tour_next")
        if nxt.proto.disabled:
            break
        nxt.click()
        at.run()
        no_exception(at)
        assert not error_boxes(at, RANDOM), (at.session_state["tour_step"], error_boxes(at, RANDOM))
        assert at.get("plotly_chart") or svg_pictures(at), f"tour step {at.session_state['tour_step']} has no figure"
    assert at.session_state["tour_step"] >= 19
    step = at.query_params["step"]
    assert (step if isinstance(step, str) else step[0]) == str(at.session_state["tour_step"])


@pytest.mark.real
def test_tour_real():
    check_tour(page_ok(PAGE, allow_errors=RANDOM))


def test_tour_tiny(tiny_app_dense):
    check_tour(page_ok(PAGE, source=tiny_app_dense, prompt="I like shanghai\nHello there, friend", allow_errors=RANDOM))


def test_tour_tiny_moe(tiny_app_moe):
    check_tour(page_ok(PAGE, source=tiny_app_moe, allow_errors=RANDOM))


def test_tour_step_from_url(tiny_app_dense):
    """A shared link ?step=7 opens the tour at step 8 (0-based 7)."""
    at = new_app()
    at.run()
    at.session_state["source"] = tiny_app_dense
    at.query_params["step"] = "7"
    at.switch_page("app_pages/tour.py")
    at.run()
    no_exception(at)
    assert at.session_state["tour_step"] == 7
    shown = "".join(m.value for m in at.markdown)
    assert "layers.0.attn.scores" in shown and "4 注意力" in shown     # step 8: the scores, the strip's stage lit
    assert len(at.get("plotly_chart")) == 1


def tour_text(at) -> str:
    return "\n".join(str(m.value) for m in at.markdown)


def test_default_prompt_follows_the_language(tiny_app_dense):
    """A first visit in Chinese starts on the Chinese default prompt, the tour's first slide included; switching to
    English while it is untouched switches it too; a prompt the user typed stays; a link's ?prompt= wins."""
    from ui.session import DEFAULT_PROMPTS

    at = open_page(PAGE, source=tiny_app_dense)
    no_exception(at)
    assert at.session_state["prompt_text"] == DEFAULT_PROMPTS["zh"] != DEFAULT_PROMPTS["en"]
    assert DEFAULT_PROMPTS["zh"] in tour_text(at)                  # the first slide shows the sentence
    at.sidebar.radio(key="w_lang").set_value("en").run()
    no_exception(at)
    assert at.session_state["prompt_text"] == DEFAULT_PROMPTS["en"]
    assert DEFAULT_PROMPTS["en"] in tour_text(at) and DEFAULT_PROMPTS["zh"] not in tour_text(at)
    at.sidebar.text_area(key="w_prompt_text").set_value("my own words").run()
    at.sidebar.radio(key="w_lang").set_value("zh").run()
    no_exception(at)
    assert at.session_state["prompt_text"] == "my own words"
    at = open_page(PAGE, source=tiny_app_dense, prompt=None, lang="en")
    assert at.session_state["prompt_text"] == DEFAULT_PROMPTS["en"]
    linked = new_app(lang="zh", prompt="I like shanghai")
    linked.run()
    assert linked.session_state["prompt_text"] == "I like shanghai"


def test_a_result_caption_waits_for_the_reveal(tiny_app_dense):
    """Step 2 (tokens) asks before it tells: the count appears only after the picture, once revealed (a button, key
    ↓); the next step hides its own result again."""
    at = new_app(step="1")
    at.run()
    at.session_state["source"] = tiny_app_dense
    at.switch_page("app_pages/tour.py").run()
    no_exception(at)
    from ops.engine.store import STORE
    n = len(STORE.peek(next(iter(at.session_state["traces"].values()))).token_ids[0])    # the session holds its key
    said = f"切成了 {n} 个 token"
    assert said not in tour_text(at) and f"切成 {n} 个" not in tour_text(at)
    assert at.session_state["tour_step"] == 1 and button(at, "tour_reveal").proto.shortcut
    button(at, "tour_reveal").click().run()
    no_exception(at)
    text = tour_text(at)
    assert said in text and text.index(said) > text.index("tour-big")       # after the question, under the picture
    button(at, "tour_next").click().run()
    no_exception(at)
    assert not [b for b in at.button if b.key == "tour_reveal"]                # step 3 states no result
    for _ in range(14):                                                        # on to step 17: the top token's share
        button(at, "tour_next").click().run()
    assert at.session_state["tour_step"] == 16 and "%" not in tour_text(at).split("tour-title")[-1]
    button(at, "tour_reveal").click().run()
    assert "%" in tour_text(at).split("tour-title")[-1]


def _in_order(node) -> list:
    """The elements under an AppTest block, in the order the page draws them."""
    out = []
    for k in sorted(getattr(node, "children", {}) or {}):
        child = node.children[k]
        out += [child] + _in_order(child)
    return out


def test_the_prompt_box_comes_first_and_the_tour_has_its_own(tiny_app_dense):
    """Issue 42: the prompt box sits above the page links in the sidebar; the tour has a prompt box of its own,
    beside its buttons (the sidebar is folded away on a projector), in step with the sidebar's."""
    at = open_page(PAGE, source=tiny_app_dense)
    no_exception(at)
    order = [(e.type, getattr(e, "key", None)) for e in _in_order(at.sidebar)]
    box = order.index(("text_area", "w_prompt_text"))
    links = [k for k, (kind, _) in enumerate(order) if kind == "page_link"]
    from content import stages

    assert len(links) == len(stages.pages()) and box < links[0], order[:8]
    tour_box = at.main.text_area(key="w_prompt_text_tour")
    assert tour_box.value == at.session_state["prompt_text"]
    tour_box.set_value("一只猫坐在垫子上").run()
    no_exception(at)
    assert at.session_state["prompt_text"] == "一只猫坐在垫子上"
    assert at.sidebar.text_area(key="w_prompt_text").value == "一只猫坐在垫子上"
    assert "一只猫坐在垫子上" in at.session_state["prompt_text"] and at.session_state["tour_step"] == 0


def test_projector_mode_puts_a_prompt_box_on_the_page(tiny_app_dense):
    """On a projector the sidebar is folded away: every page has a prompt box of its own on the page."""
    at = open_page("attention", source=tiny_app_dense, projector="1")
    no_exception(at)
    assert at.main.text_area(key="w_prompt_text_page").value == at.session_state["prompt_text"]
    normal = open_page("attention", source=tiny_app_dense)
    assert not [w for w in normal.main.text_area if w.key == "w_prompt_text_page"]


# ---- a saved lesson replayed from the tour (ui/lesson_replay.py) ---------------------------------------------------
def _tiny_limits(folder: str) -> dict:
    """Each picker's range on a model, from its config.json (the lesson's value is clamped to it); top N: the LM
    head page's slider takes 5 to 30."""
    import json
    from pathlib import Path

    c = json.loads((Path(folder) / "config.json").read_text())
    return {"layer": (0, c["num_hidden_layers"] - 1), "head": (0, c["num_attention_heads"] - 1), "top": (5, 30),
            "pos": (0, 10_000)}


def _bar_text(at, cls: str) -> list[str]:
    """The lesson bar's pieces of one class (notes, question, step), as plain text."""
    import html
    import re

    out = []
    for m in at.markdown:
        for inner in re.findall(rf'<div class="{cls}">(.*?)</div>', str(m.value), flags=re.S):
            out.append(html.unescape(inner.replace("<br>", "\n")))
    return out


def _start(at, choice: str):
    at.selectbox(key="lesson_choice").set_value(choice).run()
    no_exception(at)
    button(at, "lesson_start").click().run()
    no_exception(at)


def _replay(at, name: str, lang: str, limits: dict):
    """Start lesson `name` from the tour and walk it: every step's page, pickers, notes, question and number."""
    from classroom import lessons
    from ui.lesson_builder import PICKER_KEYS

    lesson = lessons.load(lessons.shipped()[name])
    other = "en" if lang == "zh" else "zh"
    _start(at, name)
    assert at.session_state["prompt_text"] == "\n".join(lesson.prompts)
    assert at.session_state["projector"] is True
    n = len(lesson.steps)
    for k, step in enumerate(lesson.steps):
        assert at.session_state["_page"] == step.page, (k, at.session_state["_page"], step.page)
        assert not error_boxes(at, RANDOM), (k, error_boxes(at, RANDOM))
        assert _bar_text(at, "lesson-notes") == [step.notes[lang]], (k, _bar_text(at, "lesson-notes"))
        assert step.notes[other] not in "\n".join(str(m.value) for m in at.markdown)
        head = _bar_text(at, "lesson-step")[0]
        assert f"{k + 1} / {n}" in head and lesson.title[lang] in head, head
        questions = _bar_text(at, "lesson-question")
        if step.question:
            q = step.question
            assert questions == ["❓ " + (q.zh if lang == "zh" else q.en)], questions
            [shown] = _bar_text(at, "lesson-options")        # the options in the page's language only
            assert all(f"<span>{o}</span>" in shown for o in q.options_in(lang)), shown
            assert not [o for o in q.options_in(other) if o not in q.options_in(lang) and o in shown], shown
        else:
            assert not questions
        for picker, value in step.pickers.items():
            lo, hi = limits[picker]
            want = max(lo, min(value, hi))
            key = PICKER_KEYS[picker]
            assert at.session_state[key] == want, (k, picker, at.session_state[key], want)
            widgets = [s for s in at.slider if s.key == key]
            assert all(w.value == want for w in widgets), (k, picker, [w.value for w in widgets])
        nxt = button(at, "lesson_next")
        assert nxt.proto.disabled == (k == n - 1)
        if k < n - 1:
            nxt.click().run()
            no_exception(at)
    button(at, "lesson_back").click().run()
    no_exception(at)
    assert at.session_state["lesson_replay"]["step"] == n - 2
    assert at.session_state["_page"] == lesson.steps[n - 2].page
    button(at, "lesson_end").click().run()
    no_exception(at)
    assert at.session_state["_page"] == "tour" and "lesson_replay" not in at.session_state
    assert not _bar_text(at, "lesson-notes") and at.session_state["tour_step"] == 0


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("name", ["first-lesson", "attention-deep-dive", "serving-interview"])
def test_replaying_a_shipped_lesson_steps_through_every_step(tiny_app_dense, name, lang):
    """Start a shipped lesson from the tour: its prompt goes in, projector mode comes on, and every step opens the
    page it names with its pickers set (within the tiny model), under a bar with the step number, the notes in the
    session's language and the step's question; Next to the end, Previous back one, End returns to the tour."""
    at = open_page(PAGE, source=tiny_app_dense, lang=lang, folds=False)
    no_exception(at)
    _replay(at, name, lang, _tiny_limits(tiny_app_dense))


@pytest.mark.real
@pytest.mark.parametrize("name", ["attention-deep-dive", "serving-interview"])
def test_replaying_on_the_bundled_model_keeps_the_steps_pickers(name):
    """On the bundled model (24 layers, 14 heads) the steps' pickers (layer 12, head 10, layer 23) are set as written."""
    from ops.models.bundled import cache_dir

    at = open_page(PAGE, lang="en", folds=False)
    no_exception(at)
    _replay(at, name, "en", _tiny_limits(str(cache_dir() / "qwen2.5-coder-0.5b-instruct")))


def _good_lesson() -> dict:
    return {"version": 1, "title": {"zh": "上传的课", "en": "An uploaded lesson"}, "prompts": ["Hello there"],
            "steps": [{"page": "attention", "pickers": {"layer": 1, "head": 2},
                       "notes": {"zh": "看<script>alert(1)</script>这一头", "en": "<img src=x onerror=alert(1)> a head"}},
                      {"page": "lm_head", "pickers": {"top": 50}, "notes": {"zh": "下一个", "en": "next"}}]}


BAD_FILES = {                                    # file bytes -> what the message must name, in Chinese and English
    "truncated": (lambda good: good[: len(good) // 2], "被截断", "truncated"),
    "malformed": (lambda good: b"{'version': 1}", "不是有效的 JSON", "not valid JSON"),
    "oversized": (lambda good: b" " * (300 * 1024) + good, "上限是 262,144", "the limit is 262,144"),
    "not-utf8": (lambda good: b"\xff\xfe" + good, "不是 UTF-8 文本", "not UTF-8"),
    "crafted": (lambda good: good.replace(b'"attention"', b'"../../etc/passwd"'), "不是本应用的页面",
                "is not a page of the app"),
    "code": (lambda good: good.replace(b'"Hello there"', b'{"__import__": "os"}'), "prompts[0] 应当是文本",
             "prompts[0] must be text"),
}


def _chinese_only(message: str) -> bool:
    """Han characters and no English sentence (three English words in a row), leaving aside the file's own words:
    quoted values, steps[0].page paths, the file name."""
    import re

    words = re.sub(r"'[^']*'|[\w.]*\[\d+\][\w.]*|[\w-]+\.json", "", message)
    return bool(re.search(r"[\u4e00-\u9fff]", message)) and not re.search(r"[A-Za-z]+(?: +[A-Za-z]+){2,}", words)


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_a_bad_lesson_file_says_what_is_wrong_and_the_tour_goes_on(tiny_app_dense, kind, lang):
    """An uploaded lesson file the loader refuses: an error naming the file and what is wrong, in the page's language
    (a Chinese page: no English sentence), no replay, the prompt untouched; the tour still steps, and a good file
    after it replays."""
    import json

    from classroom import lessons

    good = json.dumps(_good_lesson(), ensure_ascii=False).encode("utf-8")
    make, named_zh, named_en = BAD_FILES[kind]
    at = open_page(PAGE, source=tiny_app_dense, lang=lang, folds=False)
    prompt = at.session_state["prompt_text"]
    at.file_uploader(key="lesson_file").set_value((f"{kind}.json", make(good), "application/json")).run()
    no_exception(at)
    errors = [e.value for e in at.error]
    named = named_zh if lang == "zh" else named_en
    assert len(errors) == 1 and f"{kind}.json" in errors[0] and named in errors[0], errors
    if lang == "zh":
        assert _chinese_only(errors[0]), errors[0]
    else:
        assert not re.search(r"[\u4e00-\u9fff]", errors[0]), errors[0]
    assert "lesson_replay" not in at.session_state and at.session_state["prompt_text"] == prompt
    assert len(at.selectbox(key="lesson_choice").options) == len(lessons.shipped())      # nothing uploaded to start
    button(at, "tour_next").click().run()
    no_exception(at)
    assert at.session_state["tour_step"] == 1 and at.session_state["_page"] == "tour"
    at.file_uploader(key="lesson_file").set_value(("good.json", good, "application/json")).run()
    no_exception(at)
    assert not at.error
    button(at, "lesson_start").click().run()
    no_exception(at)
    assert at.session_state["_page"] == "attention" and at.session_state["prompt_text"] == "Hello there"
    assert at.session_state["layer"] == 1 and at.session_state["head"] == 2
    shown = "\n".join(str(m.value) for m in at.markdown)
    assert "<img src=x" not in shown and "<script>alert" not in shown                           # text, not markup
    assert ("&lt;script&gt;alert(1)&lt;/script&gt;这一头" if lang == "zh" else
            "&lt;img src=x onerror=alert(1)&gt; a head") in shown
    button(at, "lesson_next").click().run()
    no_exception(at)
    assert at.session_state["_page"] == "lm_head" and at.session_state["lm_topn"] == 30


def test_a_teacher_opens_the_steps_question_as_the_class_poll(monkeypatch, tmp_path, tiny_app_dense):
    """Classroom mode: the teacher replaying a lesson opens the step's question as the class poll in one click (the
    question, its options, its answer as the model's); a student sees it under the page, and a student replaying
    the same lesson gets no such button."""
    from classroom import lessons
    from classroom.poll_store import PollStore

    key, db = "s3cret-teacher-key", tmp_path / "polls.sqlite"
    monkeypatch.setenv("OPERATOR_LAB_CLASSROOM", "1")
    monkeypatch.setenv("OPERATOR_LAB_TEACHER_KEY", key)
    monkeypatch.setenv("OPERATOR_LAB_POLL_DB", str(db))
    monkeypatch.setenv("OPERATOR_LAB_ALLOWED_MODELS", tiny_app_dense)
    q = lessons.load(lessons.shipped()["first-lesson"]).steps[0].question
    teacher = open_page(PAGE, source=tiny_app_dense, lang="en", folds=False)
    [box] = [x for x in teacher.text_input if x.label == "Teacher key"]
    box.input(key)
    [b for b in teacher.button if b.label == "Enter"][0].click().run()
    no_exception(teacher)
    _start(teacher, "first-lesson")
    button(teacher, "lesson_poll").click().run()
    no_exception(teacher)
    poll = PollStore(str(db), teacher_key=key).current()
    assert poll.is_open and (poll.question, poll.options, poll.model_answer) == (q.en, tuple(q.options_in("en")),
                                                                                  q.answer_in("en"))
    student = open_page("tokenize", source=tiny_app_dense, lang="en", folds=False)
    no_exception(student)
    assert any(q.en in str(m.value) for m in student.markdown)
    pupil = open_page(PAGE, source=tiny_app_dense, lang="en", folds=False)
    _start(pupil, "first-lesson")
    assert pupil.session_state["_page"] == "tokenize" and _bar_text(pupil, "lesson-question") == ["❓ " + q.en]
    assert not [b for b in pupil.button if b.key == "lesson_poll"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_lesson_step_with_a_question_opens_with_predict_first_on(tiny_app_dense, lang):
    """attention-deep-dive's first step carries a question: its page opens with the session's predict-first switch
    on, so the attention map (the answer) is held back behind the page's own question until a guess."""
    from predict_utils import commit, question

    at = open_page("tour", source=tiny_app_dense, lang=lang, folds=False)
    assert not at.session_state["predict_on"]
    _start(at, "attention-deep-dive")
    assert at.session_state["predict_on"] is True
    maps = lambda: [c for c in at.get("plotly_chart") if c.proto.id.endswith("-probs")]     # noqa: E731
    assert question(at, "attention", "key") is not None and not maps()
    at.switch_page("app_pages/attention.py")     # AppTest reruns the script it was given; a browser stays on the page
    commit(at, "attention", "key", lang)
    no_exception(at)
    assert maps()
