"""Streamlit side of the experiment pages (Experiments, Compare, Head atlas, Precision).

Runs are kept in the one store of prompt data (ops.engine.store.STORE) keyed by everything that decides them
(model, tokens, edit, target) and this session's id, so a rerun of the page (any widget) does not rerun the model;
the pure results of (model, prompt) -- a prompt's run, precision's report -- are shared by every session
(kept(share=True)): a class on one prompt computes them once. Sweeps run only on a button click, with a progress
bar (any click while one runs stops it: Streamlit interrupts the script inside the progress callback); the head
atlas, which does not depend on the prompt, is computed once per model for every session.
"""
from __future__ import annotations

import contextlib
import threading
import uuid

import streamlit as st

from classroom.jobs import RUN_SLOTS
from classroom.runqueue import RunQueue
from content.words import say
from ops.engine.store import STORE
from ops.errors import InputError
from ops.lab.steps import Plan, Step, trace_plan
from settings import current as server_settings

from . import progress
from .session import lang, set_query, settings, t
from .state import load_model

# sweeps, the heaviest runs, queue for their own turn: one at a time by default, so page runs always keep a
# slot of RUN_SLOTS and one student's sweep cannot stall the class (OPERATOR_LAB_SWEEPS, _SWEEP_QUEUE)
_SWEEPS: list[RunQueue] = []           # the one queue, built from the settings by configure (app.py) or the first sweep
_SWEEPS_LOCK = threading.Lock()
# what an experiment run keeps: the residual stream and the parts that add to it (attribution, sweeps, patching,
# steering read only these), not the S x S maps and I-wide MLP tensors: a kept run stays small
CAPTURE = ("tokens.ids", "embed.out", "layers.*.attn.context", "layers.*.attn.out", "layers.*.resid_mid",
           "layers.*.mlp.out", "layers.*.resid_out", "logits")


def configure(s) -> None:
    """Build the sweep queue from the settings (settings.Settings), once; app.py calls it at start."""
    with _SWEEPS_LOCK:
        if not _SWEEPS:
            _SWEEPS.append(RunQueue(running=s.sweeps, waiting=s.sweep_queue))


def sweeps() -> RunQueue:
    if not _SWEEPS:
        configure(server_settings())
    return _SWEEPS[0]


def _mine(key) -> tuple:
    """key in the store for this session alone (a sweep someone else ran is not shown as this student's)."""
    if "_sid" not in st.session_state:
        st.session_state["_sid"] = uuid.uuid4().hex
    return ("session", st.session_state["_sid"]) + tuple(key)


def model_key() -> tuple:
    s = settings()
    return (s.source, s.device, s.dtype)


def found(key):
    """The kept result for key (this session's, or one shared by every session), or None."""
    value = STORE.peek(_mine(key))
    return STORE.peek(("lab",) + tuple(key)) if value is None else value


def keep(key, value):
    return STORE.put(_mine(key), value)


def kept(key, compute, spinner: str | None = None, share: bool = False, steps: bool = False):
    """compute() once per key in this session; an InputError is shown as st.error and gives None.
    share=True: once per key for every session too -- only for a pure function of the key (model and prompt),
    whose result every caller treats as read-only. steps=True: compute(progress) reports its steps
    (ops.lab.steps), shown as a progress bar that names the step; else a spinner shows the `spinner` text."""
    value = found(key)
    if value is not None:
        return value
    bar, report = progress_bar() if steps else (None, None)
    run = (lambda: compute(report)) if steps else compute
    try:
        with contextlib.nullcontext() if steps else st.spinner(spinner or t("正在运行模型……", "Running the model...")):
            if share:
                return _shared(key, run)
            with RUN_SLOTS:
                return keep(key, run())
    except InputError as e:
        st.error(str(e))
        return None
    finally:
        if bar is not None:
            bar.empty()


def progress_bar():
    """ui.progress.progress_bar, looked up here so a test or bench can watch the reports (monkeypatch)."""
    return progress.progress_bar()


def _shared(key: tuple, compute):
    """compute() once per key for every session, in the one store (a session asking while another computes the
    same key waits for it; an error is not kept). Not st.cache_resource: the computation reports its progress to the
    asking session's page (progress_bar), and Streamlit refuses a cached function that draws into a container made
    outside it."""
    def run():
        with RUN_SLOTS:
            return compute()
    return STORE.get(("lab",) + tuple(key), run)


_shared.clear = STORE.clear       # a test or bench starts from nothing computed


def sweep(key, run, label: str, note: str = "", button: str = "run-sweep"):
    """The kept result of a sweep, or a button that runs run(progress) with a progress bar and keeps it.
    Returns None until it has run; an InputError is shown as st.error."""
    value = found(key)
    if value is not None:
        return value
    clicked = st.button(label, key=button, type="primary")
    if note:
        st.caption(note)
    if not clicked:
        return None
    bar = st.progress(0.0, text=t("开始……", "starting..."))

    def progress(done: int, total: int):
        bar.progress(min(1.0, done / max(total, 1)), text=say("sweeps.progress", lang(), done=done, total=total))
    queue = sweeps()

    def waiting(place: int, queued: int):
        bar.progress(0.0, text=say("sweeps.queued", lang(), place=place, queued=queued, running=queue.running))
    try:
        with queue.turn(on_wait=waiting), RUN_SLOTS:
            value = run(progress)
    except InputError as e:
        st.error(str(e))
        return None
    finally:
        bar.empty()
    return keep(key, value)


def prompt_trace(model, text: str):
    """A one-row trace of text (the sidebar's chat setting applied), shared by every session; None after an error."""
    if not text.strip():
        st.error(t("提示词是空的：请写一句话。", "The prompt is empty: type a sentence."))
        return None
    chat = settings().chat
    return kept(prompt_key(model_key(), text, chat),
                lambda report: model.trace([text], chat=chat, capture=CAPTURE,
                                           on_layer=trace_plan(model, report, text)[1]),
                share=True, steps=True)


def edited_run(model, ids: list[int], kind: str, layer: int, settings: dict, base):
    """Row `ids` rerun with the Experiments page's edit (ops.lab.experiments_edits.build), shared by every session;
    None when a prompt the edit needs or the edit itself failed (said in a red box)."""
    from ops.lab import experiments_edits

    runs = {k: prompt_trace(model, settings[k]) for k in ("src", "a", "b") if k in settings}   # shared as well
    if None in runs.values():
        return None
    def run(report):
        plan = Plan([Step("edit", model.config.num_hidden_layers)], report)
        edit = experiments_edits.build(kind, model.config, layer, settings, base, runs)
        return model.trace_ids([ids], capture=CAPTURE, edits=edit, on_layer=plan.layers(0))
    return kept(experiments_key(model_key(), ids, kind, layer, settings), run, share=True, steps=True)


def prompt_key(model_key: tuple, text: str, chat: bool) -> tuple:
    return model_key + ("prompt", text, chat)


def precision_key(model_key: tuple, prompt: str, chat: bool) -> tuple:
    return model_key + ("precision", prompt, chat)


def first_visits(model, source: str, device: str, dtype: str, sets: bool) -> list:
    """Jobs to run ahead of the first visit in this process: the work pages share between sessions on their default
    settings -- the tokenizer's merge table (Tokenize), the head atlas, Compare's first pair in both languages,
    Serving's report of the bundled GGUF file (made once per machine), Experiments' default edit on each language's
    default prompt (layer 0's head 0 zeroed: experiments_key) and, when the bf16 and int8 sets are built
    (sets), Precision's report on those prompts; each is seconds of work a first visit would wait for. ui.state runs
    them in
    its background thread, each when the server is quiet; each result lands where the page looks for it."""
    from content import compare_pairs
    from ops.arith import formats
    from ops.lab import precision

    from .session import DEFAULT_PROMPTS

    mk = (source, device, dtype)
    first = next(iter(compare_pairs.pairs()))
    texts = sorted({x for lang in ("en", "zh") for x in compare_pairs.prompts(first, lang)})
    jobs = [lambda: getattr(model.tokenizer, "merges", None), lambda: _atlas(source, device, dtype, ATLAS_SEED,
                                                                             ATLAS_N)]
    jobs += [lambda text=text: _shared(prompt_key(mk, text, False),
                                       lambda: model.trace([text], chat=False, capture=CAPTURE)) for text in texts]
    if source == "default":
        jobs.append(formats.bundled_gguf_report)       # Serving's table of the file: kept on disk once made
    for prompt in DEFAULT_PROMPTS.values():            # a session starts on its language's default prompt
        jobs.append(lambda prompt=prompt: experiments_default(model, mk, prompt))
        if sets:
            jobs.append(lambda prompt=prompt: _shared(precision_key(mk, prompt, False),
                                                      lambda: precision.precision_report(model, prompt, False)))
    return jobs


def experiments_key(mk: tuple, ids: list[int], kind: str, layer: int, settings: dict) -> tuple:
    """The shared key of one Experiments edit of one row (app_pages/experiments.py; first_visits warms the default)."""
    return mk + (tuple(ids), "edit", kind, layer) + tuple(sorted(settings.items()))


EXPERIMENTS_DEFAULT = ("head", 0, {"h": 0, "mode": "zero"})     # the page's first view: layer 0's head 0 zeroed


def experiments_default(model, mk: tuple, prompt: str):
    """Experiments' first view on one prompt (no chat template), computed into the shared store."""
    from ops.lab import experiments_edits
    kind, layer, p = EXPERIMENTS_DEFAULT
    ids = model.encode_prompts([prompt], False)[2][0]
    return _shared(experiments_key(mk, ids, kind, layer, p),
                   lambda: model.trace_ids([ids], capture=CAPTURE, edits=experiments_edits.ablate_heads(
                       model.config, layer, [p["h"]], p["mode"])))


def url_text(label: str, key: str, default: str, height: int | None = None) -> str:
    """A text box whose value lives in the URL (like ui.pickers.picker, for text), so a link repeats the run."""
    if key not in st.session_state:
        st.session_state[key] = st.query_params.get(key, default)
    value = (st.text_area(label, key=key, height=height) if height else st.text_input(label, key=key))
    set_query(key, value)
    return value


ATLAS_SEED, ATLAS_N = 0, 32      # the atlas's induction test: a random sequence of ATLAS_N tokens, twice


def atlas(source: str, device: str, dtype: str, seed: int = ATLAS_SEED, n: int = ATLAS_N) -> dict:
    """The head atlas of one model (it does not depend on the prompt): scores, labels, counts, and the
    induction test sequence with every head's attention on it. Shared by every session; a progress bar names each
    step while it is computed."""
    bar, report = progress_bar()
    try:
        return _atlas(source, device, dtype, seed, n, report)
    finally:
        bar.empty()


def _atlas(source: str, device: str, dtype: str, seed: int, n: int, progress=None) -> dict:
    from ops.lab import atlas as head_atlas

    return _shared(("atlas", source, device, dtype, seed, n),
                   lambda: head_atlas.atlas_view(load_model(source, device, dtype), seed, n, progress))


_atlas.clear = STORE.clear


