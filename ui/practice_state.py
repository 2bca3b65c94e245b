"""The practice page's session state and view data (Streamlit): the bank rendered in the reader's language, the
live quiz's progress with its button callbacks, and the mock interview's draw, answers and self-grades, kept in
st.session_state across reruns. The pure parts live in content/: browsing in practice_bank.py, drawing and
scoring in practice_mock.py, the sentences in assets/words/practice_ui.<lang>.json."""
from __future__ import annotations

import random

import streamlit as st

from content import facts, practice, practice_bank, practice_mock as mock, texts, words
from content.practice_bank import stage_title
from ops.arith import costs
from ops.lab import practice_data

from . import state
from .session import lang, t


def say(key: str, **values) -> str:
    """The text `key` (assets/words: "practice_ui.<name>") in the reader's language."""
    return words.say(key, lang(), **values)


def context(page) -> tuple:
    """(model, trace, numbers): the loaded model and its trace when there are (attached to the page, so its memos
    are kept with the trace), and the texts' placeholders for them; without a model, Qwen2.5-0.5B's config at
    B = 1, S = 8."""
    model = state.get_model()
    trace = state.get_trace(model) if model else None
    page.attach(model, trace)
    if trace is not None:
        return model, trace, page.numbers
    config = model.config if model is not None else costs.reference_configs()["Qwen2.5-0.5B-Instruct"]
    return model, None, texts.numbers(config, B=1, S=8, **(facts.loaded(model) if model else {}))


def bank(page, numbers: dict) -> tuple[list[dict], str | None]:
    """Every question rendered in the session's language (kept with the trace), and the error's text when the bank
    could not be read: a broken question must not take the page down."""
    try:
        return page.memo(("questions", "all"), lambda: practice.questions(numbers, lang())), None
    except Exception as e:
        return [], say("practice_ui.bank_error") + str(e)


def browse(items: list[dict], stage: str, query: str) -> dict:
    """content.practice_bank.browse, plus the caption that counts what is shown."""
    view = practice_bank.browse(items, stage, query, lang())
    marks = {k: v[lang()] for k, v in practice_bank.MARKS.items()}
    return dict(view, caption=say("practice_ui.browse_caption", count=view["count"], **marks))


# ---- the live quiz -------------------------------------------------------------------------------------------
QUIZ = dict(quiz_idx=0, quiz_correct=0, quiz_attempted=0, quiz_result=None, quiz_round=0)


def quiz_reveal(item: dict, idx: int):
    ss = st.session_state
    prev = ss.quiz_result
    if prev and prev.get("idx") == idx and prev.get("status") in ("right", "wrong"):
        return                                  # already revealed: each visit counts once
    text = str(ss.get(f"quiz_answer_{ss.quiz_round}_{idx}", "")).strip()
    if not text:
        ss.quiz_result = dict(idx=idx, status="empty")
        return
    parsed = practice.parse_shape(text) if item["kind"] == "shape" else practice.parse_number(text)
    if parsed is None:
        ss.quiz_result = dict(idx=idx, status="unparsable", text=text)
        return
    ok = practice.check_answer(item, text)
    ss.quiz_attempted += 1
    ss.quiz_correct += int(ok)
    ss.quiz_result = dict(idx=idx, status="right" if ok else "wrong", text=text)


def quiz_next(n: int):
    st.session_state.quiz_idx = (st.session_state.quiz_idx + 1) % n
    st.session_state.quiz_result = None


def quiz_reset():
    ss = st.session_state
    ss.quiz_idx, ss.quiz_correct, ss.quiz_attempted, ss.quiz_result = 0, 0, 0, None
    ss.quiz_round += 1                         # fresh, empty answer boxes


def quiz(model, trace, numbers: dict, group: str) -> dict:
    """The quiz's view: {intro, n, idx, item, question, hint, box (the answer box's key), metrics [(label, value)],
    verdict (None or (kind "warning" | "success" | "error", text)), explain, legend}."""
    ss, lg = st.session_state, lang()
    for k, v in QUIZ.items():
        ss.setdefault(k, v)
    runs = practice_data.experiment_runs(model, trace)                # two reruns of the row, once per trace
    pool = [q for q in practice.quiz_pool(model, trace, numbers, runs) if group in ("all", q["group"])]
    idx = ss.quiz_idx % len(pool)
    item, r, c = pool[idx], ss.quiz_result, model.config
    tol = say("practice_ui.hint_tol") if item.get("tol") else ""
    hint = say("practice_ui.hint_shape") if item["kind"] == "shape" else say("practice_ui.hint_number") + tol
    verdict = None
    if r and r.get("idx") == idx and r["status"] == "empty":
        verdict = ("warning", say("practice_ui.quiz_empty"))
    elif r and r.get("idx") == idx and r["status"] == "unparsable":
        verdict = ("warning", say("practice_ui.quiz_unreadable", text=r["text"], hint=hint))
    elif r and r.get("idx") == idx:
        where, true = practice.where_text(item, lg, trace.shapes()), practice.answer_text(item, lg)
        verdict = ("success" if r["status"] == "right" else "error",
                   say("practice_ui.quiz_right" if r["status"] == "right" else "practice_ui.quiz_wrong", text=r["text"],
                       true=true, where=where))
    done = ss.quiz_attempted
    return dict(intro=say("practice_ui.quiz_intro", name=c.name or c.model_type, B=trace.B, S=trace.S), n=len(pool),
                idx=idx,
                item=item, question=item["question"][lg], hint=hint, box=f"quiz_answer_{ss.quiz_round}_{idx}",
                metrics=[(t("得分（对 / 答）", "score (correct / attempted)"), f"{ss.quiz_correct} / {done}"),
                         (t("题号", "question"), f"{idx + 1} / {len(pool)}"),
                         (t("正确率", "accuracy"), f"{100 * ss.quiz_correct / done:.0f}%" if done else "–")],
                verdict=verdict, explain=(item.get("explain") or {}).get(lg) if verdict and verdict[0] != "warning"
                else None, legend=say("practice_ui.shape_legend") if verdict and item["kind"] == "shape" else None)


# ---- the mock interview --------------------------------------------------------------------------------------
def mock_new():
    """A new interview: a new seed, so a new draw, and nothing answered."""
    st.session_state.mock = dict(seed=random.randrange(2**31), choice=None)


def mock_reveal():
    m = st.session_state.mock
    text = str(st.session_state.get(_box(m), "")).strip()
    m["warn"] = not text
    if text:
        m["answers"][m["ids"][m["pos"]]], m["revealed"] = text, True


def mock_grade(grade: str):
    m = st.session_state.mock
    if m["revealed"] and m["pos"] < len(m["ids"]):
        m["grades"][m["ids"][m["pos"]]] = grade
        m["pos"], m["revealed"] = m["pos"] + 1, False


def _box(m: dict) -> str:
    return f"mock_answer_{m['seed']}_{m['pos']}"      # a fresh, empty box for every question of every interview


def mock_state(items: list[dict], n: int, levels) -> dict:
    """This session's interview, drawn again (same seed) when the size or the levels change."""
    ss, choice = st.session_state, (n, tuple(sorted(levels or ())))
    if "mock" not in ss:
        mock_new()
    m = ss.mock
    if m["choice"] != choice:
        ids = mock.draw(items, n, m["seed"], levels)
        ss.mock = m = dict(seed=m["seed"], choice=choice, ids=ids, pos=0, revealed=False, warn=False, answers={},
                           grades={})
    return m


def interview(items: list[dict], n: int, levels) -> dict:
    """The mock interview's view: {n, pos, progress ("3 / 5"), done, box, revealed, warn, question (the rendered
    dict, None when done), stage (its title), stars, answer (yours), computed (the value line or ""), score
    (practice_mock.score), score_text, stages (breakdown rows), review [(label, question, your answer)]}."""
    m, lg = mock_state(items, n, levels), lang()
    by_id = {q["id"]: q for q in items}
    asked = [by_id[i] for i in m["ids"] if i in by_id]         # a question removed from the bank meanwhile: dropped
    pos = min(m["pos"], len(asked))
    q = asked[pos] if pos < len(asked) else None
    result = mock.score(asked, m["grades"], practice_bank.stage_order(items))
    value = ""
    if q is not None and q["computed"]:
        shown = q["exact"] if q["exact"] == q["human"] else f"{q['exact']} ({q['human']})"
        value = say("practice_ui.mock_computed", config=q["config"], value=shown)
    return dict(n=len(asked), pos=pos, progress=f"{min(pos + 1, len(asked))} / {len(asked)}",
                done=q is None and bool(asked), box=_box(m), revealed=m["revealed"],
                warn=m["warn"], question=q, stage=stage_title(q["stage"], lg) if q else "",
                stars="★" * q["difficulty"] if q else "", answer=m["answers"].get(q["id"], "") if q else "",
                computed=value, score=result, score_text=f"{result['points']:g} / {result['graded']}",
                stages=mock.breakdown(result, lg),
                review=[(stage_title(r["stage"], lg) + " · " + r["question"], r, m["answers"].get(r["id"], ""))
                        for r in result["review"]])
