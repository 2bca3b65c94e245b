"""The class poll panel (ui/poll.py) in classroom mode, with AppTest: each AppTest is its own session, all sharing
one SQLite store. The teacher enters the key, opens a poll on the page's next-token question, two students answer
and the teacher's live histogram counts 2; a student never sees counts or the teacher's buttons before the reveal;
a wrong key is refused; outside classroom mode there is no panel."""
from __future__ import annotations

import json

import pytest
from apptest_utils import no_exception, open_page

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


def test_teacher_opens_two_students_answer_the_histogram_counts_two(classroom):
    teacher = enter_key(session(classroom), KEY)
    assert button(teacher, "Open the poll") is not None
    assert KEY not in all_text(teacher) and KEY not in str(dict(teacher.query_params))
    assert KEY not in [v for v in teacher.session_state.values() if isinstance(v, str)]   # not kept
    button(teacher, "Open the poll").click().run()
    no_exception(teacher)
    live = charts(teacher)["poll-live"]
    options = live["data"][0]["y"]
    assert len(options) >= 2 and sum(live["data"][0]["x"]) == 0

    students = [session(classroom), session(classroom)]
    for st_at in students:
        assert button(st_at, "Open the poll") is None and button(st_at, "Close and reveal") is None
        [radio] = [r for r in st_at.radio if r.label == "Your answer"]
        choice = radio.options[0]
        radio.set_value(choice).run()
        button(st_at, "Send my answer").click().run()
        no_exception(st_at)
        assert "Your answer is in" in all_text(st_at)
        assert not charts(st_at), "a student saw the room's answers before the reveal"
        assert "answered" not in all_text(st_at)

    teacher.run()
    no_exception(teacher)
    counts = charts(teacher)["poll-live"]["data"][0]["x"]
    assert sum(counts) == 2 and counts[0] == 2          # both answered the first option
    assert "2 answered" in all_text(teacher)

    button(teacher, "Close and reveal").click().run()
    no_exception(teacher)
    students[0].run()
    revealed = charts(students[0])["poll-reveal"]["data"][0]["x"]
    assert sum(revealed) == 2


def test_a_wrong_key_is_refused(classroom):
    at = enter_key(session(classroom), "not-the-key")
    assert any("not the teacher's" in e.value for e in at.error)
    assert button(at, "Open the poll") is None and button(at, "Close and reveal") is None


def test_the_panel_speaks_chinese(classroom):
    teacher = enter_key(session(classroom, lang="zh"), KEY)
    assert button(teacher, "开启投票") is not None
    student = session(classroom, lang="zh")
    assert any("课堂投票" in s.value for s in student.subheader)


def test_no_panel_outside_classroom_mode(tiny_app_dense, monkeypatch):
    monkeypatch.delenv("OPERATOR_LAB_CLASSROOM", raising=False)
    at = session(tiny_app_dense)
    assert not any("Class poll" in s.value for s in at.subheader)


def test_teacher_adds_this_view_to_a_lesson_and_exports_it(classroom):
    """The lesson tools under the teacher's poll: this view (page + pickers) joins a draft that the strict loader
    reads back, and the draft exports as the standalone HTML with its notes escaped; a student has no such tools."""
    from content import lessons

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


def test_a_session_gets_a_few_key_tries_only(classroom):
    at = session(classroom)
    for _ in range(5):
        enter_key(at, "guess")
    enter_key(at, KEY)                                   # the right key, after five wrong ones: still refused
    assert button(at, "Open the poll") is None
    assert any("Too many wrong keys" in e.value for e in at.error)


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
