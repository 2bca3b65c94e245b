"""Session state shared by every page: settings, the loaded model, and this session's traces.

The model is loaded once per (source, device, dtype) with st.cache_resource and shared read-only by
every session; each session keeps its own traces in st.session_state, oldest dropped first.
"""
from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass

import streamlit as st

import ops
from ops.config import ConfigError
from ops.model import InputError, MAX_BATCH

DEFAULT_PROMPT = "I like shanghai"
TRACE_BUDGET_BYTES = int(float(os.environ.get("OPERATOR_LAB_SESSION_MB", "2048")) * 2**20)


@dataclass(frozen=True)
class Settings:
    source: str          # "default", a folder, or a .gguf path
    device: str          # "cpu" | "cuda"
    dtype: str           # "float32" | "bfloat16" | "float16"
    prompts: tuple       # one prompt per line
    chat: bool           # wrap each prompt in the chat template
    lang: str            # "zh" | "en"


DEFAULTS = dict(source="default", device="cpu", dtype="float32", prompt_text=DEFAULT_PROMPT, chat=False, lang="zh")


def init_state():
    """Fill session_state from the URL (a shared link) and the defaults, once per session."""
    ss = st.session_state
    if ss.get("_initialised"):
        return
    qp = st.query_params
    ss.source = DEFAULTS["source"]
    ss.device = DEFAULTS["device"]
    ss.dtype = DEFAULTS["dtype"]
    ss.prompt_text = qp.get("prompt", DEFAULTS["prompt_text"])
    ss.chat = qp.get("chat", "0") == "1"
    ss.lang = qp.get("lang", DEFAULTS["lang"]) if qp.get("lang") in ("zh", "en") else DEFAULTS["lang"]
    ss.traces = OrderedDict()
    ss._initialised = True


def settings() -> Settings:
    ss = st.session_state
    get = lambda k: ss.get(k, DEFAULTS[k])
    lines = [line for line in str(get("prompt_text")).splitlines() if line.strip()]
    return Settings(get("source"), get("device"), get("dtype"), tuple(lines), bool(get("chat")), get("lang"))


def lang() -> str:
    return st.session_state.get("lang", "zh")


def t(zh: str, en: str) -> str:
    """The string in the session's language."""
    return zh if lang() == "zh" else en


@st.cache_resource(show_spinner=False, max_entries=3)
def load_model(source: str, device: str, dtype: str, _progress=None):
    """One model per (source, device, dtype), shared by all sessions; never mutated after loading."""
    return ops.load_model(None if source == "default" else source, device=device, dtype=dtype, progress=_progress)


def get_model():
    """The model for the current settings, or None after showing a clear error."""
    s = settings()
    bar = None

    def progress(fraction, message):
        nonlocal bar
        if bar is None:
            bar = st.progress(0.0, text=message)
        bar.progress(min(max(float(fraction), 0.0), 1.0), text=message)

    try:
        model = load_model(s.source, s.device, s.dtype, _progress=progress)
    except Exception as e:                     # a broken model file must never become a traceback
        st.error(t("模型加载失败：", "Could not load the model: ") + str(e))
        return None
    finally:
        if bar is not None:
            bar.empty()
    return model


def trace_key(model, s: Settings):
    return (s.source, s.device, s.dtype, s.prompts, s.chat)


def get_trace(model=None, prompts=None):
    """This session's trace for the current prompts, computed once and kept (oldest dropped first)."""
    model = model or get_model()
    if model is None:
        return None
    s = settings()
    if prompts is not None:
        s = Settings(s.source, s.device, s.dtype, tuple(prompts), s.chat, s.lang)
    key = trace_key(model, s)
    traces = st.session_state.traces
    if key in traces:
        traces.move_to_end(key)
        return traces[key]
    if not s.prompts:
        st.warning(t("请在左侧输入框中写一句话（每行一个提示词）。", "Type a prompt in the sidebar (one per line)."))
        return None
    if len(s.prompts) > MAX_BATCH:
        st.warning(t(f"共 {len(s.prompts)} 行，只使用前 {MAX_BATCH} 行（批大小上限）。",
                     f"{len(s.prompts)} lines given; only the first {MAX_BATCH} are used (the batch limit)."))
        return get_trace(model, s.prompts[:MAX_BATCH])
    try:
        with st.spinner(t("正在逐个算子运行模型……", "Running the model operator by operator...")):
            trace = model.trace(list(s.prompts), chat=s.chat)
    except (InputError, ConfigError, ValueError) as e:
        st.error(str(e))
        return None
    traces[key] = trace
    while len(traces) > 1 and sum(tr.nbytes for tr in traces.values()) > TRACE_BUDGET_BYTES:
        traces.popitem(last=False)
    return trace


def query_int(name: str, default: int, lo: int, hi: int) -> int:
    """An integer picker value from the URL, clamped to its range."""
    try:
        v = int(st.query_params.get(name, default))
    except (TypeError, ValueError):
        v = default
    return max(lo, min(hi, v))


def picker(label: str, key: str, lo: int, hi: int, default: int = 0) -> int:
    """A slider (or nothing when the range is one value) whose value lives in the URL for shareable links."""
    if hi <= lo:
        return lo
    if key not in st.session_state:
        st.session_state[key] = query_int(key, default, lo, hi)
    st.session_state[key] = max(lo, min(hi, st.session_state[key]))   # a smaller model may shrink the range
    value = st.slider(label, lo, hi, key=key)
    st.query_params[key] = str(value)
    return value
