"""Replaying a lesson (classroom/lessons.py) in front of a class: the Tour's lesson chooser, and the lesson bar.

The teacher picks a shipped lesson or uploads a lesson file on the Tour page (`chooser`); the strict loader reads it
first, so a bad file stops with its message and nothing runs. Starting a replay puts the lesson's prompts in the
prompt box, turns projector mode on and opens the first step. Each step is the real page it names, opened with the
step's pickers set (layer, head, position, top N: ui/lesson_builder.PICKER_KEYS), under the lesson bar (`bar`,
called by app.py above every page): one row of ◀ / ▶, the step number, the teacher's notes in the session's language
and the step's poll question folded into a popover, which a teacher in classroom mode can open as the class poll in
one click, and in projector mode the prompt box (the sidebar is folded away). Every text the bar shows (a refused
file's message, the question's options) is in the page's language.

A step is a page of its own rather than a copy drawn inside the Tour: the class sees the very view the teacher
recorded, with its explanation, checks and live pickers. The switch happens at the top of the next run (a callback
may not switch pages), before anything is drawn.
"""
from __future__ import annotations

import html

import streamlit as st

from classroom import lessons
from content import stages
from content.tour import replay_text
from viz.markup import style_tag, tag

from . import lesson_poll, predict, sidebar, state
from .lesson_builder import PICKER_KEYS
from .pickers import TOP_N
from .session import lang, projector, t

ACTIVE = "lesson_replay"          # session: {"lesson": Lesson, "step": int} while a lesson is replayed
GOTO = "_lesson_goto"             # session: the page the next run opens (set by a button's callback)
ERROR = "lesson_error"            # session: what was wrong with the last lesson file the chooser was given
UPLOADED = "lesson_uploaded"      # session: the uploaded lesson the loader accepted
# The bar (its CSS: assets/web/lesson_bar.css) is one row (◀ ▶, the step and its notes, the question folded into a
# popover, ✕) so that the picture each step's page exists for stays above the fold of a 1500x900 projector; the notes
# never drop below 18 px. With the sidebar open the row is ~300 px narrower: a key hint that no longer fits its button
# is dropped (a container query on the column), and the popover's chevron, which the label ran into, is not drawn.


def replaying():
    """The lesson being replayed and the step it is on, or None."""
    return st.session_state.get(ACTIVE)


def current_step():
    """The step on the bar now (a classroom.lessons.Step), or None when no lesson is replayed."""
    r = replaying()
    return r["lesson"].steps[r["step"]] if r else None


# ---- the chooser, on the Tour page ---------------------------------------------------------------------------------
def chooser():
    """A shipped lesson or an uploaded file, and the button that starts its replay (inside the Tour's popover)."""
    shipped = {}
    for name, path in lessons.shipped().items():
        try:
            shipped[name] = lessons.load(path)
        except lessons.LessonError as e:            # one broken file in assets/ leaves the others usable
            st.warning(f"{path.name}: {e.text(lang())}")
    uploaded = st.session_state.get(UPLOADED)
    choices = list(shipped) + ([""] if uploaded else [])            # "": the uploaded file
    label = lambda n: shipped[n].title[lang()] if n else "📄 " + t("上传的文件：", "uploaded: ") + uploaded.name
    name = st.selectbox(t("课程", "Lesson"), choices, index=len(choices) - 1 if uploaded else 0, key="lesson_choice",
                        format_func=label)
    st.file_uploader(t("或者上传一个课程文件（JSON）", "or upload a lesson file (JSON)"), type=["json"],
                     key="lesson_file", on_change=_read_upload,
                     help=replay_text("upload_help", lang(), kib=lessons.MAX_BYTES // 1024))
    st.caption(replay_text("start_note", lang()))
    lesson = shipped[name] if name else uploaded
    st.button("▶ " + t("开始这一课", "Start this lesson"), key="lesson_start", type="primary", on_click=start,
              args=(lesson,), width="stretch")


def _read_upload():
    """The uploaded file through the strict loader: a lesson to choose, or the message naming what is wrong."""
    f = st.session_state.get("lesson_file")
    st.session_state.pop(ERROR, None)
    if f is None:
        st.session_state.pop(UPLOADED, None)
        return
    try:
        st.session_state[UPLOADED] = lessons.loads(f.getvalue(), f.name.removesuffix(".json"))
        st.session_state["lesson_choice"] = ""
    except lessons.LessonError as e:
        st.session_state.pop(UPLOADED, None)
        st.session_state[ERROR] = (f.name, e)           # worded when shown, in the page's language then


def upload_error():
    """The message for a refused lesson file (on the Tour page, outside the folded chooser), if there is one."""
    bad = st.session_state.get(ERROR)
    if bad:
        st.error(replay_text("refused", lang(), name=bad[0], why=bad[1].text(lang())))


def start(lesson):
    """Begin the replay: the lesson's prompts in the prompt box, projector mode on, the first step opened."""
    ss = st.session_state
    ss[ACTIVE] = {"lesson": lesson, "step": 0}
    ss.prompt_text = "\n".join(lesson.prompts)
    ss.projector = True
    go(0)


def stop():
    st.session_state.pop(ACTIVE, None)
    st.session_state[GOTO] = "tour"


def go(k: int):
    """Move to step k: set its pickers and open its page on the next run."""
    r = replaying()
    r["step"] = max(0, min(len(r["lesson"].steps) - 1, k))
    step = r["lesson"].steps[r["step"]]
    apply_pickers(step.pickers)
    if step.question:             # predict first: the step's page holds its answer back until a guess is committed
        predict.set_on(True)
    st.session_state[GOTO] = step.page


def limits() -> dict:
    """Each picker's largest value for the loaded model (the page's own picker clamps a position to the row)."""
    try:
        c = state.get_model().config
    except Exception:            # no model yet (it loads on the page, which clamps the pickers itself)
        return {"top": TOP_N[1]}
    return {"layer": c.num_hidden_layers - 1, "head": c.num_attention_heads - 1, "top": TOP_N[1]}


def apply_pickers(pickers: dict) -> dict:
    """The step's pickers into the session keys the pages' pickers read, each within what this model has; returns
    the values set, by the lesson's picker names."""
    hi, out = limits(), {}
    for name, value in pickers.items():
        v = min(value, hi[name]) if name in hi else value
        out[name] = max(TOP_N[0], v) if name == "top" else v
        st.session_state[PICKER_KEYS[name]] = out[name]
    return out


def follow(page: str):
    """At the top of a run: open the page a replay button asked for (page: the page this run is on)."""
    target = st.session_state.pop(GOTO, None)
    if target and target != page:
        st.switch_page(f"app_pages/{target}.py")


# ---- the lesson bar, above every page while a lesson is replayed ----------------------------------------------------
def bar(page: str):
    """◀ / ▶, the step number, the notes and the poll question in one row (app.py, before the page runs)."""
    follow(page)
    st.session_state[predict.HOLD] = None           # the class poll's hold holds on its own step only
    r = replaying()
    if not r:
        return
    lesson, k = r["lesson"], r["step"]
    n, step, language = len(lesson.steps), lesson.steps[k], lang()
    st.html(style_tag("lesson_bar.css"))
    with st.container(key="lesson-bar"):
        voting = bool(step.question) and lesson_poll.for_teacher()       # the class poll's button in the row
        back, nxt, where, ask, vote, pen, end = st.columns(
            [1.25, 1.25, 8 - 2.4 * voting, 1.2 + 0.9 * (not voting), 2.4 * voting + 0.01, 0.9, 0.8],
            vertical_alignment="center", gap="small")      # ◀ ▶ wide enough for their keys' hints
        back.button("◀", key="lesson_back", on_click=go, args=(k - 1,), disabled=k == 0, width="stretch",
                    help=t("上一步（上翻页键）", "Previous (PageUp)"),
                    shortcut="pageup")          # a presenter's clicker sends PageUp / PageDown
        nxt.button("▶", key="lesson_next", on_click=go, args=(k + 1,), disabled=k == n - 1, type="primary",
                   width="stretch", help=t("下一步（下翻页键）", "Next (PageDown)"), shortcut="pagedown")
        end.button("✕", key="lesson_end", on_click=stop, width="stretch", help=t("结束这一课", "End the lesson"))
        s = stages.get(step.page)
        with where:
            head = (f'📚 {_esc(lesson.title[language])} · {t("第", "step")} {k + 1} / {n}{t(" 步", "")} · '
                    f'{s.icon} {_esc(s.title(language))}{_pickers_text(step.pickers)}')
            notes = tag("div", _esc(step.notes[language]), cls="lesson-notes")
            st.markdown(tag("div", head, cls="lesson-step") + notes, unsafe_allow_html=True)
            if page != step.page:            # the teacher wandered off: one click back to the step's view
                st.page_link(f"app_pages/{step.page}.py", label=t("回到这一步的页面", "Back to this step's page"),
                             icon="↩️")
        if projector():          # the sidebar is folded away: the prompt box in this row, not in one of its own
            with pen:
                sidebar.page_prompt(short=True)
        if step.question:
            with ask.popover("❓" if voting else "❓ " + t("问题", "Question"), width="stretch",
                             help=t("问题", "Question")):
                _question(step.question, lesson, language)
        if voting:
            with vote:
                lesson_poll.cell(step.question, lesson)


def _pickers_text(pickers: dict) -> str:
    names = {"layer": t("层", "layer"), "head": t("头", "head"), "pos": t("位置", "position"), "top": "top"}
    shown = [f"{names[k]} {st.session_state.get(PICKER_KEYS[k], v)}" for k, v in pickers.items()]
    return (" · " + ", ".join(shown)) if shown else ""


def _question(q, lesson, language: str):
    options = q.options_in(language)
    st.markdown(f'<div class="lesson-question">❓ {_esc(q.text(language))}</div>'
                '<div class="lesson-options">' + "".join(f"<span>{_esc(o)}</span>" for o in options) + "</div>",
                unsafe_allow_html=True)
    with st.expander(t("答案", "Answer")):
        st.markdown(_esc(q.answer_in(language)))


def _esc(text: str) -> str:
    """A lesson's text as plain text in HTML (a lesson file is never markup)."""
    return html.escape(str(text)).replace("\n", "<br>")
