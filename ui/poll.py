"""The class poll panel, under every page in classroom mode (app.py calls panel() after the page ran).

A teacher enters the key in the sidebar (a form cleared on submit: the key is checked in constant time by the store
and not kept in the session; the session keeps only that it proved it). The teacher opens a poll on the page's
question (by default: which token the model puts next after the prompt, the options the model's own top four, the
model's answer its top one), watches the room's answers arrive (a fragment that redraws itself every 2 s), closes
(reveals) the poll and downloads the session's CSV. A student sees the open poll and answers it (one answer per
student per poll, under a random id made for the session); the counts reach a student only after the reveal,
because the store refuses them before (ui/poll_store.py).
"""
from __future__ import annotations

import functools
import secrets
import time

import streamlit as st

from ops.models.bundled import cache_dir
from viz.labels import pieces, visible
from viz.poll import poll_bars

from . import lesson_builder, settings, state
from .poll_store import PollError, PollStore
from .session import t

TEACHER = "poll_teacher"      # session: this session proved the teacher key (True), never the key itself
STUDENT = "poll_student"      # session: the student's random id
REFRESH = 2                   # seconds between the live views' redraws
MAX_TRIES = 5                 # wrong teacher keys one session may type


@functools.lru_cache(maxsize=4)
def _store(url: str, key: str | None) -> PollStore:
    return PollStore(url, teacher_key=key)


def store() -> PollStore:
    """The class's store: OPERATOR_LAB_POLL_DB, else polls.sqlite in the cache folder (shared by every process)."""
    s = settings.current()
    return _store(s.poll_db or str(cache_dir() / "polls.sqlite"), s.teacher_key)


def is_teacher() -> bool:
    return bool(st.session_state.get(TEACHER))


def student_id() -> str:
    if STUDENT not in st.session_state:
        st.session_state[STUDENT] = secrets.token_hex(8)
    return st.session_state[STUDENT]


def panel(page: str = ""):
    """The poll, under the page, in classroom mode only (the teacher also gets the lesson tools for `page`)."""
    if not settings.current().classroom:
        return
    try:
        s = store()
    except (PollError, OSError) as e:
        st.error(t(f"课堂投票不可用：{e}", f"The class poll is unavailable: {e}"))
        return
    try:
        _panel(s, page)
    except PollError as e:                    # the store went away mid-lesson: say so, keep the page
        st.error(t(f"课堂投票暂时不可用：{e}", f"The class poll is unavailable for now: {e}"))


def _panel(s: PollStore, page: str):
    _teacher_login(s)
    st.divider()
    st.subheader("🗳️ " + t("课堂投票", "Class poll"))
    if is_teacher():
        _teacher(s)
        lesson_builder.tools(page)
    else:
        _student_live(s)


def _teacher_login(s: PollStore):
    if not settings.current().teacher_key:    # no key set: no one can be the teacher, so no form to guess into
        return
    with st.sidebar.expander("🧑‍🏫 " + t("教师", "Teacher"), expanded=False):
        if is_teacher():
            st.caption(t("本会话已以教师身份进入。", "This session is the teacher's."))
            if st.button(t("退出教师身份", "Leave teacher mode"), key="poll-leave"):
                st.session_state[TEACHER] = False
                st.rerun()
            return
        with st.form("poll-teacher", clear_on_submit=True):     # the typed key leaves the form once submitted
            key = st.text_input(t("教师密钥", "Teacher key"), type="password")
            if st.form_submit_button(t("进入", "Enter")):
                tries = st.session_state.get("poll_tries", 0)
                if tries < MAX_TRIES and s.is_teacher(key):
                    st.session_state[TEACHER] = True
                    st.rerun()
                st.session_state["poll_tries"] = tries + 1       # a session guessing keys gets a few tries only
                st.error(t("密钥不对。", "That key is not the teacher's.") if tries < MAX_TRIES else
                         t("错误次数太多，请重新打开页面。", "Too many wrong keys: open the app again."))


def _next_token_question() -> tuple[str, list[str], str, str]:
    """This page's question: the next token after the first prompt line; the options, the model's top four in
    alphabetical order (the order gives nothing away); the answer, its top one. Empty when there is no trace."""
    try:
        from ops.lab import stage_data

        model, trace = state.get_model(), state.get_trace()
        n = trace.lengths[0]
        top = stage_data.next_token_top(trace, 0, n - 1, 4)
        names = [visible(p) for p in pieces(model.tokenizer, top["ids"].tolist())]
        prompt = model.tokenizer.decode(trace.token_ids[0, :n].tolist())
    except Exception:                     # no model or trace on this page: the teacher writes the question
        return "", [], "", ""
    question = t("模型接下来会写哪个 token？", "Which token will the model write next?")
    return question, sorted(set(names)), names[0], prompt


def _teacher(s: PollStore):
    key = settings.current().teacher_key
    left, right = st.columns([2, 3])
    with left:
        question, options, answer, prompt = _next_token_question()
        with st.form("poll-open"):
            q = st.text_input(t("问题", "Question"), value=question)
            opts = st.text_area(t("选项（每行一个）", "Options (one per line)"), value="\n".join(options), height=130)
            model_answer = st.text_input(t("模型的答案", "The model's answer"), value=answer)
            st.caption(t(f"提示词：{prompt}", f"Prompt: {prompt}") if prompt else "")
            if st.form_submit_button(t("开启投票", "Open the poll"), type="primary"):
                try:
                    s.open_poll(key, q, [o.strip() for o in opts.splitlines() if o.strip()], prompt, model_answer)
                except PollError as e:
                    st.error(str(e))
        st.download_button(t("下载本节课的投票（CSV）", "Download this session's polls (CSV)"), s.export_csv(key),
                           file_name="class-polls.csv", mime="text/csv", key="poll-csv")
    with right:
        _teacher_live(s, key)


def _guarded(draw):
    """A live view's redraw (run alone every REFRESH s, outside panel()'s guard): a store error is a message."""
    def run(*args):
        try:
            draw(*args)
        except PollError as e:
            st.error(t(f"课堂投票暂时不可用：{e}", f"The class poll is unavailable for now: {e}"))
    return run


@st.fragment(run_every=REFRESH)
@_guarded
def _teacher_live(s: PollStore, key: str):
    poll = s.current()
    if poll is None:
        st.info(t("还没有投票。在左边开启一个。", "No poll yet: open one on the left."))
        return
    if poll.is_open:
        c1, c2, _ = st.columns([1, 1, 1])      # the two buttons side by side, not one per half
        if c1.button(t("结束并揭晓", "Close and reveal"), key="poll-close", type="primary"):
            poll = s.close_poll(key, poll.id)
        if c2.button(t("清空答案", "Clear the answers"), key="poll-clear"):
            s.clear(key, poll.id)
    counts = list(s.results(poll.id, key=key).values())
    _chart(poll, counts, poll.model_answer, "poll-live")
    state_text = t("进行中", "open") if poll.is_open else t("已揭晓", "revealed")
    st.caption(t(f"{sum(counts)} 人已回答 · {state_text} · 每 {REFRESH} 秒自动刷新 · {time.strftime('%H:%M:%S')}",
                 f"{sum(counts)} answered · {state_text} · redraws itself every {REFRESH} s · "
                 f"{time.strftime('%H:%M:%S')}"))


def _chart(poll, counts, model_answer, key):
    st.markdown(f"**{_escape(poll.question)}**")
    if poll.prompt:
        st.caption(t("提示词：", "Prompt: ") + _escape(poll.prompt))
    fig = poll_bars(poll.options, counts, model_answer, title=t("全班的答案", "The room's answers"),
                    xlabel=t("人数", "students"), model_label=t("模型的答案", "the model's answer"))
    st.plotly_chart(fig, key=key, config={"displayModeBar": False})


def _escape(text: str) -> str:
    """Poll text as plain text in Markdown (a student's page never renders the teacher's text as markup)."""
    return "".join("\\" + ch if ch in "\\`*_{}[]()#+-.!<>|~$" else ch for ch in text)


@st.fragment(run_every=REFRESH)
@_guarded
def _student_live(s: PollStore):
    poll = s.current()
    if poll is None:
        st.caption(t("老师开启投票后，它会出现在这里。", "When the teacher opens a poll, it appears here."))
        return
    me = student_id()
    mine = s.my_answer(poll.id, me)
    if not poll.is_open:
        _chart(poll, list(s.results(poll.id).values()), poll.model_answer, "poll-reveal")
        if mine is not None:
            right = mine == poll.model_answer
            (st.success if right else st.warning)(
                t(f"你的答案：{mine} — 与模型{'一致' if right else '不同'}。",
                  f"Your answer: {mine} — {'the same as' if right else 'not'} the model's."))
        return
    st.markdown(f"**{_escape(poll.question)}**")
    if poll.prompt:
        st.caption(t("提示词：", "Prompt: ") + _escape(poll.prompt))
    choice = st.radio(t("你的答案", "Your answer"), poll.options, index=None, horizontal=True,
                      key=f"poll-choice-{poll.id}")
    if st.button(t("提交答案", "Send my answer"), key=f"poll-send-{poll.id}", disabled=choice is None):
        try:
            s.answer(poll.id, me, choice)
            mine = choice
        except PollError as e:
            st.error(str(e))
    if mine is not None:
        st.success(t(f"已收到你的答案：{mine}（揭晓前可以改）。", f"Your answer is in: {mine} (you may change it until "
                     "the reveal)."))
    st.caption(t("老师揭晓之前，谁都看不到全班的答案。",
                 "Nobody sees the room's answers until the teacher reveals them."))
