"""The class poll driven from the lesson bar (ui/lesson_replay.py), for a teacher in classroom mode: one button that
asks the step's question as the class poll (both languages), then the room's answer count live on that button, which
reveals; the revealed histogram opens over the page in a dialog. The projector never scrolls to the poll panel under
the page, which stays for polls outside a lesson.
"""
from __future__ import annotations

import streamlit as st

import settings
from content.words import say

from . import poll, predict
from .session import lang, t

RESULTS = "lesson_poll_results"      # session: the poll whose results the next run shows in a dialog
ERROR = "lesson_poll_error"          # session: what the store said when a click failed


def for_teacher() -> bool:
    return settings.current().classroom and poll.is_teacher()


def ask(q, lesson):
    """Open the step's question as the class poll: the question, options and answer in both languages, the
    lesson's prompts as its prompt (any poll still open is closed: one question at a time)."""
    return poll.store().open_poll(settings.current().teacher_key, {"zh": q.zh, "en": q.en}, list(q.options),
                                  "\n".join(lesson.prompts), q.answer)


def cell(q, lesson):
    """The bar's poll button (a teacher's, on a step with a question); a reveal asked for opens its dialog."""
    st.session_state[predict.HOLD] = "voting"       # until _live finds this step's poll revealed
    shown = st.session_state.pop(RESULTS, None)
    if shown is not None:
        _dialog(shown)
    _live(q, lesson)


@st.fragment(run_every=poll.REFRESH)
def _live(q, lesson):
    """Ask (before this step's poll is open), reveal with the live count (while it is), the results (after). The
    clicks act in callbacks, before the button row is drawn again; a reveal redraws the page, which opens the
    results' dialog."""
    ss = st.session_state
    if RESULTS in ss:
        st.rerun(scope="app")
    if error := ss.pop(ERROR, None):
        st.error(t(f"课堂投票暂时不可用：{error}", f"The class poll is unavailable for now: {error}"))
    try:
        s = poll.store()
        current = s.current()
    except poll.PollError as e:
        st.error(t(f"课堂投票暂时不可用：{e}", f"The class poll is unavailable for now: {e}"))
        return
    ours = current is not None and current.question == q.en and current.prompt == "\n".join(lesson.prompts)
    # the page's predict-first gate: the answer held back (no guess box to click on the projector) until this
    # step's poll is revealed (ui/predict.HOLD)
    ss[predict.HOLD] = "revealed" if ours and not current.is_open else "voting"
    if not ours:
        st.button("🗳️ " + say("poll.ask", lang()), key="lesson_poll", type="primary", width="stretch",
                  on_click=_act, args=(ask, q, lesson))
    elif current.is_open:
        n = s.answered(current.id)
        st.button(f"✋ {n} · {say('poll.reveal', lang())}", key="lesson_reveal", type="primary", width="stretch",
                  help=say("poll.bar_answered", lang(), n=n), on_click=_act, args=(_reveal, current.id))
    else:
        st.button("📊 " + say("poll.results", lang()), key="lesson_results", width="stretch",
                  on_click=ss.__setitem__, args=(RESULTS, current.id))


def _act(do, *args):
    try:
        do(*args)
    except poll.PollError as e:
        st.session_state[ERROR] = str(e)


def _reveal(poll_id: int):
    poll.store().close_poll(settings.current().teacher_key, poll_id)
    st.session_state[RESULTS] = poll_id


def _dialog(poll_id: int):
    def results():
        try:
            s = poll.store()
            poll.reveal_chart(s, s.poll(poll_id), "lesson-poll-chart")
        except poll.PollError as e:
            st.error(t(f"课堂投票暂时不可用：{e}", f"The class poll is unavailable for now: {e}"))
    st.dialog("📊 " + say("poll.results", lang()), width="large")(results)()
