"""Streamlit side of the Generate page: its decoding kept in the session, the first-token question, the step table.

The page's Decoder (ops.engine.decode) lives in st.session_state["_gen"] with the settings that made it; a change
of any of them starts a new one. Predict first asks for the first generated token: the answer is the token this
decoding's own first step takes (the same path, chunking, sampling and seed), made once per settings on a copy so
the page's decoding still starts at the prefill.
"""
from __future__ import annotations

import streamlit as st

from classroom.jobs import batcher, decode_step
from content import generate_text as gt
from content.words import say
from ops.engine import decode
from ops.errors import InputError
from ops.lab import generate_data
from viz.labels import pieces, short
from viz.sampling import candidates_chart

from . import predict
from .pickers import ranged
from .session import lang, t

OPTIONS = 5           # candidates offered to guess from (the answer added when a draw falls outside them)
PREVIEW = 8           # candidates in the preview and in a step's chart
ROW_CANDIDATES = 4    # candidates written in a step's table row


def decoding(model, prompt: str, chat: bool, max_new: int, params, path: str, chunk: int, draft: str):
    """The session's Decoder for these settings (a new one, said so, when they changed), and its key."""
    ss, key = st.session_state, (id(model), prompt, chat, max_new, params, path, chunk, draft)
    try:
        if ss.get("_gen") is None or ss["_gen"]["key"] != key:
            if ss.get("_gen") is not None and ss["_gen"]["decoder"].steps:
                st.info(t("设置变了，已重新开始。", "The settings changed, so decoding starts over."))
            ss["_gen"] = dict(key=key, make=lambda: model.decoder(
                prompt, chat=chat, max_new_tokens=max_new, params=params, fast=None if path == "eager" else path,
                prefill_chunk=chunk or None, draft=draft))
            ss["_gen"]["decoder"] = ss["_gen"]["make"]()
    except InputError as e:
        st.error(str(e))
        st.stop()
    return ss["_gen"]["decoder"]


def restart() -> decode.Decoder:
    """A fresh decoding with the same settings."""
    g = st.session_state["_gen"]
    g["decoder"] = g["make"]()
    return g["decoder"]


def first_token(model) -> tuple[list[str], str]:
    """(options, answer) for "which token comes first?": the first step's top candidates by raw logit and the
    token it takes, labelled "piece (id)". From the decoding when it has begun, else from a copy's first step."""
    g = st.session_state["_gen"]
    if g["decoder"].done and not g["decoder"].steps:        # no room for a token (the prompt fills the context)
        return [], ""
    if g["decoder"].steps:
        step = g["decoder"].steps[0]
    elif "first" in g:
        step = g["first"]
    else:
        copy = g["make"]()
        decode_step(copy)
        step = g["first"] = copy.steps[0]
    ids = list(dict.fromkeys(step.candidates[:OPTIONS] + [step.token_id]))
    names = [f"{short(p, 16)} ({i})" for p, i in zip(pieces(model.tokenizer, ids), ids)]
    return names, names[ids.index(step.token_id)]


def ask_first(model, greedy: bool, T: float, seed: int):
    """predict.first for the first generated token (may stop the page until the learner commits). The question is
    made only with the switch on (predict.is_on: read before first() draws it): it may cost a prefill, which a page
    with the switch off should not pay."""
    ss = st.session_state
    options, answer = first_token(model) if predict.is_on("generate") else ([""], "")
    _, prompt, chat, _, params, path, chunk, _ = ss["_gen"]["key"]               # what decides the first token
    if options:
        predict.first("generate", (prompt, chat, params, path, chunk), gt.question(lang()), options, answer,
                      gt.why(greedy, T, seed, lang()))


def step_rows(d: decode.Decoder) -> list[dict]:
    """One table row per generated token: its piece, id, the top candidates with their probabilities after the
    sampling stages (the chosen one marked ✓), its own probability before (the model's, T = 1) and after them, phase,
    tokens its pass ran (a verifying pass makes several tokens: its first row counts the tokens it ran, the others
    0), time, KV cache, the forward pass that made it (counting the prefill's chunks)."""
    passes = [d.prefill_passes + sum(1 for s in d.steps[1:j + 1] if s.processed) for j in range(len(d.steps))]
    tok = d.model.tokenizer

    def top(s) -> str:
        c = generate_data.step_candidates(s, ROW_CANDIDATES)
        return " · ".join(f"{'✓' if i == s.token_id else ''}{short(p, 8)} {float(x):.2f}"
                          for i, p, x in zip(c["ids"], pieces(tok, c["ids"]), c["stages"]["probs"].tolist()))

    return [{"#": j + 1, "token": p, "id": s.token_id,
             say("generate_table.candidates", lang()): top(s),
             t("模型概率（T = 1）", "model p (T = 1)"): round(s.stages["raw_probs"][s.candidates.index(s.token_id)], 4),
             t("采样后概率", "p after sampling"): round(s.chosen_prob, 4), t("阶段", "phase"): s.phase,
             t("这次前向处理的 token", "tokens processed"): s.processed, "ms": round(1000 * s.seconds, 1),
             t("KV 缓存条目", "KV entries"): s.kv_tokens, t("KV 字节", "KV bytes"): s.kv_bytes,
             t("第几次前向", "pass"): passes[j]}
            for j, (s, p) in enumerate(zip(d.steps, pieces(tok, d.token_ids)))]


def step_chart(page, d: decode.Decoder, trace, weights: str):
    """Where the preview was before the first click: one step's candidates (the latest, or the one picked), raw and
    after the sampling stages, drawn by the Sampling page's chart; and, when the run's weights are not the trace's,
    the first token's probability both ways (weights: the run's, e.g. "int8")."""
    ss, n, L = st.session_state, len(d.steps), lang()
    if ss.get("_gen_step_seen") != n:                 # a new step: show it
        ss["_gen_step_seen"] = ss["gen_step_pick"] = n
    k = st.slider(ranged(t("看第几步的候选", "candidates of step"), 1, n), 1, n, key="gen_step_pick") if n > 1 else 1
    step = d.steps[k - 1]
    c = generate_data.step_candidates(step, PREVIEW)
    names = [f"{short(p, 14)} ({i})" for p, i in zip(pieces(d.model.tokenizer, c["ids"]), c["ids"])]
    before = short(pieces(d.model.tokenizer, [d.prompt_ids[-1] if k == 1 else d.token_ids[k - 2]])[0], 12)
    fig = candidates_chart(dict(c["stages"], chosen=step.token_id), c["ids"], names, at=list(range(len(names))),
                           title=say("agree.step_title", L, k=k, before=before, piece=short(step.piece, 12)),
                           words=dict(raw=t("模型原始概率（T = 1）", "the model's p (T = 1)"),
                                      now=t("采样各阶段之后", "after the sampling stages"),
                                      chosen=t("选中的 token", "the chosen token"),
                                      cut_k=t("被 top-k 截掉", "cut by top-k"),
                                      cut_p=t("被 top-p 截掉", "cut by top-p")))
    page.chart(fig, key="gen-step")
    gap = generate_data.preview_vs_run(trace, d) if d.path != "eager" else None
    if gap is not None:
        st.caption(say("agree.weights_after", L, own=str(d.model.dtype).replace("torch.", ""), path=weights,
                       token=short(pieces(d.model.tokenizer, [gap["token"]])[0], 12), preview=f"{gap['preview']:.4f}",
                       run=f"{gap['run']:.4f}"))


def queue_note():
    """on_wait for a decode step handed to the batcher (classroom.jobs.decode_step): while the step waits beyond the
    batch cap, its place in the queue, in a caption that goes away once it is in a step. Drawing is also how a session
    whose user left is noticed (Streamlit stops the script at its next element), so its place is freed."""
    spot = st.empty()

    def on_wait(place: int):
        if place:
            spot.caption(say("batching.queued", lang(), place=place, cap=batcher().cap))
        else:
            spot.empty()
    return on_wait
