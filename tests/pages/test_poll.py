"""The class poll panel (ui/poll.py) and the lesson bar's poll (ui/lesson_poll.py) in classroom mode, with AppTest:
each AppTest is its own session (a browser tab), all sharing one SQLite store. The projector (the teacher's screen)
shows no answer while a poll is open and one question at a time; each student reads the poll in their page's
language; a student is the browser's cookie, not the session (a reload or another process is the same student);
teacher mode survives a reload by a signed token, never the key; a wrong key is said in the fold kept open, and
wrong keys are limited per client address; outside classroom mode there is no panel."""
from __future__ import annotations

import json
import re

import pytest
from apptest_utils import no_exception, open_page, page_path

KEY = "s3cret-teacher-key"
PAGE = "lm_head"


@pytest.fixture
def classroom(monkeypatch, tmp_path, tiny_app_dense):
    monkeypatch.setenv("OPERATOR_LAB_CLASSROOM", "1")
    monkeypatch.setenv("OPERATOR_LAB_TEACHER_KEY", KEY)
    monkeypatch.setenv("OPERATOR_LAB_POLL_DB", str(tmp_path / "polls.sqlite"))
    monkeypatch.setenv("OPERATOR_LAB_ALLOWED_MODELS", tiny_app_dense)
    return tiny_app_dense


def session(source, lang="en"):
    at = open_page(PAGE, source=source, lang=lang, folds=False)
    no_exception(at)
    return at


def button(at, label):
    found = [b for b in at.button if b.label == label]
    return found[0] if found else None


def enter_key(at, key):
    [box] = [x for x in at.text_input if x.label in ("Teacher key", "教师密钥")]
    box.input(key)
    [enter] = [b for b in at.button if b.label in ("Enter", "进入")]
    enter.click().run()
    no_exception(at)
    return at


def charts(at) -> dict:
    """key -> the Plotly figure (as JSON) of every poll chart on the page (the page's own charts left out)."""
    out = {}
    for c in at.get("plotly_chart"):
        key = c.proto.id.split("-", 2)[-1]
        if key.startswith("poll"):
            out[key] = json.loads(c.proto.spec)
    return out


def all_text(at) -> str:
    parts = [str(x.value) for kind in ("markdown", "caption", "info", "success", "warning", "error")
             for x in at.get(kind)]
    return "\n".join(parts)


def radio_pick(at, label_index: int = 0) -> str:
    """Choose an option of the open poll (by its place) and send it; returns the option's label as shown."""
    [radio] = [r for r in at.radio if r.label in ("Your answer", "你的答案")]
    shown = radio.options[label_index]
    radio.set_value(label_index).run()
    [send] = [b for b in at.button if b.label in ("Send my answer", "提交答案")]
    send.click().run()
    no_exception(at)
    return shown


WORDS = {"en": ("Open the poll", "Close and reveal", "answered", "the model's answer", "Which token will the model"),
         "zh": ("开启投票", "结束并揭晓", "人已回答", "模型的答案", "模型接下来会写哪个 token")}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_projector_shows_no_answer_until_the_reveal(classroom, lang):
    """The teacher's screen (the class's) while the poll is open: the question, its options and how many answered,
    no histogram, no model's answer, no second question (the new-poll form); the reveal shows the histogram with
    the model's answer marked. Two students' answers are counted there."""
    open_label, close_label, answered, model_label, question = WORDS[lang]
    teacher = enter_key(session(classroom, lang), KEY)
    assert button(teacher, open_label) is not None
    [answer_box] = [x for x in teacher.text_input if model_label in x.label.lower()]     # the new-poll form's field
    assert answer_box.value and answer_box.proto.type == answer_box.proto.PASSWORD, "the form showed the answer"
    assert KEY not in all_text(teacher) and KEY not in str(dict(teacher.query_params))
    assert KEY not in [v for v in teacher.session_state.values() if isinstance(v, str)]   # not kept
    button(teacher, open_label).click().run()
    no_exception(teacher)
    text = all_text(teacher)
    assert not charts(teacher) and "← " + model_label not in text, "the projector showed the answer while the class votes"
    assert button(teacher, open_label) is None and not [x for x in teacher.text_input if "Question" in x.label
                                                         or "问题" in x.label], "two questions on screen"
    assert question in text and f"0 {answered}" in text and button(teacher, close_label) is not None

    students = [session(classroom, lang), session(classroom, lang)]
    for pupil in students:
        assert button(pupil, open_label) is None and button(pupil, close_label) is None
        radio_pick(pupil, 0)
        assert not charts(pupil), "a student saw the room's answers before the reveal"
    teacher.run()
    no_exception(teacher)
    assert f"2 {answered}" in all_text(teacher) and not charts(teacher)

    button(teacher, close_label).click().run()
    no_exception(teacher)
    live = charts(teacher)["poll-live"]["data"][0]
    assert sum(live["x"]) == 2 and live["x"][0] == 2 and any(model_label in y for y in live["y"])
    students[0].run()
    assert sum(charts(students[0])["poll-reveal"]["data"][0]["x"]) == 2


def test_each_student_reads_the_poll_in_their_pages_language(classroom):
    """The default next-token question is made in both languages: a Chinese page shows the Chinese question, an
    English page the English one; options are the tokens as text ("Paris", not "␣Paris"), and answers from both
    pages count in one histogram."""
    teacher = enter_key(session(classroom, "en"), KEY)
    button(teacher, "Open the poll").click().run()
    zh, en = session(classroom, "zh"), session(classroom, "en")
    assert "模型接下来会写哪个 token？" in all_text(zh) and "Which token" not in all_text(zh)
    assert "Which token will the model write next?" in all_text(en)
    [radio] = [r for r in zh.radio if r.label == "你的答案"]
    assert not any("␣" in o for o in radio.options), radio.options
    shown = [radio_pick(zh, 1), radio_pick(en, 1)]
    assert shown[0] == shown[1]
    button(teacher, "Close and reveal").click().run()
    assert charts(teacher)["poll-live"]["data"][0]["x"][1] == 2


def test_a_lesson_question_speaks_both_languages(classroom):
    """A bilingual question (a lesson's) stores both languages; an answer in Chinese and one in English count as
    the same option, and each student's 'your answer' is in their language."""
    from classroom.poll_store import PollStore

    store = PollStore(str(classroom_db()), teacher_key=KEY)
    store.open_poll(KEY, {"zh": "能吗？", "en": "Can it?"}, [{"zh": "能", "en": "yes"}, {"zh": "不能", "en": "no"}],
                    "p", {"zh": "不能", "en": "no"})
    zh, en = session(classroom, "zh"), session(classroom, "en")
    assert radio_pick(zh, 1) == "不能" and radio_pick(en, 1) == "no"
    assert "已收到你的答案：不能" in all_text(zh) and "Your answer is in: no" in all_text(en)
    assert store.results(store.current().id, key=KEY) == {"yes": 0, "no": 2}


def classroom_db():
    import os
    return os.environ["OPERATOR_LAB_POLL_DB"]


@pytest.fixture
def sent(monkeypatch) -> list:
    """(cookie, value, max-age) of every cookie the app sends a browser (the script assets/web/poll_cookies.js sets them;
    a test session may run twice before it is looked at, so the sends are recorded, not the elements)."""
    import ui.poll as poll

    out, real = [], poll._send
    monkeypatch.setattr(poll, "_send", lambda *a: out.append(a) or real(*a))
    return out


def test_one_answer_per_browser_across_reloads_tabs_and_processes(classroom, monkeypatch, sent):
    """A student is the browser's ol_student cookie: a new browser gets one made and sent to it once; a reload,
    a second tab or a session in another process (all: a new session with the same cookie) is the same student,
    who is shown the answer already given; a re-answer replaces it (one count)."""
    import ui.poll as poll

    teacher = enter_key(session(classroom), KEY)
    button(teacher, "Open the poll").click().run()
    first = session(classroom)
    me = first.session_state["poll_student"]
    assert sent[-1] == ("ol_student", me, 365 * 24 * 3600) and len(me) == 32      # the teacher's came before
    radio_pick(first, 0)
    monkeypatch.setattr(poll, "_cookies", lambda: {"ol_student": me})       # the browser's cookie, sent back
    sent.clear()
    again = session(classroom)
    assert again.session_state["poll_student"] == me and not sent
    assert "Your answer is in" in all_text(again)
    [radio] = [r for r in again.radio if r.label == "Your answer"]
    assert radio.index == 0                                                # their answer, chosen again
    radio_pick(again, 1)
    teacher.run()
    assert "1 answered" in all_text(teacher)
    button(teacher, "Close and reveal").click().run()
    assert charts(teacher)["poll-live"]["data"][0]["x"][:2] == [0, 1]


def test_teacher_mode_survives_a_reload_by_a_token_not_the_key(classroom, monkeypatch, sent):
    """Proving the key sends the browser a signed, expiring token (never the key); a new session whose browser
    sends it back is the teacher's; a forged or expired one is not, and leaving teacher mode removes it."""
    import ui.poll as poll
    from classroom.poll_store import PollStore

    enter_key(session(classroom), KEY)
    [(_, token, age)] = [x for x in sent if x[0] == "ol_teacher"]
    assert KEY not in token and age == 12 * 3600
    assert PollStore(classroom_db(), teacher_key=KEY).is_teacher_token(token)
    monkeypatch.setattr(poll, "_cookies", lambda: {"ol_teacher": token})
    back = session(classroom)
    assert button(back, "Open the poll") is not None
    expiry, nonce, mac = token.split(".")
    for bad in (f"{int(expiry) + 1}.{nonce}.{mac}", f"{expiry}.{nonce}.{'0' * 64}", KEY, ""):
        monkeypatch.setattr(poll, "_cookies", lambda bad=bad: {"ol_teacher": bad})
        assert button(session(classroom), "Open the poll") is None, bad
    monkeypatch.setattr(poll, "_cookies", lambda: {"ol_teacher": token})
    button(back, "Leave teacher mode").click().run()
    assert button(back, "Open the poll") is None and ("ol_teacher", "", 0) in sent


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_wrong_key_is_refused_in_the_fold_kept_open(classroom, lang):
    at = enter_key(session(classroom, lang), "not-the-key")
    assert any(("not the teacher's" if lang == "en" else "密钥不对") in e.value for e in at.sidebar.get("error"))
    [fold] = [e for e in at.sidebar.expander if "Teacher" in e.label or "教师" in e.label]
    assert fold.proto.expanded                  # drawn open around its message
    assert button(at, WORDS[lang][0]) is None and button(at, WORDS[lang][1]) is None


def test_no_panel_outside_classroom_mode(tiny_app_dense, monkeypatch):
    monkeypatch.delenv("OPERATOR_LAB_CLASSROOM", raising=False)
    at = session(tiny_app_dense)
    assert not any("Class poll" in s.value for s in at.subheader)


def test_teacher_adds_this_view_to_a_lesson_and_exports_it(classroom):
    """The lesson tools under the teacher's poll: this view (page + pickers) joins a draft that the strict loader
    reads back, and the draft exports as the standalone HTML with its notes escaped; a student has no such tools."""
    from classroom import lessons

    teacher = enter_key(session(classroom), KEY)
    [zh, en] = [x for x in teacher.text_area if x.label in ("Notes (Chinese)", "Notes (English)")]
    zh.input("下一个 token")
    en.input("<b>next</b> token")
    button(teacher, "Add this view to the lesson").click().run()
    no_exception(teacher)
    [json_button] = [d for d in teacher.get("download_button") if "lesson-json" in d.proto.id]
    lesson = lessons.loads(lessons.to_json(lessons.parse(teacher.session_state["lesson_draft"])))   # reads back
    assert [s.page for s in lesson.steps] == [PAGE] and lesson.steps[0].notes["en"] == "<b>next</b> token"
    assert json_button is not None
    [pick] = [x for x in teacher.selectbox if x.key == "lesson-pick"]
    pick.set_value("my draft").run()
    button(teacher, "Build the HTML").click().run()
    no_exception(teacher)
    name, text = teacher.session_state["lesson-html"]
    assert name == "my draft" and "&lt;b&gt;next&lt;/b&gt; token" in text and "<b>next</b>" not in text
    assert "plotly-graph-div" in text
    student = session(classroom)
    assert button(student, "Add this view to the lesson") is None


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_wrong_keys_are_limited_per_address_not_per_session(classroom, monkeypatch, lang):
    """Five wrong keys from one address, then even the right key is refused with the wait said, also in a new
    session (a reload) from the same address; another address is not held back."""
    import ui.poll as poll

    monkeypatch.setattr(poll, "_client_address", lambda: "10.0.0.7")
    at = session(classroom, lang)
    for _ in range(5):
        enter_key(at, "guess")
    reload = enter_key(session(classroom, lang), KEY)
    assert button(reload, WORDS[lang][0]) is None
    [said] = [e.value for e in reload.error if "too many" in e.value or "太多" in e.value]
    assert 0 < int(re.search(r"(\d+) (?:s|秒)", said).group(1)) <= 30          # KEY_WAIT after the fifth
    monkeypatch.setattr(poll, "_client_address", lambda: "10.0.0.8")
    assert button(enter_key(session(classroom, lang), KEY), WORDS[lang][0]) is not None


def test_an_unreachable_store_is_a_message_not_a_crash(classroom, monkeypatch, tmp_path):
    (tmp_path / "a-folder").mkdir()
    monkeypatch.setenv("OPERATOR_LAB_POLL_DB", str(tmp_path / "a-folder"))          # not a file SQLite can open
    at = session(classroom)
    assert any("The class poll is unavailable" in e.value for e in at.error)
    assert not any("Class poll" in s.value for s in at.subheader)


def test_no_key_set_means_no_teacher_form(classroom, monkeypatch):
    monkeypatch.delenv("OPERATOR_LAB_TEACHER_KEY")
    at = session(classroom)
    assert not [x for x in at.text_input if x.label == "Teacher key"]
    assert any("Class poll" in s.value for s in at.subheader)            # students still see the poll


def by_key(at, key):
    found = [b for b in at.button if b.key == key]
    return found[0] if found else None


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_lesson_bar_asks_counts_and_reveals_without_the_panel(classroom, lang):
    """Replaying a lesson, the teacher asks the step's question from the bar (one click), watches the answer count
    on the bar's reveal button, and reveals: the histogram opens in a dialog over the page; nothing gives the answer
    away before, and no toast is left. A student answers in the other language; the count is one."""
    from classroom import lessons
    from classroom.poll_store import PollStore

    lesson = lessons.load(lessons.shipped()["first-lesson"])
    k = next(i for i, s in enumerate(lesson.steps) if s.question)
    q = lesson.steps[k].question
    teacher = enter_key(open_page("tour", source=classroom, lang=lang, folds=False), KEY)
    teacher.selectbox(key="lesson_choice").set_value("first-lesson").run()
    by_key(teacher, "lesson_start").click().run()
    for _ in range(k):
        by_key(teacher, "lesson_next").click().run()
    by_key(teacher, "lesson_poll").click().run()
    no_exception(teacher)
    store = PollStore(classroom_db(), teacher_key=KEY)
    poll = store.current()
    assert poll.is_open and poll.text_in(lang)[0] == q.text(lang) and poll.text_in("zh")[1] == tuple(q.options_in("zh"))
    assert by_key(teacher, "lesson_reveal").label.startswith("✋ 0 · ") and not charts(teacher)
    pupil = session(classroom, "en" if lang == "zh" else "zh")
    assert radio_pick(pupil, 0) == q.options_in(pupil.session_state["lang"])[0]
    teacher.run()
    assert by_key(teacher, "lesson_reveal").label.startswith("✋ 1 · ") and not charts(teacher)
    by_key(teacher, "lesson_reveal").click().run()
    no_exception(teacher)
    assert not store.current().is_open
    [chart] = [json.loads(c.proto.spec) for c in teacher.get("plotly_chart") if "lesson-poll-chart" in c.proto.id]
    bars = chart["data"][0]
    assert bars["x"] == [1] + [0] * (len(q.options) - 1) and any("←" in y for y in bars["y"])
    assert not teacher.toast and by_key(teacher, "lesson_results") is not None


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_lesson_step_holds_its_answer_while_the_class_votes(classroom, lang):
    """The fresh-eyes walk: a lesson step turns predict first on, and the page's own guess box put the answer on the
    projector with 0 votes in. For a teacher replaying in classroom mode the step's page draws no guess box and holds
    its answer back while the class poll on the step is unasked or open; the answer appears with the poll's reveal."""
    from classroom import lessons

    lesson = lessons.load(lessons.shipped()["first-lesson"])
    k = next(i for i, s in enumerate(lesson.steps) if s.question and s.page == "lm_head")
    teacher = enter_key(open_page("tour", source=classroom, lang=lang, folds=False), KEY)
    teacher.selectbox(key="lesson_choice").set_value("first-lesson").run()
    by_key(teacher, "lesson_start").click().run()
    for _ in range(k):
        by_key(teacher, "lesson_next").click().run()
    teacher.switch_page(page_path("lm_head")).run()            # where the bar's step sends the browser
    no_exception(teacher)

    def page_charts():
        return [c for c in teacher.get("plotly_chart") if "poll" not in c.proto.id]

    def guess_box():
        return [b for b in teacher.button if b.label in ("确定，揭晓", "Commit and reveal")]

    voting = "全班正在为这一步的问题投票" if lang == "zh" else "The class is voting on this step's question"
    for click in ("lesson_poll", None):              # before the question is asked, then while the poll is open
        assert not page_charts() and not guess_box(), [c.proto.id for c in page_charts()]
        assert any(voting in i.value for i in teacher.info)
        if click:
            by_key(teacher, click).click().run()
            no_exception(teacher)
    by_key(teacher, "lesson_reveal").click().run()
    no_exception(teacher)
    assert page_charts() and not guess_box()
    assert not any(voting in i.value for i in teacher.info)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_projector_says_where_the_teacher_key_goes_until_it_is_in(classroom, lang):
    """Projector mode folds the sidebar away, where the key's fold is: until the key is in, the sidebar starts open
    (ui.poll.key_awaited, read by app.py) and the poll panel says where the key goes; once in, neither."""
    from content.words import say

    at = open_page(PAGE, source=classroom, lang=lang, folds=False, projector="1")
    no_exception(at)
    hint = say("polish.teacher_hint", lang)
    assert at.session_state["projector"] is True and hint in all_text(at)
    enter_key(at, KEY)
    at.run()
    assert hint not in all_text(at)
    plain = open_page(PAGE, source=classroom, lang=lang, folds=False)          # not a projector: no hint
    assert hint not in all_text(plain)
