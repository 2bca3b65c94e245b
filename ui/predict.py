"""Predict first: a switch on a page that hides the answer until the learner commits a guess.

    predict.first("lm_head", key, question, options, answer, why)   # may stop the page here

    predict.on("attention")                                          # the switch, once per page and run
    if predict.gate("attention", key, lambda: content.predict.attention(...)):   # gates one section only
        ...draw the answer...

With the switch on and no guess committed for this question (key: the page's prompt and pickers), the page shows
the question and stops: nothing below it, the answer included, is drawn. Once the learner commits, the page says
right or wrong, points at the part of the picture that decides it (`why`), and draws the rest as usual. The switch
is off by default and is one for the whole session (every page with a question, and a replayed lesson, read it
through is_on()); ?predict=1 in the URL turns it on (a teacher's link) and stays there while it is on.

gate() is first() for a section that sits inside a fold or above other content (st.stop() would take the rest of
the page with it): it draws the question in place and returns whether the section may draw its answer. Its
question is built only while the switch is on (ask() may run the model), and a guess is kept by the option's id,
so the verdict stands when the learner switches the language.
"""
from __future__ import annotations

import re

import streamlit as st

from content.words import say

from .session import lang, t

_MARKDOWN = re.compile(r"([\\`*_\[\]$<>~|])")       # what would turn a prompt's token into markup, math or a link


def _plain(text: str) -> str:
    """text for st.markdown as it reads: a token from the learner's prompt never becomes markup or a formula."""
    return _MARKDOWN.sub(r"\\\1", text)


STATE = "predict_on"          # session: the one switch, for every page and the lesson replay
HOLD = "predict_hold"         # session, set by the lesson bar on every run: "voting" while the class poll on this
                              # step's question is unrevealed (no guess box on the projector, the answer held back),
                              # "revealed" once the teacher revealed it (the answer drawn), None otherwise
URL = "predict"               # ?predict=1 while it is on (a teacher's link; kept as the student moves between pages)


def on(page: str) -> bool:
    """The predict-first switch (drawn here, once per run, on a page with a question); True while it is on."""
    return _on(page)


def is_on(page: str | None = None) -> bool:
    """The switch's state without drawing it, the same for every page: the session's, else ?predict=1. `page` is
    accepted for the callers that name theirs; the state is one for the whole session."""
    ss = st.session_state
    if STATE not in ss:
        ss[STATE] = st.query_params.get(URL) == "1"
    return bool(ss[STATE])


def set_on(value: bool = True):
    """Turn the switch on (or off) for the whole session, e.g. when a replayed lesson opens a step with a question;
    the URL follows on the next run (keep_url)."""
    st.session_state[STATE] = bool(value)


def keep_url():
    """?predict=1 in the URL while the switch is on, on every page (app.py, each run): a copied link keeps it."""
    if is_on():
        if st.query_params.get(URL) != "1":
            st.query_params[URL] = "1"
    elif URL in st.query_params:
        del st.query_params[URL]


def _key(page: str) -> str:
    return f"predict-toggle-{page}"


def _copy(page: str):
    st.session_state[STATE] = bool(st.session_state[_key(page)])


def _on(page: str) -> bool:
    """The toggle, drawn from the session's one switch (a widget's own key is dropped on a page that does not draw
    it, so the state lives under STATE and the toggle is set from it each run)."""
    key, state = _key(page), is_on()
    st.session_state[key] = state
    st.toggle(t("先猜再看", "Predict first"), key=key, on_change=_copy, args=(page,),
              help=say("agree.predict_help", lang()))
    return is_on()


def _class_vote() -> str | None:
    """The lesson bar's hold (HOLD); while "voting", says so where the guess box would be."""
    hold = st.session_state.get(HOLD)
    if hold == "voting":
        st.info(say("agree.class_voting", lang()))
    return hold


def first(page: str, key: str, question: str, options: list[str], answer: str, why: str):
    """Gate the rest of the page behind a committed guess when the switch is on (see the module docstring)."""
    if not _on(page):
        return
    hold = _class_vote()
    if hold == "revealed":
        return
    if hold == "voting":
        st.stop()
    options = sorted(set(options))         # the model's ranking would give the answer away
    guesses = st.session_state.setdefault("predict-guesses", {})
    guess = guesses.get((page, key))
    if guess is None:
        with st.form(f"predict-{page}"):
            st.markdown(f"**{question}**")
            choice = st.radio(t("你的猜测", "Your guess"), options, index=None, horizontal=True,
                              key=f"predict-choice-{page}")
            if st.form_submit_button(t("确定，揭晓", "Commit and reveal"), type="primary") and choice is not None:
                guesses[(page, key)] = choice
                st.rerun()
        st.caption(say("predict_ui.after_commit", lang()))
        st.stop()
    if guess == answer:
        st.success(say("predict_ui.right", lang(), guess=guess, why=why))
    else:
        st.warning(say("predict_ui.wrong", lang(), guess=guess, answer=answer, why=why))


def gate(page: str, key, ask, name: str) -> bool:
    """True when the section may draw its answer: the switch is off, there is no question (ask() gave None), or a
    guess is committed (then the verdict is drawn first). Otherwise draws the question and returns False.
    ask() -> content.predict.Question; the page draws its switch with on() before (first() on lm_head)."""
    if not is_on(page):
        return True
    hold = _class_vote()
    if hold is not None:
        return hold == "revealed"
    q = ask()
    if q is None:
        return True
    label = {i: _plain(x if isinstance(x, str) else t(*x)) for i, x in q.options.items()}
    guesses = st.session_state.setdefault("predict-guesses", {})
    if (page, name, key) not in guesses:
        with st.form(f"predict-{page}-{name}"):
            st.markdown(f"**{_plain(t(*q.question))}**")
            choice = st.radio(t("你的猜测", "Your guess"), list(label.values()), index=None, horizontal=True,
                              key=f"predict-choice-{page}-{name}")
            if st.form_submit_button(t("确定，揭晓", "Commit and reveal"), type="primary") and choice is not None:
                guesses[(page, name, key)] = next(i for i, x in label.items() if x == choice)
                st.rerun()
        st.caption(say("predict_ui.after_commit", lang()))
        return False
    guess, why = guesses[(page, name, key)], _plain(t(*q.why))
    if guess == q.answer:
        st.success(say("predict_ui.right", lang(), guess=label[guess], why=why))
    else:
        st.warning(say("predict_ui.wrong_answer", lang(), guess=label.get(guess, guess), answer=label[q.answer],
                       why=why))
    return True
