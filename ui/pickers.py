"""The pickers every page shares: layer, row and token sliders whose values live in the URL, and the sampling
settings the Sampling and Generate pages share."""
from __future__ import annotations

import streamlit as st

from ops.engine import sampling as smp

from .session import query_int, set_query, t


def picker(label: str, key: str, lo: int, hi: int, default: int = 0) -> int:
    """A slider (or nothing when the range is one value) whose value lives in the URL for shareable links."""
    if hi <= lo:
        return lo
    if key not in st.session_state:
        st.session_state[key] = query_int(key, default, lo, hi)
    st.session_state[key] = max(lo, min(hi, st.session_state[key]))   # a smaller model may shrink the range
    value = st.slider(ranged(label, lo, hi), lo, hi, key=key)
    set_query(key, str(value))
    return value


# The LM head page's "top N shown" slider: lowest, highest, default. A replayed lesson's "top" picker is clamped to
# the same range (ui/lesson_replay.py), so the two read this one constant.
TOP_N = (5, 30, 10)


def top_n_picker(label: str) -> int:
    """The LM head page's "top N shown" slider (session key lm_topn, which a replayed lesson sets): its value comes
    from session state alone, so the widget is never given a second default."""
    lo, hi, default = TOP_N
    ss = st.session_state
    ss["lm_topn"] = max(lo, min(hi, ss.get("lm_topn", default)))
    return st.slider(ranged(label, lo, hi), lo, hi, key="lm_topn")


def ranged(label: str, lo, hi) -> str:
    """"层 i (0…23)": a slider's label with its ends, since a Streamlit slider shows them only while it is dragged."""
    return f"{label} ({lo:g}…{hi:g})"


# The sampling settings the Sampling and Generate pages share: name -> (lowest, highest, default, step). Each lives in
# session_state under "sampling_<name>", where a page switch does not reach (Streamlit drops a widget's own key on a
# page that does not draw it); each page's widget is set from it and copies a change back (sampling_input).
_D = smp.SHOWN                   # the defaults, in one place (a lesson export draws its sampling step with them)
SAMPLING = dict(temperature=(0.0, 2.0, _D.temperature, 0.05), top_k=(0, 100, _D.top_k, 1),
                top_p=(0.05, 1.0, _D.top_p, 0.05), repetition_penalty=(1.0, 2.0, _D.repetition_penalty, 0.05),
                seed=(0, 2**31 - 1, _D.seed, 1), min_p=(0.0, 0.5, _D.min_p, 0.01))


def sampling_input(widget, label: str, name: str, key: str, **kw):
    """widget(label, lo, hi, ...) (st.slider, st.number_input, or a column's) for one shared sampling setting, under
    the page's own widget key; a slider's label gets its range (ranged)."""
    lo, hi, default, step = SAMPLING[name]
    ss, setting = st.session_state, "sampling_" + name
    ss[setting] = min(hi, max(lo, ss.get(setting, default)))
    if ss.get(key) != ss[setting]:
        ss[key] = ss[setting]
    if getattr(widget, "__name__", "") == "slider":
        label = ranged(label, lo, hi)
    return widget(label, lo, hi, step=step, key=key, on_change=_copy_sampling, args=(key, setting), **kw)


def _copy_sampling(key: str, setting: str):
    st.session_state[setting] = st.session_state[key]


def layer_picker(L: int) -> int:
    """Layer i, shared by every per-layer page (URL key "layer")."""
    return picker(t("层 i", "layer i"), "layer", 0, L - 1)


def row_picker(B: int) -> int:
    """Batch row b (URL key "row")."""
    return picker(t("批中的第几行 b", "batch row b"), "row", 0, B - 1)


def token_picker(n: int, default: int = 0) -> int:
    """Token position s among row b's n real tokens (URL key "tok")."""
    return picker(t("第几个 token s", "token s"), "tok", 0, n - 1, default=default)
