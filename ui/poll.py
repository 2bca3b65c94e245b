"""The class poll panel, under every page in classroom mode (app.py calls panel() after the page ran).

A teacher enters the key in the sidebar (a form cleared on submit: the store checks the key in constant time and
counts wrong ones per client address; the session keeps only that it proved it, and the browser a signed, expiring
token, so a reload stays in teacher mode). The teacher opens a poll on the page's question (by default: which token
the model puts next after the prompt, the options the model's own top four, the model's answer its top one; in both
languages). While it is open the teacher's screen, which is the projector's, shows the question, the options and
how many answered, and nothing that gives the answer away; the model's answer and the histogram appear on the
reveal. A student sees the open poll in their page's language and answers it, once per poll under an id kept in a
long-lived browser cookie (a reload, a second tab or another process is the same student), and is shown their answer
when they come back; the counts reach a student only after the reveal, because the store refuses them before
(classroom/poll_store.py). What identifies whom: docs/classroom.md.
"""
from __future__ import annotations

import functools
import html
import json
import re
import secrets

import streamlit as st

import settings
from classroom.poll_gate import TOKEN_TTL
from classroom.poll_store import PollError, PollStore
from content.words import say
from ops.models.bundled import cache_dir
from viz.labels import pieces, visible
from viz.markup import script_tag, style_tag
from viz.poll import poll_bars

from . import lesson_builder, state
from .session import lang, projector, t

TEACHER = "poll_teacher"      # session: this session proved the teacher key (True), never the key itself
STUDENT = "poll_student"      # session: the student's id (from the browser's cookie, or made for it)
LEFT = "poll_left"            # session: the teacher left teacher mode here (the browser's token is not read again)
SEND = "poll_cookies"         # session: cookies the browser is to set at the end of this run
MESSAGE = "poll_message"      # session: the teacher form's last message, shown in the fold kept open
STUDENT_COOKIE, TEACHER_COOKIE = "ol_student", "ol_teacher"
STUDENT_ID = re.compile(r"[0-9a-f]{32}")
REFRESH = 2                   # seconds between the live views' redraws
YEAR = 365 * 24 * 3600


@functools.lru_cache(maxsize=4)
def _store(url: str, key: str | None) -> PollStore:
    return PollStore(url, teacher_key=key)


def store() -> PollStore:
    """The class's store: OPERATOR_LAB_POLL_DB, else polls.sqlite in the cache folder (shared by every process)."""
    s = settings.current()
    return _store(s.poll_db or str(cache_dir() / "polls.sqlite"), s.teacher_key)


def _cookies() -> dict:
    """The cookies the browser sent when this session's websocket opened (a reload or a move to another process
    opens a new one)."""
    try:
        return dict(st.context.cookies)
    except Exception:             # no browser behind this session (a bare script run)
        return {}


def _client_address() -> str:
    """Who typed a key, for the wrong-key count: the client's address; behind the class's balancer on this machine
    (scripts/serve_class.sh adds X-Forwarded-For), the address it forwarded."""
    try:
        ip = st.context.ip_address or ""
        forwarded = st.context.headers.get("X-Forwarded-For", "") or ""
    except Exception:
        return "unknown"
    if forwarded and ip in ("127.0.0.1", "::1", ""):
        return forwarded.split(",")[-1].strip() or "unknown"
    return ip or "unknown"


def is_teacher() -> bool:
    """This session proved the teacher key, or its browser holds an unexpired teacher token (a reload)."""
    ss = st.session_state
    if ss.get(TEACHER):
        return True
    s = settings.current()
    if ss.get(LEFT) or not s.classroom or not s.teacher_key:
        return False
    token = _cookies().get(TEACHER_COOKIE)
    try:
        ss[TEACHER] = bool(token) and store().is_teacher_token(token)
    except (PollError, OSError):
        ss[TEACHER] = False
    return ss[TEACHER]


def key_awaited() -> bool:
    """Classroom mode with a teacher key set, and this session not the teacher's yet: the sidebar's key fold is the
    first thing a teacher needs, so a projector's sidebar starts open until the key is in (app.py)."""
    s = settings.current()
    return bool(s.classroom and s.teacher_key) and not is_teacher()


def student_id() -> str:
    """The student's id: the browser's ol_student cookie (a random id it keeps a year), else one made now and sent
    to the browser as that cookie at the end of this run."""
    ss = st.session_state
    if STUDENT not in ss:
        got = _cookies().get(STUDENT_COOKIE, "")
        if STUDENT_ID.fullmatch(got):
            ss[STUDENT] = got
        else:
            ss[STUDENT] = secrets.token_hex(16)
            _send(STUDENT_COOKIE, ss[STUDENT], YEAR)
    return ss[STUDENT]


# One script sets (or with max-age 0 removes) the cookies. A new student's id is set only if the browser has none
# yet: a second tab opened at the same moment made its own, and reloads once to take the browser's.
# The script: assets/web/poll_cookies.js, its %s the cookies to send.


def _send(name: str, value: str, max_age: int):
    st.session_state[SEND] = {**st.session_state.get(SEND, {}), name: (value, max_age)}


def _send_cookies():
    """At the very end of the panel (nothing after it moves): the cookies this run decided on, once."""
    send = st.session_state.pop(SEND, None)
    if send:
        body = {name: [value, age, name == STUDENT_COOKIE] for name, (value, age) in send.items()}
        st.html(script_tag("poll_cookies.js", json.dumps(body)), unsafe_allow_javascript=True)


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
    _send_cookies()


def _panel(s: PollStore, page: str):
    _teacher_login(s)
    st.divider()
    st.subheader("🗳️ " + t("课堂投票", "Class poll"))
    if is_teacher():
        _teacher(s)
        lesson_builder.tools(page)
    else:
        if projector() and key_awaited():       # the sidebar may be folded: say where the key goes
            st.caption(say("polish.teacher_hint", lang()))
        student_id()
        _student_live(s)


def _teacher_login(s: PollStore):
    if not settings.current().teacher_key:    # no key set: no one can be the teacher, so no form to guess into
        return
    ss = st.session_state
    message = ss.pop(MESSAGE, None)
    with st.sidebar.expander("🧑‍🏫 " + t("教师", "Teacher"), expanded=message is not None, key="poll-teacher-fold"):
        if is_teacher():
            st.caption(t("本会话已以教师身份进入。", "This session is the teacher's."))
            if st.button(t("退出教师身份", "Leave teacher mode"), key="poll-leave"):
                ss[TEACHER], ss[LEFT] = False, True
                _send(TEACHER_COOKIE, "", 0)                            # the browser forgets its token
                st.rerun()
            return
        with st.form("poll-teacher", clear_on_submit=True):     # the typed key leaves the form once submitted
            st.text_input(t("教师密钥", "Teacher key"), type="password", key="poll-key")
            st.form_submit_button(t("进入", "Enter"), on_click=_check_key, args=(s,))
        if message:
            st.error(message)


def _check_key(s: PollStore):
    """The submitted key, checked before the run draws anything (so the fold is drawn open around a refusal): the
    store counts wrong ones per client address; the right one makes this session the teacher's and sends the
    browser a token. The key leaves the session at once."""
    ss = st.session_state
    key, ss["poll-key"] = ss.get("poll-key", ""), ""
    ok, wait = s.try_key(key, _client_address())
    if ok:
        ss[TEACHER], ss[LEFT] = True, False
        _send(TEACHER_COOKIE, s.teacher_token(key), TOKEN_TTL)
    else:
        ss[MESSAGE] = say("poll.key_wait", lang(), s=round(wait)) if wait else say("poll.key_wrong", lang())


def _label(piece: str, taken: set) -> str:
    """A token as an option: its text without the leading space ("Paris", not "␣Paris"); the visible form when
    the plain one is blank or already taken by another option."""
    plain = piece.strip()
    return plain if plain and plain not in taken else visible(piece)


def next_token_question() -> tuple[dict, list[str], str, str]:
    """This page's question in both languages: the next token after the first prompt line; the options, the
    model's top four in alphabetical order (the order gives nothing away); the answer, its top one. Empty when
    there is no trace."""
    try:
        from ops.lab import stage_data

        model, trace = state.get_model(), state.get_trace()
        n = trace.lengths[0]
        top = stage_data.next_token_top(trace, 0, n - 1, 4)
        names: list[str] = []
        for p in pieces(model.tokenizer, top["ids"].tolist()):
            names.append(_label(p, set(names)))
        prompt = model.tokenizer.decode(trace.token_ids[0, :n].tolist())
    except Exception:                     # no model or trace on this page: the teacher writes the question
        return {"zh": "", "en": ""}, [], "", ""
    question = {lg: say("poll.next_token", lg) for lg in ("zh", "en")}
    return question, sorted(set(names)), names[0], prompt


def _teacher(s: PollStore):
    key = settings.current().teacher_key
    poll = s.current()
    if poll is not None and poll.is_open:         # the projector: the question and the count, nothing more
        _teacher_open(s, key, poll.id)
        return
    _teacher_revealed(s, poll.id if poll else None)
    with st.expander("➕ " + t("开启新的投票", "Open a new poll"), expanded=poll is None):
        _new_poll_form(s, key)
    st.download_button(t("下载本节课的投票（CSV）", "Download this session's polls (CSV)"), s.export_csv(key),
                       file_name="class-polls.csv", mime="text/csv", key="poll-csv")


def _new_poll_form(s: PollStore, key: str):
    question, options, answer, prompt = next_token_question()
    with st.form("poll-open"):
        q_zh = st.text_input(t("问题（中文）", "Question (Chinese)"), value=question["zh"])
        q_en = st.text_input(t("问题（英文）", "Question (English)"), value=question["en"])
        opts = st.text_area(say("poll.options_label", lang()), value="\n".join(options), height=130)
        model_answer = st.text_input(t("模型的答案", "The model's answer"), value=answer, type="password",
                                     help=say("poll.answer_hidden", lang()))     # the class sees this screen
        st.caption(t(f"提示词：{prompt}", f"Prompt: {prompt}") if prompt else "")
        if st.form_submit_button(t("开启投票", "Open the poll"), type="primary"):
            lines = [o.strip() for o in opts.splitlines() if o.strip()]
            both = [dict(zip(("zh", "en"), o.split(" | ", 1))) if " | " in o else o for o in lines]
            match = [o for o in both if model_answer.strip() in ((o["zh"], o["en"]) if isinstance(o, dict) else (o,))]
            try:
                s.open_poll(key, {"zh": q_zh or q_en, "en": q_en or q_zh}, both, prompt,
                            match[0] if match else model_answer.strip())
                st.rerun()
            except PollError as e:
                st.error(str(e))


def _guarded(draw):
    """A live view's redraw (run alone every REFRESH s, outside panel()'s guard): a store error is a message."""
    def run(*args):
        try:
            draw(*args)
        except PollError as e:
            st.error(t(f"课堂投票暂时不可用：{e}", f"The class poll is unavailable for now: {e}"))
    return run


def _options_html(options) -> str:
    return ('<div class="poll-options">' + "".join(f"<span>{_html(o)}</span>" for o in options) + "</div>")




@st.fragment(run_every=REFRESH)
@_guarded
def _teacher_open(s: PollStore, key: str, shown: int):
    """The open poll on the teacher's screen: its question, options and how many answered; never the counts per
    option or the model's answer (the room sees this screen). Closing or a change elsewhere redraws the panel."""
    poll = s.current()
    if poll is None or poll.id != shown or not poll.is_open:
        st.rerun(scope="app")
    question, options, _ = poll.text_in(lang())
    st.html(style_tag("poll_options.css"))
    st.markdown(f"**{_escape(question)}**")
    st.markdown(_options_html(options), unsafe_allow_html=True)
    st.markdown(f'<div class="poll-count">✋ {say("poll.answered", lang(), n=s.answered(poll.id))}</div>',
                unsafe_allow_html=True)
    c1, c2, _ = st.columns([1, 1, 1])
    if c1.button(t("结束并揭晓", "Close and reveal"), key="poll-close", type="primary"):
        s.close_poll(key, poll.id)
        st.rerun(scope="app")
    if c2.button(t("清空答案", "Clear the answers"), key="poll-clear"):
        s.clear(key, poll.id)
    st.caption(say("poll.open_note", lang(), s=REFRESH))


@st.fragment(run_every=REFRESH)
@_guarded
def _teacher_revealed(s: PollStore, shown: int | None):
    """The last poll, revealed: the room's histogram beside the model's answer. A poll opened elsewhere (the
    lesson bar, another device) redraws the panel."""
    poll = s.current()
    if (poll.id if poll else None) != shown or (poll is not None and poll.is_open):
        st.rerun(scope="app")
    if poll is None:
        st.info(t("还没有投票。在下面开启一个。", "No poll yet: open one below."))
        return
    reveal_chart(s, poll, "poll-live")
    st.caption(say("poll.revealed_note", lang(), n=s.answered(poll.id)))


def reveal_chart(s: PollStore, poll, key: str):
    """A closed poll's histogram in the page's language, the model's answer marked."""
    question, labels, answer = poll.text_in(lang())
    counts = list(s.results(poll.id).values())
    st.markdown(f"**{_escape(question)}**")
    if poll.prompt:
        st.caption(t("提示词：", "Prompt: ") + _escape(poll.prompt))
    fig = poll_bars(labels, counts, answer, title=t("全班的答案", "The room's answers"),
                    xlabel=t("人数", "students"), model_label=t("模型的答案", "the model's answer"))
    st.plotly_chart(fig, key=key, config={"displayModeBar": False})


def _escape(text: str) -> str:
    """Poll text as plain text in Markdown (a student's page never renders the teacher's text as markup)."""
    return "".join("\\" + ch if ch in "\\`*_{}[]()#+-.!<>|~$" else ch for ch in text)


def _html(text: str) -> str:
    return html.escape(str(text))


@st.fragment(run_every=REFRESH)
@_guarded
def _student_live(s: PollStore):
    poll = s.current()
    if poll is None:
        st.caption(say("poll_room.waiting", lang()))
        return
    me = student_id()
    mine = s.my_answer(poll.id, me)
    question, labels, _ = poll.text_in(lang())
    shown = dict(zip(poll.options, labels))
    if not poll.is_open:
        reveal_chart(s, poll, "poll-reveal")
        if mine is not None:
            right = mine == poll.model_answer
            (st.success if right else st.warning)(say("poll.yours_right" if right else "poll.yours_wrong", lang(),
                                                      answer=shown.get(mine, mine)))
        return
    st.markdown(f"**{_escape(question)}**")
    if poll.prompt:
        st.caption(t("提示词：", "Prompt: ") + _escape(poll.prompt))
    index = poll.options.index(mine) if mine in poll.options else None
    choice = st.radio(t("你的答案", "Your answer"), range(len(labels)), index=index, horizontal=True,
                      format_func=lambda i: labels[i], key=f"poll-choice-{poll.id}")
    if st.button(t("提交答案", "Send my answer"), key=f"poll-send-{poll.id}", disabled=choice is None):
        try:
            s.answer(poll.id, me, poll.options[choice])
            mine = poll.options[choice]
        except PollError as e:
            st.error(str(e))
    if mine is not None:
        st.success(say("poll.answer_in", lang(), answer=shown.get(mine, mine)))
    st.caption(say("poll_room.hidden", lang()))
