"""Session state shared by every page: settings, the loaded model, and this session's traces.

The model is loaded once per (source, device, dtype) with st.cache_resource and shared read-only by
every session; each session keeps its own traces in st.session_state, oldest dropped first. A trace is computed
once per (model, prompts, chat) for every session (shared_trace) and read-only to the pages.
"""
from __future__ import annotations

import atexit
import contextlib
import functools
import os
import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

import ops
from ops.loading import prepare_bundled
from ops.config import ConfigError
from ops import inputs, native
from ops.loading import cache_dir
from ops.model import InputError, PromptTooLong
from . import classroom
from .settings import current as server_settings

DEFAULT_PROMPT = "I like shanghai"
# model runs at once across all sessions: on a small machine a class's requests queue instead of thrashing
RUN_SLOTS = threading.BoundedSemaphore(server_settings().concurrent_runs)
# decode steps at once across all sessions (app_pages/generate.py): a step is ~600 short torch calls, each handing the
# GIL back and forth, so thirty generations stepping together in one process all crawl; a few at a time do not
DECODE_SLOTS = threading.BoundedSemaphore(server_settings().concurrent_decodes)


class Runs:
    """The script runs under way in this process (app.py enters this around each), so background work can wait
    for a quiet moment: a job of the load-time thread starts only when no page has run for `quiet` seconds."""

    def __init__(self):
        self.running, self.last, self.lock = 0, 0.0, threading.Lock()

    def __enter__(self):
        with self.lock:
            self.running += 1

    def __exit__(self, *exc):
        with self.lock:
            self.running -= 1
            self.last = time.monotonic()

    def wait_quiet(self, quiet: float = 0.5, give_up: float = 600.0):
        """Return once no run is under way and none ended in the last `quiet` seconds (or after give_up)."""
        end = time.monotonic() + give_up
        while time.monotonic() < end and not _STOPPING.is_set():
            with self.lock:
                if self.running == 0 and time.monotonic() - self.last >= quiet:
                    return
            time.sleep(0.1)


RUNS = Runs()


def decode_step(decoder):
    """decoder.step() in one of the server's decode slots (DECODE_SLOTS): a class's generations take turns a few at a
    time. Thirty at once in one process each hand the GIL back and forth ~600 times a step and all crawl
    (bench/RESULTS_load.md)."""
    with DECODE_SLOTS:
        decoder.step()


def decode_to_end(decoder, draw, every: float = 0.2):
    """decode_step until the decoder is done, calling draw() at most once every `every` seconds on the way. Drawn at
    every token, the browser's work took cores from the decoding itself where both share a small machine: Chromium
    and the server on 2 cores, int8, 24 tokens, the page's decode speed 15-21 tok/s, 24-35 drawn this way."""
    shown = time.perf_counter()
    while not decoder.done:
        decode_step(decoder)
        if time.perf_counter() - shown > every:
            draw()
            shown = time.perf_counter()


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
    """Fill session_state from the URL (a shared link) and the defaults, once per session."""
    ss = st.session_state
    if ss.get("_initialised") and "traces" in ss:
        # Streamlit forgets a widget's key after a run that did not draw the widget (a run that failed before
        # the sidebar), and on a page switch it keeps only the widgets the browser reported (a click while the
        # last run was still drawing reports fewer), dropping the page's query parameters too: each setting
        # comes back from its copy kept below (KEPT), else the URL, else the default. Seen in bench/browser.py:
        # a session in English switched to Chinese between two pages.
        for key in KEPT:
            if key not in ss:
                ss[key] = ss.get("_kept_" + key, _from_url(key))
        return                  # the copies are taken after the sidebar's widgets ran (keep_settings)
    for key in KEPT:
        ss[key] = _from_url(key)
    ss.traces = OrderedDict()
    ss._initialised = True
    _keep(ss)


KEPT = ("source", "device", "dtype", "prompt_text", "chat", "lang", "projector")   # the sidebar's settings
# what each sidebar widget bound to a setting holds before anyone touches it (ui/sidebar.py; device and dtype have
# widgets of their own, copied on change)
WIDGET_DEFAULTS = dict(prompt_text="", chat=False, lang="zh", projector=False)


def guard_page_switch(page: str):
    """On a page switch, a sidebar setting that arrives at its widget's default, unlike the session's kept copy,
    is put back from that copy. Seen in Chromium in 4 of about 30 sessions on the evening of 2026-12-01
    (bench/browser.py and repeats of it): an English session with a prompt clicked a page link and the next page
    ran with the language and the prompt at their widget defaults (Chinese, empty), so it asked for a prompt; with
    this guard the fourth ran in English with its prompt (bench/RESULTS.md, "Night").
    A user's own change to a sidebar widget reruns the page it is on before any switch; one that only comes with
    a switch (the prompt box emptied, then a link clicked at once) is the price. Call after st.navigation (`page`
    is its url_path) and before the sidebar draws."""
    ss = st.session_state
    last, ss["_page"] = ss.get("_page"), page
    if last is None or last == page:
        return
    for key, default in WIDGET_DEFAULTS.items():
        kept = ss.get("_kept_" + key)
        if kept is not None and kept != default and ss.get(key) == default:
            ss[key] = kept
            print(f"operator-lab: {key} came back at its default on a switch to {page}; the session's value is kept",
                  file=sys.stderr)


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


def keep_settings():
    """Copy the sidebar's settings where Streamlit's widget clean-up does not reach (after the sidebar's widgets ran)."""
    _keep(st.session_state)


def _keep(ss):
    for key in KEPT:
        if key in ss:
            ss["_kept_" + key] = ss[key]


def settings() -> Settings:
    ss = st.session_state
    get = lambda k: ss.get(k, DEFAULTS[k])
    lines = inputs.split_lines(str(get("prompt_text")))   # sanitised: see ops/inputs.py for the policy
    return Settings(get("source"), get("device"), get("dtype"), tuple(lines), bool(get("chat")), get("lang"))


def lang() -> str:
    return st.session_state.get("lang", "zh")


def projector() -> bool:
    """Projector mode (?projector=1): larger text, the sidebar folded away, no downloads or tensor-name lines."""
    return bool(st.session_state.get("projector", False))


def t(zh: str, en: str) -> str:
    """The string in the session's language."""
    return zh if lang() == "zh" else en


PREBUILD = True     # load_model builds the weight sets and first visits in the background (a test may turn it off)


@st.cache_resource(show_spinner=False)
def build_native() -> threading.Thread:
    """The native library (ops/native), built once per process in the background as the app starts: no request
    ever waits for a compiler, and an int8 weight set built meanwhile waits for this build (ops.native.load)."""
    return _background(native.build, (cache_dir() / "native",), "native-build")


_STOPPING = threading.Event()            # set at exit: the load-time jobs not yet started are skipped
_THREADS: list[threading.Thread] = []


def _background(target, args: tuple, name: str) -> threading.Thread:
    """A daemon thread the process waits for at exit (a thread inside a torch or OpenMP call when the interpreter
    tears down aborts the process: "terminate called without an active exception")."""
    thread = threading.Thread(target=target, args=args, name=name, daemon=True)
    _THREADS.append(thread)
    thread.start()
    return thread


@atexit.register
def _wait_for_background(timeout: float = 60.0):
    _STOPPING.set()
    end = time.monotonic() + timeout
    for thread in _THREADS:
        thread.join(max(0.0, end - time.monotonic()))


@st.cache_resource(show_spinner=False, max_entries=3)     # get_model shows the spinner, in the page's language
def load_model(source: str, device: str, dtype: str):
    """One model per (source, device, dtype), shared by all sessions; never mutated after loading.
    No st element is drawn in here: st.cache_resource would replay it on every later hit. The weight sets other
    pages read are built now, in the background (ahead_sets)."""
    model = ops.load_model(None if source == "default" else source, device=device, dtype=dtype)
    if PREBUILD:
        _background(_build_quietly, (model, ahead_sets(model), (source, device, dtype)), "weight-sets")
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
    page starts on; otherwise, on the CPU, the bf16 and int8 sets Precision compares (its first visit built them:
    3-5 s on the bundled model) and Generate's faster paths offer, when they take under a third of the memory free
    (about 3 bytes per parameter)."""
    if classroom.classroom_mode():
        return ["int8"] if classroom.default_decode_path() == "int8" else []
    if model.device != "cpu" and getattr(model.device, "type", "") != "cpu":
        return []
    params = sum({t.data_ptr(): t.numel() for t in model.weights.values()}.values())
    return ["bf16", "int8"] if 0 < 3 * params < mem_available() / 3 else []


FIRST_VISITS = None    # (model, source, device, dtype, sets) -> jobs: ui.lab.first_visits, registered by app.py
BACKGROUND_FAILURES: list[str] = []    # what the load-time jobs could not do (the sidebar shows them)


def _build_quietly(model, names: list[str], key: tuple):
    """model.weight_set(name) for each name ahead of its first use, then (outside classroom mode) the pages'
    shared first-visit work (FIRST_VISITS: ui.lab.first_visits), each job once the server is quiet (RUNS), at the
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
    if FIRST_VISITS and not classroom.classroom_mode():   # a class's own first visits share the work; slots stay free
        jobs += FIRST_VISITS(model, *key, sets=set(names) >= {"bf16", "int8"})
    for job in jobs:
        RUNS.wait_quiet()
        if _STOPPING.is_set():
            return
        try:
            job()
        except Exception as e:               # the page that needs it builds it then; say so, here and in the sidebar
            note = f"{getattr(job, '__name__', 'job')} for {key[0]}: {type(e).__name__}: {e}"
            BACKGROUND_FAILURES.append(note)
            print(f"operator-lab: a background job failed: {note}", file=sys.stderr)


def get_model():
    """The model for the current settings, or None after showing a clear error."""
    s = settings()
    bar = None

    def progress(fraction, message):
        nonlocal bar
        if bar is None:
            bar = st.progress(0.0, text=message)
        bar.progress(min(max(float(fraction), 0.0), 1.0), text=message)

    ss = st.session_state
    good = ss.get("_good_source")
    try:
        if classroom.classroom_mode() and not classroom.is_allowed(s.source):
            raise InputError(t(f"课堂模式下不允许这个模型来源：{s.source}", f"this model source is not allowed in classroom mode: {s.source}"))
        # a model this session has loaded before is in load_model's cache: no check of the files, no spinner (a
        # spinner starts a timer thread, which waits for the GIL on a busy server: milliseconds on every run)
        known = good == (s.source, s.device, s.dtype)
        if s.source == "default" and not known:   # first start: assemble + dequantize once, with a progress bar
            prepare_bundled(progress=progress)
        with contextlib.nullcontext() if known else st.spinner(t("正在加载模型……", "Loading the model...")):
            model = load_model(s.source, s.device, s.dtype)
    except Exception as e:                     # a broken model file must never become a traceback
        st.error(t("模型加载失败：", "Could not load the model: ") + str(e))
        if good is None or good == (s.source, s.device, s.dtype):
            return None
        # keep the session on the last model that loaded, and say so
        ss.source = good[0]
        st.warning(t(f"继续使用上一个成功加载的模型：{good[0]}", f"Still showing the last model that loaded: {good[0]}"))
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


def _last_good_trace(s: Settings):
    """The newest trace of this session for the same model, or None."""
    for key in reversed(st.session_state.traces):
        if key[:3] == (s.source, s.device, s.dtype):
            return st.session_state.traces[key]
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
    traces = st.session_state.traces
    if key in traces:
        traces.move_to_end(key)
        return traces[key]
    if not s.prompts:
        st.warning(t("请在左侧输入框中写一句话（每行一个提示词）。", "Type a prompt in the sidebar (one per line)."))
        return None
    batch = inputs.batch_limit()
    if len(s.prompts) > batch:
        st.warning(t(f"共 {len(s.prompts)} 行，只使用前 {batch} 行（批大小上限）。",
                     f"{len(s.prompts)} lines given; only the first {batch} are used (the batch limit)."))
        return get_trace(model, s.prompts[:batch])
    note = inputs.sanitize(str(st.session_state.get("prompt_text", ""))).message(lang())
    if note:
        st.info(t("提示词已清理：", "The prompt was cleaned: ") + note)
    budget = classroom.session_budget_bytes()
    try:
        with st.spinner(t("正在逐个算子运行模型……", "Running the model operator by operator...")):
            trace = shared_trace((id(model),) + key, budget,
                                 lambda: model.trace(list(s.prompts), chat=s.chat, max_bytes=budget,
                                                     warn=lambda m: None))   # the sanitising note is shown above
    except PromptTooLong as e:
        st.error(str(e))
        n = e.limit
        st.button(t(f"截断为前 {n} 个 token", f"truncate to the first {n} tokens"), key="truncate_prompt",
                  on_click=_truncate_prompts, args=(model, n, list(s.prompts)))
        return _fallback(s)
    except (InputError, ConfigError, ValueError) as e:
        st.error(str(e))
        return _fallback(s)
    traces[key] = trace
    while len(traces) > 1 and sum(tr.nbytes for tr in traces.values()) > budget:
        traces.popitem(last=False)
    trim_heap()
    return trace


_SHARED: OrderedDict = OrderedDict()   # traces every session may read: key -> trace, least recently used first
_SHARED_LOCK = threading.Lock()
_COMPUTING: dict = {}                  # key -> the lock one session holds while it computes that trace


def shared_trace(key: tuple, budget: int, compute):
    """compute() once per key (model, prompts, chat, ...) for every session: a class opening the app on one prompt
    runs it once, and a session asking while another computes the same key waits for that run (in a RUN_SLOTS
    slot). Traces are read-only to pages; they stay while those kept here fit in `budget` bytes (the newest
    always stays), and each session's own list (get_trace) holds its references besides."""
    with _SHARED_LOCK:
        if key in _SHARED:
            _SHARED.move_to_end(key)
            return _SHARED[key]
        lock = _COMPUTING.setdefault(key, threading.Lock())
    with lock:
        with _SHARED_LOCK:
            if key in _SHARED:                     # computed by the session this one waited for
                return _SHARED[key]
        try:
            with RUN_SLOTS:
                trace = compute()
            with _SHARED_LOCK:
                _SHARED[key] = trace
                while len(_SHARED) > 1 and sum(tr.nbytes for tr in _SHARED.values()) > budget:
                    _SHARED.popitem(last=False)
        finally:                                   # only now: a session arriving meanwhile finds the trace stored
            with _SHARED_LOCK:
                _COMPUTING.pop(key, None)
        return trace


def trim_heap():
    """Give the heap pages the run's temporaries freed back to the OS (glibc keeps them otherwise).
    A long-lived server holding traces wants its resident set small; elsewhere (not glibc) this does nothing."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _fallback(s: Settings):
    """After a bad prompt: the last good trace stays available, labelled as such."""
    last = _last_good_trace(s)
    if last is not None:
        st.info(t("下面显示的是上一个有效提示词的结果：", "Showing the last prompt that worked: ")
                + " | ".join(last.prompts))
    return last


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
        st.warning(t(f"链接里的 {name}={raw!r} 不是整数，已改用 {default}。",
                     f"The link's {name}={raw!r} is not an integer; using {default}."))
        return default
    if not lo <= v <= hi:
        clamped = max(lo, min(hi, v))
        st.warning(t(f"链接里的 {name}={v} 超出范围 {lo}…{hi}（这个模型），已改用 {clamped}。",
                     f"The link's {name}={v} is outside {lo}…{hi} for this model; using {clamped}."))
        return clamped
    return v


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


def ranged(label: str, lo, hi) -> str:
    """"层 i (0…23)": a slider's label with its ends, since a Streamlit slider shows them only while it is dragged."""
    return f"{label} ({lo:g}…{hi:g})"


# The sampling settings the Sampling and Generate pages share: name -> (lowest, highest, default, step). Each lives in
# session_state under "sampling_<name>", where a page switch does not reach (Streamlit drops a widget's own key on a
# page that does not draw it); each page's widget is set from it and copies a change back (sampling_input).
SAMPLING = dict(temperature=(0.0, 2.0, 0.8, 0.05), top_k=(0, 100, 50, 1), top_p=(0.05, 1.0, 0.9, 0.05),
                repetition_penalty=(1.0, 2.0, 1.0, 0.05), seed=(0, 2**31 - 1, 0, 1), min_p=(0.0, 0.5, 0.0, 0.01))


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


def require_trace():
    """(model, trace) for a stage page, or stop the page quietly: the reason was already shown."""
    model = get_model()
    trace = get_trace(model) if model else None
    if trace is None:
        st.stop()
    return model, trace
