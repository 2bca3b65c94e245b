"""This session's settings and the URL: the sidebar's choices kept across page switches, the language, links.

Every setting a shared link carries comes from st.query_params once per session (init_state) and is written back
only when it changes (set_query).
"""
from __future__ import annotations

import dataclasses
import logging
from collections import OrderedDict
from dataclasses import dataclass

import streamlit as st

from content.words import say
from ops.engine import inputs

DEFAULT_PROMPT = "I like shanghai"
log = logging.getLogger("operator-lab")


@dataclass(frozen=True)
class Settings:
    source: str          # "default", a folder, or a .gguf path
    device: str          # "cpu" | "cuda"
    dtype: str           # "float32" | "bfloat16" | "float16"
    prompts: tuple       # one prompt per line
    chat: bool           # wrap each prompt in the chat template
    lang: str            # "zh" | "en"


DEFAULTS = dict(source="default", device="cpu", dtype="float32", prompt_text=DEFAULT_PROMPT, chat=False, lang="zh")
# the prompt a session starts on, in its language (DEFAULT_PROMPT is the English one). The Chinese one teaches a
# pronoun to resolve: with the Qwen2.5 tokenizer "哥哥", "妹妹" and "她" are each a token of their own, so the
# attention map has a row for 她 and a column for 妹妹 (tests/pages/test_tokenize.py checks the tokenization).
DEFAULT_PROMPTS = {"zh": "哥哥把苹果给了妹妹，她", "en": DEFAULT_PROMPT}


def default_prompt(language: str) -> str:
    return DEFAULT_PROMPTS.get(language, DEFAULT_PROMPT)


def follow_language():
    """The language radio's change: a prompt still at the other language's default becomes this one's; a prompt the
    user typed (or a link gave) stays."""
    ss = st.session_state
    if ss.get("prompt_text") in DEFAULT_PROMPTS.values():
        ss.prompt_text = default_prompt(ss.get("lang", DEFAULTS["lang"]))


def init_state():
    """Fill session_state from the URL (a shared link) and the defaults, once per session; every run starts with an
    empty this_run()."""
    ss = st.session_state
    ss[_RUN] = {}
    if ss.get("_initialised") and "traces" in ss:
        return
    for key in KEPT:
        ss[key] = _from_url(key)
    ss.traces = OrderedDict()
    ss._initialised = True


KEPT = ("source", "device", "dtype", "prompt_text", "chat", "lang", "projector")   # the sidebar's settings
# what each sidebar widget bound to a setting holds before anyone touches it (ui/sidebar.py; device and dtype have
# widgets of their own, copied on change)
WIDGET_DEFAULTS = dict(prompt_text="", chat=False, lang="zh", projector=False)


def restore(page: str):
    """The one place that undoes Streamlit's clean-up of the sidebar's settings. Each setting lives under its own key
    (prompt_text: the prompt); its widgets (ui.sidebar.bound) and the URL only show it, and end_run keeps a copy of
    it ("_kept_<key>") for two cases:
    - a setting missing from session_state (a run that failed before the sidebar, a switch that kept only what the
      browser reported) comes back from its copy, else the URL, else the default;
    - on a page switch, a setting that arrives at its widget's default, unlike its copy, is put back from the copy.
      Seen in Chromium in a few sessions of bench/browser.py (bench/RESULTS.md, "Night"): an English session with a
      prompt clicked a page link and the next page ran with the language and the prompt at their widget defaults
      (Chinese, empty), so it asked for a prompt. A user's own change to a sidebar widget reruns the page it is on
      before any switch; one that only comes with a switch (the prompt box emptied, then a link clicked at once) is
      the price.
    Call after st.navigation (`page` is its url_path) and before the sidebar draws."""
    ss = st.session_state
    last, ss["_page"] = ss.get("_page"), page
    switched = last is not None and last != page
    for key in KEPT:
        kept = ss.get("_kept_" + key)
        if key not in ss:
            ss[key] = kept if "_kept_" + key in ss else _from_url(key)
        elif switched and key in WIDGET_DEFAULTS and kept not in (None, WIDGET_DEFAULTS[key]) \
                and ss[key] == WIDGET_DEFAULTS[key]:
            ss[key] = kept
            log.warning("operator-lab: %s came back at its default on a switch to %s; the session's value is kept",
                        key, page)


def end_run():
    """After every run (app.py): keep each setting's copy for restore, and forget what the run fetched once."""
    ss = st.session_state
    for key in KEPT:
        if key in ss:
            ss["_kept_" + key] = ss[key]
    ss.pop(_RUN, None)


def _from_url(key: str):
    """A setting as a shared link gives it, else its default."""
    qp = st.query_params
    if key == "prompt_text":
        return qp.get("prompt", default_prompt(_from_url("lang")))
    if key in ("chat", "projector"):
        return qp.get(key, "0") == "1"
    if key == "lang":
        return qp.get("lang") if qp.get("lang") in ("zh", "en") else DEFAULTS["lang"]
    return DEFAULTS[key]


def settings() -> Settings:
    ss = st.session_state
    get = lambda k: ss.get(k, DEFAULTS[k])
    return Settings(get("source"), get("device"), get("dtype"), prompt().lines, bool(get("chat")), get("lang"))


def prompt() -> inputs.Sanitized:
    """The prompt box's text (session_state.prompt_text, the one stored copy) after the input policy of
    ops/engine/inputs.py: sanitised once per text, and that one result gives the prompts (settings().prompts), the
    note on what was cleaned (ui.state.get_trace) and, already clean, the trace's input."""
    ss = st.session_state
    text = str(ss.get("prompt_text", DEFAULTS["prompt_text"]))
    kept = ss.get("_prompt")
    if kept is None or kept[0] != text:
        kept = ss["_prompt"] = (text, inputs.sanitize(text))
    return kept[1]


def drop_surrogates() -> bool:
    """Lone surrogates in the stored prompt (from a URL or the API) become U+FFFD before the prompt box is drawn: the
    browser cannot be sent them. True when there were some."""
    clean = prompt()
    if not clean.surrogates:
        return False
    ss = st.session_state
    ss.prompt_text = inputs.replace_surrogates(str(ss.prompt_text))
    ss["_prompt"] = (ss.prompt_text, dataclasses.replace(clean, surrogates=0))   # what sanitize() would now say
    return True


_RUN = "_this_run"


def this_run() -> dict:
    """A dict that lives for one script run of this session (init_state empties it): what a run fetches once."""
    return st.session_state.setdefault(_RUN, {})


def lang() -> str:
    return st.session_state.get("lang", "zh")


def projector() -> bool:
    """Projector mode (?projector=1): larger text, the sidebar folded away, no downloads or tensor-name lines."""
    return bool(st.session_state.get("projector", False))


def t(zh: str, en: str) -> str:
    """The string in the session's language."""
    return zh if lang() == "zh" else en


def set_query(key: str, value: str) -> None:
    """Put a value in the URL only when it changes: every st.query_params write sends the browser a message that
    rewrites its history entry (a pushState), and the pages wrote the same language, prompt and pickers on every run."""
    if st.query_params.get_all(key) != [value]:   # the whole list: a repeated ?k=a&k=b is still written as one
        st.query_params[key] = value


def query_int(name: str, default: int, lo: int, hi: int) -> int:
    """An integer picker value from the URL, clamped to its range; a value that is not an integer or lies
    outside lo..hi gets a warning that names it (the page goes on with the nearest valid value)."""
    raw = st.query_params.get(name, None)
    if raw is None:
        return default
    try:
        v = int(raw)
    except (TypeError, ValueError):
        st.warning(say("session.not_an_integer", lang(), name=name, raw=repr(raw), default=default))
        return default
    if not lo <= v <= hi:
        clamped = max(lo, min(hi, v))
        st.warning(say("session.out_of_range", lang(), name=name, value=v, lo=lo, hi=hi, clamped=clamped))
        return clamped
    return v
