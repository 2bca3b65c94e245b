"""The loaded model and this session's traces.

The model is loaded once per (source, device, dtype) with st.cache_resource and shared read-only by
every session (weights are not prompt data). A trace is computed once per (model, prompts, chat) for every session
and kept in the one store of prompt data (ops.engine.store.STORE, shared_trace), read-only to the pages; a session
holds only the keys of its traces (st.session_state.traces), never a trace itself, so the store's budget counts
every byte.
"""
from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from pathlib import Path

import streamlit as st

import ops
from classroom import mode as class_mode
from classroom.jobs import RUN_SLOTS, RUNS, STOPPING, background, tracer, trim_heap
from content.refusals import load_error
from content.words import say
from ops.engine import inputs
from ops.engine.store import STORE
from ops.errors import ConfigError, InputError, PromptTooLong
from ops.fast import native
from ops.lab.steps import trace_plan
from ops.models.bundled import cache_dir, prepare_bundled

from .progress import progress_bar
from .session import Settings, lang, prompt, settings, t, this_run

PREBUILD = True     # load_model builds the weight sets and first visits in the background (a test may turn it off)


@st.cache_resource(show_spinner=False)
def build_native() -> threading.Thread:
    """The native library (ops/fast/native), built once per process in the background as the app starts: no request
    ever waits for a compiler, and an int8 weight set built meanwhile waits for this build (ops.fast.native.load)."""
    native.expect_build()                # a request that asks for it meanwhile waits for this build
    return background(_build_native, (cache_dir() / "native",), "native-build")


def _build_native(folder):
    if native.build(folder) is None:     # int8 decoding then runs on PyTorch's own kernel (the sidebar says why)
        print(f"operator-lab: int8 decoding uses PyTorch's kernel: {native.why_not()}", file=sys.stderr)


@st.cache_resource(show_spinner=False, max_entries=3)     # get_model shows the spinner, in the page's language
def load_model(source: str, device: str, dtype: str):
    """One model per (source, device, dtype), shared by all sessions; never mutated after loading.
    No st element is drawn in here: st.cache_resource would replay it on every later hit. The weight sets other
    pages read are built now, in the background (ahead_sets)."""
    model = ops.load_model(None if source == "default" else source, device=device, dtype=dtype)
    if PREBUILD:
        background(_build_quietly, (model, ahead_sets(model), (source, device, dtype)), "weight-sets")
    return model


def mem_available() -> int:
    """Bytes the kernel says a new allocation can have (MemAvailable in /proc/meminfo); 0 where unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def ahead_sets(model) -> list[str]:
    """Weight sets to build as the model loads, so no page waits for them: in classroom mode the int8 set the Generate
    page starts on; otherwise, on the CPU, the bf16 and int8 sets Precision compares (its first visit built them,
    and waited for it) and Generate's faster paths offer, when they take under a third of the memory free
    (about 3 bytes per parameter)."""
    if class_mode.classroom_mode():
        return ["int8"] if class_mode.default_decode_path() == "int8" else []
    if model.device != "cpu" and getattr(model.device, "type", "") != "cpu":
        return []
    params = sum({t.data_ptr(): t.numel() for t in model.weights.values()}.values())
    return ["bf16", "int8"] if 0 < 3 * params < mem_available() / 3 else []


# (model, source, device, dtype, sets) -> jobs: ui.experiments_state.first_visits, registered by app.py
FIRST_VISITS = None
BACKGROUND_FAILURES: list[str] = []    # what the load-time jobs could not do (the sidebar shows them)


def _build_quietly(model, names: list[str], key: tuple):
    """model.weight_set(name) for each name ahead of its first use, then (outside classroom mode) the pages'
    shared first-visit work (FIRST_VISITS: ui.experiments_state.first_visits), each job once the server is quiet (RUNS),
    at the
    lowest CPU priority (the thread, and the OpenMP threads it starts, which inherit it), so a page run meanwhile
    goes first; a failure here only means the first use builds (and reports) it."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)      # Linux: the calling thread only
    except (AttributeError, OSError):
        pass
    jobs = []
    for name in names:
        job = functools.partial(model.weight_set, name)
        job.__name__ = f"the {name} weight set"
        jobs.append(job)
    if FIRST_VISITS and not class_mode.classroom_mode():   # a class's own first visits share the work; slots stay free
        jobs += FIRST_VISITS(model, *key, sets=set(names) >= {"bf16", "int8"})
    for job in jobs:
        RUNS.wait_quiet()
        if STOPPING.is_set():
            return
        try:
            job()
        except Exception as e:               # the page that needs it builds it then; say so, here and in the sidebar
            note = f"{getattr(job, '__name__', 'job')} for {key[0]}: {type(e).__name__}: {e}"
            BACKGROUND_FAILURES.append(note)
            print(f"operator-lab: a background job failed: {note}", file=sys.stderr)


def get_model():
    """The model for the current settings, or None after showing a clear error; fetched once per script run (the
    sidebar's fetch serves the page's)."""
    s = settings()
    run, key = this_run(), ("model", s.source, s.device, s.dtype)
    if run.get(key) is None:
        run[key] = _fetch_model(s)
    return run[key]


def _fetch_model(s: Settings):
    bar = None

    def progress(fraction, message):
        nonlocal bar
        if bar is None:
            bar = st.progress(0.0, text=message)
        bar.progress(min(max(float(fraction), 0.0), 1.0), text=message)

    ss = st.session_state
    good = ss.get("_good_source")
    try:
        if class_mode.classroom_mode() and not class_mode.is_allowed(s.source):
            raise InputError(say("state.source_not_allowed", lang(), source=s.source))
        # a model this session has loaded before is in load_model's cache: no check of the files, no spinner (a
        # spinner starts a timer thread, which waits for the GIL on a busy server: milliseconds on every run)
        known = good == (s.source, s.device, s.dtype)
        if s.source == "default" and not known:   # first start: assemble + dequantize once, with a progress bar
            prepare_bundled(progress=progress)
        with contextlib.nullcontext() if known else st.spinner(t("正在加载模型……", "Loading the model...")):
            model = load_model(s.source, s.device, s.dtype)
    except Exception as e:                     # a broken model file must never become a traceback
        st.error(t("模型加载失败：", "Could not load the model: ") + load_error(e, lang()))
        if good is None or good == (s.source, s.device, s.dtype):
            return None
        # keep the session on the last model that loaded, and say so
        ss.source = good[0]
        st.warning(say("state.last_good_model", lang(), source=good[0]))
        try:
            return load_model(*good)
        except Exception:
            return None
    finally:
        if bar is not None:
            bar.empty()
    ss["_good_source"] = (s.source, s.device, s.dtype)
    return model


def _truncate_prompts(model, n: int, lines: list):
    """Button callback (runs before the script, so the prompt box may still be rewritten)."""
    tok = model.tokenizer
    overhead = tok.chat_overhead() if st.session_state.get("chat") else 0
    st.session_state.prompt_text = "\n".join(inputs.truncate_text(tok, line, max(1, n - overhead)) for line in lines)


HELD = 8     # keys of traces a session remembers (a few bytes each; the traces live in the store)


def held(key: tuple):
    """This session's trace under key (a key of st.session_state.traces) if the store still holds it, else None."""
    skey = st.session_state.traces.get(key)
    return None if skey is None else STORE.peek(skey)


def _last_good_trace(s: Settings):
    """The newest trace of this session for the same model that the store still holds, or None."""
    for key in reversed(st.session_state.traces):
        if key[:3] == (s.source, s.device, s.dtype) and held(key) is not None:
            return held(key)
    return None


def get_trace(model=None, prompts=None):
    """This session's trace for the current prompts, computed once and kept (oldest dropped first)."""
    model = model or get_model()
    if model is None:
        return None
    s = settings()
    if prompts is not None:
        s = Settings(s.source, s.device, s.dtype, tuple(prompts), s.chat, s.lang)
    key = (s.source, s.device, s.dtype, s.prompts, s.chat)
    traces, skey = st.session_state.traces, ("trace", id(model)) + key
    trace = STORE.peek(skey)                  # this session's, or another's on the same prompt: no progress bar
    if trace is not None:
        if key not in traces:                 # new to this session (another traced it): it still hears what was cleaned
            _cleaned_note()
        return _remember(traces, key, skey, trace)
    if not s.prompts:
        st.warning(say("state.no_prompt", lang()))
        return None
    batch = inputs.batch_limit()
    if len(s.prompts) > batch:
        st.warning(say("state.over_batch", lang(), n=len(s.prompts), batch=batch))
        return get_trace(model, s.prompts[:batch])
    _cleaned_note()
    budget = class_mode.session_budget_bytes()
    try:
        box, report = progress_bar()          # the pass reports each layer: a loaded server's wait is seconds
        on_layer = trace_plan(model, report, " / ".join(s.prompts)[:40])[1]
        together = tracer()
        try:
            trace = shared_trace(skey, functools.partial(_trace, model, s, budget, on_layer, together),
                                 slot=together is None)
        finally:
            box.empty()
    except PromptTooLong as e:
        st.error(str(e))
        n = e.limit
        st.button(t(f"截断为前 {n} 个 token", f"truncate to the first {n} tokens"), key="truncate_prompt",
                  on_click=_truncate_prompts, args=(model, n, list(s.prompts)))
        return _fallback(s)
    except (InputError, ConfigError, ValueError) as e:
        st.error(str(e))
        return _fallback(s)
    trim_heap()
    return _remember(traces, key, skey, trace)


def _cleaned_note():
    """What sanitising the typed prompt removed (ui.session.prompt), said once when this session meets the trace."""
    note = prompt().message(lang())
    if note:
        st.info(t("提示词已清理：", "The prompt was cleaned: ") + note)


def _remember(traces, key: tuple, skey: tuple, trace):
    """This session's newest trace is key's (its store key skey); the oldest keys past HELD are forgotten."""
    traces[key] = skey
    traces.move_to_end(key)
    while len(traces) > HELD:
        traces.popitem(last=False)
    return trace


def _trace(model, s: Settings, budget: int, on_layer, together):
    """The trace of s.prompts: alone (in the run slot shared_trace holds), or through the trace batcher
    (classroom/tracer.py), together with the other sessions' new prompts of this moment; each way the same trace."""
    prompts, texts, rows = model.prepare_trace(list(s.prompts), chat=s.chat, max_bytes=budget, warn=lambda m: None,
                                               sanitized=True)     # s.prompts are ui.session.prompt()'s, noted there
    if together is None:
        return model.trace_ids(rows, prompts=prompts, texts=texts, on_layer=on_layer)
    return together.submit(model, prompts, texts, rows).wait(together, on_layer)


def shared_trace(key: tuple, compute, slot: bool = True):
    """compute() once per key (model, prompts, chat, ...) for every session, kept in the one store: a class opening
    the app on one prompt runs it once, and a session asking while another computes the same key waits for that run
    (in a RUN_SLOTS slot; slot=False: compute takes one itself, the trace batcher's pass)."""
    def run():
        with RUN_SLOTS if slot else contextlib.nullcontext():
            return compute()
    return STORE.get(key, run)


def _fallback(s: Settings):
    """After a bad prompt: the last good trace stays available, labelled as such."""
    last = _last_good_trace(s)
    if last is not None:
        st.info(say("state.last_good_prompt", lang()) + " | ".join(last.prompts))
    return last


def require_trace():
    """(model, trace) for a stage page, or stop the page quietly: the reason was already shown."""
    model = get_model()
    trace = get_trace(model) if model else None
    if trace is None:
        st.stop()
    return model, trace
